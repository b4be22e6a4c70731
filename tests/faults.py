"""Helpers for the fault-injection tests: run `ahp-fuzz` as a real subprocess against
tests/fault_adapter.py and look at what it left behind (exit code, time, report, processes)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FAULT_ADAPTER = Path(__file__).resolve().with_name("fault_adapter.py")
#: How ahp-fuzz is started in these tests (the program the replay commands name).
AHP_FUZZ = [sys.executable, "-m", "harness.cli"]


def adapter(*flags: str) -> str:
    """An `adapter:` target spelling for the fault adapter with `flags`."""
    return "adapter:" + shlex.join([sys.executable, str(FAULT_ADAPTER), *flags])


@dataclass
class Finished:
    rc: int
    elapsed: float
    stdout: str
    stderr: str
    out: Path

    def report(self) -> dict[str, Any]:
        return json.loads((self.out / "report.json").read_text(encoding="utf-8"))

    def finding_files(self) -> list[Path]:
        return sorted((self.out / "findings").glob("*.json"))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("AHP_SPEC_DIR", None)  # the profile is the pinned one whatever the test session has
    return env


def start(tmp: Path, *args: str, out: str = "run") -> tuple[subprocess.Popen[str], Path]:
    """Start `ahp-fuzz run --out tmp/out ARGS` in its own process group (as a shell would).

    It runs in the repository (where Hypothesis keeps its cache of the code's constants: in a
    fresh folder, collecting them costs seconds of the first example)."""
    folder = tmp / out
    proc = subprocess.Popen(
        [*AHP_FUZZ, "run", "--out", str(folder), "--seed", "1", *args],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, folder


def finish(proc: subprocess.Popen[str], folder: Path, started: float, timeout: float = 90.0) -> Finished:
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(f"ahp-fuzz did not end within {timeout} s\n{stderr}") from None
    return Finished(proc.returncode, time.monotonic() - started, stdout, stderr, folder)


def run(tmp: Path, *args: str, out: str = "run", timeout: float = 90.0) -> Finished:
    t0 = time.monotonic()
    proc, folder = start(tmp, *args, out=out)
    return finish(proc, folder, t0, timeout)


def cli(cwd: Path, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Any other ahp-fuzz command, as a subprocess in `cwd`."""
    return subprocess.run(
        [*AHP_FUZZ, *args], cwd=cwd, env=_env(), capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def read_report(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def gone(pid: int) -> bool:
    """The process no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def assert_gone(*pidfiles: Path, timeout: float = 60.0) -> None:
    """Every pid written to `pidfiles` is gone (waiting up to `timeout` for the kernel: a bound on a
    wait that ends at once when nothing leaked, never a measure of speed)."""
    pids = [int(p.read_text()) for p in pidfiles]
    try:
        wait_for(lambda: all(gone(p) for p in pids), timeout, f"processes {pids} to end")
    finally:
        for p in pids:  # never leave one behind, whatever the assertion says
            if not gone(p):
                os.kill(p, signal.SIGKILL)


def run_many(base: Path, scenarios: dict[str, list[str]], timeout: float = 120.0) -> dict[str, Finished]:
    """Run several `ahp-fuzz run`s at once (they mostly wait on budgets and timeouts), each in
    `base/<name>`; `{dir}` in an argument is that folder (for pid files). Each run's time is
    measured to its own end."""
    import threading

    results: dict[str, Finished] = {}
    errors: list[BaseException] = []

    def one(name: str, args: list[str]) -> None:
        folder = base / name
        folder.mkdir(parents=True)
        t0 = time.monotonic()
        try:
            proc, out = start(folder, *(a.replace("{dir}", str(folder)) for a in args))
            results[name] = finish(proc, out, t0, timeout)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=one, args=item) for item in scenarios.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
