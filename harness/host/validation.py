"""Server validation of client-dispatched actions (WIRE.md §5.3, REDUCERS.md §2.4, §2.4.1, §9).

`check(host, conn, uri, action)` returns `(reason, action)`: a rejection reason (None when the
action is accepted) and the action to apply and echo — the same object, or one the host enriched
(a chat attachment without `endTurn` gets the referenced chat's latest completed turn pinned).
The reducers themselves never validate; every "MUST/SHOULD reject" rule lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from harness.reference.collections import collection_problems, is_collection
from harness.reference.turns import resumable
from harness.spec.versions import CLIENT_DISPATCHABLE, is_known_to, kind_of

from .connection import Connection

if TYPE_CHECKING:
    from .core import Channel, Host

Action = dict[str, Any]
Verdict = tuple[str | None, Action]
Rule = Callable[["Host", Connection, "Channel", Action], Verdict]

WORKING_DIRECTORY_TYPES = frozenset(
    {
        "session/workingDirectorySet",
        "session/workingDirectoryRemoved",
        "session/workingDirectoryReplaced",
        "chat/workingDirectorySet",
        "chat/workingDirectoryRemoved",
    }
)


def check(host: Host, conn: Connection, uri: str, ch: Channel, action: Action) -> Verdict:
    t = action["type"]
    if t not in CLIENT_DISPATCHABLE and not host.defects.has("server-only-accepted"):
        return f"Action is not client-dispatchable: {t}", action
    if kind_of(t) != ch.kind:
        return f"{t} does not belong on a {ch.kind} channel", action
    if not is_known_to(t, conn.version_tuple):
        return f"{t} is not part of the negotiated protocol version {conn.version}", action
    if not is_known_to(t, host.model.profile.version):
        return f"{t} is not supported by this host", action
    if t in WORKING_DIRECTORY_TYPES:
        if not host.config.multiple_working_directories:
            return "the agent does not advertise multipleWorkingDirectories", action
        if not isinstance(action.get("directory"), str):
            return "directory must be a URI string", action
    rule = RULES.get(t)
    if rule is None:
        return None, action
    try:
        return rule(host, conn, ch, action)
    except (TypeError, AttributeError, KeyError, ValueError) as e:  # payload not of the schema shape
        return f"malformed action ({type(e).__name__})", action


# -- working directories --------------------------------------------------------------------


def normalized(uri: str) -> str:
    """The `uri-normalized-subset` defect's comparison key (case-folded, no trailing slash)."""
    return uri.rstrip("/").casefold()


def _session_removed(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    directory = action["directory"]
    dirs = ch.state.get("workingDirectories") or []
    if (
        host.config.immutable_primary
        and dirs
        and dirs[0] == directory
        and not host.defects.has("primary-removable")
    ):
        return "the primary working directory is immutable", action
    return _in_use(host, conn, ch, action)


def _in_use(host: Host, conn: Connection | None, ch: Channel, action: Action) -> Verdict:
    """A directory a chat's subset names is not removed or replaced under it (the chat would
    name a directory outside its session's set, INV-031)."""
    directory = action["directory"]
    for chat in ch.state.get("chats", []):
        sub = host.channel_state(chat.get("resource", ""))
        if sub is not None and directory in (sub.get("workingDirectories") or []):
            return f"directory is in use by chat {chat['resource']}", action
    return None, action


def in_session_set(host: Host, session_dirs: list[Any], directory: str) -> bool:
    if host.defects.has("uri-normalized-subset"):
        return normalized(directory) in {normalized(d) for d in session_dirs if isinstance(d, str)}
    return directory in session_dirs


def _chat_set(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    session = host.channel_state(ch.session or "") or {}
    if host.defects.has("chat-directory-unchecked"):
        return None, action
    if not in_session_set(host, session.get("workingDirectories") or [], action["directory"]):
        return "directory is not in the session's working directories", action
    return None, action


# -- messages and attachments ---------------------------------------------------------------


def _completed_turns(host: Host, chat_uri: Any) -> list[str] | None:
    state = host.channel_state(chat_uri) if isinstance(chat_uri, str) else None
    if state is None or host.channels[chat_uri].kind != "chat":
        return None
    return [t["id"] for t in state.get("turns", []) if t.get("state") == "complete"]


def _chat_attachment(host: Host, att: Mapping[str, Any], where: str) -> tuple[str | None, Any]:
    turns = _completed_turns(host, att.get("resource"))
    if turns is None:
        return f"{where}: unknown chat {att.get('resource')!r}", att
    end = att.get("endTurn")
    if end is not None:
        if end not in turns:
            return f"{where}: endTurn {end!r} is not a completed, retained turn", att
        return None, att
    if turns and not host.defects.has("chat-attachment-unpinned"):
        return None, {**att, "endTurn": turns[-1]}
    return None, att


def _attachments(host: Host, conn: Connection, items: list[Any], where: str) -> tuple[str | None, list[Any]]:
    out: list[Any] = []
    for i, att in enumerate(items):
        here = f"{where}[{i}]"
        if not isinstance(att, Mapping):
            return f"{here}: an attachment must be an object", items
        if is_collection(att):
            if not conn.collections:
                return f"{here}: attachment collections were not negotiated", items
            problems = collection_problems(att, here)
            if problems and not host.defects.has("nested-collection-accepted"):
                return "; ".join(problems), items
            members = att.get("attachments")
            if isinstance(members, list):
                reason, members2 = _attachments(host, conn, members, f"{here}.attachments")
                if reason is not None:
                    return reason, items
                if members2 is not members:
                    att = {**att, "attachments": members2}
        elif att.get("type") == "chat":
            reason, att = _chat_attachment(host, att, here)
            if reason is not None:
                return reason, items
        out.append(att)
    changed = any(a is not b for a, b in zip(out, items, strict=True))
    return None, out if changed else items


def message_verdict(host: Host, conn: Connection, message: Any, where: str) -> tuple[str | None, Any]:
    if not isinstance(message, Mapping):
        return f"{where} must be a message object", message
    origin = message.get("origin")
    if not isinstance(origin, Mapping) or origin.get("kind") != "user":
        return f"{where}: clients may only send messages with origin.kind 'user'", message
    items = message.get("attachments")
    if items is None:
        return None, message
    if not isinstance(items, list):
        return f"{where}.attachments must be an array", message
    reason, new_items = _attachments(host, conn, items, f"{where}.attachments")
    if reason is not None:
        return reason, message
    return None, message if new_items is items else {**message, "attachments": new_items}


def _with_message(key: str, required: bool) -> Rule:
    def rule(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
        if key not in action and not required:
            return None, action
        reason, message = message_verdict(host, conn, action.get(key), key)
        if reason is not None:
            return reason, action
        return None, action if message is action.get(key) else {**action, key: message}

    return rule


_turn_message = _with_message("message", True)


def _turn_started(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    if "activeTurn" in ch.state:
        return "a turn is already in progress", action
    turn_id = action.get("turnId")
    if not isinstance(turn_id, str) or any(t.get("id") == turn_id for t in ch.state.get("turns", [])):
        return f"turn id {turn_id!r} is not a new turn id", action
    return _turn_message(host, conn, ch, action)


# -- turn, tool calls, input, pending messages ----------------------------------------------


def _turn_cancelled(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    turn = ch.state.get("activeTurn")
    if (turn is None or turn.get("id") != action.get("turnId")) and not host.defects.has(
        "cancel-without-turn-accepted"
    ):
        return "no active turn to cancel", action
    return None, action


def _tool_call(ch: Channel, action: Action) -> dict[str, Any] | None:
    turn = ch.state.get("activeTurn")
    if turn is None or turn.get("id") != action.get("turnId"):
        return None
    for part in turn.get("responseParts", []):
        tc = part.get("toolCall") if part.get("kind") == "toolCall" else None
        if isinstance(tc, dict) and tc.get("toolCallId") == action.get("toolCallId"):
            return tc
    return None


def _tool_status(status: str) -> Rule:
    def rule(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
        tc = _tool_call(ch, action)
        if tc is None or tc.get("status") != status:
            return f"tool call is not {status}", action
        return None, action

    return rule


def _tool_owner(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    tc = _tool_call(ch, action)
    contributor = tc.get("contributor") if tc else None
    if not isinstance(contributor, Mapping) or contributor.get("clientId") != conn.client_id:
        return "only the client that contributed the tool may report on it", action
    return None, action


def _open_request(ch: Channel, request_id: Any) -> dict[str, Any] | None:
    turn = ch.state.get("activeTurn") or {}
    for part in turn.get("responseParts", []):
        if part.get("kind") == "inputRequest" and part.get("response") is None:
            request = part.get("request") or {}
            if request.get("id") == request_id:
                return request
    return None


def _input_answer(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    if _open_request(ch, action.get("requestId")) is None:
        return "no open input request with that requestId", action
    return None, action


def _input_completed(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    request = _open_request(ch, action.get("requestId"))
    if request is None:
        return "no open input request with that requestId", action
    if action.get("response") == "accept":
        answers = {**(request.get("answers") or {}), **(action.get("answers") or {})}
        missing = [
            q.get("id") for q in request.get("questions") or [] if q.get("required") and q.get("id") not in answers
        ]
        if missing:
            return f"accept without answers to required questions {missing}", action
    return None, action


def _pending_removed(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    kind, mid = action.get("kind"), action.get("id")
    if kind == "steering":
        found = (ch.state.get("steeringMessage") or {}).get("id") == mid
    else:
        found = any(m.get("id") == mid for m in ch.state.get("queuedMessages") or [])
    return (None if found else "no pending message with that id and kind"), action


def _terminal_claimed(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    claim = ch.state.get("claim") or {}
    if claim.get("kind") != "client" or claim.get("clientId") != conn.client_id:
        return "the dispatching client does not hold the terminal's claim", action
    return None, action


def _active_client_set(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    active = action.get("activeClient")
    if not isinstance(active, Mapping) or active.get("clientId") != conn.client_id:
        return "activeClient.clientId must be the dispatching client's id", action
    return None, action


def _turn_resume(host: Host, conn: Connection, ch: Channel, action: Action) -> Verdict:
    """ChatTurnResumeAction: "The turn MUST be the latest turn, its state MUST be `error`, and its
    final response part MUST be a resumable error" (and no turn may be active)."""
    if host.defects.has("turn-resume-unchecked"):
        return None, action
    turns = ch.state.get("turns") or []
    if ch.state.get("activeTurn") is not None:
        return "a turn is active", action
    if not turns or turns[-1].get("id") != action.get("turnId") or not resumable(turns[-1]):
        return "the turn is not the latest turn ending in a resumable error", action
    return None, action


RULES: dict[str, Rule] = {
    "session/workingDirectoryRemoved": _session_removed,
    "session/workingDirectoryReplaced": _in_use,
    "session/activeClientSet": _active_client_set,
    "chat/workingDirectorySet": _chat_set,
    "chat/turnStarted": _turn_started,
    "chat/pendingMessageSet": _with_message("message", True),
    "chat/draftChanged": _with_message("draft", False),
    "chat/turnCancelled": _turn_cancelled,
    "chat/turnResume": _turn_resume,
    "chat/toolCallConfirmed": _tool_status("pending-confirmation"),
    "chat/toolCallResultConfirmed": _tool_status("pending-result-confirmation"),
    "chat/toolCallComplete": _tool_owner,
    "chat/toolCallContentChanged": _tool_owner,
    "chat/inputAnswerChanged": _input_answer,
    "chat/inputCompleted": _input_completed,
    "chat/pendingMessageRemoved": _pending_removed,
    "terminal/claimed": _terminal_claimed,
}
