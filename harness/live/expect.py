"""What the host MUST do with a live op, decided when the op runs: a run's expectations.

`expect_dispatch` and `expect_create_chat` read the clients' confirmed states (their folds, made
with the reference reducers: `_reducer`), never anything stored in the op, so a shrunk trace is
judged against the state it really produces. Only the MUST rules of the spec: a dispatch the host
must reject (not client-dispatchable, no matching turn or tool call, a directory outside the
session's set, a bad attachment) or ignore (a channel of the run's own that does not exist), a
createChat it must refuse; anything else may go either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.invariants.live.base import Dispatch
from harness.reference import MalformedAction, Model, Profile
from harness.reference.turns import resumable
from harness.spec.versions import is_client_dispatchable, is_known_to

from .client import SimClient, kind_of_uri

State = dict[str, Any]

COLLECTION = "collection"


class Expectations:
    """`LiveRun`'s expectations (a mixin): what the host MUST do with a dispatch or a createChat,
    read from the run's facts (run.py)."""

    kinds: dict[str, str]

    if TYPE_CHECKING:  # the run's facts for generators (run.py)

        def ours(self, uri: str) -> bool: ...

        def agent_caps(self) -> dict[str, Any]: ...

        def session_of(self, chat: str) -> str | None: ...

        def state(self, channel: str) -> State | None: ...

        def completed_turns(self, chat: str) -> list[str] | None: ...

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
