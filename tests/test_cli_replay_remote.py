"""`ahp-fuzz replay` of a live finding keeps the loopback rule of `run`: a host elsewhere needs
`--allow-remote` (nothing is sent to it in this test: the refusal comes before any connection)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.live


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )


def test_replay_of_a_live_finding_refuses_a_remote_host_without_allow_remote(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # stops at its first finding; the budget and the request timeout are hang guards only
    found = _cli("run", "--target", "host:embedded?defect=seq-repeat", "--budget", "120s", "--timeout", "60",
                 "--seed", "1", "--max-findings", "1", "--quiet", "--out", str(out))
    assert found.returncode == 1, found.stderr
    (finding,) = sorted((out / "findings").glob("*.json"))
    # 192.0.2.0/24 is TEST-NET-1: never routed, and never contacted here.
    refused = _cli("replay", str(finding), "--target", "ws://192.0.2.1:9")
    assert refused.returncode == 2
    assert "--allow-remote" in refused.stderr
    assert "--allow-remote" in _cli("replay", "--help").stdout
