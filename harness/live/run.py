"""One live run: simulated clients on a background event loop, ops, quiescence, the live checks.

The same `LiveRun` serves the fuzz machine (`live/machine.py`) and replay (`live/replay.py`),
so a replayed live finding is judged by exactly the rules that found it. A run is a list of
*ops* (plain JSON, the replayable program of a live finding):

* `{"op": "connect", "client": i, "offer": [...], "collections": bool, "deliveryMs": n}`
* `{"op": "command", "client": i, "method": m, "params": {...}}` (createSession, createChat, …)
* `{"op": "subscribe", "client": i, "channel": uri}`
* `{"op": "dispatch", "client": i, "channel": uri, "action": {...}}`
* `{"op": "reconnect", "client": i, "back": k}` (reconnect with lastSeenServerSeq k envelopes back)
* `{"op": "garbage", "client": i, "frame": text}` (a malformed frame, WIRE.md §10)
* `{"op": "race", "ops": [dispatch, dispatch, …]}` (dispatches of several clients sent back to
  back, none waiting for another's echo)

What the host must do with an op is decided when it runs, from the client's confirmed state
(`expect_dispatch`, `expect_create_chat`), never stored in the op: a shrunk trace is judged
against the state it really produces. After every op the run waits for quiescence (a ping on
every connection is a barrier; then pending echoes get a bounded grace), follows new chats,
takes fresh snapshots with one observer connection per client profile, and runs the live
checks on what every client recorded.

Here: the run's fields, its facts for the generators, running ops and teardown. `LiveRun` takes
the rest from mixins named after what they hold: `expect.Expectations` (what the host MUST do),
`settle.Settling` (quiescence, then the checks) and `snapshots.FreshSnapshots` (fresh snapshots).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from harness.invariants.base import Violation
from harness.invariants.live.base import (
    Command,
    Envelope,
    LiveObservation,
    Probe,
    Reconnect,
    SessionFacts,
)
from harness.targets.live import ROOT, ConnectionLost, RpcError, Transcript

from .client import ClientSpec, SimClient
from .expect import Expectations, State, _reducer
from .failure import TARGET_CRASH, LiveFailure
from .loop import EventLoopThread
from .pool import ConnectionPool
from .settle import ECHOES_LOST_ENOUGH, LEAN, SettlePolicy
from .signing import op_trigger
from .snapshots import FreshSnapshots
from .wild import death_violation, handshake

__all__ = ["DEFAULT_SKIP", "ECHOES_LOST_ENOUGH", "LiveRun"]

T = TypeVar("T")
JSON = Any


#: Checks a live run skips unless asked: INV-052 documents a gap (INVARIANTS.md: "report how the
#: host behaves"; a SHOULD that the embedded host does not implement).
DEFAULT_SKIP: frozenset[str] = frozenset({"INV-052"})


class LiveRun(Expectations, FreshSnapshots):
    """A live run against one host URL: clients, observers, the observation, the checks."""

    def __init__(self, url: str, *, loop: EventLoopThread | None = None, token: str | None = None,
                 request_timeout_s: float = 5.0, drain_s: float = 0.25, snapshot_every: int | None = None,
                 full_every: int | None = None, skip: frozenset[str] = DEFAULT_SKIP,
                 policy: SettlePolicy = LEAN, pool: ConnectionPool | None = None,
                 death: Callable[[bool], str | None] | None = None) -> None:
        self.url = url
        #: Asks whether the host died (`lost`: a connection broke in the op): why, or None.
        #: Given by whoever knows the host (a `host-cmd:` process, the embedded host, a URL).
        self.death = death
        self.host_dead: str | None = None
        self.ping_refused = False  # ping was not answered with null once (an INV-H01 probe)
        self.ping_silent = False  # ping got no answer: quiesce by a timed drain
        self.probe_no = 0
        self.token = token or uuid.uuid4().hex[:8]
        self.loop = loop or EventLoopThread()
        self._own_loop = loop is None
        self.request_timeout_s = request_timeout_s
        self.drain_s = drain_s
        #: Ops whose own dispatches were still unechoed anywhere after `drain_s`: from
        #: `ECHOES_LOST_ENOUGH` on, the host is known to lose echoes and the settling stops
        #: waiting for them (INV-045 has said so; a mock that echoes to a closed socket cost 0.25 s
        #: an op).
        self.echoes_lost = 0
        #: `snapshot_every` / `full_every` override the policy's intervals (the old parameters).
        self.policy = replace(policy, every=max(1, snapshot_every or policy.every),
                              full_every=max(1, full_every or policy.full_every))
        self.snapshot_every = self.policy.every
        self.full_every = self.policy.full_every
        self.stats: Counter[str] = Counter()
        #: Seconds per phase of the ops (`send`, `settle`, `checks`): report.json's `liveSpeed.phaseSeconds`.
        self.phase_s: dict[str, float] = {"send": 0.0, "settle": 0.0, "checks": 0.0}
        #: Connections to take over from earlier runs and to hand back on close (None: own ones).
        self.pool = pool
        #: Client ids of adopted connections -> the id a fresh connection would have had.
        self._aliases: dict[str, str] = {}
        self._touched: set[str] = set()
        #: Lean snapshots: per profile key, channels changed since that profile's last real snapshot.
        self._dirty: dict[str, set[str]] = {}
        self._sampled = 0
        #: Channels whose real snapshot contradicted a client's fold in this run: their folds are
        #: no stand-in for the host's state, so they get no folded view (`_lean_snapshots`).
        self._diverged: set[str] = set()
        self._since_snap: dict[int, int] = {}
        self._observers_made = 0
        self.racing = False
        self.skip = skip
        #: Frame classes and probes that killed the host earlier in the campaign (`ops.op_class`):
        #: the scenarios send them no more (issue 23: a fragile host is still fuzzed).
        self.avoid: frozenset[str] = frozenset()
        self.transcript = Transcript()
        self.clients: dict[int, SimClient] = {}
        self.observers: dict[str, SimClient] = {}
        self.kinds: dict[str, str] = {ROOT: "root"}
        self.obs = LiveObservation([], kinds=self.kinds, reduce=_reducer())
        self.ops: list[dict[str, Any]] = []
        self.steps = 0
        #: What the host was sent in the latest op, in a cause's words (`signing.op_trigger`).
        self.trigger = "an op"
        #: Client index -> the trigger of the op in which the host closed its connection (a later
        #: check about that client is the close's consequence: `signing.sign`).
        self.closed: dict[int, str] = {}
        self._conn_no = 0
        self.op_timeout_s = request_timeout_s * 4 + drain_s + 5

    def next_conn(self) -> int:
        self._conn_no += 1
        return self._conn_no

    # -- facts for generators ---------------------------------------------------------------

    def client(self, i: int) -> SimClient | None:
        c = self.clients.get(i)
        return c if c is not None and c.ready else None

    def ready_clients(self) -> list[SimClient]:
        return [c for _, c in sorted(self.clients.items()) if c.ready]

    def ours(self, uri: str) -> bool:
        """A URI of this run's own namespace (`fz-<token>-…`) that the run never created."""
        return f"fz-{self.token}-" in uri and uri not in self.kinds

    def agent_caps(self) -> dict[str, Any]:
        for c in self.ready_clients():
            root = c.view.confirmed.get(ROOT) or {}
            agents = root.get("agents") or []
            if agents and isinstance(agents[0], dict):
                caps = agents[0].get("capabilities")
                return caps if isinstance(caps, dict) else {}
        return {}

    def provider(self) -> str | None:
        for c in self.ready_clients():
            agents = (c.view.confirmed.get(ROOT) or {}).get("agents") or []
            if agents and isinstance(agents[0], dict) and isinstance(agents[0].get("provider"), str):
                return str(agents[0]["provider"])
        return None

    def channels(self, kind: str) -> list[str]:
        return sorted(ch for ch, k in self.kinds.items() if k == kind)

    def session_of(self, chat: str) -> str | None:
        return self.obs.chat_session.get(chat)

    def state(self, channel: str) -> State | None:
        """A client's confirmed state of `channel`: a 0.7.0+ client's first (the multiroot
        fields), else any (a host that speaks only an older version)."""
        older: State | None = None
        for c in self.ready_clients():
            s = c.view.confirmed.get(channel)
            if s is not None and c.modern:
                return s
            older = s if older is None else older
        return older

    def completed_turns(self, chat: str) -> list[str] | None:
        s = self.state(chat)
        if s is None:
            return None
        return [t.get("id") for t in s.get("turns") or [] if isinstance(t, dict) and t.get("state") == "complete"]

    # -- running ops ------------------------------------------------------------------------

    def _recorded(self, op: dict[str, Any]) -> dict[str, Any]:
        """`op` as a finding records it: an adopted connection's client id (named in a terminal
        claim, say) replaced by the id the client would have had on a fresh connection."""
        if not self._aliases or op.get("op") not in ("command", "dispatch", "race"):
            return op
        text = json.dumps(op)
        found = [(old, new) for old, new in self._aliases.items() if old in text]
        if not found:
            return op  # the common case: the op names no client id
        for old, new in found:
            text = text.replace(old, new)
        return dict(json.loads(text))

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run(coro, self.op_timeout_s)

    def apply(self, op: dict[str, Any], *, check: bool = True) -> list[Violation]:
        """Run one op, wait for quiescence, run the live checks; return what they found."""
        self.ops.append(self._recorded(op))
        self.steps += 1
        self.trigger = op_trigger(op, self.kinds)
        dead_before = sum(c.dead for c in self.clients.values())
        try:
            found = self.call(self._op_and_check(op, check))
        except LiveFailure as f:
            return self._died(True) or [f.violation]
        finally:
            if check:
                self.obs.since_wire = len(self.obs.wire_probes)
            for i, c in self.clients.items():  # connections the host closed in this op: their misses are the close's
                if c.dead and i not in self.closed:
                    self.closed[i] = self.trigger
        # a connection lost in this op (a probe's, say) may be the host's death: look closer
        return self._died(sum(c.dead for c in self.clients.values()) > dead_before) or found

    def _died(self, lost: bool) -> list[Violation]:
        """The host's death, once, as the finding of this op (else [])."""
        if self.death is None or self.host_dead is not None:
            return []
        why = self.death(lost)
        if why is None:
            return []
        self.host_dead = why
        if self.pool is not None:  # connections to a dead host: none is handed to a later run
            with contextlib.suppress(Exception):
                self.loop.run(self.pool.aclose(), 10.0)
        return [death_violation(self, why)]

    async def _op_and_check(self, op: dict[str, Any], check: bool) -> list[Violation]:
        try:
            t0 = time.perf_counter()
            await self._op(op)
            self.phase_s["send"] += time.perf_counter() - t0
            return await self._settle_and_check(op) if check else []
        except ConnectionLost as e:  # the host refused or dropped a connection mid-op
            raise LiveFailure(TARGET_CRASH, f"{op.get('op')} of client {op.get('client')}: {e}") from None

    async def _op(self, op: dict[str, Any]) -> None:
        name = op.get("op")
        i = int(op.get("client", 0))
        if name == "race":
            # several clients' dispatches sent back to back, none waiting for another's echo
            # (conflicting writes: INV-045 convergence); settled and checked together
            self.racing = True
            try:
                for sub in op.get("ops") or []:
                    rc = self.client(int(sub.get("client", 0)))
                    if rc is not None and sub.get("op") == "dispatch":
                        await rc.dispatch(str(sub["channel"]), sub.get("action"))
            finally:
                self.racing = False
            return
        if name == "connect":
            await self._connect(i, op)
            return
        if name == "handshake":
            await handshake(self, op)
            return
        c = self.client(i)
        if c is None:
            return  # the client never connected (its version was refused) or died: skip
        if name == "command":
            await self._command(c, str(op["method"]), dict(op.get("params") or {}))
        elif name == "subscribe":
            await c.subscribe(str(op["channel"]))
        elif name == "dispatch":
            await c.dispatch(str(op["channel"]), op.get("action"))
        elif name == "reconnect":
            await self._reconnect(c, int(op.get("back", 0)))
        elif name == "garbage":
            await self._garbage(c, str(op.get("frame", "")))
        else:
            raise ValueError(f"unknown live op {name!r}")

    async def _connect(self, i: int, op: dict[str, Any]) -> None:
        spec = ClientSpec(tuple(op.get("offer") or ("0.7.0",)), bool(op.get("collections")), int(op.get("deliveryMs") or 0))
        reused = self.pool.take(("client", self.url, spec)) if self.pool is not None else None
        c = SimClient(self, i, spec, reused.view.client_id if reused is not None else f"fz-{self.token}-{i}")
        self.clients[i] = c
        self.obs.clients = [x.view for _, x in sorted(self.clients.items())]
        if reused is not None:
            self._adopt(c, reused)
            return
        try:
            await c.connect(self.url)
        except ConnectionLost as e:
            raise LiveFailure(TARGET_CRASH, f"client {i}: {e}") from None
        await c.initialize()

    async def _command(self, c: SimClient, method: str, params: dict[str, Any]) -> None:
        must, reason = self.expect_create_chat(params) if method == "createChat" else (None, "")
        cmd = Command(method, params, must, reason)
        c.view.commands.append(cmd)
        try:
            cmd.result = await c.request(method, params)
        except RpcError as e:
            cmd.error = {"code": e.code, "message": e.message}
            return
        ch = params.get("channel")
        if method == "createSession" and isinstance(ch, str):
            self.kinds[ch] = "session"
            wd = self.agent_caps().get("multipleWorkingDirectories")
            wd = wd if isinstance(wd, dict) else {}
            dirs = params.get("workingDirectories")
            self.obs.sessions[ch] = SessionFacts(ch, list(dirs) if isinstance(dirs, list) else None,
                                                 bool(wd.get("immutablePrimary")), bool(wd.get("primaryReplacement")))
        elif method == "createChat" and isinstance(params.get("chat"), str):
            self.kinds[params["chat"]] = "chat"
            if isinstance(ch, str):
                self.obs.chat_session[params["chat"]] = ch
        elif method == "createTerminal" and isinstance(ch, str):
            self.kinds[ch] = "terminal"

    async def _reconnect(self, c: SimClient, back: int) -> None:
        v = c.view
        seqs = [e.seq for e in v.envelopes if isinstance(e.seq, int) and not e.replayed]
        if not seqs:
            return
        last_seen = seqs[max(0, len(seqs) - 1 - back)] if back < len(seqs) else 0
        subs = sorted(v.subscribed)
        r = Reconnect(last_seen, subs, expected=[
            e for e in v.envelopes
            if not e.rejected and not e.replayed and e.channel in v.subscribed and isinstance(e.seq, int) and e.seq > last_seen
        ])
        v.reconnects.append(r)
        old = c.conn
        if old is not None:
            await old.close()
        v.pending.clear()  # guide/reconciliation.md: a reconnect clears pending
        v.collections = None  # reconnect carries no capabilities: what the host assumes is unknown
        await c.connect(self.url)
        try:
            r.result = await c.request("reconnect", {"channel": ROOT, "clientId": v.client_id,
                                                      "lastSeenServerSeq": last_seen, "subscriptions": subs})
        except RpcError as e:
            r.error = {"code": e.code, "message": e.message}
            v.subscribed.clear()
            v.collections = c.spec.collections
            await c.initialize()  # the TS client's fallback: initialize, then subscribe again
            for ch in subs:
                if ch != ROOT:
                    await c.subscribe(ch)
            return
        if isinstance(r.result, dict) and r.result.get("type") == "snapshot":
            snaps = r.result.get("snapshots")
            for snap in snaps if isinstance(snaps, list) else []:
                c.take_snapshot(snap)
        elif isinstance(r.result, dict):
            gone = r.result.get("missing")
            for uri in gone if isinstance(gone, list) else []:
                if isinstance(uri, str):
                    v.subscribed.discard(uri)
            replayed = r.result.get("actions")
            for params in replayed if isinstance(replayed, list) else []:
                if isinstance(params, dict):  # an echo the replay carries is one the host sent
                    self.obs.note_echo(Envelope.from_params(params), v, live=False)

    async def _garbage(self, c: SimClient, frame: str) -> None:
        assert c.conn is not None
        p = Probe(frame)
        c.view.probes.append(p)
        before = len(c.conn.null_replies)
        try:
            await c.conn.send_raw(frame)
            await c.conn.request("ping", {"channel": ROOT}, self.request_timeout_s)
        except RpcError:
            pass  # answered (a host that refuses ping is INV-H01's): the connection is alive
        except (ConnectionLost, TimeoutError) as e:
            p.alive, p.detail = False, f"({e})"
            c.dead = True
        new = c.conn.null_replies[before:]
        p.reply = new[0] if new else None

    # -- teardown ---------------------------------------------------------------------------

    def _adopt(self, c: SimClient, old: SimClient) -> None:
        """`c` takes over a pooled connection of an earlier run (same host, same spec): no new
        socket, no initialize. It keeps its client id, negotiated version and clientSeq counter,
        and starts from the earlier run's fold of root (its only subscription left); ops record
        the id it would have had on a fresh connection (`apply`), so a finding replays as is."""
        conn = old.conn
        assert conn is not None
        conn.conn_id = self.next_conn()
        conn.transcript = self.transcript
        conn.on_notification = c.on_notification
        c.conn, c.model, c.next_seq = conn, old.model, old.next_seq
        v, ov = c.view, old.view
        v.version = ov.version
        if ROOT in ov.confirmed:
            v.confirmed[ROOT] = ov.confirmed[ROOT]
            v.history[ROOT] = list(ov.history.get(ROOT) or [])[-1:]  # its fold now (the list grew per run)
            v.subscribed.add(ROOT)
        self._aliases[ov.client_id] = f"fz-{self.token}-{v.index}"
        self.stats["connectionsReused"] += 1

    def _reusable(self, c: SimClient) -> bool:
        return (c.ready and c.conn is not None and not c.conn.closed.is_set()
                and c.view.collections == c.spec.collections and not any(c.view.pending.values()))

    def close(self, *, reuse: bool = True) -> None:
        """Close the run's connections — or, with a `pool` (and `reuse`), hand the clean ones to
        it for the next run: clients still ready, never reconnected, with nothing pending (their
        channels other than root unsubscribed), and the observers (they hold no subscription).
        Nothing is handed on once the host died in this run (`host_dead`)."""
        keep: list[tuple[tuple[Any, ...], SimClient]] = []
        if self.pool is not None and reuse and self.host_dead is None:
            keep += [(("client", self.url, c.spec), c) for c in self.clients.values() if self._reusable(c)]
            keep += [(("observer", self.url, o.spec), o) for o in self.observers.values() if self._reusable(o)]
        kept = {id(c) for _, c in keep}

        async def shut() -> None:  # concurrently: each close waits for the host's closing handshake
            for _, c in keep:
                assert c.conn is not None
                for ch in sorted(c.view.subscribed - {ROOT}):
                    await c.conn.notify("unsubscribe", {"channel": ch})
            await asyncio.gather(*(c.conn.close() for c in [*self.clients.values(), *self.observers.values()]
                                   if c.conn is not None and id(c) not in kept))

        with contextlib.suppress(LiveFailure, ConnectionLost):
            self.loop.run(shut(), 10.0)
        if self.pool is not None:
            for key, c in keep:
                if c.conn is not None and not c.conn.closed.is_set():
                    self.pool.give(key, c)
        if self._own_loop:
            self.loop.close()

    def release(self) -> None:
        """After `close`, of a run nothing reads again (no finding of it is recorded): cut the
        references between the run, its clients and their connections, so that what the run
        received is freed as soon as it is dropped rather than by the cyclic collector (whose
        passes over every example's envelopes and states cost ~8% of a live step). Clients handed
        to the pool keep their connection and the fold the next run adopts."""
        pooled = {id(c) for c in self.pool.held()} if self.pool is not None else set()
        for c in [*self.clients.values(), *self.observers.values()]:
            if id(c) in pooled:
                continue
            if c.conn is not None:
                c.conn.on_notification = _ignore
            c.conn = None
            c.view.envelopes, c.view.history, c.view.snapshots = [], {}, []
            c.view.dispatches, c.by_seq = [], {}
        self.clients, self.observers = {}, {}
        self.obs = LiveObservation([], kinds=self.kinds, reduce=self.obs.reduce)
        self.transcript.frames.clear()


def _ignore(conn_id: int, method: str, params: dict[str, Any]) -> None:
    """A released client's connection: late notifications go nowhere."""
