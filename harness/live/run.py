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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from harness.invariants.base import Violation
from harness.invariants.live.base import (
    Command,
    Dispatch,
    Envelope,
    LiveObservation,
    Probe,
    Reconnect,
    SessionFacts,
    Snapshot,
    profile_key,
    profile_rank,
    state_difference,
)
from harness.invariants.live.checks import check_live
from harness.reference import MalformedAction, Model, Profile
from harness.reference.turns import resumable
from harness.spec.versions import is_client_dispatchable, is_known_to, is_newer_than, parse_version
from harness.targets.live import ROOT, ConnectionLost, RpcError, Transcript

from .client import ClientSpec, SimClient, kind_of_uri
from .failure import TARGET_CRASH, LiveFailure
from .loop import EventLoopThread
from .pool import ConnectionPool
from .settle import LEAN, SettlePolicy
from .signing import op_trigger
from .wild import death_violation, handshake, quiesce

T = TypeVar("T")
JSON = Any
State = dict[str, Any]

COLLECTION = "collection"


#: Checks a live run skips unless asked: INV-052 documents a gap (INVARIANTS.md: "report how the
#: host behaves"; a SHOULD that the embedded host does not implement).
DEFAULT_SKIP: frozenset[str] = frozenset({"INV-052"})


#: See `LiveRun.echoes_lost`.
ECHOES_LOST_ENOUGH = 2


class LiveRun:
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

    # -- expectations (computed when an op runs, from confirmed states) ----------------------

    def expect_dispatch(self, client: SimClient, d: Dispatch) -> None:
        """What the host MUST do with `d` (only the MUST rules of the spec; anything else may go
        either way)."""
        a = d.action
        if d.channel not in self.kinds:
            # WIRE.md §5.3: an action on a non-existent channel is silently ignored. Only a URI of
            # this run's own namespace is known not to exist (another client may own any other).
            d.silent = self.ours(d.channel)
            return
        t = d.type
        version = client.speaks
        state = client.view.confirmed.get(d.channel) or {}
        if t == "session/defaultChatChanged":
            # Server-only in the generated table, client-dispatchable in the session-channel prose
            # (WIRE.md §14): only the catalog rule is certain (INV-026).
            chats = {c.get("resource") for c in state.get("chats") or [] if isinstance(c, dict)}
            if a.get("defaultChat") not in chats:
                d.must_reject, d.reason = "INV-026", "defaultChat names no chat of the catalog"
            return
        if is_known_to(t, version) and not is_client_dispatchable(t, version):
            d.must_reject, d.reason = "INV-053", f"{t} is not client-dispatchable"
            return
        caps = self.agent_caps()
        wd = caps.get("multipleWorkingDirectories")
        if t == "chat/turnCancelled":
            active = state.get("activeTurn")
            if not isinstance(active, dict) or active.get("id") != a.get("turnId"):
                d.must_reject, d.reason = "INV-044", "chat/turnCancelled with no matching active turn"
        elif t == "chat/turnResume":
            turns = state.get("turns") or []
            if state.get("activeTurn") is not None or not turns or not isinstance(turns[-1], dict) or (
                    turns[-1].get("id") != a.get("turnId") or not resumable(turns[-1])):
                d.must_reject, d.reason = "INV-X07", "not the latest turn ending in a resumable error, or a turn is active"
        elif t == "chat/toolCallConfirmed":
            if _tool_status(state, a) != "pending-confirmation":
                d.must_reject, d.reason = "INV-044", "the tool call is not pending-confirmation"
        elif t == "chat/workingDirectorySet":
            session = client.view.confirmed.get(self.session_of(d.channel) or "") or {}
            if "workingDirectories" in session and a.get("directory") not in (session.get("workingDirectories") or []):
                d.must_reject, d.reason = "INV-031", f"{a.get('directory')!r} is not in the session's set"
        elif t == "session/workingDirectoryRemoved":
            dirs = state.get("workingDirectories") or []
            if (isinstance(wd, dict) and wd.get("immutablePrimary") and not wd.get("primaryReplacement")
                    and dirs and a.get("directory") == dirs[0]):
                d.must_reject, d.reason = "INV-032", "removing the immutable primary"
        message = a.get("message") if t in ("chat/turnStarted", "chat/pendingMessageSet") else (
            a.get("draft") if t == "chat/draftChanged" else None)
        if d.must_reject is None and isinstance(message, dict):
            self._expect_message(d, message)

    def _expect_message(self, d: Dispatch, message: dict[str, Any]) -> None:
        key = "draft" if d.type == "chat/draftChanged" else "message"
        items = message.get("attachments")
        if not isinstance(items, list):
            return
        for i, att in enumerate(items):
            if not isinstance(att, dict):
                continue
            here = f".{key}.attachments[{i}]"
            if att.get("type") == COLLECTION:
                members = att.get("attachments")
                if not isinstance(members, list) or not members or any(
                        isinstance(m, dict) and m.get("type") == COLLECTION for m in members):
                    d.must_reject, d.reason = "INV-037", "a nested or empty collection"
                    return
                for j, m in enumerate(members):
                    if isinstance(m, dict) and m.get("type") == "chat" and not self._expect_chat(d, m, f"{here}.attachments[{j}]"):
                        return
            elif att.get("type") == "chat" and not self._expect_chat(d, att, here):
                return

    def _expect_chat(self, d: Dispatch, att: dict[str, Any], path: str) -> bool:
        ref = att.get("resource")
        turns = self.completed_turns(ref) if isinstance(ref, str) else None
        if not isinstance(ref, str) or self.kinds.get(ref) != "chat":
            if isinstance(ref, str) and kind_of_uri(ref) == "chat" and self.ours(ref):
                d.must_reject, d.reason = "INV-044", f"a chat attachment names an unknown chat {ref!r}"
                return False
            return True  # a chat this run does not know may still exist on the host
        state = self.state(ref) or {}
        if "endTurn" in att:
            known = {t.get("id") for t in state.get("turns") or [] if isinstance(t, dict)}
            if att["endTurn"] not in known:
                d.must_reject, d.reason = "INV-044", f"endTurn {att['endTurn']!r} is not a retained turn of {ref}"
                return False
            return True
        if turns:
            d.pins[path] = turns[-1]
        return True

    def expect_create_chat(self, params: dict[str, Any]) -> tuple[str | None, str]:
        dirs = params.get("workingDirectories")
        session = self.state(str(params.get("channel"))) or {}
        if isinstance(dirs, list) and "workingDirectories" in session:
            outside = [x for x in dirs if x not in (session.get("workingDirectories") or [])]
            if outside:
                return "INV-031", f"workingDirectories {outside} are not in the session's set"
        return None, ""

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

    # -- quiescence and checks --------------------------------------------------------------

    async def _barrier(self, sources: list[SimClient] | None = None, *, answered: bool = False) -> None:
        """Quiescence: every ready client has received what the host emitted for the op.

        `sources` None (or the thorough policy): a ping on every ready client. Otherwise a ping on
        the ready clients among `sources` (those that sent the op's frames; none when `answered`:
        the answer to their last request was their barrier), then each other client is either
        caught up (`_caught_up`) within a few loop turns or pinged as well.

        A host that leaves a ping unanswered gets livewild's fallback (`wild.quiesce`) under
        either policy: a timed drain instead, here and in every later barrier of the run — an
        unanswered ping proves nothing about the clients it was meant to prove caught up."""
        ready = self.ready_clients()
        if sources is None or self.policy.barrier == "all" or self.ping_silent:
            self.stats["pings"] += 0 if self.ping_silent else len(ready)
            await self._quiesce(ready)
            return
        first = [c for c in ready if any(c is s for s in sources)]
        rest = [c for c in ready if not any(c is f for f in first)]
        if not answered:
            self.stats["pings"] += len(first)
            if not await self._quiesce(first):
                return  # drained: every client, not only these
        lagging = await self._lagging(rest, first)
        while len(lagging) > 1:
            # the one watching most is pinged first: what it received may prove the others
            witness = max(lagging, key=lambda c: len(c.view.subscribed))
            self.stats["pings"] += 1
            if not await self._quiesce([witness]):
                return
            first.append(witness)
            lagging = await self._lagging([c for c in lagging if c is not witness], first)
        self.stats["pings"] += len(lagging)
        if lagging and not await self._quiesce(lagging[:1]):
            return
        self.stats["pingsSkipped"] += len(rest) - sum(1 for c in first if any(c is r for r in rest)) - len(lagging)

    async def _quiesce(self, clients: list[SimClient]) -> bool:
        """Ping `clients` (`wild.quiesce`): True when the host answered each (an error answer
        is a barrier too), False when it fell back to a timed drain of the whole run."""
        if await quiesce(self, clients):
            return True
        self.stats["drains"] += 1
        return False

    async def _lagging(self, clients: list[SimClient], pinged: list[SimClient]) -> list[SimClient]:
        """The `clients` not proven caught up by what the `pinged` ones received, after up to
        `catchup_turns` loop turns (the other connections' frames may still be on their way in)."""
        lagging = clients
        for turn in range(self.policy.catchup_turns):
            lagging = [c for c in lagging if not self._caught_up(c, pinged)]
            if not lagging or turn == self.policy.catchup_turns - 1:
                break
            await asyncio.sleep(0)
        return lagging

    def _caught_up(self, c: SimClient, pinged: list[SimClient]) -> bool:
        """`c` holds every envelope the `pinged` clients received since the last check on the
        channels it watches (the host handled the op before answering their pings, so what it
        emitted to `c` is among those). Unknown — False — when `c`'s connection closed, when it
        watches a channel none of them does, or for an envelope without an integer serverSeq."""
        v = c.view
        if c.conn is None or c.conn.closed.is_set() or not pinged:
            return False
        watched: set[str] = set().union(*(p.view.subscribed for p in pinged))
        if not v.subscribed <= watched:
            return False
        version = parse_version(c.speaks)  # a version that is no MAJOR.MINOR.PATCH: INV-H10
        got: set[tuple[int, str]] | None = None
        for p in pinged:
            for e in p.view.envelopes[self.obs.since_env.get(p.view.index, 0):]:
                if e.rejected or e.replayed or e.channel not in v.subscribed:
                    continue  # a rejection may go to its sender only
                if not isinstance(e.seq, int) or isinstance(e.seq, bool):
                    return False
                if is_newer_than(e.type, version):
                    continue  # a host MUST NOT send it to `c` (INV-046)
                h = v.history.get(e.channel)
                if not h:
                    return False
                if isinstance(h[0][0], int) and e.seq <= h[0][0]:
                    continue  # before `c`'s snapshot of the channel
                if got is None:
                    got = {(x.seq, x.channel) for x in v.envelopes[self.obs.since_env.get(v.index, 0):]
                           if isinstance(x.seq, int)}
                if (e.seq, e.channel) not in got:
                    return False
        return True

    def _sources(self, op: dict[str, Any]) -> list[SimClient]:
        """The clients that sent this op's frames."""
        subs = op.get("ops") if op.get("op") == "race" else [op]
        out: list[SimClient] = []
        for sub in subs if isinstance(subs, list) else []:
            c = self.clients.get(int(sub.get("client", 0))) if isinstance(sub, dict) else None
            if c is not None and not any(c is x for x in out):
                out.append(c)
        return out

    async def _settle_and_check(self, op: dict[str, Any] | None = None) -> list[Violation]:
        t0 = time.perf_counter()
        await self._barrier(None if op is None else self._sources(op), answered=_answered(op))
        if self.echoes_lost < ECHOES_LOST_ENOUGH:  # a host that loses echoes is not waited for again
            deadline = time.monotonic() + self.drain_s
            while self._awaiting_echo():
                if time.monotonic() >= deadline:
                    self.echoes_lost += 1
                    break
                await asyncio.sleep(0.005)
        lean = self.policy.barrier == "sources"
        followers = await self._follow(self._new_channels() if lean else None)
        if followers:
            # lean: a follower's subscribe answer is its barrier already; the others are caught
            # up or pinged
            await self._barrier(followers, answered=lean)
        if self.policy.snapshots == "needed":
            await self._lean_snapshots(op)
        else:
            await self._thorough_snapshots()
        self.obs.settled = not self.ping_silent
        t1 = time.perf_counter()
        found = check_live(self.obs, skip=self.skip)
        self.phase_s["settle"] += t1 - t0
        self.phase_s["checks"] += time.perf_counter() - t1
        for c in self.clients.values():
            self.obs.since_env[c.view.index] = len(c.view.envelopes)
            self.obs.since_disp[c.view.index] = len(c.view.dispatches)
            self.obs.since_cmd[c.view.index] = len(c.view.commands)
            self._since_snap[c.view.index] = len(c.view.snapshots)
        return found

    def _awaiting_echo(self) -> bool:
        """A dispatch of this op is still pending at its dispatcher and no connection of the run
        got its echo: the host may echo late, so the settling gives it `drain_s`. Older ones had
        their wait (a host that never echoes them must not cost every later op), and an echo that
        went to another connection will not reach the dispatcher (INV-045 says where it went)."""
        for c in self.ready_clients():
            v = c.view
            for d in v.dispatches[self.obs.since_disp.get(v.index, 0):]:
                if (d.channel in v.subscribed and any(x is d for x in v.pending.get(d.channel, ()))
                        and (v.client_id, d.client_seq) not in self.obs.delivered):
                    return True
        return False

    def _seen_seq(self) -> int:
        """The newest serverSeq any client has observed (an envelope, or a snapshot's fromSeq: a
        host's sequence is global, so a setup op's envelopes may reach no client before its
        subscribe)."""
        return max((x for c in self.clients.values()
                    for x in (*(e.seq for e in c.view.envelopes[-1:]),
                              *(s.from_seq for s in c.view.snapshots[-1:]))
                    if isinstance(x, int)), default=-1)

    async def _thorough_snapshots(self) -> None:
        self._touched |= self._new_channels() | self.obs.take_echo_channels()
        if self.steps % self.snapshot_every == 0:
            full = self.steps % self.full_every == 0
            seen = self._seen_seq()
            await self._fresh_snapshots(None if full else self._touched)
            self.stats["opsFull" if full else "opsTouched"] += 1
            self._touched = set()
            await self._catch_up_after(seen)
        else:
            self.obs.fresh = {}  # checks of fresh snapshots wait for the next snapshot step
            self.stats["opsNoSnapshot"] += 1

    async def _catch_up_after(self, seen: int) -> None:
        """A real fresh snapshot above `seen` means the host emitted after the barrier: every
        client pings again, so that the folds catch up before the checks compare."""
        if any(isinstance(snap.from_seq, int) and snap.from_seq > seen
               for snaps in self.obs.fresh.values() for snap in snaps.values()):
            await self._barrier()

    def _op_effects(self) -> tuple[set[str], set[str], set[str], set[str]]:
        """Channels with an envelope or a snapshot since the last check on any client; those
        among them with a rejection; those with an accepted envelope whose projection differs
        by client profile — by version and collection support (attachments), or by version
        only (working directories: a collection-less peer of the same version sees the same)."""
        touched: set[str] = self.obs.take_echo_channels()  # an echo may reach another connection
        rejected: set[str] = set()
        projected: set[str] = set()
        by_version: set[str] = set()
        for c in self.clients.values():
            v = c.view
            for e in v.envelopes[self.obs.since_env.get(v.index, 0):]:
                touched.add(e.channel)
                if e.rejected:
                    rejected.add(e.channel)
                elif e.channel not in projected:
                    keys = _projected_keys(e.action)
                    if "attachments" in keys:
                        projected.add(e.channel)
                    elif keys:
                        by_version.add(e.channel)
            touched.update(s.channel for s in v.snapshots[self._since_snap.get(v.index, 0):])
        return touched, rejected, projected, by_version - projected

    async def _lean_snapshots(self, op: dict[str, Any] | None) -> None:
        """The lean policy's fresh snapshots (`SettlePolicy`): real ones where needed, sampled
        or full; folded views and the clients' own new snapshots everywhere else."""
        like = self._profiles()
        touched, rejected, projected, by_version = self._op_effects()
        for key in like:
            self._dirty.setdefault(key, set()).update(touched)
        n = self.steps
        full = n % self.full_every == 0
        sampled = not full and n % self.policy.every == 0
        main = max(like, key=profile_rank) if like else None
        wanted: dict[str, set[str] | None] = {}
        if full:
            wanted = dict.fromkeys(like)
        else:
            command = op is not None and op.get("op") == "command"
            disputed = self._disputed_sessions()
            # per negotiated version, the richest profile: where a version-only projection shows
            versions = {key: max((k for k in like if k.partition("|")[0] == key.partition("|")[0]), key=profile_rank)
                        for key in like}
            for key in like:
                want = set(projected) | disputed
                if versions[key] == key:
                    want |= by_version
                if command:
                    want |= touched
                if key == main:
                    want |= rejected
                wanted[key] = want
            if sampled and like:
                keys = sorted(like, key=profile_rank, reverse=True)
                turn = keys[self._sampled % len(keys)]
                self._sampled += 1
                wanted[turn] = (wanted[turn] or set()) | self._dirty.get(turn, set())
        real_wanted = any(w is None or w for w in wanted.values())
        self.stats["opsFull" if full else "opsSampled" if sampled else "opsNeeded" if real_wanted else "opsFolded"] += 1
        seen = self._seen_seq()
        real = await self._fresh_snapshots_for(like, wanted) if real_wanted else {}
        for key, snaps in real.items():
            dirty = self._dirty.setdefault(key, set())
            if wanted.get(key) is None:
                dirty.clear()
            else:
                dirty.difference_update(snaps)
            self._note_divergence(like[key], snaps)
        # folds stand in for snapshots only while they can: not once the host sends echoes to
        # the wrong connections (folds miss envelopes), nor for a channel already diverged
        foldable = set() if self.obs.misrouted() else touched - self._diverged
        fresh: dict[str, dict[str, Snapshot]] = {}
        for key, c in like.items():
            view: dict[str, Snapshot] = {}
            for ch in sorted(foldable & c.view.subscribed):
                state = c.view.confirmed.get(ch)
                if state is not None:
                    view[ch] = Snapshot(ch, None, state)  # a fold, not a snapshot: INV-042 skips it
            self.stats["foldedViews"] += len(view)
            for x in self.clients.values():  # what clients of this profile received themselves
                if x.ready and profile_key(x.view.version, x.view.collections) == key:
                    for snap in x.view.snapshots[self._since_snap.get(x.view.index, 0):]:
                        view[snap.channel] = snap
            view.update(real.get(key) or {})
            fresh[key] = self._with_host_clock(view, c)
        self.obs.fresh = fresh
        await self._catch_up_after(seen)

    def _disputed_sessions(self) -> set[str]:
        """The sessions of this op's accepted dispatches that the folds said MUST be rejected as
        outside the session's set (INV-031): the check compares with the host's real session."""
        out: set[str] = set()
        for c in self.clients.values():
            for d in c.view.dispatches[self.obs.since_disp.get(c.view.index, 0):]:
                if d.must_reject == "INV-031" and any(not e.rejected for e in d.echoes):
                    s = self.session_of(d.channel)
                    if s:
                        out.add(s)
        return out

    def _note_divergence(self, c: SimClient, snaps: dict[str, Snapshot]) -> None:
        """Remember the channels whose real snapshot differs from `c`'s fold at its fromSeq
        (whatever the cause: the checks name it; here it only stops folded views of them)."""
        for ch, snap in snaps.items():
            if ch in self._diverged or not isinstance(snap.from_seq, int) or isinstance(snap.from_seq, bool):
                continue
            mine = c.view.state_at(ch, snap.from_seq)
            if mine is not None and state_difference(mine, snap.state) is not None:
                self._diverged.add(ch)

    def _with_host_clock(self, view: dict[str, Snapshot], c: SimClient) -> dict[str, Snapshot]:
        """Folded chat views with the host's `modifiedAt`: a fold's clock is the reference
        reducers' (0), never the host's, so a folded chat borrows it from its entry in the
        session's catalog (the view's, else `c`'s fold) — the ChatSummary comparison (INV-048)
        of a fold then holds every field but the clock; real snapshots compare that too."""
        catalogs: dict[str, dict[Any, dict[str, Any]]] = {}  # session -> chat -> its entry
        for ch, snap in view.items():
            if snap.from_seq is not None or self.kinds.get(ch) != "chat" or not isinstance(snap.state, dict):
                continue
            s_uri = self.obs.chat_session.get(ch) or ""
            catalog = catalogs.get(s_uri)
            if catalog is None:
                s_snap = view.get(s_uri) if s_uri else None
                session = s_snap.state if s_snap is not None else c.view.confirmed.get(s_uri)
                entries = session.get("chats") if isinstance(session, dict) else None
                catalog = catalogs[s_uri] = {}
                for e in entries if isinstance(entries, list) else []:
                    if isinstance(e, dict):
                        with contextlib.suppress(TypeError):  # an unhashable resource: no entry
                            catalog.setdefault(e.get("resource"), e)
            entry = catalog.get(ch)
            if entry is not None and "modifiedAt" in entry and "modifiedAt" in snap.state:
                view[ch] = Snapshot(ch, None, {**snap.state, "modifiedAt": entry["modifiedAt"]})
        return view

    def _profiles(self) -> dict[str, SimClient]:
        """One ready client per client profile (version × collections), in client order."""
        like: dict[str, SimClient] = {}
        for c in self.ready_clients():
            if c.view.collections is not None:
                like.setdefault(profile_key(c.view.version, c.view.collections), c)
        return like

    def _new_channels(self) -> set[str]:
        """Channels with an envelope or a snapshot since the last check, on any client."""
        out: set[str] = set()
        for c in self.clients.values():
            v = c.view
            out.update(e.channel for e in v.envelopes[self.obs.since_env.get(v.index, 0):])
            out.update(s.channel for s in v.snapshots[self._since_snap.get(v.index, 0):])
        return out

    async def _follow(self, changed: set[str] | None = None) -> list[SimClient]:
        """Every client subscribes to the chats of the sessions it watches (new chats appear in
        the session catalog); disposed channels are dropped. `changed`: only the sessions among
        these (with an envelope or a snapshot since the last check) can list a new chat. Returns
        the clients that subscribed."""
        followers: list[SimClient] = []
        for c in self.ready_clients():
            watched = c.view.subscribed if changed is None else c.view.subscribed & changed
            for s_uri in [ch for ch in sorted(watched) if self.kinds.get(ch) == "session"]:
                state = c.view.confirmed.get(s_uri) or {}
                for entry in state.get("chats") or []:
                    chat = entry.get("resource") if isinstance(entry, dict) else None
                    if isinstance(chat, str) and chat not in c.view.subscribed:
                        self.kinds.setdefault(chat, "chat")
                        self.obs.chat_session.setdefault(chat, s_uri)
                        await c.subscribe(chat)
                        if not any(c is f for f in followers):
                            followers.append(c)
        return followers

    async def _observer(self, key: str, like: SimClient) -> SimClient | None:
        obs = self.observers.get(key)
        if obs is not None and obs.ready:
            return obs
        self._observers_made += 1  # before any await: observers of several profiles start concurrently
        n = self._observers_made
        spec = ClientSpec(like.spec.offer, like.spec.collections, 0)
        reused = self.pool.take(("observer", self.url, spec)) if self.pool is not None else None
        obs = SimClient(self, -n, spec, reused.view.client_id if reused is not None else f"fz-{self.token}-observer-{n}")
        if reused is not None and reused.view.version == like.view.version:
            self._adopt(obs, reused)
            self.observers[key] = obs
            return obs
        if reused is not None:
            self.pool.give(("observer", self.url, spec), reused)  # type: ignore[union-attr]
        try:
            await obs.connect(self.url)
        except ConnectionLost as e:
            raise LiveFailure(TARGET_CRASH, f"observer: {e}") from None
        await obs.initialize()
        if obs.view.version != like.view.version:
            return None
        self.observers[key] = obs
        return obs

    async def _fresh_snapshots(self, only: set[str] | None) -> None:
        """Fresh snapshots, one observer per client profile, of every watched channel (`only`:
        of those that changed since the last ones; every `full_every` steps, all of them)."""
        like = self._profiles()
        self.obs.fresh = await self._fresh_snapshots_for(like, dict.fromkeys(like, only))

    async def _fresh_snapshots_for(self, like: dict[str, SimClient],
                                   wanted: dict[str, set[str] | None]) -> dict[str, dict[str, Snapshot]]:
        """Real fresh snapshots per profile of `like`: of the channels in `wanted[key]` that the
        profile's clients watch (None: all of them)."""
        keys = [k for k in like if k in wanted]
        results = await asyncio.gather(*(self._profile_snapshots(k, like[k], wanted[k]) for k in keys))
        return {key: snaps for key, snaps in zip(keys, results, strict=True) if snaps is not None}

    async def _profile_snapshots(self, key: str, like: SimClient, only: Iterable[str] | None) -> dict[str, Snapshot] | None:
        wanted = sorted(set().union(*(x.view.subscribed for x in self.ready_clients()
                                      if profile_key(x.view.version, x.view.collections) == key)))
        if only is not None:
            only = set(only)
            wanted = [ch for ch in wanted if ch in only]
            if not wanted:
                return {}
        obs = await self._observer(key, like)
        if obs is None or obs.conn is None:
            return None
        self.stats["realSnapshots"] += len(wanted)
        # pipelined: every subscribe sent in one write, every answer awaited, then the
        # unsubscribes of those answered in one write
        answers = await obs.requests("subscribe", [{"channel": ch} for ch in wanted])
        out: dict[str, Snapshot] = {}
        taken = [(ch, res) for ch, res in zip(wanted, answers, strict=True) if not isinstance(res, RpcError)]
        for i, (ch, res) in enumerate(taken):
            await obs.conn.notify("unsubscribe", {"channel": ch}, flush=i == len(taken) - 1)
            snap = res.get("snapshot") if isinstance(res, dict) else None
            if isinstance(snap, dict):
                out[ch] = Snapshot(ch, snap.get("fromSeq"), snap.get("state"))
        return out

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


#: Keys whose value a host projects differently per client profile: collections are flattened for
#: a peer without them (INV-040), working directories hidden from or singular for 0.6.0 (INV-046).
_PROJECTED_KEYS = frozenset({"attachments", "workingDirectories", "workingDirectory", "directory"})


#: Ops whose every frame is a request the host answered before the op returned (an op whose
#: answer did not come fails with TARGET-TIMEOUT): `subscribe`. The host answers in order on a
#: connection, so the answer is the sender's barrier, as a ping's would be — and a subscribe
#: causes no envelopes. A `connect` still pings: its ping is the run's first INV-H01 probe (a
#: host silent on ping is known from the first op, and drained from then on).
_ANSWERED_OPS = frozenset({"subscribe"})


def _answered(op: dict[str, Any] | None) -> bool:
    return op is not None and op.get("op") in _ANSWERED_OPS


def _projected_keys(value: Any, found: set[str] | None = None) -> set[str]:
    """The `_PROJECTED_KEYS` an action payload holds, at any depth."""
    found = set() if found is None else found
    if isinstance(value, dict):
        for k, v in value.items():
            if k in _PROJECTED_KEYS:
                found.add(k)
            _projected_keys(v, found)
    elif isinstance(value, list):
        for v in value:
            _projected_keys(v, found)
    return found


def _reducer() -> Callable[[str, str, State, Any], State]:
    """`LiveObservation.reduce`: the reference reducers of a version, models made on first use."""
    models: dict[str, Model] = {}

    def reduce(version: str, kind: str, state: State, action: Any) -> State:
        model = models.get(version)
        if model is None:
            try:
                model = models[version] = Model(Profile.for_version(version))
            except ValueError:
                return state
        try:
            return model.reduce(kind, state, action, 0)
        except MalformedAction:
            return state
        except Exception:
            if isinstance(action, dict):
                raise
            return state

    return reduce


def _tool_status(state: State, action: dict[str, Any]) -> str | None:
    turn = state.get("activeTurn")
    if not isinstance(turn, dict) or turn.get("id") != action.get("turnId"):
        return None
    for part in turn.get("responseParts") or []:
        tc = part.get("toolCall") if isinstance(part, dict) and part.get("kind") == "toolCall" else None
        if isinstance(tc, dict) and tc.get("toolCallId") == action.get("toolCallId"):
            return tc.get("status") if isinstance(tc.get("status"), str) else None
    return None
