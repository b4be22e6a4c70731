"""What the live checks look at: a recorded conversation with a host, as plain data.

The live machine (`harness.live`) fills these records as frames arrive; the live checks
(`wire`, `state`, `scenarios`, `handshake`) read them after each step, at quiescence. A test
can build them by hand from a crafted envelope stream: that is how every live check is shown
failing on a counterexample.

Vocabulary:

* `Envelope` — one `action` notification as a client received it (or one replayed envelope);
* `Dispatch` — one `dispatchAction` a client sent, with what the harness expects of the host
  (a required rejection names the invariant that requires it), and the echoes it got;
* `Command` — one request a client sent (createChat, …) and its answer;
* `Snapshot` — a channel state with its `fromSeq` (initialize, subscribe, reconnect);
* `ClientView` — everything one simulated client saw and did, plus its confirmed state per
  channel folded from the envelopes it received (`history`: the state after each envelope);
* `LiveObservation` — all clients, the fresh snapshots an observer took at quiescence, and the
  facts the checks need (which kind each channel is, the agent's capabilities).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from harness.spec.versions import is_newer_than, parse_version

JSON = Any
State = dict[str, Any]

#: `Envelope.origin` when the key was absent (server-originated) — distinct from `null`.
ABSENT: Any = "<absent>"


@dataclass
class Envelope:
    seq: JSON
    channel: str
    action: JSON
    origin: JSON = ABSENT
    rejection: JSON = None  # the `rejectionReason` value (None: the key was absent)
    replayed: bool = False  # came in a reconnect replay, not live

    @property
    def rejected(self) -> bool:
        return self.rejection is not None

    @property
    def type(self) -> str:
        t = self.action.get("type") if isinstance(self.action, dict) else None
        return t if isinstance(t, str) else ""

    @staticmethod
    def from_params(params: dict[str, Any], *, replayed: bool = False) -> Envelope:
        return Envelope(
            seq=params.get("serverSeq"),
            channel=str(params.get("channel", "")),
            action=params.get("action"),
            origin=params.get("origin", ABSENT),
            rejection=params.get("rejectionReason") if "rejectionReason" in params else None,
            replayed=replayed,
        )


@dataclass
class Dispatch:
    client_seq: int
    channel: str
    action: JSON
    #: The invariant that requires the host to reject this dispatch (None: accept or reject).
    must_reject: str | None = None
    reason: str = ""  # why a rejection is required (for the message)
    #: The channel does not exist: the host MUST NOT echo it (INV-044).
    silent: bool = False
    #: Chat attachments sent without endTurn: their path in the action -> the endTurn the host
    #: must pin (the referenced chat's latest completed turn when the message was sent).
    pins: dict[str, str] = field(default_factory=dict)
    echoes: list[Envelope] = field(default_factory=list)

    @property
    def type(self) -> str:
        t = self.action.get("type") if isinstance(self.action, dict) else None
        return t if isinstance(t, str) else ""


@dataclass
class Command:
    method: str
    params: dict[str, Any]
    #: The invariant that requires an error answer (None: either is fine).
    must_fail: str | None = None
    reason: str = ""
    result: JSON = None
    error: dict[str, Any] | None = None  # {"code", "message"} of an error answer
    lost: str | None = None  # no answer: timeout or connection lost

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass
class Snapshot:
    channel: str
    from_seq: JSON
    state: JSON
    #: How many envelopes the client had received when the snapshot arrived.
    position: int = 0


@dataclass
class Reconnect:
    """A `reconnect` the client sent: what it asked and what came back."""

    last_seen: int
    subscriptions: list[str]
    result: JSON = None
    error: dict[str, Any] | None = None
    #: Non-rejected envelopes the client had recorded for `subscriptions` above `last_seen`,
    #: up to the moment it reconnected (the expected replay).
    expected: list[Envelope] = field(default_factory=list)


@dataclass
class Probe:
    """A malformed frame sent on purpose and what the host did (WIRE.md §10)."""

    frame: str
    reply: JSON = None  # the answer with id null, if any
    alive: bool = True  # a ping afterwards was answered
    detail: str = ""

    @property
    def is_json(self) -> bool:
        """The frame is valid JSON (a bare value or an array: -32600 expected, not -32700)."""
        import json

        try:
            json.loads(self.frame)
        except ValueError:
            return False
        return True


@dataclass
class WireProbe:
    """One handshake or error-code probe (issue 16): a request sent to learn how the host answers.

    `check` is the live check that judges it ("ping", "before-initialize", "second-initialize",
    "unknown-version", "empty-versions", "unknown-method", "bad-params"); `answered` False means
    no answer came (`lost` says why)."""

    check: str
    method: str
    params: JSON
    result: JSON = None
    error: dict[str, Any] | None = None
    answered: bool = True
    lost: str = ""
    connection: int | None = None
    #: After a second initialize, a ping on the same connection was still answered (not closed).
    note: str = ""

    @property
    def code(self) -> Any:
        return self.error.get("code") if isinstance(self.error, dict) else None

    def answer(self) -> str:
        if not self.answered:
            return f"no answer ({self.lost})" if self.lost else "no answer"
        if self.error is not None:
            return f"error {self.code} {str(self.error.get('message', ''))[:60]!r}"
        return f"result {_short(self.result, 60)}"


@dataclass
class ClientView:
    index: int
    client_id: str
    offered: list[str]
    version: str | None = None  # the negotiated version (None: initialize failed)
    #: Why the host's answer to this client's initialize is malformed as a negotiation (a result
    #: without a MAJOR.MINOR.PATCH protocolVersion, a -32005 without data.supportedVersions):
    #: INV-H10's finding. None: well-formed.
    negotiation: str | None = None
    #: Its initialize was refused (-32005) without data.supportedVersions: malformed once the
    #: host is known to speak 1.0.0, where the data is required (INV-H10).
    refusal_without_versions: bool = False
    #: Declared capabilities.attachmentCollections at initialize (None: unknown — a reconnect
    #: carries no capabilities, so what the host assumes afterwards is not known).
    collections: bool | None = False
    delivery_ms: int = 0  # subscribe delivery.maxLatencyMs
    envelopes: list[Envelope] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    reconnects: list[Reconnect] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    subscribed: set[str] = field(default_factory=set)
    confirmed: dict[str, State] = field(default_factory=dict)
    pending: dict[str, list[Dispatch]] = field(default_factory=dict)
    #: channel -> [(serverSeq, confirmed state after it)], the snapshot's (fromSeq, state) first.
    history: dict[str, list[tuple[int, State]]] = field(default_factory=dict)

    def dispatch_at(self, client_seq: Any) -> Dispatch | None:
        """The first dispatch with this clientSeq (an index, rebuilt when dispatches grew: the
        checks look one up per echo, every step)."""
        idx: dict[Any, Dispatch] | None = self.__dict__.get("_by_seq")
        if idx is None or self.__dict__.get("_by_seq_n") != len(self.dispatches):
            idx = {}
            for d in self.dispatches:
                with contextlib.suppress(TypeError):  # an unhashable crafted clientSeq
                    idx.setdefault(d.client_seq, d)
            self.__dict__["_by_seq"], self.__dict__["_by_seq_n"] = idx, len(self.dispatches)
        try:
            return idx.get(client_seq)
        except TypeError:
            return None

    def first_snapshot(self, channel: str) -> Snapshot | None:
        """The first snapshot of `channel` this client received (an index kept incrementally)."""
        idx: dict[str, Snapshot] | None = self.__dict__.get("_first_snap")
        n = self.__dict__.get("_first_snap_n", 0)
        if idx is None:
            idx, n = {}, 0
            self.__dict__["_first_snap"] = idx
        for snap in self.snapshots[n:]:
            if isinstance(snap.channel, str):
                idx.setdefault(snap.channel, snap)
        self.__dict__["_first_snap_n"] = len(self.snapshots)
        return idx.get(channel)

    def received_seqs(self, channel: str) -> set[Any]:
        """The serverSeqs of every envelope of `channel` this client received (an index kept up
        to date incrementally: the checks ask it per channel, every op)."""
        idx: dict[str, set[Any]] | None = self.__dict__.get("_rx")
        n = self.__dict__.get("_rx_n", 0)
        if idx is None:
            idx, n = {}, 0
            self.__dict__["_rx"] = idx
        for e in self.envelopes[n:]:
            with contextlib.suppress(TypeError):  # an unhashable crafted serverSeq
                idx.setdefault(e.channel, set()).add(e.seq)
        self.__dict__["_rx_n"] = len(self.envelopes)
        return idx.get(channel, set())

    def state_at(self, channel: str, seq: int) -> State | None:
        """The confirmed state of `channel` after every envelope with serverSeq <= `seq`
        (None when the client's first snapshot of it is newer than `seq`)."""
        h = self.history.get(channel, ())
        for i in range(len(h) - 1, -1, -1):  # newest first: at quiescence the match is the last
            s, state = h[i]
            if isinstance(s, int) and s <= seq:
                return state
        return None

    def last_seq(self, channel: str) -> int | None:
        h = self.history.get(channel)
        return h[-1][0] if h else None


@dataclass
class SessionFacts:
    """What the machine knows of one session it created."""

    uri: str
    directories: list[str] | None  # as created (None: absent)
    immutable_primary: bool = False
    primary_replacement: bool = False


@dataclass
class LiveObservation:
    clients: list[ClientView]
    #: profile key (`profile_key`) -> channel -> a snapshot an observer connection with that
    #: profile took at quiescence. The first key is the main profile (client 0's).
    fresh: dict[str, dict[str, Snapshot]] = field(default_factory=dict)
    #: channel -> state kind ("session", "chat", "terminal", …).
    kinds: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, SessionFacts] = field(default_factory=dict)
    #: chat -> owning session.
    chat_session: dict[str, str] = field(default_factory=dict)
    #: Per client index: the first envelope / dispatch / command not yet checked.
    since_env: dict[int, int] = field(default_factory=dict)
    since_disp: dict[int, int] = field(default_factory=dict)
    since_cmd: dict[int, int] = field(default_factory=dict)
    #: Handshake and error-code probes (issue 16), and how many the checks have seen.
    wire_probes: list[WireProbe] = field(default_factory=list)
    since_wire: int = 0
    #: (clientId, clientSeq) of an echo -> the connections (described) that received it: names the
    #: connection an echo went to when it never reached its dispatcher (INV-045).
    delivered: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    #: channel -> serverSeq -> every accepted client-originated envelope (an echo) any connection
    #: of the run received, its dispatcher's or another's: what the host says it applied, even
    #: when it echoes to the wrong connection (INV-H07 folds them in).
    echoes: dict[str, dict[int, Envelope]] = field(default_factory=dict)
    #: Channels with an echo received since the settling last looked (`take_echo_channels`).
    echo_channels: set[str] = field(default_factory=set)
    #: The clients are at a quiescence the host's ping answers proved (False: a timed drain).
    settled: bool = True
    #: The first sign in this run that the host sends echoes to the wrong connections (an echo
    #: reached a client not subscribed to its channel): None while there is none.
    misrouting: str | None = None
    #: The version the host negotiated before the run for an offer that did not hold it (it
    #: answers that whatever is offered: INV-046's cause; INV-H04 does not report it again).
    unoffered_answer: str | None = None
    #: What was malformed in the host's answers to the negotiation before the run (INV-H10).
    negotiation_problem: str | None = None
    #: A fresh snapshot showed an accepted client action that changes the state (INV-H07's check
    #: sets it; carried across a campaign's runs): while False, the host applied none it accepted,
    #: and INV-H07's findings are that one cause, not one per action type (issue 33).
    applied_seen: bool = False
    #: The reference reducers, `reduce(version, kind, state, action) -> state` (a malformed action
    #: leaves the state unchanged): lets a check re-fold a client's view another way (INV-H07).
    reduce: Callable[[str, str, State, Any], State] | None = None
    #: Writes to `echoes` per channel, and per (client, channel) what `missed_echoes` last found
    #: nothing missing in (the client's view, its history, and the counts it depends on): the
    #: check runs every op over every echo of the run, and is skipped where nothing changed.
    _echo_writes: dict[str, int] = field(default_factory=dict, repr=False)
    _nothing_missed: dict[tuple[int, str], tuple[Any, ...]] = field(default_factory=dict, repr=False)
    #: (clientId, clientSeq) -> how many entries of `echoes` carry that origin (`echoed`).
    _origins: Counter[Any] = field(default_factory=Counter, repr=False)
    _odd_origins: bool = field(default=False, repr=False)

    def note_echo(self, env: Envelope, receiver: ClientView, *, live: bool = True) -> None:
        """Keep an accepted echo that reached any connection of the run (`echoes`); one that
        reached a client not subscribed to its channel is a sign of misrouting (`misrouting`).
        `live` False: it came in a reconnect's replay (what the host holds, not what it sent
        then: no subscriber is judged by it, `missed_echoes`)."""
        if (isinstance(env.origin, dict) and not env.rejected and not env.replayed
                and isinstance(env.seq, int) and not isinstance(env.seq, bool)):
            per = self.echoes.setdefault(env.channel, {})
            if live or env.seq not in per:
                old = per.get(env.seq)
                if old is not None:
                    self._count_origin(old, -1)
                per[env.seq] = env if live else replace(env, replayed=True)
                self._count_origin(env, 1)
                self._echo_writes[env.channel] = self._echo_writes.get(env.channel, 0) + 1
            self.echo_channels.add(env.channel)
            if not live:
                return
            if self.misrouting is None and receiver.index >= 0 and env.channel not in receiver.subscribed:
                self.misrouting = f"client {receiver.index} got serverSeq {env.seq} of {env.channel}, which it does not watch"

    def take_echo_channels(self) -> set[str]:
        """The channels with an echo since the last call (and forget them)."""
        out, self.echo_channels = self.echo_channels, set()
        return out

    def _count_origin(self, env: Envelope, n: int) -> None:
        origin = env.origin
        key = (origin.get("clientId"), origin.get("clientSeq")) if isinstance(origin, dict) else None
        try:
            self._origins[key] += n
        except TypeError:  # a crafted unhashable clientSeq: `echoed` scans from now on
            self._odd_origins = True

    def echoed(self, client_id: str, client_seq: Any) -> bool:
        """An accepted echo of this dispatch reached some connection of the run."""
        if not self._odd_origins:
            with contextlib.suppress(TypeError):  # an unhashable query: the scan below
                return self._origins[(client_id, client_seq)] > 0
        return any(isinstance(e.origin, dict) and e.origin.get("clientId") == client_id
                   and e.origin.get("clientSeq") == client_seq
                   for per in self.echoes.values() for e in per.values())

    def accepted_elsewhere(self, client_id: str, client_seq: Any, channel: str) -> Envelope | None:
        """An accepted echo of this dispatch that reached another connection of the run (a host
        that echoes to the wrong socket still says it accepted the action)."""
        for e in self.echoes.get(channel, {}).values():
            if isinstance(e.origin, dict) and e.origin.get("clientId") == client_id \
                    and e.origin.get("clientSeq") == client_seq:
                return e
        return None

    def accepted_with_another_origin(self, client_id: str, client_seq: Any, channel: str,
                                     action: Any) -> Envelope | None:
        """An accepted client-originated echo of this very action on `channel` whose origin names
        another dispatch than this one (issue 33: the ahpx mock stamps every echo with the newest
        client's id): the host still says it accepted the action."""
        for e in self.echoes.get(channel, {}).values():
            if (isinstance(e.origin, dict) and not e.rejected and e.action == action
                    and (e.origin.get("clientId"), e.origin.get("clientSeq")) != (client_id, client_seq)):
                return e
        return None

    def misattributed(self) -> str | None:
        """A dispatch with no echo of its own whose very action came back accepted on its channel
        under another dispatch's origin (issue 33: the ahpx mock stamps every echo with the newest
        client's id) — what it looks like, or None. The echo checks' findings in such a run are
        that one cause's (`harness/live/signing.py`)."""
        for c in self.clients:
            for d in c.dispatches:
                if d.echoes or d.silent:
                    continue
                e = self.accepted_with_another_origin(c.client_id, d.client_seq, d.channel, d.action)
                if e is not None:
                    return (f"client {c.index}'s clientSeq {d.client_seq} ({d.type}) came back as serverSeq {e.seq} "
                            f"under origin {e.origin}")
        return None

    def misrouted(self) -> bool:
        """The host sends echoes to the wrong connections in this run: a dispatch is still pending
        at its dispatcher while its echo reached another connection (INV-045 names it), or an echo
        reached a client that does not watch its channel, or a client that watches it never got
        it (`missed_echoes`). Clients then disagree, and folds miss envelopes, because of that one
        cause: the checks comparing them stay quiet."""
        return (self.misrouting is not None
                or any((c.client_id, d.client_seq) in self.delivered
                       for c in self.clients for q in c.pending.values() for d in q)
                or next(self.missed_echoes(), None) is not None)  # the costly one last

    def missed_echoes(self) -> Iterator[tuple[ClientView, Envelope]]:
        """Accepted echoes on a channel a client watches (subscribed before them, delivery
        without coalescing) that it never received — at quiescence proven by ping (`settled`),
        else when it received a later envelope — while another connection of the run got them:
        the host sent them to some connections only (INV-045 names them; one per client and
        channel)."""
        for c in self.clients:
            top = next((e.seq for e in reversed(c.envelopes) if isinstance(e.seq, int)), -1)
            if c.delivery_ms != 0:
                continue
            try:
                version = parse_version(c.version) if c.version is not None else None
            except ValueError:
                version = None  # a version no peer speaks: no type is known to be newer
            for ch in sorted(c.subscribed):
                per, h = self.echoes.get(ch), c.history.get(ch)
                if not per or not h or not isinstance(h[0][0], int):
                    continue
                memo = self._nothing_missed.get((c.index, ch))
                now = (self._echo_writes.get(ch, 0), len(c.envelopes), h[0][0], self.settled)
                if memo is not None and memo[0] is c and memo[1] is h and memo[2] == now:
                    continue  # nothing new since it found nothing missing here
                have = c.received_seqs(ch)
                for seq in sorted(per):
                    if seq in have or not h[0][0] < seq or (seq >= top and not self.settled):
                        continue
                    e = per[seq]
                    if e.replayed or (isinstance(e.origin, dict) and e.origin.get("clientId") == c.client_id):
                        continue  # known from a replay only; its own echo is the pending queue's (above)
                    if version is None or not is_newer_than(e.type, version):  # newer: MUST NOT get it
                        yield c, e
                        break
                else:
                    self._nothing_missed[(c.index, ch)] = (c, h, now)

    def new_wire_probes(self, check: str) -> list[WireProbe]:
        return [p for p in self.wire_probes[self.since_wire:] if p.check == check]

    def main_fresh(self) -> dict[str, Snapshot]:
        """The fresh snapshots of the richest profile present (newest version, collections
        before flat): the one whose view of sessions and chats holds every field."""
        if not self.fresh:
            return {}
        return self.fresh[max(self.fresh, key=profile_rank)]

    def fresh_for(self, c: ClientView) -> dict[str, Snapshot]:
        return self.fresh.get(profile_key(c.version, c.collections), {})

    def new_envelopes(self, c: ClientView) -> list[Envelope]:
        return c.envelopes[self.since_env.get(c.index, 0) :]

    def new_dispatches(self, c: ClientView) -> list[Dispatch]:
        return c.dispatches[self.since_disp.get(c.index, 0) :]

    def new_commands(self, c: ClientView) -> list[Command]:
        return c.commands[self.since_cmd.get(c.index, 0) :]


@lru_cache(maxsize=64)
def profile_rank(key: str) -> tuple[tuple[int, ...], int]:
    """How rich a profile (`profile_key`) is: newest version first, then collections before
    flat — the richest profile's view of sessions and chats holds every field."""
    version, _, shown = key.partition("|")
    try:
        v = tuple(int(x) for x in version.split("."))
    except ValueError:
        v = ()
    return v, {"collections": 2, "flat": 1}.get(shown, 0)


def profile_key(version: str | None, collections: bool | None) -> str:
    """What decides how a host projects states for a connection (WIRE.md; seed 000)."""
    shown = "unknown" if collections is None else "collections" if collections else "flat"
    return f"{version}|{shown}"


LiveCheckFn = Callable[[LiveObservation], Iterable[str]]


@dataclass(frozen=True)
class LiveCheck:
    """A live check: `id` is its catalogue entry (severity and title come from the registry)."""

    id: str
    fn: LiveCheckFn

    @property
    def doc(self) -> str:
        return " ".join((self.fn.__doc__ or "").split())


def strip_clock(value: JSON) -> JSON:
    """`value` without `modifiedAt` keys (wall-clock dependent on a host, INV-042)."""
    if isinstance(value, dict):
        return {k: strip_clock(v) for k, v in value.items() if k != "modifiedAt"}
    if isinstance(value, list):
        return [strip_clock(v) for v in value]
    return value


def state_difference(a: JSON, b: JSON) -> str | None:
    """Where two channel states differ, `modifiedAt` aside (None: equal). A fast equality test
    first (the common case); the path walk only for a mismatch."""
    if isinstance(a, dict) and isinstance(b, dict):
        if {**a, "modifiedAt": None} == {**b, "modifiedAt": None}:
            return None
    elif a == b:
        return None
    return first_difference(strip_clock(a), strip_clock(b))


def first_difference(a: JSON, b: JSON, path: str = "") -> str | None:
    """The first path where `a` and `b` differ (key-presence sensitive), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                return f"{path}.{k} only in the first"
            if k not in a:
                return f"{path}.{k} only in the second"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} has {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a != b or (type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float)))):
        return f"{path or '.'}: {_short(a)} vs {_short(b)}"
    return None


def _short(v: JSON, limit: int = 80) -> str:
    import json

    text = json.dumps(v, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
