"""The libFuzzer entry point (harness/campaign/atheris_entry.py): bytes in, one machine run out."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness.campaign.atheris_entry import build

ROOT = Path(__file__).resolve().parent.parent


def test_one_input_runs_the_machine_on_arbitrary_bytes(tmp_path: Path) -> None:
    one_input = build(kinds=("chat", "session"), findings_dir=tmp_path / "findings", max_steps=10)
    rng = random.Random(7)
    for n in range(60):
        one_input(bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 600))))
        if n % 20 == 0:
            one_input(b"")
    assert not (tmp_path / "findings").exists()  # the reference model against itself: clean


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                    reason="atheris is not installed (optional: pip install 'ahp-fuzz[atheris]')")
def test_atheris_drives_the_entry_point(tmp_path: Path) -> None:
    env = {**os.environ, "AHP_FUZZ_KINDS": "chat", "AHP_FUZZ_FINDINGS": str(tmp_path / "findings")}
    cmd = [sys.executable, "-m", "harness.campaign.atheris_entry", "-runs=200", "-seed=1", "-len_control=0",
           "-max_len=2048", str(tmp_path / "corpus")]
    (tmp_path / "corpus").mkdir()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done 200 runs" in done.stderr
    assert any((tmp_path / "corpus").iterdir()), "libFuzzer kept no input: no coverage feedback reached it"
