"""Output conventions every command keeps: results on stdout, progress and notes on stderr,
no hard wrapping, and options checked before anything starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.invariants.base import Violation
from harness.live.replay import LiveReplayResult, result_lines

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def test_replay_prints_each_also_line_once() -> None:
    """A violation seen by three clients (or three attempts) was printed three times."""
    seen = Violation("INV-045", "violation", "echo went to client 2")
    other = Violation("INV-041", "violation", "serverSeq repeated")
    result = LiveReplayResult(True, step=3, message="fired", violations=[seen, seen, other, seen])
    finding = SimpleNamespace(invariant="INV-041", severity="violation", steps=[{}] * 4, message="m")
    lines = result_lines(result, finding, "host:embedded")  # type: ignore[arg-type]
    assert [line for line in lines if "also:" in line] == ["  also: INV-045 [violation] echo went to client 2"]


def test_run_refuses_an_unwritable_out_before_the_run(tmp_path: Path) -> None:
    done = _cli("run", "--out", "/proc/forbidden", "--budget", "1s")
    assert done.returncode == 2, done.stderr
    assert "--out /proc/forbidden: cannot write there" in done.stderr
    assert "ahp-fuzz run:" not in done.stderr and "internal error" not in done.stderr


def test_conformance_prints_the_profile_on_stderr_and_never_wraps(spec_dir: Any) -> None:
    """docs/profiles.md: the `profile:` line goes to stderr; the header is one line even on an
    80-column terminal (COLUMNS=80)."""
    done = _cli("conformance", "--target", "reference", "--spec", str(spec_dir.path), env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(line.startswith("profile: ") for line in done.stderr.splitlines()), done.stderr
    assert "profile: " not in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("fixtures "))
    assert len(header) > 80 and header.endswith(")"), header  # whole: the profile's reason included


@pytest.mark.parametrize("command", [["run", "--budget", "1s"], ["campaign", "--minutes", "1", "--workers", "1"]])
def test_out_that_is_a_file_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    done = _cli(*command, "--out", str(a_file))
    assert done.returncode == 2 and "exists and is not a folder" in done.stderr


def test_every_target_spelling_is_in_the_docs_table_and_the_error_message() -> None:
    """docs/adapters.md said `ws://` and `host:embedded` were "not available yet" and lacked
    `host-cmd:`; `--target nosuch:x` listed only the reducer spellings."""
    from harness.targets.base import open_target
    from harness.targets.live import LIVE_PREFIXES

    spellings = ["reference", "adapter:", "ts:", "js:", *LIVE_PREFIXES]
    table = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8").split("## Target spellings", 1)[1]
    table = table.split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    with pytest.raises(ValueError) as info:
        open_target("nosuch:x")
    for spelling in spellings:
        assert any(f"`{spelling}" in row for row in rows), f"docs/adapters.md: no row for {spelling}"
        assert spelling in str(info.value), f"the error does not name {spelling}"
    assert "not available yet" not in table


def test_a_run_report_records_the_folder_it_ran_in(tmp_path: Path) -> None:
    """`report.json` says where the command ran (`cwd`), so its relative `--out` and finding paths
    resolve from anywhere (the HTML page's rerun and replay commands); before, it did not."""
    # bounded by one chunk, not by seconds: a budget of a few seconds was spent starting up on a
    # loaded machine (issue 35); the budget is only a hang guard here
    args = ["run", "--out", "rel", "--budget", "600s", "--chunks", "1", "--chunk", "3", "--kinds", "root"]
    done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "rel" / "report.json").read_text())
    assert report["cwd"] == str(tmp_path)
    assert report["command"][-len(args):] == args and report["stoppedBecause"] == "chunks"
