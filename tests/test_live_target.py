"""The live target: spellings, loopback-only policy, starting and stopping hosts, one connection."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from harness.targets.base import TargetSetupError, open_target
from harness.targets.live import (
    LiveTarget,
    RpcError,
    Transcript,
    WireConnection,
    check_loopback,
    embedded_spec,
    is_live_spec,
    is_loopback,
    parse_live_spec,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("ws://127.0.0.1:9/", "url"), ("wss://[::1]:9", "url"), ("host-cmd:ahp-fuzz host", "cmd"),
     ("host:embedded", "embedded"), ("host:embedded?defect=seq-repeat&defect=a,b", "embedded")],
)
def test_spellings(text: str, kind: str) -> None:
    assert is_live_spec(text)
    assert parse_live_spec(text).kind == kind


def test_embedded_options_round_trip() -> None:
    spec = parse_live_spec("host:embedded?defect=seq-repeat&immutablePrimary=1", defects=("x",))
    assert spec.defects == ("seq-repeat", "x") and spec.immutable_primary
    assert embedded_spec(spec.defects, True) == "host:embedded?defect=seq-repeat&defect=x&immutablePrimary=1"
    assert embedded_spec(()) == "host:embedded"


@pytest.mark.parametrize("text", ["host:other", "host:embedded?port=1", "host-cmd:", "reference"])
def test_bad_spellings(text: str) -> None:
    with pytest.raises(ValueError):
        parse_live_spec(text)


def test_loopback_only_unless_allowed() -> None:
    assert is_loopback("ws://127.0.0.1:1/") and is_loopback("ws://[::1]:1") and is_loopback("ws://localhost:1")
    assert not is_loopback("ws://10.0.0.1:1") and not is_loopback("ws://example.com:1")
    with pytest.raises(TargetSetupError, match="loopback"):
        check_loopback("ws://10.0.0.1:9", allow_remote=False)
    check_loopback("ws://10.0.0.1:9", allow_remote=True)  # allowed: nothing connects here
    with pytest.raises(TargetSetupError, match="--allow-remote"):
        open_target("ws://192.0.2.1:9")
    assert LiveTarget("ws://192.0.2.1:9", allow_remote=True, start=False).description == "ws://192.0.2.1:9"
    with pytest.raises(TargetSetupError, match="cannot reach"):
        LiveTarget("ws://127.0.0.1:9")  # nothing listens: a setup error, not a finding


def test_a_live_target_is_not_a_reducer() -> None:
    t = LiveTarget("ws://127.0.0.1:9", start=False)
    with pytest.raises(TargetSetupError, match="live machine"):
        t.reduce("chat", {}, {}, 0)
    t.close()


@pytest.mark.live
def test_host_cmd_starts_and_stops_the_whole_group() -> None:
    cmd = f"host-cmd:{sys.executable} -m harness.cli host"
    t = LiveTarget(cmd)
    url = t.url
    assert url.startswith("ws://127.0.0.1:")
    handle = t._handle
    assert handle is not None
    t.close()
    # the group is gone: nothing answers on the URL any more
    transcript = Transcript()

    async def try_connect() -> bool:
        conn = WireConnection(1, transcript, lambda *a: None)
        try:
            await conn.open(url, 2.0)
        except Exception:
            return False
        await conn.close()
        return True

    assert asyncio.run(try_connect()) is False


@pytest.mark.live
def test_host_cmd_that_prints_no_url_is_a_setup_error() -> None:
    # a wait far longer than any start-up: the verdict is the exit, however busy the machine
    with pytest.raises(TargetSetupError, match=r"exited \(status 0\) without printing a ws:// URL"):
        LiveTarget(f"host-cmd:{sys.executable} -c pass", startup_timeout_s=300)
    with pytest.raises(TargetSetupError, match=r"did not print a ws:// URL on stdout within 1\.0 s"):
        LiveTarget(f"host-cmd:{sys.executable} -c 'import time; time.sleep(30)'", startup_timeout_s=1)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)
    except OSError:
        return True


@pytest.mark.live
def test_host_cmd_group_is_stopped_children_included(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = ("import subprocess,sys,time;"
              "p=subprocess.Popen([sys.executable,'-c','import time; time.sleep(60)']);"
              f"open({str(pid_file)!r},'w').write(str(p.pid));"
              "print('ws://127.0.0.1:1/', flush=True); time.sleep(60)")
    t = LiveTarget(f"host-cmd:{sys.executable} -c \"{script}\"", startup_timeout_s=10)
    assert t.url == "ws://127.0.0.1:1/"
    child = int(pid_file.read_text())
    assert not _gone(child)
    t.close()
    deadline = time.monotonic() + 60
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the host's child survived: the process group was not stopped"


@pytest.mark.live
def test_one_connection_against_the_embedded_host() -> None:
    target = open_target("host:embedded")
    transcript = Transcript()
    notes: list[tuple[str, dict]] = []

    async def talk() -> None:
        conn = WireConnection(1, transcript, lambda c, m, p: notes.append((m, p)))
        await conn.open(target.url)  # type: ignore[attr-defined]
        assert await conn.request("ping", {"channel": "ahp-root://"}) is None  # before initialize
        res = await conn.request("initialize", {"channel": "ahp-root://", "protocolVersions": ["0.7.0"],
                                                "clientId": "t1", "initialSubscriptions": ["ahp-root://"]})
        assert res["protocolVersion"] == "0.7.0"
        with pytest.raises(RpcError) as e:
            await conn.request("noSuchMethod", {"channel": "ahp-root://"})
        assert e.value.code == -32601
        await conn.send_raw("{not json")
        await conn.request("ping", {"channel": "ahp-root://"})
        assert conn.null_replies and conn.null_replies[0]["error"]["code"] == -32700
        await conn.close()

    try:
        asyncio.run(talk())
    finally:
        target.close()
    directions = [f["d"] for f in transcript.frames]
    assert directions[0] == ">" and "<" in directions
    assert any(isinstance(f["m"], str) for f in transcript.frames)  # the garbage frame is recorded verbatim


@pytest.mark.live
def test_a_host_that_never_answers_is_a_timeout_finding_not_a_hang() -> None:
    import threading

    from websockets.asyncio.server import serve

    from harness.live.client import DEFAULT_CLIENTS
    from harness.live.run import LiveRun

    ready = threading.Event()
    port: list[int] = []
    loop = asyncio.new_event_loop()

    async def silent(ws: object) -> None:
        async for _ in ws:  # type: ignore[attr-defined]
            pass  # reads every frame, answers none

    stop: list[asyncio.Future[None]] = []

    async def main() -> None:
        async with serve(silent, "127.0.0.1", 0) as server:
            port.append(next(iter(server.sockets)).getsockname()[1])
            stop.append(loop.create_future())
            ready.set()
            await stop[0]

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(60)
    run = LiveRun(f"ws://127.0.0.1:{port[0]}/", request_timeout_s=0.5)
    try:  # the host never answers: getting a result at all is the timeout working
        found = run.apply(DEFAULT_CLIENTS[0].op(0))
        assert [v.invariant for v in found] == ["TARGET-TIMEOUT"]
        assert "no answer to initialize within 0.5s" in found[0].message
    finally:
        run.close()
        loop.call_soon_threadsafe(stop[0].set_result, None)
        thread.join(60)


def test_embedded_host_starts_on_first_use_and_defect_names_are_checked_at_open() -> None:
    """`host:embedded` is not started when the target opens (a live campaign serves its own copy
    on its event loop, so an eager start left a second host idle), but a wrong defect name is
    still a setup error at once, and `url` starts the host when something needs it (replay)."""
    with pytest.raises(TargetSetupError, match="unknown defect"):
        LiveTarget("host:embedded?defect=no-such-defect")
    t = LiveTarget("host:embedded?defect=seq-repeat")
    try:
        assert t._handle is None
        assert t.url.startswith("ws://127.0.0.1:")
        assert t._handle is not None
    finally:
        t.close()
