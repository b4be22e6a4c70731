"""Frame-level fuzzing of any AHP host URL: malformed frames over real WebSocket connections.

`fuzz_frames(url, cases)` sends each `FrameCase` (strategies/frames.py) on a fuzz connection,
then a sentinel `ping`, and compares what came back before the sentinel's answer with what the
case expects. A separate *healthy* connection keeps a session of its own (with one completed turn in its
default chat); every `health_every` cases (and at the end) it must still answer `ping`, still
find its session in `listSessions`, and get session and chat snapshots equal to the ones it
took at the start. A fuzz connection the
host closes where no close was expected counts as a host crash (the connection handler died),
and the fuzzer reconnects and carries on. Every wait is bounded.

No reporter is imported here; the caller decides how to show a `FrameReport`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed

from harness.host.probe import ROOT, ProbeClient, ProbeError
from strategies.frames import Expect, Frame, FrameCase

HEALTHY_SESSION = "ahp-session:/frames-healthy"


@dataclass
class FrameFailure:
    kind: str
    frames: tuple[Frame, ...]
    expected: tuple[Expect, ...]
    observed: list[Any]
    reason: str
    #: How the host reacted, classified (`reaction`): "error -32600", "result", "silence",
    #: "close 1011", "death", …
    reaction: str = ""

    def describe(self) -> str:
        first: Any = self.frames[0] if self.frames else b""
        if isinstance(first, tuple):
            first = "".join(first)
        shown = first[:80] if isinstance(first, str) else repr(first[:40])
        how = f"; reaction {self.reaction}" if self.reaction else ""
        return f"{self.kind}: {self.reason} (frame {shown!r}; got {self.observed[:3]!r}{how})"


def reaction(got: list[Any], *, closed: int | None = None, timed_out: bool = False, died: bool = False) -> str:
    """The host's reaction to a case, classified against WIRE.md §10's vocabulary: its death (the
    host no longer accepts connections), a close code, silence (no answer before the sentinel, or
    no answer at all), else the first answer's error code or "result"."""
    if died:
        return "death"
    if closed is not None:
        return f"close {closed}"
    if timed_out:
        return "silence (no answer at all)"
    for msg in got:
        if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
            return f"error {msg['error'].get('code')}"
        if isinstance(msg, dict) and "result" in msg:
            return "result"
    return "silence"


@dataclass
class FrameReport:
    url: str
    cases: int = 0
    frames: int = 0
    #: Fuzz connections the host dropped where no close was expected (handler crashes).
    host_crashes: int = 0
    #: Healthy-connection checks that failed: no answer, session gone, snapshot changed.
    lost_sessions: int = 0
    corrupted_sessions: int = 0
    unresponsive: int = 0
    health_checks: int = 0
    reconnects: int = 0
    elapsed_s: float = 0.0
    by_kind: Counter[str] = field(default_factory=Counter)
    failures: list[FrameFailure] = field(default_factory=list)
    #: (case kind, reaction) -> count, for every case (`reaction`).
    reactions: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: The host died (no new connection accepted): why, and the case that did it; fuzzing stopped.
    died: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.failures or self.host_crashes or self.lost_sessions or self.corrupted_sessions
                    or self.unresponsive or self.died)


class _Fuzzer:
    def __init__(self, url: str, timeout_s: float, client_id: str):
        self.url = url
        self.timeout_s = timeout_s
        self.client_id = client_id
        self.conn: ProbeClient | None = None
        self.sentinel = 0
        self.generation = 0

    async def connection(self, report: FrameReport) -> ProbeClient:
        if self.conn is None:
            self.generation += 1
            self.conn = await ProbeClient.open(self.url, timeout_s=self.timeout_s)
            await self.conn.initialize(f"{self.client_id}-{self.generation}", subscriptions=())
            report.reconnects += 1
        return self.conn

    async def drop(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(TimeoutError, ConnectionClosed, OSError):
                await asyncio.wait_for(self.conn.close(), self.timeout_s)
            self.conn = None

    async def exchange(self, conn: ProbeClient, frames: tuple[Frame, ...]) -> list[Any]:
        """Send `frames` then a sentinel ping; every message received before its answer."""
        self.sentinel += 1
        sentinel = f"sentinel-{self.sentinel}"
        for frame in frames:
            await conn.send_raw(frame)  # type: ignore[arg-type]  # a tuple is sent fragmented
        await conn.send_raw(f'{{"jsonrpc":"2.0","id":"{sentinel}","method":"ping","params":{{"channel":"{ROOT}"}}}}')
        got: list[Any] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError("no answer to the sentinel ping")
            conn.responses.clear()
            conn.notes.clear()
            msg = await conn.recv(left)
            if isinstance(msg, dict) and msg.get("id") == sentinel and "method" not in msg:
                return got
            if isinstance(msg, dict) and "method" in msg and "id" not in msg:
                continue  # a notification (none are expected: the fuzz connection subscribes to nothing)
            got.append(msg)


def _matches(expect: Expect, msg: Any) -> bool:
    if not isinstance(msg, dict) or "id" not in msg:
        return False
    err = msg.get("error")
    if expect.alt and isinstance(err, dict) and err.get("code") in expect.alt and msg["id"] in (None, expect.req_id):
        return "result" not in msg  # an accepted alternative (answered with id null or the request's)
    if msg["id"] != expect.req_id or (isinstance(msg["id"], bool) != isinstance(expect.req_id, bool)):
        return False
    if expect.kind == "result":
        return "result" in msg and "error" not in msg
    err = msg.get("error")
    return isinstance(err, dict) and err.get("code") == expect.code and "result" not in msg


def judge(case: FrameCase, got: list[Any]) -> str | None:
    """Why `got` (answers before the sentinel) is not what `case` expects; None when it is."""
    pending = list(got)
    for expect in case.expect:
        if expect.kind == "silence":
            continue
        if expect.kind == "error-or-silence":
            if pending and _matches(expect, pending[0]):
                pending.pop(0)
            continue
        if not pending:
            return f"expected {expect.kind} {expect.code if expect.code is not None else ''} for id {expect.req_id!r}, got nothing"
        if not _matches(expect, pending[0]):
            return f"expected {expect.kind} {expect.code if expect.code is not None else ''} for id {expect.req_id!r}"
        pending.pop(0)
    if pending:
        return f"{len(pending)} unexpected answer(s)"
    return None


class _Healthy:
    """The bystander: a session of its own that frame fuzzing on other connections must not touch."""

    def __init__(self, url: str, timeout_s: float):
        self.url = url
        self.timeout_s = timeout_s
        self.conn: ProbeClient | None = None
        self.chat: str | None = None
        self.baseline: Any = None

    async def start(self) -> None:
        self.conn = await ProbeClient.open(self.url, timeout_s=self.timeout_s)
        await self.conn.initialize("frames-healthy", subscriptions=(ROOT,))
        try:
            await self.conn.call("createSession", {"channel": HEALTHY_SESSION, "workingDirectories": ["file:///frames-healthy"]})
        except ProbeError as e:
            if e.code != -32003:  # a host run twice against: reuse the session
                raise
        await self.conn.dispatch(HEALTHY_SESSION, {"type": "session/titleChanged", "title": "frames healthy"})
        session = (await self.conn.subscribe(HEALTHY_SESSION))["state"]
        self.chat = session.get("defaultChat")
        if self.chat:
            turns = (await self.conn.subscribe(self.chat))["state"].get("turns", [])
            await self.conn.run_turn(self.chat, f"healthy-{len(turns) + 1}", "a healthy turn")
        self.baseline = await self._states()

    async def _states(self) -> list[Any]:
        assert self.conn is not None
        uris = [HEALTHY_SESSION, self.chat] if self.chat else [HEALTHY_SESSION]
        return [(snap or {}).get("state") for snap in [await self.conn.subscribe(u) for u in uris]]

    async def check(self, report: FrameReport) -> None:
        report.health_checks += 1
        assert self.conn is not None
        try:
            await self.conn.settle()
            listed = await self.conn.call("listSessions", {"channel": ROOT})
            if HEALTHY_SESSION not in {i.get("resource") for i in listed.get("items", [])}:
                report.lost_sessions += 1
                return
            if await self._states() != self.baseline:
                report.corrupted_sessions += 1
        except ProbeError:
            report.lost_sessions += 1
        except (TimeoutError, ConnectionClosed, OSError):
            report.unresponsive += 1
            await self._reopen()
        finally:
            self.conn.notes.clear()

    async def _reopen(self) -> None:
        try:
            self.conn = await ProbeClient.open(self.url, timeout_s=self.timeout_s)
            await self.conn.initialize("frames-healthy-2", subscriptions=())
        except (TimeoutError, ConnectionClosed, OSError):
            pass

    async def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(TimeoutError, ConnectionClosed, OSError):
                await asyncio.wait_for(self.conn.close(), self.timeout_s)


async def _alive(url: str, timeout_s: float) -> bool:
    """The host still accepts a connection and answers `ping` (else it died)."""
    try:
        conn = await ProbeClient.open(url, timeout_s=timeout_s)
    except (OSError, TimeoutError):
        return False
    try:
        await conn.call("ping", {"channel": ROOT})
        return True
    except ProbeError:
        return True  # an error answer is still an answer
    except (OSError, TimeoutError, ConnectionClosed):
        return False
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), timeout_s)


async def _fresh_case(url: str, case: FrameCase, timeout_s: float, fuzzer: _Fuzzer) -> list[Any]:
    conn = await ProbeClient.open(url, timeout_s=timeout_s)
    try:
        return await fuzzer.exchange(conn, case.frames)
    finally:
        await asyncio.wait_for(conn.close(), timeout_s)


async def fuzz_frames(
    url: str,
    cases: Iterable[FrameCase],
    *,
    health_every: int = 200,
    timeout_s: float = 5.0,
    max_failures: int = 50,
) -> FrameReport:
    """Send every case to the host at `url` and judge the answers (see the module docstring)."""
    report = FrameReport(url)
    fuzzer = _Fuzzer(url, timeout_s, "frames-fuzz")
    healthy = _Healthy(url, timeout_s)
    started = time.perf_counter()
    await healthy.start()
    try:
        for case in cases:
            report.cases += 1
            report.frames += len(case.frames)
            report.by_kind[case.kind] += 1
            failure: str | None
            got: list[Any] = []
            closed: int | None = None
            timed_out = False
            try:
                if case.fresh:
                    got = await _fresh_case(url, case, timeout_s, fuzzer)
                else:
                    got = await fuzzer.exchange(await fuzzer.connection(report), case.frames)
                failure = judge(case, got)
                if failure is None and any(e.kind == "close" for e in case.expect):
                    failure = "expected the connection to be closed (1009)"
            except ConnectionClosed as e:
                await fuzzer.drop()
                code = e.rcvd.code if e.rcvd is not None else None
                closed = code if code is not None else 1006
                wanted = [x.code for x in case.expect if x.kind == "close"]
                if wanted and code in wanted:
                    failure = None
                else:
                    report.host_crashes += 1
                    failure = f"connection closed (code {code})"
            except TimeoutError as e:
                await fuzzer.drop()
                timed_out = True
                failure = f"timeout: {e}"
            except OSError as e:  # no connection at all: the host is gone
                report.died = f"the host stopped accepting connections ({e}) after a {case.kind} case"
                failure = "the host died"
            died = report.died is not None or (failure is not None and (closed or timed_out) and not await _alive(url, timeout_s))
            if died and report.died is None:
                report.died = f"the host stopped accepting connections after a {case.kind} case"
            how = reaction(got, closed=closed, timed_out=timed_out, died=died)
            report.reactions[(case.kind, how)] += 1
            if failure is not None and len(report.failures) < max_failures:
                report.failures.append(FrameFailure(case.kind, case.frames, case.expect, got, failure, how))
            if died:
                break
            if report.cases % health_every == 0:
                await healthy.check(report)
        if report.died is None:
            await healthy.check(report)
    finally:
        await fuzzer.drop()
        await healthy.close()
        report.elapsed_s = time.perf_counter() - started
    return report


def run_frames(url: str, cases: Iterable[FrameCase], **options: Any) -> FrameReport:
    """`fuzz_frames` from synchronous code (its own event loop)."""
    return asyncio.run(fuzz_frames(url, cases, **options))
