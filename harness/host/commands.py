"""The host's built-in methods (WIRE.md §3–§8): one small handler per command.

Each handler is `(host, connection, params) -> result`, synchronous, and raises `RpcError` for an
error answer. `METHODS` is the table the host loads (see `core.METHOD_MODULES`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.reference import MalformedAction
from harness.reference.collections import is_collection
from harness.spec import negotiation
from harness.spec.versions import parse_version

from . import jsonrpc as rpc
from . import validation
from .connection import Connection
from .core import SERVER_NAME, Channel, Method, SessionBook, chat_summary

if TYPE_CHECKING:
    from .core import Host

Params = dict[str, Any]
ROOT = rpc.ROOT


def _root_only(params: Params) -> None:
    if params["channel"] != ROOT:
        raise rpc.invalid_params(f"this command takes channel {ROOT!r}")


def _str(params: Params, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise rpc.invalid_params(f"{key} must be a non-empty string")
    return value


def _uri_list(params: Params, key: str) -> list[str] | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
        raise rpc.invalid_params(f"{key} must be an array of URI strings")
    return value


def _int(params: Params, key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise rpc.invalid_params(f"{key} must be a non-negative integer")
    return value


# -- handshake -------------------------------------------------------------------------------


#: The version the `claims-unknown-version` defect answers (no profile has rules for it).
CLAIMED_VERSION = "0.5.0"
#: What the `older-only` defect speaks.
OLDER_ONLY = ("0.3.0",)


def pick_version(host: Host, offered: list[str]) -> str | None:
    """The version the host negotiates for `offered` (None: none it speaks): the highest offered
    version within one of its caret ranges (1.0.0's rule), else the first offered version it
    speaks exactly (the client's preference, as before 1.0.0)."""
    if host.carets:
        bases = host.carets
        if host.defects.has("caret-unbounded"):  # ^1.0.0 read as >=1.0.0: no upper bound
            bases = tuple(v for v in offered if negotiation.is_version(v)
                          and parse_version(v) >= min(map(parse_version, host.carets)))
        chosen = negotiation.select(offered, bases)
        if chosen is not None:
            return chosen
    return next((v for v in offered if v in host.exact), None)


def initialize(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    if conn.ready and not host.defects.has("rebinds-on-reinitialize"):
        raise rpc.RpcError(rpc.INVALID_REQUEST, "Invalid Request: the connection is already initialized")
    offered = params.get("protocolVersions")
    if not isinstance(offered, list) or not offered or not all(isinstance(v, str) for v in offered):
        raise rpc.invalid_params("protocolVersions must be a non-empty array of version strings")
    client_id = _str(params, "clientId")
    older_only = host.defects.has("older-only")
    if host.carets and not older_only:
        problem = negotiation.offer_problem(offered)
        if problem is not None:  # 1.0.0: a malformed offer is reported explicitly
            raise rpc.invalid_params(f"malformed protocolVersions offer: {problem}")
    speaks = OLDER_ONLY if older_only else host.config.versions
    chosen = None if older_only else pick_version(host, offered)
    if older_only:
        chosen = next((v for v in offered if v in speaks), None)
    if host.defects.has("version-not-offered"):
        chosen = host.preferred  # "negotiates" its own newest version, offered or not
    if host.defects.has("claims-unknown-version"):
        chosen = CLAIMED_VERSION  # whatever was offered
    if chosen is None:
        raise rpc.RpcError(
            rpc.UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: offered {offered}",
            None if older_only or host.defects.has("refusal-without-versions") else {"supportedVersions": list(speaks)},
        )
    answered = chosen
    if older_only or host.defects.has("claims-unknown-version"):
        # the answer says one version, the connection is served as the host's own
        chosen = pick_version(host, offered) or host.preferred
    subs = _uri_list(params, "initialSubscriptions") or []
    caps = params.get("capabilities")
    collections = isinstance(caps, Mapping) and isinstance(caps.get("attachmentCollections"), Mapping)
    conn.bind(client_id, chosen, collections=collections)
    host.known_clients[client_id] = (chosen, collections)
    snapshots = []
    for uri in subs:
        snap = host.snapshot(uri, conn)
        if snap is not None:
            conn.subscriptions.add(uri)
            snapshots.append(snap)
    return {
        "protocolVersion": answered,
        "serverSeq": host.seq,
        "snapshots": snapshots,
        "serverInfo": {"name": SERVER_NAME, "version": "0.1.0"},
        "defaultDirectory": "file:///workspace",
    }


def ping(host: Host, conn: Connection, params: Params) -> Any:
    return None


def reconnect(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    if conn.ready:
        raise rpc.RpcError(rpc.INVALID_REQUEST, "Invalid Request: the connection is already initialized")
    client_id = _str(params, "clientId")
    last = _int(params, "lastSeenServerSeq")
    subs = _uri_list(params, "subscriptions")
    if subs is None:
        raise rpc.invalid_params("subscriptions must be an array of URI strings")
    known = host.known_clients.get(client_id)
    if known is None:
        raise rpc.RpcError(rpc.NOT_FOUND, f"unknown clientId {client_id!r}: initialize instead")
    version, collections = known  # what this client negotiated at its last initialize
    conn.bind(client_id, version, collections=collections)
    live = [u for u in subs if u in host.channels]
    missing = [u for u in subs if u not in host.channels]
    conn.subscriptions.update(live)
    oldest = host.buffer[0]["serverSeq"] if host.buffer else host.seq + 1
    if last > host.seq or last + 1 < oldest:
        return {"type": "snapshot", "snapshots": [s for u in live if (s := host.snapshot(u, conn)) is not None]}
    wanted = set(live)
    envelopes = [e for e in host.buffer if e["serverSeq"] > last and e["channel"] in wanted]
    if host.defects.has("replay-skips-action") and envelopes:
        envelopes = envelopes[1:]
    shown = [s for e in envelopes if (s := host.project_envelope(e, conn)) is not None]
    return {"type": "replay", "actions": shown, "missing": missing}


# -- subscriptions ---------------------------------------------------------------------------


def subscribe(host: Host, conn: Connection, params: Params) -> Any:
    uri = params["channel"]
    snap = host.snapshot(uri, conn)
    if snap is None:
        raise rpc.RpcError(rpc.NOT_FOUND, f"Resource not found: {uri}")
    conn.subscriptions.add(uri)
    return {"snapshot": snap}


def unsubscribe(host: Host, conn: Connection, params: Params) -> Any:
    conn.subscriptions.discard(params["channel"])
    return None


# -- actions ---------------------------------------------------------------------------------


def dispatch_action(host: Host, conn: Connection, params: Params) -> Any:
    """The write-ahead notification: validate, apply with the reference model, echo, react."""
    uri, seq, action = params.get("channel"), params.get("clientSeq"), params.get("action")
    if not isinstance(uri, str) or not isinstance(action, dict):
        return None
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    ch = host.channels.get(uri)
    if ch is None:
        if host.defects.has("closes-on-unknown-channel"):  # issue 33
            conn.request_close(1011, "unknown channel")  # the handler failed (websockets: 1011)
        return None  # MUST be silently ignored
    origin: dict[str, Any] = {"clientId": conn.client_id, "clientSeq": seq}
    if not isinstance(action.get("type"), str):
        host.emit(uri, action, origin=origin, rejection="an action needs a string type")
        return None
    reason, action = validation.check(host, conn, uri, ch, action)
    if reason is None and ch.kind == "chat" and action.get("type") == "chat/turnStarted" \
            and host.defects.has("turns-on-session-channel"):  # issue 33
        reason = "turns start on the session channel (session/turnStarted)"
    before_turns = ch.state.get("turns", [])
    if reason is None and host.defects.has("never-applies"):
        host.collections_seen = host.collections_seen or _has_collection(action)
        host.emit(uri, action, origin=origin)  # accepted, never applied (no agent reaction either)
        return None
    if reason is None:
        try:
            host.reduce(uri, action)
        except MalformedAction as e:
            reason = f"malformed action: {e}"
    if reason is not None:
        if host.defects.has("rejected-still-applied"):
            with contextlib.suppress(MalformedAction):
                host.reduce(uri, action)
        host.emit(uri, action, origin=origin, rejection=reason)
        if host.defects.has("rejected-still-applied"):
            host.after_change(uri)
        return None
    if _has_collection(action):
        host.collections_seen = True
    if host.defects.has("echo-drops-origin"):
        host.emit(uri, action)
    elif host.defects.has("echo-drops-clientseq"):
        host.emit(uri, action, origin={"clientId": conn.client_id})
    else:
        host.emit(uri, action, origin=origin)
    host.after_change(uri)
    if ch.kind == "chat":
        host.agent.on_client_action(uri, action, len(before_turns))
        host.run_agent(uri)
    return None


def _has_collection(action: Mapping[str, Any]) -> bool:
    for key in ("message", "draft"):
        message = action.get(key)
        if isinstance(message, Mapping) and any(is_collection(a) for a in message.get("attachments") or []):
            return True
    return False


# -- sessions and chats ----------------------------------------------------------------------


def _session_id(uri: str) -> str:
    return uri.rsplit("/", 1)[-1] or "session"


def create_session(host: Host, conn: Connection, params: Params) -> Any:
    uri = params["channel"]
    if uri in host.channels:
        raise rpc.RpcError(rpc.SESSION_ALREADY_EXISTS, f"Session already exists: {uri}")
    if not uri.startswith("ahp-session:/") or uri.endswith("/annotations"):
        raise rpc.invalid_params("a session URI has the form ahp-session:/<id>")
    provider = params.get("provider", "scripted")
    if provider != "scripted":
        raise rpc.RpcError(rpc.PROVIDER_NOT_FOUND, f"Provider not found: {provider!r}")
    if conn.version_tuple < (0, 7, 0):
        single = params.get("workingDirectory")
        if single is not None and not isinstance(single, str):
            raise rpc.invalid_params("workingDirectory must be a URI string")
        dirs = [single] if single is not None else None
    else:
        dirs = _uri_list(params, "workingDirectories")
    if dirs is not None:
        if not host.config.multiple_working_directories:
            dirs = dirs[:1]
        dirs = list(dict.fromkeys(dirs))
    now = host.now_iso()
    state: dict[str, Any] = {
        "provider": provider,
        "title": "New Session",
        "status": 1,
        "lifecycle": "creating",
        "activeClients": [],
        "chats": [],
    }
    if dirs is not None:
        state["workingDirectories"] = dirs
    host.channels[uri] = Channel("session", state)
    host.sessions[uri] = SessionBook(created_at=now, modified_at=now)
    host.set_active_sessions()
    book = host.sessions[uri]
    book.summary = host.session_summary(uri)
    host.notify_root("root/sessionAdded", {"summary": book.summary})
    if host.defects.has("chat-is-the-session"):  # issue 33: the session channel stands for its chat
        entry = {"resource": uri, "title": "New Session", "status": 1, "modifiedAt": now}
        host.apply_server(uri, {"type": "session/chatAdded", "summary": entry})
        host.apply_server(uri, {"type": "session/defaultChatChanged", "defaultChat": uri})
    else:
        chat = f"ahp-chat:/{_session_id(uri)}.default"
        _add_chat(host, uri, chat, None)
        host.apply_server(uri, {"type": "session/defaultChatChanged", "defaultChat": chat})
    host.apply_server(uri, {"type": "session/ready"})
    return None


def _chat_state(host: Host, chat: str, dirs: list[str] | None) -> dict[str, Any]:
    state: dict[str, Any] = {
        "resource": chat,
        "title": "New Chat",
        "status": 1,
        "modifiedAt": host.now_iso(),
        "origin": {"kind": "user"},
        "turns": [],
    }
    if dirs is not None:
        state["workingDirectories"] = dirs
    return state


def _add_chat(host: Host, session: str, chat: str, dirs: list[str] | None, movable: bool = False) -> None:
    state = _chat_state(host, chat, dirs)
    if movable:
        state["movable"] = True  # 1.0.0: a chat the client created may be moved (moveChat)
    host.channels[chat] = Channel("chat", state, session=session)
    host.apply_server(session, {"type": "session/chatAdded", "summary": chat_summary(chat, state)})


def _session(host: Host, uri: str) -> Channel:
    ch = host.channels.get(uri)
    if ch is None or ch.kind != "session":
        raise rpc.RpcError(rpc.SESSION_NOT_FOUND, f"Session not found: {uri}")
    return ch


def create_chat(host: Host, conn: Connection, params: Params) -> Any:
    session_uri = params["channel"]
    session = _session(host, session_uri)
    chat = _str(params, "chat")
    if chat in host.channels:
        raise rpc.RpcError(rpc.ALREADY_EXISTS, f"Chat already exists: {chat}")
    if not chat.startswith("ahp-chat:/"):
        raise rpc.invalid_params("a chat URI has the form ahp-chat:/<id>")
    if params.get("source") is not None:
        raise rpc.invalid_params("forks and side chats are not supported (multipleChats has no fork/sideChat)")
    dirs = _uri_list(params, "workingDirectories") if conn.version_tuple >= (0, 7, 0) else None
    if dirs is not None:
        session_dirs = session.state.get("workingDirectories") or []
        outside = [d for d in dirs if not validation.in_session_set(host, session_dirs, d)]
        if outside and not host.defects.has("subset-unchecked"):
            raise rpc.invalid_params(f"workingDirectories not in the session's set: {outside}")
        dirs = list(dict.fromkeys(dirs))
    initial = params.get("initialMessage")
    if initial is not None:
        reason, initial = validation.message_verdict(host, conn, initial, "initialMessage")
        if reason is not None:
            raise rpc.invalid_params(reason)
    _add_chat(host, session_uri, chat, dirs, movable=host.model.profile.version >= (1, 0, 0))
    if initial is not None:
        turn = {"type": "chat/turnStarted", "turnId": "turn-1", "startedAt": host.now_iso(), "message": initial}
        host.apply_server(chat, turn)
        host.agent.on_client_action(chat, turn, 0)
        host.run_agent(chat)
    return None


def dispose_chat(host: Host, conn: Connection, params: Params) -> Any:
    chat = params["channel"]
    ch = host.channels.get(chat)
    if ch is None or ch.kind != "chat":
        raise rpc.RpcError(rpc.NOT_FOUND, f"Chat not found: {chat}")
    host.drop_channel(chat)
    if ch.session in host.channels:
        host.apply_server(ch.session or "", {"type": "session/chatRemoved", "chat": chat})
    return None


def dispose_session(host: Host, conn: Connection, params: Params) -> Any:
    uri = params["channel"]
    session = _session(host, uri)
    for chat in session.state.get("chats", []):
        host.drop_channel(chat.get("resource", ""))
    host.drop_channel(uri)
    host.sessions.pop(uri, None)
    host.set_active_sessions()
    host.notify_root("root/sessionRemoved", {"session": uri})
    return None


def list_sessions(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    items = [host.session_summary(u) for u in reversed(list(host.sessions))]
    start = 0
    cursor = params.get("cursor")
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit() or int(cursor) > len(items):
            raise rpc.invalid_params(f"unrecognised cursor {cursor!r}")
        start = int(cursor)
    limit = params.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise rpc.invalid_params("limit must be a positive integer")
    end = len(items) if limit is None else min(len(items), start + limit)
    page = [_summary_for(host, s, conn) for s in items[start:end]]
    result: dict[str, Any] = {"items": page}
    if end < len(items):
        result["nextCursor"] = str(end)
    return result


def _summary_for(host: Host, summary: dict[str, Any], conn: Connection) -> Any:
    from .projection import session_for_version

    return host.project_payload(session_for_version(summary, conn.version_tuple), conn)


def fetch_turns(host: Host, conn: Connection, params: Params) -> Any:
    chat = params["channel"]
    ch = host.channels.get(chat)
    if ch is None or ch.kind != "chat":
        raise rpc.RpcError(rpc.SESSION_NOT_FOUND, f"Chat not found: {chat}")
    if params.get("cursor") is not None:
        # every turn is retained and sent in snapshots: there is never a cursor to continue from
        raise rpc.invalid_params(f"unrecognised cursor {params.get('cursor')!r}")
    return {}


# -- terminals -------------------------------------------------------------------------------


def _terminals_changed(host: Host) -> None:
    infos = [
        {"resource": uri, "title": ch.state.get("title", ""), "claim": ch.state.get("claim")}
        for uri, ch in host.channels.items()
        if ch.kind == "terminal"
    ]
    host.apply_server(ROOT, {"type": "root/terminalsChanged", "terminals": infos})


def create_terminal(host: Host, conn: Connection, params: Params) -> Any:
    uri = params["channel"]
    if uri in host.channels:
        raise rpc.RpcError(rpc.ALREADY_EXISTS, f"Terminal already exists: {uri}")
    if not uri.startswith("ahp-terminal:/"):
        raise rpc.invalid_params("a terminal URI has the form ahp-terminal:/<id>")
    claim = params.get("claim")
    if not isinstance(claim, Mapping) or claim.get("kind") not in ("client", "session"):
        raise rpc.invalid_params("claim must be {kind: 'client'|'session', ...}")
    if claim.get("kind") == "client" and claim.get("clientId") != conn.client_id:
        raise rpc.invalid_params("a client claim must name the connection's clientId")
    if claim.get("kind") == "session" and claim.get("session") not in host.sessions:
        raise rpc.RpcError(rpc.SESSION_NOT_FOUND, f"Session not found: {claim.get('session')}")
    state: dict[str, Any] = {"title": params.get("name") or "Terminal", "content": [], "claim": dict(claim)}
    for key in ("cwd", "cols", "rows"):
        if key in params:
            state[key] = params[key]
    host.channels[uri] = Channel("terminal", state)
    _terminals_changed(host)
    return None


def dispose_terminal(host: Host, conn: Connection, params: Params) -> Any:
    uri = params["channel"]
    ch = host.channels.get(uri)
    if ch is None or ch.kind != "terminal":
        raise rpc.RpcError(rpc.NOT_FOUND, f"Terminal not found: {uri}")
    host.drop_channel(uri)
    _terminals_changed(host)
    return None


def move_chat(host: Host, conn: Connection, params: Params) -> Any:
    """1.0.0 `moveChat` within the chat's own session (MoveChatParams): the chat is placed right
    after the `after` anchor, or first, by one authoritative `session/chatsReordered`. Another
    session or a new one is refused (a host "MAY reject unsupported destinations")."""
    if host.model.profile.version < (1, 0, 0) or conn.version_tuple < (1, 0, 0):
        raise rpc.RpcError(rpc.METHOD_NOT_FOUND, "Method not found: moveChat")
    chat = params["channel"]
    ch = host.channels.get(chat)
    if ch is None or ch.kind != "chat":
        raise rpc.RpcError(rpc.NOT_FOUND, f"Chat not found: {chat}")
    if ch.state.get("movable") is not True:
        raise rpc.invalid_params("the chat does not advertise movable: true")
    dest = params.get("destination")
    if not isinstance(dest, Mapping) or dest.get("kind") != "session" or dest.get("session") != ch.session:
        raise rpc.invalid_params("only a move within the chat's own session is supported")
    session = _session(host, ch.session or "")
    order = [c.get("resource") for c in session.state.get("chats", [])]
    after = dest.get("after")
    if after is not None and (after == chat or after not in order):
        raise rpc.invalid_params("the anchor must be another chat of the destination session")
    rest = [u for u in order if u != chat]
    at = 0 if after is None else rest.index(after) + 1
    if host.defects.has("move-chat-misplaced") and after is not None:
        at -= 1  # before the anchor, not after it
    new = [*rest[:at], chat, *rest[at:]]
    if new != order:
        host.apply_server(ch.session or "", {"type": "session/chatsReordered", "chats": new})
    return {"session": ch.session}


METHODS: dict[str, Method] = {
    "initialize": initialize,
    "ping": ping,
    "reconnect": reconnect,
    "subscribe": subscribe,
    "unsubscribe": unsubscribe,
    "dispatchAction": dispatch_action,
    "createSession": create_session,
    "disposeSession": dispose_session,
    "createChat": create_chat,
    "moveChat": move_chat,
    "disposeChat": dispose_chat,
    "listSessions": list_sessions,
    "fetchTurns": fetch_turns,
    "createTerminal": create_terminal,
    "disposeTerminal": dispose_terminal,
}

BEFORE_INITIALIZE = frozenset({"initialize", "ping", "reconnect"})

__all__ = ["BEFORE_INITIALIZE", "METHODS"]
