"""The host's authoritative state and its one sequencing path.

`Host` owns every channel's state (reduced with the reference model), the global `serverSeq`,
the replay buffer, the connections and the method table. It does no I/O: frames come in through
`handle_frame(conn, frame)` and go out through each connection's `deliver`. Every frame is
handled to completion without awaiting, so all its effects (state changes, envelopes to every
subscriber, the response) are queued before the next frame of any connection is read.
"""

from __future__ import annotations

import importlib
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.reference import Model, Profile
from harness.reference.codec import encode
from harness.spec.versions import format_version, parse_version

from . import jsonrpc as rpc
from . import projection as proj
from .agent import Agent, OnSession
from .clock import Clock, FakeClock
from .connection import Connection
from .defects import DefectSet

_log = logging.getLogger("harness.host")

JSON = Any
State = dict[str, Any]
#: A method handler: `(host, connection, params) -> result`; raise `RpcError` to answer an error.
Method = Callable[["Host", Connection, dict[str, Any]], JSON]

#: Modules that contribute methods: each exposes `METHODS: Mapping[str, Method]` (and may expose
#: `BEFORE_INITIALIZE: frozenset[str]`). A module that does not exist yet is skipped.
METHOD_MODULES: tuple[str, ...] = ("harness.host.commands", "harness.host.resources")

SERVER_NAME = "ahp-fuzz-embedded-host"
HOST_VERSION = "0.7.0"
#: Versions the host speaks, most preferred first. An entry `^V` is a caret range (1.0.0's rule:
#: the highest offered version within a range is chosen, `negotiation.select`); the newest
#: version named is the profile the host's model reduces with.
DEFAULT_VERSIONS: tuple[str, ...] = ("0.7.0", "0.6.0")
#: What a 1.0.0 host speaks (`host:embedded?version=1.0.0`, `ahp-fuzz host --versions ^1.0.0,^0.9.0`).
VERSIONS_1_0: tuple[str, ...] = ("^1.0.0", "^0.9.0")
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
DEFAULT_REPLAY_BUFFER = 1000


class HostDied(Exception):
    """The host dies (the `dies-on-null` defect): the transport ends the process or the server."""


@dataclass(frozen=True)
class HostConfig:
    """Everything a host run is configured by (all defaults are deterministic)."""

    versions: tuple[str, ...] = DEFAULT_VERSIONS
    defects: tuple[str, ...] = ()
    #: Advertise `multipleWorkingDirectories` on the agent.
    multiple_working_directories: bool = True
    #: Advertise `multipleWorkingDirectories.immutablePrimary` and enforce it.
    immutable_primary: bool = False
    seed: int = 0
    clock: Clock | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    replay_buffer: int = DEFAULT_REPLAY_BUFFER
    extra_methods: Mapping[str, Method] = field(default_factory=dict)
    #: The spec folder's commands schema (`params.CommandParams`): a request whose params it
    #: rejects is -32602 before its handler runs. None: each handler checks what it reads.
    params: Any = None


@dataclass
class Channel:
    kind: str
    state: State
    #: The owning session of a chat channel.
    session: str | None = None


@dataclass
class SessionBook:
    """Host-side bookkeeping of a session that is not channel state (summary timestamps)."""

    created_at: str
    modified_at: str
    summary: State = field(default_factory=dict)


def _load_methods() -> tuple[dict[str, Method], set[str]]:
    methods: dict[str, Method] = {}
    before: set[str] = set()
    for name in METHOD_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue
            raise
        methods.update(module.METHODS)
        before |= set(getattr(module, "BEFORE_INITIALIZE", ()))
    return methods, before


class Host:
    """The embedded reference host (sans I/O). See the package docstring for the public API."""

    def __init__(self, config: HostConfig | None = None):
        config = config or HostConfig()
        if not config.versions:
            raise ValueError("a host speaks at least one protocol version")
        named = [parse_version(v.removeprefix("^")) for v in config.versions]
        self.config = config
        #: Caret ranges (their base versions) and exact versions the host speaks.
        self.carets: tuple[str, ...] = tuple(v[1:] for v in config.versions if v.startswith("^"))
        self.exact: tuple[str, ...] = tuple(v for v in config.versions if not v.startswith("^"))
        #: The newest version the host speaks: its model's profile (0.7.0 unless a newer one is named).
        self.newest = format_version(max(named)) if max(named) > parse_version(HOST_VERSION) else HOST_VERSION
        #: The version it prefers: its first (the newest caret base, else its first exact version).
        self.preferred = config.versions[0].removeprefix("^")
        self.defects = DefectSet(config.defects)
        self.clock: Clock = config.clock or FakeClock()
        self.model = Model(Profile.for_version(self.newest))
        self.agent = Agent(config.seed, v100=self.model.profile.version >= (1, 0, 0))
        #: The 0.8.0 rules, for the `turn-error-not-durable` defect (a turn error stored the old way).
        self._legacy: Model | None = None
        self.channels: dict[str, Channel] = {}
        self.sessions: dict[str, SessionBook] = {}
        self.seq = 0
        self.buffer: deque[dict[str, Any]] = deque(maxlen=max(1, config.replay_buffer))
        self.connections: set[Connection] = set()
        #: clientId → (negotiated version, attachmentCollections) of its last initialize.
        self.known_clients: dict[str, tuple[str, bool]] = {}
        self.collections_seen = False
        self._emitted = 0
        self._connections_made = 0
        #: Why the host died (the `dies-on-null` defect), or None while it serves.
        self.dead: str | None = None
        self.methods, self.before_initialize = _load_methods()
        self.methods.update(config.extra_methods)
        self.before_initialize |= {"initialize", "ping", "reconnect"}
        self.channels[rpc.ROOT] = Channel("root", self._root_state())

    # -- the method table -------------------------------------------------------------------

    def register_method(self, name: str, handler: Method, *, before_initialize: bool = False) -> None:
        """Add or replace a request/notification handler on this host."""
        self.methods[name] = handler
        if before_initialize:
            self.before_initialize.add(name)

    # -- root state -------------------------------------------------------------------------

    def agent_info(self) -> State:
        caps: State = {} if self.defects.has("chat-is-the-session") else {"multipleChats": {}}
        if self.config.multiple_working_directories:
            caps["multipleWorkingDirectories"] = (
                {"immutablePrimary": True} if self.config.immutable_primary else {}
            )
        return {
            "provider": "scripted",
            "displayName": "Scripted agent",
            "description": "A deterministic scripted agent (ahp-fuzz embedded host)",
            "models": [{"id": "scripted-1", "provider": "scripted", "name": "Scripted 1"}],
            "capabilities": caps,
        }

    def _root_state(self) -> State:
        return {"agents": [self.agent_info()], "activeSessions": 0}

    # -- clock ------------------------------------------------------------------------------

    def now(self) -> int:
        return self.clock()

    def now_iso(self) -> str:
        from harness.reference import iso_ms

        return iso_ms(self.now())

    # -- frames -----------------------------------------------------------------------------

    def connect(self, deliver: Callable[[str], None], request_close: Callable[[int, str], None]) -> Connection:
        self._connections_made += 1
        conn = Connection(self._connections_made, deliver, request_close,
                          host_version=self.model.profile.version)
        self.connections.add(conn)
        return conn

    def disconnect(self, conn: Connection) -> None:
        self.connections.discard(conn)
        conn.subscriptions.clear()

    def handle_frame(self, conn: Connection, frame: str | bytes) -> None:
        """Handle one inbound WebSocket message completely (never raises for bad input, except
        `HostDied` when a defect makes the host die)."""
        if self.defects.has("dies-on-null") and _bare_null(frame):
            self.dead = "TypeError: 'NoneType' object is not subscriptable (handling a frame that is null)"
            raise HostDied(self.dead)
        parsed = rpc.classify(frame)
        if isinstance(parsed, rpc.Reject):
            if parsed.answer is not None:
                conn.send(parsed.answer)
            return
        self.handle_call(conn, parsed)

    def handle_call(self, conn: Connection, call: rpc.Call) -> None:
        handler = self.methods.get(call.method)
        if not call.is_request:
            if handler is None or not conn.ready or not isinstance(call.params, dict):
                return  # unknown notifications and notifications before initialize are ignored
            if not isinstance(call.params.get("channel"), str):
                return  # a malformed notification cannot be answered: ignored
            try:
                handler(self, conn, call.params)
            except rpc.RpcError:
                pass
            except Exception:  # a notification never gets an answer; the host keeps serving
                _log.exception("notification %s failed", call.method)
            return
        early = not conn.ready and call.method not in self.before_initialize
        if early and handler is not None and self.defects.has("serves-before-initialize"):
            early = False
        if handler is None or early:
            what = "Method not found" if handler is None else "Method not found before initialize"
            conn.send(rpc.error_response(call.req_id, rpc.RpcError(rpc.METHOD_NOT_FOUND, f"{what}: {call.method}")))
            return
        if call.method == "ping":  # answered always, whatever its params (WIRE.md §10)
            if self.defects.has("no-ping"):
                conn.send(rpc.error_response(call.req_id, rpc.RpcError(rpc.METHOD_NOT_FOUND, "Method not found: ping")))
                return
            conn.send(rpc.result_response(call.req_id, None))
            return
        if not isinstance(call.params, dict):
            conn.send(rpc.error_response(call.req_id, rpc.invalid_params("params must be an object")))
            return
        if not isinstance(call.params.get("channel"), str):
            conn.send(rpc.error_response(call.req_id, rpc.invalid_params("params.channel (a URI string) is required")))
            return
        problem = self.config.params.problem(call.method, call.params) if self.config.params is not None else None
        if problem is not None:
            conn.send(rpc.error_response(call.req_id, rpc.invalid_params(problem)))
            return
        try:
            result = handler(self, conn, call.params)
        except rpc.RpcError as e:
            conn.send(rpc.error_response(call.req_id, e))
            if e.code == rpc.UNSUPPORTED_PROTOCOL_VERSION:
                conn.request_close(rpc.CLOSE_NORMAL, "unsupported protocol version")
            return
        except Exception as e:
            _log.exception("request %s failed", call.method)
            conn.send(rpc.error_response(call.req_id, rpc.RpcError(rpc.INTERNAL_ERROR, f"Internal error: {type(e).__name__}")))
            return
        conn.send(rpc.result_response(call.req_id, result))

    # -- sequencing -------------------------------------------------------------------------

    def next_seq(self) -> int:
        self._emitted += 1
        if self.defects.has("seq-repeat") and self._emitted % 5 == 0 and self.seq > 0:
            return self.seq
        self.seq += 1
        return self.seq

    def emit(
        self,
        channel: str,
        action: State,
        *,
        origin: State | None = None,
        rejection: str | None = None,
    ) -> dict[str, Any]:
        """Sequence one envelope, keep it for replay and send it to the channel's subscribers."""
        env: dict[str, Any] = {"channel": channel, "serverSeq": self.next_seq(), "action": action}
        if origin is not None:
            env["origin"] = origin
        if rejection is not None:
            env["rejectionReason"] = rejection
        self.buffer.append(env)
        receivers = [c for c in self.connections if c.ready and channel in c.subscriptions]
        if origin is not None and self.defects.has("echo-to-newest-socket"):
            # one "active" socket, as a lenient mock keeps: the newest connection, subscribed or not
            newest = max((c for c in self.connections if c.ready), key=lambda c: c.number, default=None)
            receivers = [newest] if newest is not None else []
        # projected and encoded once per projection (`_projection_key`), not once per receiver
        texts: dict[tuple[Any, ...], str | None] = {}
        client_id = origin.get("clientId") if isinstance(origin, dict) else None
        for conn in receivers:
            key = self._projection_key(conn, client_id)
            if key not in texts:
                shown = self.project_envelope(env, conn)
                texts[key] = None if shown is None else encode(rpc.notification("action", shown))
            text = texts[key]
            if text is not None:
                conn.deliver(text)
        return env

    def notify_root(self, method: str, params: State) -> None:
        """A protocol notification to root subscribers (ephemeral: never replayed)."""
        message = rpc.notification(method, {"channel": rpc.ROOT, **params})
        texts: dict[tuple[Any, ...], str] = {}
        for conn in self.connections:
            if conn.ready and rpc.ROOT in conn.subscriptions:
                key = self._projection_key(conn, None)
                if key not in texts:
                    texts[key] = encode(self.project_payload(message, conn))
                conn.deliver(texts[key])

    @staticmethod
    def _projection_key(conn: Connection, origin_client: Any) -> tuple[Any, ...]:
        """What `project_envelope` and `project_payload` read of a connection: its version, its
        collection support and — below the host's own version only, where a peer's own echo is
        never gated out — whether the envelope's origin is its own."""
        own = conn.version_tuple < conn.host_version and origin_client == conn.client_id
        return (conn.version_tuple, conn.collections, own)

    # -- projection per connection ----------------------------------------------------------

    def project_payload(self, value: JSON, conn: Connection) -> JSON:
        if conn.version_tuple < proj.V070 and isinstance(value, dict):
            params = value.get("params")
            for key in ("summary", "changes"):  # root/sessionAdded, root/sessionSummaryChanged
                if isinstance(params, dict) and isinstance(params.get(key), dict):
                    params = {**params, key: proj.session_for_version(params[key], conn.version_tuple)}
                    value = {**value, "params": params}
        if self.collections_seen and not conn.collections:
            value = proj.flatten_collections(value, self.defects)
        if self.defects.has("empty-subset-dropped"):
            value = proj.drop_empty_subsets(value)
        return value

    def project_envelope(self, env: dict[str, Any], conn: Connection) -> dict[str, Any] | None:
        action = env["action"]
        if conn.version_tuple < conn.host_version:  # a connection older than the host's model
            own = (env.get("origin") or {}).get("clientId") == conn.client_id
            if not own and proj.gated_out(action.get("type"), conn.version_tuple, self.defects):
                return None  # a peer's own dispatch is always echoed back to it
        if conn.version_tuple < proj.V070:
            if action.get("type") == "session/chatAdded" and isinstance(action.get("summary"), dict):
                env = {**env, "action": {**action, "summary": proj.chat_for_version(action["summary"], conn.version_tuple)}}
            elif action.get("type") == "session/chatUpdated" and isinstance(action.get("changes"), dict):
                env = {**env, "action": {**action, "changes": proj.chat_for_version(action["changes"], conn.version_tuple)}}
        return self.project_payload(env, conn)

    def snapshot(self, uri: str, conn: Connection) -> dict[str, Any] | None:
        """`{resource, state, fromSeq}` of a state-bearing channel as `conn` may see it."""
        ch = self.channels.get(uri)
        if ch is None:
            return None
        state = ch.state
        if conn.ready and conn.version_tuple < proj.V070:
            if ch.kind == "session":
                state = proj.session_for_version(state, conn.version_tuple)
            elif ch.kind == "chat":
                state = proj.chat_for_version(state, conn.version_tuple)
        snap = {"resource": uri, "state": state, "fromSeq": self.seq}
        return self.project_payload(snap, conn) if conn.ready else snap

    # -- applying actions -------------------------------------------------------------------

    def reduce(self, uri: str, action: State) -> bool:
        """Apply `action` to channel `uri` with the reference model; True if the state changed."""
        ch = self.channels[uri]
        if ch.kind == "session" and action.get("type") == "session/titleChanged" \
                and self.defects.has("title-in-summary") and isinstance(action.get("title"), str):  # issue 33
            summary = ch.state.get("summary")  # 0.3.0's reducer: the title lives in the summary
            ch.state = {**ch.state, "summary": {**(summary if isinstance(summary, dict) else {}),
                                                "title": action["title"]}}
            return True
        new = self._defective_reduce(ch, action)
        if new is None:
            new = self.model.reduce(ch.kind, ch.state, action, self.now())
        changed = new is not ch.state
        ch.state = new
        return changed

    def _defective_reduce(self, ch: Channel, action: State) -> State | None:
        """The state a 1.0.0 reducer defect makes of `action` (None: no defect applies)."""
        t = action.get("type")
        if t == "chat/error" and isinstance(action.get("part"), dict) and self.defects.has("turn-error-not-durable"):
            if self._legacy is None:
                self._legacy = Model(Profile.for_version("0.8.0"))
            legacy = {k: v for k, v in action.items() if k != "part"}
            legacy["error"] = action["part"].get("error")
            return self._legacy.reduce(ch.kind, ch.state, legacy, self.now())  # Turn.error, no part
        if t == "chat/backgroundWorkSet" and self.defects.has("background-work-appended"):
            work = action.get("work")
            return {**ch.state, "backgroundWork": [*ch.state.get("backgroundWork", []), work]}  # no upsert by id
        return None

    def apply_server(self, uri: str, action: State) -> None:
        """A server-originated action: reduce, sequence, broadcast, then keep summaries in sync."""
        self.reduce(uri, action)
        self.emit(uri, action)
        self.after_change(uri)

    def after_change(self, uri: str) -> None:
        """Mirror a chat into its session's catalog (INV-048) and a session into the root
        catalog (`root/sessionSummaryChanged`)."""
        ch = self.channels.get(uri)
        if ch is None:
            return
        if ch.kind == "chat" and ch.session is not None:
            if not self.defects.has("summary-not-synced"):
                self.sync_chat_summary(uri, ch)
            self.touch_session(ch.session)
        elif ch.kind == "session":
            self.touch_session(uri)

    def sync_chat_summary(self, uri: str, ch: Channel) -> None:
        session = self.channels.get(ch.session or "")
        if session is None:
            return
        wanted = chat_summary(uri, ch.state)
        if self.defects.has("read-status-not-mirrored") and isinstance(wanted.get("status"), int):
            wanted["status"] &= ~(32 | 64)  # the catalogue keeps activity bits only
        entry = next((c for c in session.state.get("chats", []) if c.get("resource") == uri), None)
        if entry is None:
            return
        changes = {k: v for k, v in wanted.items() if entry.get(k) != v}
        for k in entry:
            if k not in wanted and k not in CATALOGUE_ONLY:
                changes[k] = None
        if changes:
            self.apply_server(ch.session or "", {"type": "session/chatUpdated", "chat": uri, "changes": changes})

    def touch_session(self, uri: str) -> None:
        book = self.sessions.get(uri)
        ch = self.channels.get(uri)
        if book is None or ch is None:
            return
        summary = self.session_summary(uri)
        changes = {
            k: v for k, v in summary.items() if k not in ("modifiedAt", "createdAt") and book.summary.get(k) != v
        }
        changes.update({k: None for k in book.summary if k not in summary})
        if not changes:
            return
        book.modified_at = self.now_iso()
        summary["modifiedAt"] = book.modified_at
        changes["modifiedAt"] = book.modified_at
        book.summary = summary
        self.notify_root("root/sessionSummaryChanged", {"session": uri, "changes": changes})

    def session_summary(self, uri: str) -> State:
        state = self.channels[uri].state
        book = self.sessions[uri]
        summary: State = {
            "resource": uri,
            "provider": state["provider"],
            "title": state["title"],
            "status": state["status"],
            "createdAt": book.created_at,
            "modifiedAt": book.modified_at,
        }
        if "workingDirectories" in state:
            summary["workingDirectories"] = state["workingDirectories"]
        return summary

    def set_active_sessions(self) -> None:
        count = sum(1 for c in self.channels.values() if c.kind == "session")
        self.apply_server(rpc.ROOT, {"type": "root/activeSessionsChanged", "activeSessions": count})

    def run_agent(self, chat: str) -> None:
        """Run the scripted agent of `chat` up to its next wait (the determinism rule)."""
        for step in self.agent.next_actions(chat):
            if chat not in self.channels:
                self.agent.forget(chat)
                return
            if isinstance(step, OnSession):
                session = self.channels[chat].session
                if session in self.channels:
                    self.apply_server(session, self._on_session(chat, step.action))
                continue
            self.apply_server(chat, step)

    def _on_session(self, chat: str, action: State) -> State:
        """The agent's session action about `chat` (its change counts in the catalogue)."""
        changes = dict(action.get("changes") or {})
        counts = changes.get("changes")
        if isinstance(counts, dict) and self.defects.has("change-counts-lines-only"):
            changes["changes"] = {**counts, "files": 0}  # lines counted, changed files never
        return {**action, "chat": chat, "changes": changes}

    def drop_channel(self, uri: str) -> None:
        self.channels.pop(uri, None)
        self.agent.forget(uri)
        for conn in self.connections:
            conn.subscriptions.discard(uri)

    def channel_state(self, uri: str) -> State | None:
        ch = self.channels.get(uri)
        return ch.state if ch is not None else None

    def close_all(self) -> None:
        for conn in list(self.connections):
            conn.request_close(rpc.CLOSE_NORMAL, "host shutting down")


def _bare_null(frame: str | bytes) -> bool:
    text = frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame
    return text.strip() == "null"


#: Catalogue entry keys the chat's own state does not carry (1.0.0 `SessionChatSummary.changes`,
#: written by `session/chatUpdated`): a sync leaves them as they are.
CATALOGUE_ONLY = frozenset({"resource", "changes"})

_SUMMARY_KEYS = ("resource", "title", "status", "activity", "modifiedAt", "origin", "interactivity", "workingDirectories")


def chat_summary(uri: str, state: State) -> State:
    """The `ChatSummary` fields a `ChatState` inlines (INV-048)."""
    out = {k: state[k] for k in _SUMMARY_KEYS if k in state}
    out["resource"] = uri
    return out
