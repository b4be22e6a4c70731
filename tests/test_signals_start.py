"""SIGINT and SIGTERM at every moment of a command's start (issue 35): 130 / 143 and one line
saying nothing was fuzzed, never a Python traceback. The moments are staged, not timed: in this
process the command signals itself from inside the phase named (parsing, preparing the run
folder, starting the target, reading its announcement); in a real process the signal is sent
as soon as the process has a handler for it (read from /proc, not guessed from a clock)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harness.cli._profiles as profiles
import harness.cli.run as run_cli
from harness.cli import main
from tests.faults import AHP_FUZZ, ROOT, wait_for


def _signalling(sig: signal.Signals, then: Callable[..., Any]) -> Callable[..., Any]:
    def staged(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), sig)  # delivered at the next bytecode, inside this phase
        return then(*args, **kwargs)

    return staged


PHASES = {
    "parsing": ("harness.cli.run.register", None),
    "preparing --out": ("prepare_out", run_cli),
    "starting the target": ("open_target_or_usage", run_cli),
    "reading the announcement": ("after_open", profiles),
}


@pytest.mark.parametrize("phase", sorted(PHASES))
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_at_each_moment_of_start_up_is_one_line_and_130_or_143(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        phase: str, sig: signal.Signals, code: int) -> None:
    name, module = PHASES[phase]
    if module is None:
        monkeypatch.setattr(name, _signalling(sig, run_cli.register))
    else:
        monkeypatch.setattr(module, name, _signalling(sig, getattr(module, name)))
    out = tmp_path / "run"
    assert main(["run", "--budget", "600s", "--chunks", "1", "--kinds", "terminal", "--out", str(out)]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"ahp-fuzz: interrupted ({sig.name})"), err
    assert "before" in last or "nothing was fuzzed" in last, last
    assert not (out / "report.json").exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # main put the handlers back


def _catches(pid: int, sig: signal.Signals) -> bool:
    """The process has a handler for `sig` (its SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(mask >> (sig - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_as_soon_as_the_process_can_take_it_is_no_traceback(
        tmp_path: Path, sig: signal.Signals, code: int) -> None:
    """Ctrl-C in the import phase printed a traceback. The signal is sent as soon as ahp-fuzz has
    a handler for SIGTERM (its package is loading then, or it runs already)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*AHP_FUZZ, "run", "--budget", "600s", "--chunks", "1", "--out", str(tmp_path / "r")],
                            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        # ahp-fuzz's first handler is set as the package starts loading (SIGTERM's: Python has SIGINT's from
        # its own start); from that moment on, every signal is one line
        wait_for(lambda: _catches(proc.pid, signal.SIGTERM) or proc.poll() is not None, 300, "ahp-fuzz's handler")
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"ahp-fuzz: interrupted ({sig.name})"), err
    if not (tmp_path / "r" / "report.json").exists():
        assert "nothing was fuzzed" in last or "before anything ran" in last or "nothing was run" in last, last
    else:
        assert '"status": "interrupted"' in (tmp_path / "r" / "report.json").read_text()
