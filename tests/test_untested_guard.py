"""The guard of tests/untested_guard.py bites: an inner pytest session whose tests start runs that
test nothing — `--budget 1ms` is spent before any step on every machine, in this process or in
a subprocess — fails those tests unless they are marked `expect_untested`; a run bounded by
`--chunks` passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

INNER = '''
import subprocess
import sys

import pytest

from harness.cli import main


def _run(tmp_path, *budget):
    return main(["run", "--kinds", "terminal", "--seed", "1", "--quiet", "--out", str(tmp_path / "r"), *budget])


def test_in_process_untested(tmp_path):
    assert _run(tmp_path, "--budget", "1ms") == 2  # passes on its own: the guard fails it


def test_subprocess_untested(tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--budget", "1ms", "--kinds", "terminal",
                           "--quiet", "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert done.returncode == 2


@pytest.mark.expect_untested
def test_marked_untested(tmp_path):
    assert _run(tmp_path, "--budget", "1ms") == 2


def test_bounded_by_chunks(tmp_path):
    assert _run(tmp_path, "--budget", "600s", "--chunks", "1", "--chunk", "2", "--max-steps", "3") == 0
'''


def test_a_run_that_tested_nothing_fails_its_test_unless_marked(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "AHP_FUZZ_VERDICT_LOG" and not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("AHP_SPEC_DIR", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.untested_guard", "-p", "no:cacheprovider",
                           "-q", "-rA", "test_inner.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    out = done.stdout
    assert done.returncode == 1, out[-3000:] + done.stderr[-2000:]
    assert "FAILED test_inner.py::test_in_process_untested" in out, out[-3000:]
    assert "FAILED test_inner.py::test_subprocess_untested" in out, out[-3000:]
    assert "PASSED test_inner.py::test_marked_untested" in out, out[-3000:]
    assert "PASSED test_inner.py::test_bounded_by_chunks" in out, out[-3000:]
    assert "tested nothing (untested)" in out and "budget ran out before the first step" in out
    assert "2 failed, 2 passed" in out, out[-3000:]
