"""The matrix shows failed round-trip fixtures as rows (issue 35: one was only a count in its
column's header), joined on their name across targets, and orders every row — causes and
fixtures alike — by how many targets show it; a failing reducer fixture, a behaviour the fuzz
runs find as a cause, stays a count. Crafted run folders: no run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from harness.report.html_matrix import render_matrix
from harness.report.matrix import CONFORMANCE_FORMAT, Column, build_matrix, column_name

from .test_matrix import ROOT, _cause, _run


def _conformance(folder: Path, target: str, results: list[tuple[str, str, bool]], spec: str | None = None) -> None:
    doc: dict[str, Any] = {
        "format": CONFORMANCE_FORMAT, "formatVersion": 1, "target": target, "profile": "0.7.0", "spec": spec,
        "notes": [], "error": None,
        "results": [{"family": f, "name": n, "passed": ok, "problems": [] if ok else [f"{n}: differs at $.title"]}
                    for f, n, ok in results],
    }
    (folder / "conformance.json").write_text(json.dumps(doc), encoding="utf-8")


def test_failed_fixtures_are_rows_ordered_by_how_many_targets_show_them(tmp_path: Path) -> None:
    one = _cause("aaaaaaaaaaaa", ["chat/draftChanged"], ["chat"])
    sent = {"chat/draftChanged": 3}
    a = _run(tmp_path / "a", "adapter:a", kinds=["chat"], sent=sent, findings=[one])
    b = _run(tmp_path / "b", "adapter:b", kinds=["chat"], sent=sent)
    c = _run(tmp_path / "c", "adapter:c", kinds=["chat"], sent=sent)
    d = _run(tmp_path / "d", "adapter:d", kinds=["chat"], sent=sent)  # no fixture results
    _conformance(a, "adapter:a", [("round-trip", "rt-007", False), ("round-trip", "rt-010", True),
                                  ("reducer:chat", "020", False)], spec="/spec")
    _conformance(b, "adapter:b", [("round-trip", "rt-007", False), ("round-trip", "rt-010", False)])
    _conformance(c, "adapter:c", [("round-trip", "rt-007", False), ("round-trip", "rt-010", True)])
    cols = [Column(column_name(i, f.name), f) for i, f in enumerate([a, b, c, d], 1)]
    doc = build_matrix(cols, tmp_path / "out")
    jsonschema.validate(doc, json.loads((ROOT / "docs" / "matrix.schema.json").read_text(encoding="utf-8")))

    ids = [r["id"] for r in doc["causes"]]
    # most targets first; then by severity (a failing fixture is a violation, the cause a divergence)
    assert ids == ["fixture:round-trip:rt-007", "fixture:round-trip:rt-010", one["id"]]  # no reducer row
    assert [r["foundBy"] for r in doc["causes"]] == [3, 1, 1]  # most targets first
    rt = doc["causes"][0]
    assert rt["shared"] and rt["id"] in doc["sharedCauses"]
    status = {col: cell["status"] for col, cell in rt["cells"].items()}
    assert status == {cols[0].name: "found", cols[1].name: "found", cols[2].name: "found",
                      cols[3].name: "not-applicable"}
    found = rt["cells"][cols[0].name]
    assert found["invariant"] == "FIXTURE" and "differs at $.title" in found["message"]
    assert found["replay"] == "ahp-fuzz conformance --target adapter:a --spec /spec"
    other = next(r for r in doc["causes"] if r["id"] == "fixture:round-trip:rt-010")
    assert other["cells"][cols[0].name]["status"] == "not-found"  # it passed there
    assert "reducer:chat 020" in doc["targets"][0]["fixtures"]["failing"]  # a count and a line, as before
    # the columns' cause counts are the fuzz runs' causes; failing fixtures show in "fixtures"
    assert [t["causes"]["found"] for t in doc["targets"]] == [1, 0, 0, 0]
    assert [t["verdict"] for t in doc["targets"]] == ["found", "found", "found", "clean"]

    page = render_matrix(doc)
    assert 'data-cause="fixture:round-trip:rt-007"' in page
    assert page.index('data-cause="fixture:round-trip:rt-007"') < page.index(f'data-cause="{one["id"]}"')
    assert "upstream round-trip fixture rt-007 fails" in page
