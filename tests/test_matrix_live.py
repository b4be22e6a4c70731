"""The matrix joins live columns on causes (issue 33): two embedded-host defects that close the
connection on a non-JSON frame — one on that frame only, one on every bad frame — are one row
with two marks; each frame class the second closes on is its own row. Runs bounded by chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.causes.live import closed_cause
from harness.cli import main

pytestmark = [pytest.mark.live]


def _run(tmp: Path, defect: str, chunks: int) -> Path:
    out = tmp / defect
    # the frames of the campaign's preflight reach both defects in its first chunks (each
    # finding ends a chunk); the budget is only a hang guard
    code = main(["run", "--target", f"host:embedded?defect={defect}", "--chunks", str(chunks), "--seed", "1",
                 "--budget", "600s", "--out", str(out), "--quiet"])
    assert code == 1
    return out


def test_two_live_defect_columns_sharing_a_cause_show_one_row(tmp_path: Path) -> None:
    only = _run(tmp_path, "crash-on-invalid-json", 1)
    every = _run(tmp_path, "no-frame-catch", 8)
    out = tmp_path / "matrix"
    assert main(["report", "--matrix", str(only), str(every), "--out", str(out)]) == 0
    doc = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    cols = [t["column"] for t in doc["targets"]]
    shared = closed_cause("a non-JSON frame").id
    rows = [r for r in doc["causes"] if r["id"] == shared]
    assert len(rows) == 1
    assert {c: cell["status"] for c, cell in rows[0]["cells"].items()} == dict.fromkeys(cols, "found")
    null = [r for r in doc["causes"] if r["id"] == closed_cause("a null frame").id]
    assert len(null) == 1
    # the defect that answers a null frame properly was asked (a live run) and did not close on it
    assert {c: cell["status"] for c, cell in null[0]["cells"].items()} == {cols[0]: "not-found", cols[1]: "found"}
