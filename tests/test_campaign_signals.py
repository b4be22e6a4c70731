"""A campaign stops cleanly on SIGINT or SIGTERM however it was started.

A process started with `&` from a non-interactive shell (a nightly job's script) inherits SIGINT
ignored, and Python then installs no KeyboardInterrupt handler of its own: the campaign installs
its handlers explicitly. Each scenario starts the campaign with SIGINT ignored (as `&` does),
waits for it to step, signals it and checks the report it leaves. The campaigns have a ten-minute
budget: one that did not stop on the signal would outlive the hang guard by minutes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 120.0


def _report(out: Path) -> dict[str, Any] | None:
    try:
        return json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return None


def _as_if_started_with_ampersand() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_campaign_started_in_the_background_stops_on_a_signal(tmp_path: Path, sig: signal.Signals,
                                                              code: int) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "campaign", "--minutes", "10", "--workers", "1", "--seed", "1",
         "--kinds", "terminal", "--coverage-every", "0", "--quiet", "--out", str(out)],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_as_if_started_with_ampersand,
    )
    try:
        until = time.monotonic() + GUARD_S
        while time.monotonic() < until and proc.poll() is None:
            report = _report(out)
            if report and report.get("steps", 0) > 0:
                break
            time.sleep(0.3)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, stderr
    report = _report(out)
    assert report is not None
    assert report["status"] == "interrupted" and report["stoppedBecause"] == sig.name
    assert (out / "index.html").is_file() and (out / "junit.xml").is_file()
    # an interrupted campaign is no passing test case (before: junit.xml showed one)
    junit = (out / "junit.xml").read_text()
    assert 'errors="1"' in junit and f"campaign interrupted ({sig.name})" in junit, junit
    lines = stdout.strip().splitlines()
    assert lines[0].startswith(f"interrupted ({sig.name}): ")
    assert lines[-1] == str(out / "index.html")  # `ahp-fuzz campaign … | tail -1`


def test_campaign_refuses_an_unwritable_out_before_starting(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "campaign", "--minutes", "1", "--workers", "1", "--quiet",
         "--out", "/proc/forbidden"],
        cwd=ROOT, capture_output=True, text=True, timeout=GUARD_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "--out /proc/forbidden: cannot write there" in done.stderr
    assert "ahp-fuzz campaign:" not in done.stderr  # refused before the campaign began
