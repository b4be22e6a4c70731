"""A live run against a host that is not conformant yet (issue 16): quiescence without `ping`,
handshake and error-code probes, where an echo went, and what a host's death looks like.

`LiveRun` calls into this module at four points and keeps no policy of its own for them:

* `quiesce(run, clients)` is the barrier after every op (`LiveRun._barrier` decides which
  clients it pings: all of them, or the lean policy's op senders and laggards). A `ping` on each
  of those connections while the host answers it (a host answers in order on a connection: an
  error answer such as -32601 is a barrier too, and an INV-H01 finding, recorded once per run);
  once a host leaves `ping` unanswered, a timed drain of the whole run instead, for this barrier
  and every later one: wait until no frame has moved for `QUIET_S`, at most `DRAIN_MAX_S`. The
  snapshot comparison after the barrier (a fresh snapshot above the newest serverSeq any client
  saw makes every client catch up) stays as it is.
* `handshake(run, op)` runs a `handshake` op: one probe on a connection of its own (WIRE.md §3:
  requests before `initialize`, a second `initialize`, unknown or empty version lists, an unknown
  method, bad params, `ping` before `initialize`), recorded as a `WireProbe` for the INV-H checks.
* `note_delivery(run, conn, params)` remembers which connection each echo reached, so "never
  echoed" can say where the echo went instead (INV-045).
* `death_violation(run, why)` turns the host's death (a `host-cmd:` process that exited, an
  embedded host that died, a `ws://` host that went away) into one `TARGET-DIED` finding with
  the exit status, the last stderr lines and the frames sent just before.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from harness.invariants.base import Violation
from harness.invariants.live.base import WireProbe
from harness.targets.live import ROOT, ConnectionLost, RpcError, WireConnection

if TYPE_CHECKING:
    from .roles import PeerRole, RunRole

#: The drain that replaces the ping barrier: no frame for this long means quiescence…
QUIET_S = 0.03
#: …bounded by this (a host that streams without end must not stall the run).
DRAIN_MAX_S = 1.0
#: A probe waits this long for its answer (silence is a reaction of its own, recorded).
PROBE_TIMEOUT_S = 2.0
#: Frames sent just before a death, quoted in the finding.
LAST_SENT = 3

#: The handshake probes, by name (`{"op": "handshake", "client": 0, "probe": NAME}`).
PROBES: tuple[str, ...] = ("ping-first", "before-initialize", "second-initialize", "unknown-version",
                           "empty-versions", "unknown-method", "bad-params")
#: What no host speaks (SemVer, far above any release).
UNKNOWN_VERSION = "99.0.0"
UNKNOWN_METHOD = "x-ahp-fuzz/no-such-method"

TARGET_CRASH = "TARGET-CRASH"
#: The host itself died (its process exited, the embedded host died, a ws:// host went away):
#: a finding of its own, reported once, apart from a dropped connection (TARGET-CRASH).
TARGET_DIED = "TARGET-DIED"


# -- quiescence ---------------------------------------------------------------------------------


async def ping(client: PeerRole) -> bool:
    """Ping one client's connection: True when the host answered anything (a host answers in
    order on a connection, so an error answer is a barrier too), False when it stayed silent.
    An answer other than `null` is recorded once per run as an INV-H01 probe; silence too, and
    from then on the run quiesces by a timed drain."""
    assert client.conn is not None
    run = client.run
    probe = WireProbe("ping", "ping", {"channel": ROOT}, connection=client.conn.conn_id)
    try:  # the full request timeout: a slow host is not a silent one
        probe.result = await client.conn.request("ping", {"channel": ROOT}, run.request_timeout_s)
    except RpcError as e:
        probe.error = {"code": e.code, "message": e.message}
    except TimeoutError:
        probe.answered, probe.lost = False, f"silence for {run.request_timeout_s:g}s"
        run.ping_silent = True
    except ConnectionLost as e:
        client.dead = True
        from .failure import LiveFailure

        raise LiveFailure(TARGET_CRASH, f"client {client.view.index}: ping: {e}") from None
    if (probe.error is not None or probe.result is not None or not probe.answered) and not run.ping_refused:
        run.ping_refused = True
        run.obs.wire_probes.append(probe)
    return probe.answered


async def quiesce(run: RunRole, clients: list[PeerRole] | None = None) -> bool:
    """A barrier: pings on `clients` (default: every ready client) while the host answers them (a
    result or an error): True; else (a host silent on ping, now or earlier in the run) a timed
    drain of the whole run: False. `LiveRun._barrier` calls it for every set of clients it pings
    (all of them, or under the lean policy the op's senders and the clients not proven caught up)."""
    if not run.ping_silent:
        targets = run.ready_clients() if clients is None else clients
        if len(targets) == 1:
            answered = [await targets[0].ping()]  # the common case: no task for a gather of one
        else:
            answered = list(await asyncio.gather(*(c.ping() for c in targets)))
        if all(answered):
            return True
    await drain(run)
    return False


async def drain(run: RunRole, quiet_s: float = QUIET_S, max_s: float = DRAIN_MAX_S) -> None:
    """Wait until no frame moved for `quiet_s` (at most `max_s`)."""
    deadline = time.monotonic() + max_s
    last = run.transcript.seen
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet_s)
        if run.transcript.seen == last:
            return
        last = run.transcript.seen


# -- handshake probes -----------------------------------------------------------------------------


async def handshake(run: RunRole, op: dict[str, Any]) -> None:
    """One handshake or error-code probe on a connection of its own (closed afterwards)."""
    name = str(op.get("probe", ""))
    if name not in PROBES:
        raise ValueError(f"unknown handshake probe {name!r} (want one of {', '.join(PROBES)})")
    conn = WireConnection(run.next_conn(), run.transcript, lambda *_: None)
    try:
        await conn.open(run.url, run.request_timeout_s)
    except ConnectionLost as e:
        from .failure import LiveFailure

        raise LiveFailure(TARGET_CRASH, f"handshake probe {name}: {e}") from None
    run.probe_no += 1
    client_id = f"fz-{run.token}-probe-{run.probe_no}"
    init = {"channel": ROOT, "protocolVersions": ["0.7.0", "0.6.0"], "clientId": client_id,
            "clientInfo": {"name": "ahp-fuzz", "version": "0.1.0"}}
    try:
        if name == "ping-first":
            await _probe(run, conn, "ping", "ping", {"channel": ROOT})
        elif name == "before-initialize":
            p = await _probe(run, conn, name, "subscribe", {"channel": ROOT})
            if p.answered and p.error is None:  # served: leave no subscription behind
                await _ask(conn, "unsubscribe", {"channel": ROOT})
        elif name == "unknown-version":
            await _probe(run, conn, name, "initialize", {**init, "protocolVersions": [UNKNOWN_VERSION]})
        elif name == "empty-versions":
            await _probe(run, conn, name, "initialize", {**init, "protocolVersions": []})
        else:
            first = await _ask(conn, "initialize", init)
            if first is None:
                return  # the host does not speak our versions or did not answer: nothing to probe
            if name == "second-initialize":
                await _probe(run, conn, name, "initialize", {**init, "clientId": client_id + "-again"})
            elif name == "unknown-method":
                await _probe(run, conn, name, UNKNOWN_METHOD, {"channel": ROOT})
            elif name == "bad-params":
                await _probe(run, conn, name, "subscribe", {"channel": 42})
    finally:
        await conn.close()


async def _ask(conn: WireConnection, method: str, params: dict[str, Any]) -> Any:
    """A request whose answer only matters when it is a result (None otherwise)."""
    try:
        return await conn.request(method, params, PROBE_TIMEOUT_S)
    except (RpcError, ConnectionLost, TimeoutError):
        return None


async def _probe(run: RunRole, conn: WireConnection, check: str, method: str, params: dict[str, Any]) -> WireProbe:
    p = WireProbe(check, method, params, connection=conn.conn_id)
    try:
        p.result = await conn.request(method, params, PROBE_TIMEOUT_S)
    except RpcError as e:
        p.error = {"code": e.code, "message": e.message, **({"data": e.data} if e.data is not None else {})}
    except TimeoutError:
        p.answered, p.lost = False, f"silence for {PROBE_TIMEOUT_S:g}s"
    except ConnectionLost as e:
        p.answered, p.lost = False, str(e)
    run.obs.wire_probes.append(p)
    return p


# -- where echoes went -------------------------------------------------------------------------


def note_delivery(run: RunRole, receiver: PeerRole, params: dict[str, Any]) -> None:
    """Remember that `receiver`'s connection got an echo of another client's dispatch."""
    origin = params.get("origin")
    if not isinstance(origin, dict):
        return
    cid, seq = origin.get("clientId"), origin.get("clientSeq")
    if not isinstance(cid, str) or not isinstance(seq, int) or cid == receiver.view.client_id:
        return
    conn = receiver.conn.conn_id if receiver.conn is not None else "?"
    who = f"observer {-receiver.view.index}" if receiver.view.index < 0 else f"client {receiver.view.index}"
    seen = run.obs.delivered.setdefault((cid, seq), [])
    label = f"connection {conn} ({who})"
    if label not in seen and len(seen) < 8:
        seen.append(label)


# -- death --------------------------------------------------------------------------------------


def death_violation(run: RunRole, why: str) -> Violation:
    """The host's death as one finding: why (status, stderr) and the frames sent just before."""
    sent = [f["m"] for f in run.transcript.frames if f.get("d") == ">" and not _is_ping(f["m"])][-LAST_SENT:]
    shown = "; ".join(_frame_text(m) for m in sent)
    return Violation(TARGET_DIED, "violation",
                     f"{why}; frames sent just before (pings aside): {shown}" if shown else why)


def _is_ping(m: Any) -> bool:
    return isinstance(m, dict) and m.get("method") == "ping"


def _frame_text(m: Any, limit: int = 160) -> str:
    text = m if isinstance(m, str) else json.dumps(m, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"
