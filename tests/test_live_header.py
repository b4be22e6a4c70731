"""The header of a live run names the version spoken to the host, once (issue 33): not
"profile 0.7.0 (pinned …)" followed by a line correcting it. Bounded by chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import main
from harness.engine.events import RunStarted
from harness.report.console import ConsoleReporter


def _header(event: RunStarted) -> str:
    err = Console(record=True, width=400)
    ConsoleReporter(err, out=Console(record=True, width=400))(event)
    return err.export_text()


def test_the_header_names_the_version_spoken() -> None:
    older = _header(RunStarted("host-cmd:x", "0.7.0-main", 1, 60.0, ("live",), speaking="0.3.0"))
    assert "speaking 0.3.0" in older and "0.7.0" not in older
    same = _header(RunStarted("host:embedded", "0.7.0-main", 1, 60.0, ("live",), speaking="0.7.0"))
    assert "profile 0.7.0-main (speaking 0.7.0)" in same
    model = _header(RunStarted("reference", "0.7.0", 1, 60.0, ("chat",)))
    assert "profile 0.7.0," in model and "speaking" not in model


def test_a_live_run_says_the_spoken_version_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "--target", "host:embedded?defect=older-only", "--chunks", "1", "--chunk", "1", "--seed", "1",
          "--budget", "600s", "--quiet", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert "ahp-fuzz run: target host:embedded?defect=older-only, speaking 0.3.0," in err
    assert "profile: " not in err and "profile 0.7.0" not in err  # no line the next one corrects
