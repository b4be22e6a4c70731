"""`index.html` read at a glance (issue 18): the verdict banner, findings grouped by root cause,
absolute replay and rerun commands, the known upstream issues by REDUCERS.md §11 item, what the
failing step did on each side, and a reason for every module at 0 % branch coverage.

These read the generated HTML (no browser); tests/test_report_html_browser.py renders it in
headless Chromium at 1400 px."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.corpus.finding import Finding, TraceStep
from harness.reference import Model, Profile
from harness.report.html import render, write_html
from harness.report.html_commands import run_origin
from harness.report.html_sections import zero_coverage_reason


class Page(HTMLParser):
    """Text of the elements the tests read, keyed by id, class or data attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict[str, str]] = []
        self.text: dict[str, str] = {}
        self.attrs: dict[str, dict[str, str]] = {}
        self.causes: list[dict[str, Any]] = []
        self.items: list[str] = []
        self.modules: dict[str, str] = {}
        self.sides: dict[str, str] = {}
        self.replays: list[str] = []

    def _key(self, a: dict[str, str]) -> str | None:
        for k in ("id", "data-side", "data-module", "data-item"):
            if k in a:
                return f"{k}={a[k]}"
        return f"class={a['class']}" if "class" in a else None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        a["_tag"] = tag
        if tag in ("br", "meta"):
            return
        self.stack.append(a)
        key = self._key(a)
        if key:
            self.attrs.setdefault(key, a)
        if a.get("class") == "cause":
            self.causes.append({"id": a.get("data-cause"), "findings": 0, "title": None})
        if tag == "div" and a.get("class") == "finding" and self.causes:
            self.causes[-1]["findings"] += 1
        if "data-item" in a:
            self.items.append(a["data-item"])

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            a = self.stack.pop()
            if a["_tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for a in self.stack:
            key = self._key(a)
            if key:
                self.text[key] = self.text.get(key, "") + data
        top = self.stack[-1] if self.stack else {}
        if top.get("class") == "replay":
            self.replays.append(data)
        if top.get("_tag") == "h3" and self.causes and self.causes[-1]["title"] is None:
            self.causes[-1]["title"] = data


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    return p


def base_report(**extra: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "format": "ahp-fuzz/report", "formatVersion": 1, "status": "finished", "stoppedBecause": "budget",
        "target": "reference", "profile": "0.7.0", "seed": 1, "elapsedSeconds": 12.5, "examples": 9,
        "steps": 340, "stepsPerSecond": 27.2, "findings": [], "known": {}, "coverage": {},
        "command": ["ahp-fuzz", "run", "--seed", "1"],
    }
    report.update(extra)
    return report


def _finding(action: dict[str, Any], observed: Any, *, invariant: str = "DIVERGENCE") -> Finding:
    model = Model(Profile.named("0.7.0"))
    initial = {"turns": [], "status": 0}
    return Finding(
        invariant=invariant, severity="divergence", title="differs from the reference model", message="m",
        profile="0.7.0", target="adapter:my-impl", kind="chat", initial=initial,
        steps=[TraceStep(action, 2_000)], failing_step=0,
        expected=model.reduce("chat", initial, action, 2_000), observed=observed,
    )


def _entry(f: Finding, file: str, **extra: Any) -> dict[str, Any]:
    return {"invariant": f.invariant, "severity": f.severity, "title": f.title, "kind": f.kind,
            "message": f.message, "steps": len(f.steps), "signature": f.signature, "reproduced": True,
            "file": file, "replay": f"ahp-fuzz replay {shlex.quote(file)}", **extra}


def _save(run: Path, f: Finding) -> Path:
    path = run / "findings" / f.file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(f.to_json(path)))
    return path


# -- the verdict banner ---------------------------------------------------------------------------

def _verdict(report: dict[str, Any], tmp_path: Path) -> tuple[str, str, str]:
    page = parse(render(report, tmp_path))
    banner = page.attrs["id=verdict"]
    return banner["data-verdict"], page.text["class=headline"].strip(), page.text["id=verdict"]


def test_banner_says_clean_for_a_run_without_findings(tmp_path: Path) -> None:
    key, headline, text = _verdict(base_report(), tmp_path)
    assert (key, headline) == ("clean", "clean")
    assert "no findings in 340 steps in 12.5 s" in text


def test_banner_counts_findings_and_root_causes(tmp_path: Path) -> None:
    cause = {"id": "aaaaaaaaaaaa", "summary": "s", "witnesses": {}}
    entries = [{"invariant": "INV-016", "signature": "1", "cause": cause},
               {"invariant": "INV-017", "signature": "2", "cause": cause},
               {"invariant": "INV-020", "signature": "3"}]
    key, headline, _ = _verdict(base_report(findings=entries), tmp_path)
    assert (key, headline) == ("findings", "3 findings (2 root causes)")
    key, headline, _ = _verdict(base_report(findings=entries[2:]), tmp_path)
    assert (key, headline) == ("findings", "1 finding")


def test_banner_flags_an_interrupted_run_before_its_findings(tmp_path: Path) -> None:
    report = base_report(status="interrupted", stoppedBecause="SIGINT",
                         findings=[{"invariant": "INV-016", "signature": "1"}])
    key, headline, text = _verdict(report, tmp_path)
    assert key == "interrupted" and headline == "interrupted — 1 finding so far"
    assert "stopped early (SIGINT)" in text and "covers only that part" in text


def test_banner_flags_an_error_with_its_message(tmp_path: Path) -> None:
    report = base_report(status="error", stoppedBecause="error", error="adapter exited with status 3")
    key, headline, text = _verdict(report, tmp_path)
    assert (key, headline) == ("error", "error")
    assert "the run failed: adapter exited with status 3" in text


def test_banner_flags_a_run_that_died(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    report = base_report(status="running", pid=int(gone.stdout))
    key, headline, text = _verdict(report, tmp_path)
    assert key == "died" and headline == "died without finishing"
    assert f"process {int(gone.stdout)} is gone" in text


def test_banner_flags_a_live_run_and_a_partial_merge(tmp_path: Path) -> None:
    key, headline, _ = _verdict(base_report(status="running", pid=os.getpid()), tmp_path)
    assert (key, headline) == ("running", "still running")
    key, headline, text = _verdict(base_report(status="partial", findings=[{"invariant": "INV-1"}]), tmp_path)
    assert (key, headline) == ("partial", "partial — 1 finding") and "did not all finish" in text


def test_banner_comes_before_everything_else(tmp_path: Path) -> None:
    html = render(base_report(), tmp_path)
    assert html.index('id="verdict"') < html.index('id="summary"') < html.index('id="findings"')


# -- commands: rerun and replay, absolute -----------------------------------------------------------

def test_replay_and_rerun_are_absolute_when_the_run_used_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run started in /…/proj with `--out reports/r1` and `.venv/bin/ahp-fuzz` records relative
    paths; the page, built from elsewhere, shows commands that work from any folder."""
    proj = tmp_path / "proj"
    run = proj / "reports" / "r1"
    f = _finding({"type": "chat/draftChanged", "draft": {"text": "x"}}, {"turns": [], "status": 0})
    _save(run, f)
    rel_file = f"reports/r1/findings/{f.file_name}"
    entry = _entry(f, rel_file, replay=f".venv/bin/ahp-fuzz replay {rel_file}")
    report = base_report(command=[".venv/bin/ahp-fuzz", "run", "--target", "adapter:./my impl", "--out", "reports/r1"],
                         findings=[entry])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    page = parse(render(report, run))
    replay = "".join(page.replays)
    assert replay == f"{proj}/.venv/bin/ahp-fuzz replay {run / 'findings' / f.file_name}"
    rerun = page.text["id=rerun"]
    assert rerun == (f"cd {proj} && {proj}/.venv/bin/ahp-fuzz run --target 'adapter:./my impl' "
                     "--out reports/r1 --seed 1")  # the seed the report records, from the clock
    assert "does not record" not in page.text["id=verdict"]


def test_origin_from_the_default_out_folder_and_from_cwd(tmp_path: Path) -> None:
    run = tmp_path / "proj" / "reports" / "run-20260101-000000-seed1"
    run.mkdir(parents=True)
    assert run_origin(base_report(command=["ahp-fuzz", "run"]), run) == tmp_path / "proj"
    assert run_origin(base_report(command=["ahp-fuzz", "run"], cwd="/somewhere"), run) == Path("/somewhere")
    # absolute --out, bare program: nothing tells where it started, and nothing needs to
    assert run_origin(base_report(command=["ahp-fuzz", "run", "--out", str(run)]), run) is None


def test_an_unknown_origin_is_said(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    report = base_report(command=["./somewhere/ahp-fuzz", "run", f"--out={run}"])
    page = parse(render(report, run))
    assert page.text["id=rerun"] == f"./somewhere/ahp-fuzz run --out={run} --seed 1"
    assert "report.json does not record it" in page.text["id=verdict"]
    # a command that names no relative path works from anywhere: nothing to warn about
    page = parse(render(base_report(command=["ahp-fuzz", "run", "--target", "adapter:/opt/impl --x", f"--out={run}"]), run))
    assert "does not record" not in page.text["id=verdict"]
    page = parse(render(base_report(command=["ahp-fuzz", "run", "--target", "adapter:node impl/main.js"]), run))
    assert "report.json does not record it" in page.text["id=verdict"]


# -- findings by root cause -------------------------------------------------------------------------

def test_findings_are_grouped_by_cause_summary_first(tmp_path: Path) -> None:
    run = tmp_path / "run"
    a = _finding({"type": "chat/draftChanged", "draft": {"text": "a"}}, {"turns": [], "status": 0})
    b = _finding({"type": "chat/draftChanged", "draft": {"text": "bb"}}, {"turns": [], "status": 0})
    c = _finding({"type": "chat/draftChanged", "draft": {"text": "ccc"}}, {"turns": [], "status": 0},
                 invariant="INV-020")
    cause = {"id": "0123456789ab", "summary": "the target ignores chat/draftChanged",
             "witnesses": {"invariants": ["DIVERGENCE", "INV-016"], "actionTypes": ["chat/draftChanged"],
                           "kinds": ["chat"], "count": 7}}
    entries = [_entry(a, str(_save(run, a)), cause=cause), _entry(b, str(_save(run, b)), cause=cause),
               _entry(c, str(_save(run, c)))]
    page = parse(render(base_report(findings=entries), run))
    assert [(x["id"], x["findings"]) for x in page.causes] == [("0123456789ab", 2), (None, 1)]
    assert page.causes[0]["title"] == "the target ignores chat/draftChanged"
    witnesses = page.text["class=witnesses"]
    assert "DIVERGENCE" in witnesses and "INV-016" in witnesses and "chat/draftChanged" in witnesses
    assert "7 witness trace(s)" in witnesses


# -- what the failing step did ---------------------------------------------------------------------

def test_step_diff_shows_a_target_that_changed_when_the_model_did_not(tmp_path: Path) -> None:
    """The old page diffed the model's before/after only, and printed "(no change)" next to a
    target that had changed the state."""
    run = tmp_path / "run"
    action = {"type": "chat/turnCancelled", "turnId": "t9"}  # no active turn: a no-op for the model
    f = _finding(action, {"turns": [], "status": 8})
    assert f.expected == f.initial  # the crafted premise
    page = parse(render(base_report(findings=[_entry(f, str(_save(run, f)))]), run))
    assert "$.status: 0 → 8" in page.text["data-side=target"]
    assert page.text["data-side=model"].strip().endswith("(no change)")
    assert "the target changed the state; the reference model left it unchanged" in page.text["class=said"]


def test_step_diff_shows_a_model_change_the_target_missed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    f = _finding({"type": "chat/draftChanged", "draft": {"text": "new"}}, {"turns": [], "status": 0})
    page = parse(render(base_report(findings=[_entry(f, str(_save(run, f)))]), run))
    assert '$.draft: <absent> → {"text":"new"}' in page.text["data-side=model"]
    assert page.text["data-side=target"].strip().endswith("(no change)")
    assert "the reference model changed the state; the target left it unchanged" in page.text["class=said"]


# -- known upstream issues --------------------------------------------------------------------------

def test_known_issues_are_listed_by_their_reducers_item(tmp_path: Path) -> None:
    known = {
        "INV-022.probe": {"knownIssue": "REDUCERS.md §11 item 14 (turnStarted over an active turn discards it)",
                          "kinds": ["chat"], "example": "probe: turn lost", "count": 58},
        "INV-022.reducer": {"knownIssue": "REDUCERS.md §11 item 14 (turnStarted over an active turn discards it)",
                            "kinds": ["chat"], "example": "turn lost", "count": 11},
        "INV-051": {"kinds": ["chat"], "count": 3},  # no knownIssue recorded: the registry's text
        "INV-031.reducer": {"knownIssue": "REDUCERS.md §11 items 5–6 (reducers cannot see the other channel)",
                            "kinds": ["session"], "example": "stale chat subset", "count": 2},
    }
    page = parse(render(base_report(known=known), tmp_path))
    assert page.items == ["§11 items 5–6", "§11 item 12", "§11 item 14"]
    row14 = page.text["data-item=§11 item 14"]
    assert "turnStarted over an active turn discards it" in row14
    assert "INV-022.probe (58)" in row14 and "INV-022.reducer (11)" in row14
    assert "toolCallComplete copies every key of result" in page.text["data-item=§11 item 12"]
    # the banner counts and names the items (three), not the invariants (four)
    assert "3 known upstream issues seen (REDUCERS.md §11 items 5–6, 12, 14:" in page.text["id=verdict"]


# -- branch coverage: a word on every module at 0 % ---------------------------------------------------

def test_modules_at_zero_percent_say_why(tmp_path: Path) -> None:
    files = {
        "harness/reference/annotations.py": {"numBranches": 2, "coveredBranches": 0, "percentBranches": 0.0,
                                             "missingBranches": [[40, 41]], "missingLines": []},
        "harness/reference/codec.py": {"numBranches": 4, "coveredBranches": 0, "percentBranches": 0.0,
                                       "missingBranches": [], "missingLines": []},
        "harness/reference/turns.py": {"numBranches": 10, "coveredBranches": 10, "percentBranches": 100.0,
                                       "missingBranches": [], "missingLines": []},
    }
    report = base_report(kinds=["chat"], branchCoverage={"percentBranches": 50.0, "files": files})
    page = parse(render(report, tmp_path))
    assert "reduces the annotations state kind, not fuzzed in this run (fuzzed: chat)" in page.text["data-module=harness/reference/annotations.py"]
    assert "not on the reducer path" in page.text["data-module=harness/reference/codec.py"]
    assert "not" not in page.text["data-module=harness/reference/turns.py"]
    assert "class=reducer-path" not in page.text  # a report of before `reducerPath`: no line
    from harness.report.coverage import reducer_path
    with_path = base_report(kinds=["chat"], branchCoverage={"percentBranches": 62.5, "files": files,
                                                            "reducerPath": reducer_path(files)})
    line = parse(render(with_path, tmp_path)).text["class=reducer-path"]
    assert "10/12 branches, 83.33%" in line and "codec.py" in line and "turns.py" not in line
    # the kind fuzzed, its actions never sent
    both = base_report(kinds=["chat", "annotations"], coverage={"chat/delta": {"sent": 4, "changed": 4}})
    reason = zero_coverage_reason("harness/reference/annotations.py", both)
    assert re.match(r"not reached: none of the \d+ action types it handles \(annotations/entryRemoved, .*\) was sent$",
                    reason), reason
    sent = copy.deepcopy(both)
    sent["coverage"]["annotations/set"] = {"sent": 5, "changed": 5}
    reason = zero_coverage_reason("harness/reference/annotations.py", sent)
    assert reason.startswith("5 steps of its action types ran") and "annotations/removed" in reason


# -- charts and the page's self-containment ----------------------------------------------------------

def test_write_html_of_a_report_file(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text(json.dumps(base_report(status="interrupted")))
    html = write_html(tmp_path).read_text()
    assert 'data-verdict="interrupted"' in html
    assert "<link" not in html and "http" not in html.split("<script")[0].replace("http-equiv", "")


def test_the_known_counts_say_what_each_counts(tmp_path: Path) -> None:
    """Issue 24: the page showed "known-issue checks hit 14" beside "11 known upstream issues"
    with no word of the difference: one §11 item is seen by several checks."""
    item = "REDUCERS.md §11 item 2 (x)"
    report = base_report(known={"INV-014": {"knownIssue": item, "kinds": ["session"], "count": 3},
                                "INV-014.probe": {"knownIssue": item, "kinds": ["session"], "count": 1}})
    html = render(report, tmp_path)
    assert "1 known upstream issue seen" in html and "by 2 checks" in html
    assert "checks that saw a known issue" in html and "known-issue checks hit" not in html


def _checked(html: str, invariant: str) -> str:
    row = html.split(f'data-invariant="{invariant}">', 1)[1].split("</tr>", 1)[0]
    return row.split("<td>")[5].split("</td>")[0]


def test_the_published_schema_checks_say_off_in_a_run_without_a_spec_folder(tmp_path: Path) -> None:
    """Issue 24: INV-007's row said "every step" in a campaign that had no spec folder."""
    off = render(base_report(schemaChecks={"payloadSchema": None, "publishedSchema": None}), tmp_path)
    for inv in ("INV-007", "INV-007.published"):
        assert _checked(off, inv).startswith("off in this run: no spec folder"), _checked(off, inv)
    on = render(base_report(schemaChecks={"payloadSchema": "0.7.0", "publishedSchema": "0.7.0"}), tmp_path)
    assert _checked(on, "INV-007") == "every step"
    assert _checked(render(base_report(), tmp_path), "INV-007") == "every step"  # an older report: as listed
