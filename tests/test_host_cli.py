"""`ahp-fuzz host`: prints its loopback URL, serves, stops cleanly on SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from harness.host import DEFECTS
from harness.host.probe import ProbeClient

CMD = [sys.executable, "-m", "harness.cli", "host"]
GUARD_S = 120.0  # timeouts here only keep a broken test from hanging (CI machines are busy)


@contextmanager
def _running(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen([*CMD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        # a hang guard, not a speed claim: never wait unbounded for the URL
        ready, _, _ = select.select([proc.stdout], [], [], GUARD_S)
        assert ready, f"the host printed no URL in {GUARD_S:g} s"
        yield proc, proc.stdout.readline().strip()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=GUARD_S)


async def _ping(url: str) -> object:
    async with await ProbeClient.open(url) as c:
        result = await c.initialize("cli-test")
        assert result["protocolVersion"] == "0.7.0"
        return await c.call("ping", {"channel": "ahp-root://"})


@pytest.mark.live
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serves_then_stops_cleanly(sig: signal.Signals) -> None:
    with _running("--port", "0", "--defect", "seq-repeat") as (proc, url):
        assert url.startswith("ws://127.0.0.1:") and url.endswith("/")
        assert asyncio.run(asyncio.wait_for(_ping(url), GUARD_S)) is None
        proc.send_signal(sig)
        assert proc.wait(timeout=GUARD_S) == 0


def test_list_defects_prints_one_per_line_name_first() -> None:
    out = subprocess.run([*CMD, "--list-defects"], capture_output=True, text=True, timeout=GUARD_S)
    assert out.returncode == 0
    names = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert names == list(DEFECTS)


@pytest.mark.parametrize(
    "args",
    [["--defect", "no-such-defect"], ["--port", "70000"], ["--versions", "seven"], ["--host", "0.0.0.0"],
     ["--versions", "^2.0.0"]],  # a caret range whose base has no rules
)
def test_bad_arguments_are_usage_errors(args: list[str]) -> None:
    out = subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=GUARD_S)
    assert out.returncode == 2
    assert out.stderr.strip()
    assert out.stdout == ""


def test_caret_versions_make_the_10_host() -> None:
    import argparse

    from harness.cli.host import _config
    from harness.host.core import Host

    args = argparse.Namespace(port=0, max_message_bytes=1 << 20, versions="^1.0.0,^0.9.0", defect=[],
                              immutable_primary=False, single_directory=False, seed=0, wall_clock=False)
    host = Host(_config(args))
    assert host.carets == ("1.0.0", "0.9.0") and host.model.profile.version == (1, 0, 0)
