"""One simulated live client: its connection, its confirmed state per channel, its pending queue."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.invariants.live.base import ClientView, Dispatch, Envelope, Snapshot
from harness.reference import MalformedAction, Model, Profile
from harness.spec import negotiation
from harness.spec.versions import PINNED_VERSION, parse_version
from harness.targets.live import ROOT, ConnectionLost, RpcError, WireConnection

from .failure import TARGET_CRASH, TARGET_TIMEOUT, LiveFailure
from .wild import note_delivery, ping

if TYPE_CHECKING:
    from .roles import RunRole

JSON = Any
State = dict[str, Any]


@dataclass(frozen=True)
class ClientSpec:
    offer: tuple[str, ...] = ("0.7.0", "0.6.0")
    collections: bool = True
    delivery_ms: int = 0

    def op(self, index: int) -> dict[str, Any]:
        return {"op": "connect", "client": index, "offer": list(self.offer),
                "collections": self.collections, "deliveryMs": self.delivery_ms}


#: Four clients: two that negotiated collections (immediate and coalesced delivery, INV-043),
#: one that did not (INV-040), one that speaks only 0.6.0 (INV-046).
DEFAULT_CLIENTS: tuple[ClientSpec, ...] = (
    ClientSpec(),
    ClientSpec(delivery_ms=20),
    ClientSpec(collections=False),
    ClientSpec(offer=("0.6.0",), collections=False),
)


def kind_of_uri(uri: str) -> str | None:
    if uri == ROOT:
        return "root"
    for prefix, kind in (("ahp-session:", "session"), ("ahp-chat:", "chat"), ("ahp-terminal:", "terminal"),
                         ("ahp-changeset:", "changeset"), ("ahp-resource-watch:", "resourceWatch")):
        if uri.startswith(prefix):
            return "annotations" if kind == "session" and uri.endswith("/annotations") else kind
    return None


class SimClient:
    """One simulated client: a connection, its confirmed state per channel, its pending queue."""

    def __init__(self, run: RunRole, index: int, spec: ClientSpec, client_id: str) -> None:
        self.run = run
        self.spec = spec
        self.view = ClientView(index, client_id, list(spec.offer), collections=spec.collections,
                               delivery_ms=spec.delivery_ms)
        self.conn: WireConnection | None = None
        self.model: Model | None = None
        self.by_seq: dict[int, Dispatch] = {}
        self.next_seq = 1
        self.dead = False

    @property
    def speaks(self) -> str:
        """The version this client's folds and draws follow: the one it negotiated when that is a
        MAJOR.MINOR.PATCH version (offered or not: a host speaking 0.5.0 is fuzzed on the 0.5.0
        subset), else the pinned one (a host answering garbage is judged by the run's checks)."""
        v = self.view.version
        if v is not None:
            try:
                parse_version(v)
                return v
            except ValueError:
                pass
        return PINNED_VERSION

    @property
    def modern(self) -> bool:
        """Negotiated 0.7.0 or later (multiroot fields)."""
        return parse_version(self.speaks) >= (0, 7, 0)

    @property
    def ready(self) -> bool:
        return self.conn is not None and self.view.version is not None and not self.dead

    # -- receiving ---------------------------------------------------------------------------

    def on_notification(self, conn_id: int, method: str, params: dict[str, Any]) -> None:
        if self.conn is None or conn_id != self.conn.conn_id or method != "action":
            return
        note_delivery(self.run, self, params)
        env = Envelope.from_params(params)
        self.run.obs.note_echo(env, self.view)
        self.view.envelopes.append(env)
        self._apply(env)

    def _apply(self, env: Envelope) -> None:
        v = self.view
        ch = env.channel
        if isinstance(env.origin, dict) and env.origin.get("clientId") == v.client_id:
            d = self.by_seq.get(env.origin.get("clientSeq"))  # type: ignore[arg-type]
            if d is not None and d.channel == ch:
                d.echoes.append(env)
                q = v.pending.get(ch)
                if q:
                    v.pending[ch] = [x for x in q if x is not d]
        if env.rejected or ch not in v.confirmed or self.model is None:
            return
        kind = self.run.kinds.get(ch) or kind_of_uri(ch)
        if kind is None:
            return
        try:
            new = self.model.reduce(kind, v.confirmed[ch], env.action, 0)
        except MalformedAction:
            new = v.confirmed[ch]
        except Exception:  # a shape the reducers never meet (a host in the wild): not applied
            if isinstance(env.action, dict) and isinstance(v.confirmed[ch], dict):
                raise  # a real action the reference model chokes on: a harness bug, reported
            new = v.confirmed[ch]
        v.confirmed[ch] = new
        v.history.setdefault(ch, []).append((env.seq, new))

    def take_snapshot(self, snap: Any) -> None:
        if not isinstance(snap, dict) or not isinstance(snap.get("resource"), str):
            return
        ch, state = snap["resource"], snap.get("state")
        if not isinstance(state, dict):
            return
        v = self.view
        v.snapshots.append(Snapshot(ch, snap.get("fromSeq"), state, len(v.envelopes)))
        v.confirmed[ch] = state
        seq = snap.get("fromSeq") if isinstance(snap.get("fromSeq"), int) else -1
        v.history[ch] = [(seq, state)]
        v.subscribed.add(ch)
        self.run.kinds.setdefault(ch, kind_of_uri(ch) or "")

    def optimistic(self, channel: str) -> State | None:
        state = self.view.confirmed.get(channel)
        kind = self.run.kinds.get(channel)
        if state is None or self.model is None or not kind:
            return state
        for d in self.view.pending.get(channel, []):
            with contextlib.suppress(MalformedAction):
                state = self.model.reduce(kind, state, d.action, 0)
        return state

    # -- sending -----------------------------------------------------------------------------

    async def connect(self, url: str) -> None:
        self.conn = WireConnection(self.run.next_conn(), self.run.transcript, self.on_notification)
        await self.conn.open(url, self.run.request_timeout_s)

    async def initialize(self) -> None:
        assert self.conn is not None
        params: dict[str, Any] = {
            "channel": ROOT, "protocolVersions": list(self.spec.offer), "clientId": self.view.client_id,
            "clientInfo": {"name": "ahp-fuzz", "version": "0.1.0"}, "initialSubscriptions": [ROOT],
        }
        if self.spec.collections:
            params["capabilities"] = {"attachmentCollections": {}}
        try:
            res = await self.request("initialize", params)
        except RpcError as e:
            self.view.version = None  # e.g. -32005: the host does not speak this offer
            if e.code == negotiation.UNSUPPORTED_PROTOCOL_VERSION:
                self.view.negotiation = negotiation.refusal_problem(e.data, required=False)
                self.view.refusal_without_versions = negotiation.refusal_problem(e.data) is not None
            return
        self.view.negotiation = negotiation.answer_problem(res, self.spec.offer)
        version = res.get("protocolVersion") if isinstance(res, dict) else None
        self.view.version = version if isinstance(version, str) else None
        self.model = Model(Profile.for_version(self.speaks)) if isinstance(version, str) else None
        snaps = res.get("snapshots") if isinstance(res, dict) else None
        for snap in snaps if isinstance(snaps, list) else []:
            self.take_snapshot(snap)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.conn is not None
        try:
            return await self.conn.request(method, params, self.run.request_timeout_s)
        except (TimeoutError, ConnectionLost) as e:
            raise self._failure(method, e) from None

    async def requests(self, method: str, many: list[dict[str, Any]]) -> list[Any]:
        """The same request with each of `many` params, pipelined (all sent, then each answer
        awaited in turn): each answer's `result`, or its `RpcError` (returned, not raised)."""
        assert self.conn is not None
        out: list[Any] = []
        try:
            last = len(many) - 1  # all in one write
            sent = [await self.conn.send_request(method, params, flush=i == last) for i, params in enumerate(many)]
            for pending in sent:
                try:
                    out.append(await self.conn.answer(pending, self.run.request_timeout_s))
                except RpcError as e:
                    out.append(e)
        except (TimeoutError, ConnectionLost) as e:
            raise self._failure(method, e) from None
        return out

    def _failure(self, method: str, e: TimeoutError | ConnectionLost) -> LiveFailure:
        if isinstance(e, TimeoutError):
            return LiveFailure(
                TARGET_TIMEOUT,
                f"client {self.view.index}: no answer to {method} within {self.run.request_timeout_s:g}s",
            )
        self.dead = True
        return LiveFailure(TARGET_CRASH, f"client {self.view.index}: {method}: {e}")

    async def subscribe(self, channel: str) -> bool:
        params: dict[str, Any] = {"channel": channel}
        if self.spec.delivery_ms:
            params["delivery"] = {"maxLatencyMs": self.spec.delivery_ms}
        try:
            res = await self.request("subscribe", params)
        except RpcError:
            return False
        self.view.subscribed.add(channel)
        if isinstance(res, dict):
            self.take_snapshot(res.get("snapshot"))
        return True

    async def dispatch(self, channel: str, action: JSON) -> Dispatch:
        assert self.conn is not None
        d = Dispatch(self.next_seq, channel, action)
        self.run.expect_dispatch(self, d)
        if self.run.racing and d.must_reject not in (None, "INV-053"):
            # sent in a race: another client's action may make it valid first (only the
            # state-independent rule stays certain)
            d.must_reject, d.reason = None, ""
        self.next_seq += 1
        self.view.dispatches.append(d)
        self.by_seq[d.client_seq] = d
        if channel in self.view.subscribed and not d.silent:
            self.view.pending.setdefault(channel, []).append(d)
        try:
            await self.conn.notify("dispatchAction", {"channel": channel, "clientSeq": d.client_seq, "action": action})
        except ConnectionLost as e:
            self.dead = True
            raise LiveFailure(TARGET_CRASH, f"client {self.view.index}: dispatchAction: {e}") from None
        return d

    async def ping(self) -> bool:
        """A barrier on this connection: True when the host answered (a refusal is recorded as an
        INV-H01 probe and makes the run quiesce by a timed drain instead)."""
        return await ping(self)
