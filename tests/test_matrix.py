"""The conformance matrix (issue 26, docs/matrix.md): `ahp-fuzz matrix` over the reference model and
two imitation adapters that share a cause (tests/imitations/), `report --matrix` of the same and
of separately made run folders, and the "never invent agreement" rule on crafted run folders.

The runs are bounded by `--chunks` (a seed's chunks are the same steps on any machine), with a
budget far above what they take: nothing here depends on how fast the machine is."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.cli import main
from harness.report.html_escape import esc
from harness.report.matrix import (
    APPLICABILITY_RULE,
    Column,
    applicability,
    build_matrix,
    column_name,
    run_folders,
)

ROOT = Path(__file__).resolve().parent.parent
TYPED = f"adapter:{sys.executable} {ROOT / 'tests' / 'imitations' / 'typed_client.py'}"
UNTYPED = f"adapter:{sys.executable} {ROOT / 'tests' / 'imitations' / 'untyped_client.py'}"
#: `chat/draftChanged` ignored: the cause both imitations have (the same id on every target).
SHARED = "9f66e8867bad"
RUN_ARGS = ["--kinds", "chat,session", "--chunks", "4", "--budget", "300s", "--seed", "1"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], int]:
    out = tmp_path_factory.mktemp("matrix") / "m"
    code = main(["matrix", "--target", "reference", "--target", TYPED, "--target", UNTYPED, *RUN_ARGS,
                 "--out", str(out)])
    return out, json.loads((out / "matrix.json").read_text(encoding="utf-8")), code


def _row(doc: dict[str, Any], cause_id: str) -> dict[str, Any]:
    rows = [r for r in doc["causes"] if r["id"] == cause_id]
    assert len(rows) == 1, [r["id"] for r in doc["causes"]]
    return rows[0]


def test_the_shared_cause_is_one_row_with_two_marks(made: tuple[Path, dict[str, Any], int]) -> None:
    out, doc, code = made
    assert code == 1  # causes were found
    assert doc["format"] == "ahp-fuzz/matrix" and doc["formatVersion"] == 1
    cols = [t["column"] for t in doc["targets"]]
    assert cols == ["01-reference", "02-adapter-typed-client", "03-adapter-untyped-client"]
    row = _row(doc, SHARED)
    status = {c: cell["status"] for c, cell in row["cells"].items()}
    assert status == {cols[0]: "not-found", cols[1]: "found", cols[2]: "found"}
    assert row["shared"] and row["foundBy"] == 2 and doc["sharedCauses"][0] == SHARED
    # each imitation's own cause is its row alone, "not found" on the other imitation
    own = [r for r in doc["causes"] if r["foundBy"] == 1]
    assert {next(c for c, cell in r["cells"].items() if cell["status"] == "found") for r in own} == set(cols[1:])
    page = (out / "index.html").read_text(encoding="utf-8")
    tr = page[page.index(f'data-cause="{SHARED}"'):]
    tr = tr[: tr.index("</tr>")]
    assert "possible spec ambiguity" in tr and tr.count('data-status="found"') == 2


def test_the_matrix_is_of_its_documented_schema(made: tuple[Path, dict[str, Any], int]) -> None:
    _, doc, _ = made
    schema = json.loads((ROOT / "docs" / "matrix.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    broken = json.loads(json.dumps(doc))
    next(c for r in broken["causes"] for c in r["cells"].values() if c["status"] == "found").pop("replay")
    with pytest.raises(jsonschema.ValidationError):  # a mark without its replay command is not a matrix
        jsonschema.validate(broken, schema)


def test_the_reference_column_is_clean(made: tuple[Path, dict[str, Any], int]) -> None:
    _, doc, _ = made
    ref = doc["targets"][0]
    assert ref["target"] == "reference" and ref["verdict"] == "clean" and ref["causes"]["found"] == 0
    assert ref["causes"]["notFound"] == len(doc["causes"])  # it was fuzzed where every cause shows
    if os.environ.get("AHP_SPEC_DIR"):
        assert ref["fixtures"]["status"] == "passed" and ref["fixtures"]["failed"] == 0
    typed = doc["targets"][1]
    assert typed["announced"]["name"] == "imitation: typed client" and typed["announcedVersion"]
    assert typed["verdict"] == "found" and typed["kindsFuzzed"] == ["chat", "session"]


def test_every_mark_links_to_a_finding_that_replays_and_its_fixture(made: tuple[Path, dict[str, Any], int],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out, doc, _ = made
    marks = [cell for r in doc["causes"] for cell in r["cells"].values() if cell["status"] == "found"]
    assert len(marks) >= 4
    page = (out / "index.html").read_text(encoding="utf-8")
    for cell in marks:
        finding = out / cell["finding"]
        assert finding.is_file() and f'href="{cell["finding"]}"' in page
        words = shlex.split(cell["replay"])
        argv = words[words.index("replay"):]  # after the program, spelled as ahp-fuzz was invoked
        assert argv[:2] == ["replay", str(finding.resolve())]
        if os.environ.get("AHP_SPEC_DIR"):  # judged with the spec folder's schemas: the command names it
            assert argv[2:] == ["--spec", str(Path(os.environ["AHP_SPEC_DIR"]).resolve())]
        assert esc(cell["replay"]) in page
        if cell["fixture"] is None:  # a finding seen by a probe only has no state-changing step to fold
            assert "no valid-lane step" in cell["fixtureWhy"] and esc(cell["fixtureWhy"]) in page
        else:
            fixture = json.loads((out / cell["fixture"]).read_text(encoding="utf-8"))
            assert {"initial", "actions", "expected"} <= set(fixture) and f'href="{cell["fixture"]}"' in page
        assert main(argv) == 1, f"{cell['replay']} did not reproduce"
    assert [c for c in marks if c["fixture"] is not None], "at least one mark exports as a fixture"
    capsys.readouterr()


def _same(doc: dict[str, Any], out: Path) -> str:
    """The matrix without what differs from one making to the next (when, the command, the folders)."""
    keep = {k: v for k, v in doc.items() if k not in ("createdAt", "command", "cwd")}
    return json.dumps(keep, sort_keys=True).replace(str(out.resolve()), "OUT").replace(str(out), "OUT")


def _table(page: str, out: Path) -> str:
    part = page[page.index('<table class="cm"'): page.index('<section id="targets">')]
    return part.replace(str(out.resolve()), "OUT").replace(str(out), "OUT")


def test_report_matrix_of_the_run_folders_gives_the_same_page(made: tuple[Path, dict[str, Any], int],
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out, doc, _ = made
    again = tmp_path / "again"
    assert main(["report", "--matrix", *sorted(str(p) for p in (out / "targets").iterdir()), "--out", str(again)]) == 0
    doc2 = json.loads((again / "matrix.json").read_text(encoding="utf-8"))
    for t in doc["targets"] + doc2["targets"]:
        t.pop("run")
    assert _same(doc2, again) == _same(doc, out)
    assert _table((again / "index.html").read_text(encoding="utf-8"), again) == \
        _table((out / "index.html").read_text(encoding="utf-8"), out)
    # a matrix folder stands for its run folders: the merge job of docs/ci/ahp-fuzz-matrix.yml
    assert run_folders([out]) == [out / "targets" / t["column"] for t in doc["targets"]]
    capsys.readouterr()


def test_separately_made_run_folders_give_the_same_cells(made: tuple[Path, dict[str, Any], int], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A nightly job of each implementation on its own machine: plain `ahp-fuzz run` folders."""
    out, doc, _ = made
    untyped = tmp_path / "untyped-nightly"
    assert main(["run", "--target", UNTYPED, *RUN_ARGS, "--out", str(untyped), "--quiet"]) == 1
    ref = tmp_path / "reference-nightly"
    shutil.copytree(out / "targets" / "01-reference", ref)
    (ref / "conformance.json").unlink()
    merged = tmp_path / "merged"
    assert main(["report", "--matrix", str(ref), str(untyped), "--out", str(merged)]) == 0
    doc2 = json.loads((merged / "matrix.json").read_text(encoding="utf-8"))
    assert [t["fixtures"]["status"] for t in doc2["targets"]] == ["not-run", "not-run"]
    cells = {r["id"]: [c["status"] for c in r["cells"].values()] for r in doc2["causes"]}
    want = {r["id"]: [r["cells"]["01-reference"]["status"], r["cells"]["03-adapter-untyped-client"]["status"]]
            for r in doc["causes"] if r["cells"]["03-adapter-untyped-client"]["status"] == "found"}
    assert cells == want
    if os.environ.get("AHP_SPEC_DIR"):  # the run named no --spec, and its folder cannot tell which it had
        marks = [c for r in doc2["causes"] for c in r["cells"].values() if c["status"] == "found"]
        assert all("spec folder" in c["replayNeeds"] and "--spec" not in c["replay"] for c in marks)
    capsys.readouterr()


# -- the applicability rule, on crafted run folders ----------------------------------------------


def _cause(cid: str, types: list[str], kinds: list[str]) -> dict[str, Any]:
    return {"id": cid, "summary": f"cause {cid}", "key": ["value", cid],
            "witnesses": {"invariants": ["INV-D01"], "actionTypes": types, "kinds": kinds, "count": 1}}


def _run(folder: Path, target: str, *, kinds: list[str], sent: dict[str, int], profile: str = "0.7.0",
         findings: list[dict[str, Any]] | None = None, steps: int = 100, verdict: str | None = None) -> Path:
    folder.mkdir(parents=True)
    entries = [{"cause": c, "invariant": "INV-D01", "severity": "divergence", "title": "t", "kind": c["witnesses"]["kinds"][0],
                "message": "m", "signature": c["id"], "steps": 1, "reproduced": True} for c in findings or []]
    report = {"format": "ahp-fuzz/report", "formatVersion": 1, "status": "finished", "target": target, "profile": profile,
              "kindsFuzzed": kinds, "steps": steps, "seed": 1, "findings": entries, "known": {},
              "coverage": {t: {"sent": n, "changed": n} for t, n in sent.items()},
              "verdict": verdict or ("found" if entries else "clean" if steps else "untested")}
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return folder


def test_a_cause_is_not_found_only_where_the_target_was_asked(tmp_path: Path) -> None:
    chat = _cause("aaaaaaaaaaaa", ["chat/draftChanged"], ["chat"])
    newer = _cause("bbbbbbbbbbbb", ["session/workingDirectoryReplaced"], ["session"])  # 0.8.0's
    a = _run(tmp_path / "a", "adapter:a", kinds=["chat", "session"], profile="0.8.0",
             sent={"chat/draftChanged": 5, "session/workingDirectoryReplaced": 3}, findings=[chat, newer])
    sent_chat = _run(tmp_path / "b", "adapter:b", kinds=["chat", "session"], sent={"chat/draftChanged": 2})
    no_chat = _run(tmp_path / "c", "adapter:c", kinds=["terminal"], sent={"terminal/data": 9})
    never_sent = _run(tmp_path / "d", "adapter:d", kinds=["chat"], sent={"chat/titleChanged": 4})
    untested = _run(tmp_path / "e", "adapter:e", kinds=["chat"], sent={}, steps=0)
    cols = [Column(column_name(i, d.name), d) for i, d in enumerate([a, sent_chat, no_chat, never_sent, untested], 1)]
    doc = build_matrix(cols, tmp_path / "out")
    assert doc["applicability"] == APPLICABILITY_RULE
    row = {r["id"]: {c: (cell["status"], cell.get("why", "")) for c, cell in r["cells"].items()} for r in doc["causes"]}
    c = [col.name for col in cols]
    assert row[chat["id"]][c[0]][0] == "found"
    assert row[chat["id"]][c[1]] == ("not-found", "")
    assert row[chat["id"]][c[2]] == ("not-applicable", "its kinds (chat) were not fuzzed")
    assert row[chat["id"]][c[3]] == ("not-applicable", "none of its action types was sent")
    assert row[chat["id"]][c[4]] == ("not-applicable", "the run tested nothing (untested)")
    # a 0.7.0 target was never sent an action type 0.8.0 introduced: not applicable, not agreement
    assert row[newer["id"]][c[1]] == ("not-applicable", "profile 0.7.0 has none of its action types")
    assert [t["verdict"] for t in doc["targets"]] == ["found", "clean", "clean", "clean", "untested"]
    assert main(["report", "--matrix", str(sent_chat), str(untested), "--out", str(tmp_path / "o2")]) == 2  # a hole
    assert main(["report", "--matrix", str(sent_chat), "--out", str(no_chat)]) == 2  # never into a run folder
    assert (no_chat / "report.json").is_file() and not (no_chat / "matrix.json").exists()


def test_applicability_of_a_cause_seen_only_on_pseudo_types() -> None:
    cause = _cause("cccccccccccc", ["<adversarial>"], ["chat"])
    target = {"runVerdict": "clean", "steps": 10, "kindsFuzzed": ["chat"], "profile": "0.7.0", "sent": {}}
    assert applicability(cause, target) == (True, "")
    assert applicability(cause, {**target, "kindsFuzzed": ["root"]}) == (False, "no state kind of the cause (chat) was fuzzed")


def test_a_target_that_cannot_start_is_a_column_with_an_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m"
    code = main(["matrix", "--target", "reference", "--target", f"adapter:{tmp_path / 'no-such-adapter'}",
                 "--chunks", "1", "--budget", "300s", "--out", str(out)])
    assert code == 2  # nothing found, and a column tested nothing: a hole, never "clean"
    doc = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    broken = doc["targets"][1]
    assert broken["verdict"] == "error" and broken["steps"] == 0
    assert doc["targets"][0]["verdict"] == "clean"
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-verdict="error"' in page and "1 of 2 column(s) clean" in page
    capsys.readouterr()


def test_column_names() -> None:
    assert column_name(1, "reference") == "01-reference"
    assert column_name(2, "adapter:{python} /x/tests/imitations/typed_client.py --flag") == "02-adapter-typed-client"
    assert column_name(3, "ts:/work/wild/owner+agent-host-protocol") == "03-ts-owner-agent-host-protocol"
    assert column_name(4, "ws://127.0.0.1:8080") == "04-ws-127-0-0-1-8080"


@pytest.mark.parametrize("argv, says", [
    (["matrix", "--out", "X"], "name at least one --target"),
    (["report", "--matrix", "nowhere-at-all"], "--matrix needs --out DIR"),
    (["report", "--matrix", "nowhere-at-all", "--out", "X"], "not a folder: nowhere-at-all"),
])
def test_usage_errors(argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_run_chunks_stops_after_n_chunks_with_the_same_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run --chunks N`: the matrix's runs compare on any machine (the budget is only a bound)."""
    reports = []
    for name, chunks in (("a", "2"), ("b", "2"), ("c", "1")):
        assert main(["run", "--chunks", chunks, "--budget", "300s", "--seed", "7", "--kinds", "chat",
                     "--out", str(tmp_path / name), "--quiet"]) == 0
        reports.append(json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8")))
    a, b, c = reports
    assert a["stoppedBecause"] == "chunks" and a["chunks"] == 2 and c["chunks"] == 1
    assert (a["steps"], a["examples"], a["coverage"]) == (b["steps"], b["examples"], b["coverage"])
    assert c["steps"] < a["steps"]
    assert a["announced"] is None  # the in-process model announces nothing
    capsys.readouterr()
