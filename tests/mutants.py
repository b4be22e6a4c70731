"""Broken copies of the reference model, one seeded defect each, for the mutation check.

Each mutant is a factory `(profile) -> Model` whose handler table differs from the reference
in one guard or transition; `python -m harness.targets.reference_adapter --model
tests/mutants.py:<name>` serves it over the adapter protocol. `MUTANTS` lists them with the
state kind they live in, so the check can aim the fuzzer at that kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from harness.reference import Model, Profile
from harness.reference.dispatch import TABLES
from harness.reference.profile import Action, Ctx, Handler, State

IS_READ = 32


def _real(action_type: str) -> Handler:
    return TABLES[action_type.split("/", 1)[0]][action_type]


def _mutant(action_type: str, wrap: Callable[[Handler], Handler]) -> Callable[[Profile], Model]:
    def factory(profile: Profile) -> Model:
        return Model(profile, overrides={action_type: wrap(_real(action_type))})

    return factory


def _active_turn_id(state: State) -> Any:
    turn = state.get("activeTurn")
    return turn.get("id") if isinstance(turn, dict) else None


# -- chat ------------------------------------------------------------------------------------


def _delta_ignores_turn_id(real: Handler) -> Handler:
    """chat/delta appends into the active turn whatever `turnId` it names (guard dropped)."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        tid = _active_turn_id(state)
        return real(state, {**action, "turnId": tid} if tid is not None else action, ctx)

    return h


def _turn_end_keeps_open_tool_calls(real: Handler) -> Handler:
    """chat/turnComplete does not force-cancel non-terminal tool calls."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after is state or not after.get("turns"):
            return after
        last = {**after["turns"][-1], "responseParts": state["activeTurn"]["responseParts"]}
        return {**after, "turns": [*after["turns"][:-1], last]}

    return h


def _turn_end_no_duration_clamp(real: Handler) -> Handler:
    """chat/turnCancelled stores a negative duration instead of clamping it to 0."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after is state or not isinstance(action.get("duration"), int) or action["duration"] >= 0:
            return after
        last = {**after["turns"][-1], "duration": action["duration"]}
        return {**after, "turns": [*after["turns"][:-1], last]}

    return h


def _turn_started_keeps_read(real: Handler) -> Handler:
    """chat/turnStarted forgets to clear IsRead."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        return {**after, "status": after["status"] | (state.get("status", 0) & IS_READ)}

    return h


def _truncated_unknown_clears_all(real: Handler) -> Handler:
    """chat/truncated with an unknown turnId clears the whole history (should be a no-op)."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        tid = action.get("turnId")
        if tid is not None and all(t.get("id") != tid for t in state.get("turns", [])):
            return real(state, {"type": action["type"]}, ctx)
        return real(state, action, ctx)

    return h


def _queue_emptied_to_list(real: Handler) -> Handler:
    """chat/pendingMessageRemoved leaves `queuedMessages: []` instead of clearing the key."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if "queuedMessages" in state and "queuedMessages" not in after:
            return {**after, "queuedMessages": []}
        return after

    return h


def _reorder_drops_unnamed(real: Handler) -> Handler:
    """chat/queuedMessagesReordered drops queued messages the order does not name."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after is state:
            return after
        named = set(action.get("order") or [])
        return {**after, "queuedMessages": [m for m in after["queuedMessages"] if m.get("id") in named]}

    return h


def _confirm_from_any_status(real: Handler) -> Handler:
    """chat/toolCallConfirmed applies to a running or streaming call too (status guard dropped)."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        turn = state.get("activeTurn")
        if not isinstance(turn, dict) or turn.get("id") != action.get("turnId"):
            return real(state, action, ctx)
        parts = []
        for p in turn.get("responseParts", []):
            tc = p.get("toolCall") if isinstance(p, dict) else None
            if isinstance(tc, dict) and tc.get("toolCallId") == action.get("toolCallId") and tc.get("status") in (
                "running",
                "streaming",
            ):
                p = {**p, "toolCall": {**tc, "status": "pending-confirmation"}}
            parts.append(p)
        return real({**state, "activeTurn": {**turn, "responseParts": parts}}, action, ctx)

    return h


def _input_completed_keeps_status(real: Handler) -> Handler:
    """chat/inputCompleted does not recompute the chat status."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        return after if after is state else {**after, "status": state["status"]}

    return h


def _chat_directory_set_on_absent_is_noop(real: Handler) -> Handler:
    """chat/workingDirectorySet on an absent (inherit-all) subset does nothing."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        return state if "workingDirectories" not in state else real(state, action, ctx)

    return h


# -- session ---------------------------------------------------------------------------------


def _chat_removed_keeps_default(real: Handler) -> Handler:
    """session/chatRemoved leaves `defaultChat` naming the removed chat."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after is not state and state.get("defaultChat") == action.get("chat"):
            return {**after, "defaultChat": state["defaultChat"]}
        return after

    return h


def _input_needed_removed_back_to_idle(real: Handler) -> Handler:
    """session/inputNeededRemoved of the last entry sets activity Idle (upstream keeps InProgress)."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after is not state and "inputNeeded" not in after:
            return {**after, "status": (after["status"] & ~31) | 1}
        return after

    return h


def _directory_set_duplicates(real: Handler) -> Handler:
    """session/workingDirectorySet appends even when the directory is already present."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        return {**state, "workingDirectories": [*state.get("workingDirectories", []), action["directory"]]}

    return h


def _directory_removed_to_absent(real: Handler) -> Handler:
    """session/workingDirectoryRemoved of the last directory deletes the key (should leave [])."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if after.get("workingDirectories") == [] and after is not state:
            return {k: v for k, v in after.items() if k != "workingDirectories"}
        return after

    return h


def _delta_appends_undefined(real: Handler) -> Handler:
    """A tool-call delta without `content` (optional from 0.7.0: it appends nothing, §7b row 4)
    appends as JavaScript's `partialInput + action.content` does: the text "undefined"."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        return real(state, action if "content" in action else {**action, "content": "undefined"}, ctx)

    return h


def replace_moves_primary(profile: Profile) -> Model:
    """session/workingDirectoryReplaced with the pre-fix draft rule (moves an earlier duplicate)."""
    return Model(dataclasses.replace(profile, replace_keeps_earlier=False))


delta_ignores_turn_id = _mutant("chat/delta", _delta_ignores_turn_id)
delta_appends_undefined = _mutant("chat/toolCallDelta", _delta_appends_undefined)
turn_end_keeps_open_tool_calls = _mutant("chat/turnComplete", _turn_end_keeps_open_tool_calls)
turn_end_no_duration_clamp = _mutant("chat/turnCancelled", _turn_end_no_duration_clamp)
turn_started_keeps_read = _mutant("chat/turnStarted", _turn_started_keeps_read)
truncated_unknown_clears_all = _mutant("chat/truncated", _truncated_unknown_clears_all)
queue_emptied_to_list = _mutant("chat/pendingMessageRemoved", _queue_emptied_to_list)
reorder_drops_unnamed = _mutant("chat/queuedMessagesReordered", _reorder_drops_unnamed)
confirm_from_any_status = _mutant("chat/toolCallConfirmed", _confirm_from_any_status)
input_completed_keeps_status = _mutant("chat/inputCompleted", _input_completed_keeps_status)
chat_directory_set_on_absent_is_noop = _mutant("chat/workingDirectorySet", _chat_directory_set_on_absent_is_noop)
chat_removed_keeps_default = _mutant("session/chatRemoved", _chat_removed_keeps_default)
input_needed_removed_back_to_idle = _mutant("session/inputNeededRemoved", _input_needed_removed_back_to_idle)
directory_set_duplicates = _mutant("session/workingDirectorySet", _directory_set_duplicates)
directory_removed_to_absent = _mutant("session/workingDirectoryRemoved", _directory_removed_to_absent)

#: name -> (state kind, profile to fuzz under, the seeded defect)
MUTANTS: dict[str, tuple[str, str, str]] = {
    "delta_ignores_turn_id": ("chat", "0.7.0", "chat/delta ignores a wrong turnId"),
    "turn_end_keeps_open_tool_calls": ("chat", "0.7.0", "turnComplete leaves tool calls running"),
    "turn_end_no_duration_clamp": ("chat", "0.7.0", "turnCancelled keeps a negative duration"),
    "turn_started_keeps_read": ("chat", "0.7.0", "turnStarted keeps IsRead"),
    "truncated_unknown_clears_all": ("chat", "0.7.0", "truncated with unknown turnId clears history"),
    "queue_emptied_to_list": ("chat", "0.7.0", "emptied queue stays []"),
    "reorder_drops_unnamed": ("chat", "0.7.0", "reorder drops unnamed messages"),
    "confirm_from_any_status": ("chat", "0.7.0", "toolCallConfirmed from running/streaming"),
    "input_completed_keeps_status": ("chat", "0.7.0", "inputCompleted skips status recompute"),
    "chat_directory_set_on_absent_is_noop": ("chat", "0.7.0", "chat directory set on absent subset ignored"),
    "chat_removed_keeps_default": ("session", "0.7.0", "chatRemoved keeps defaultChat"),
    "input_needed_removed_back_to_idle": ("session", "0.7.0", "inputNeededRemoved resets to Idle"),
    "directory_set_duplicates": ("session", "0.7.0", "workingDirectorySet duplicates"),
    "directory_removed_to_absent": ("session", "0.7.0", "emptied directory list becomes absent"),
    "replace_moves_primary": ("session", "0.8.0", "replace moves an earlier duplicate (moves index 0)"),
    "delta_appends_undefined": ("chat", "0.7.0", "a tool-call delta without content appends \"undefined\""),
}


# -- typed clients: a systemic encode quirk, alone and with two behavioural defects -----------


def _drop_empty_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_empty_lists(v) for k, v in value.items() if v != [] or not isinstance(v, list)}
    if isinstance(value, list):
        return [_drop_empty_lists(v) for v in value]
    return value


class _TypedClient:
    """Reduces like `inner`; its encoder drops every empty list (Go `omitempty`, Kotlin
    `encodeDefaults = false`, …): the states it keeps are right, the states it writes are not."""

    def __init__(self, inner: Model) -> None:
        self._inner = inner

    def reduce(self, kind: str, state: State, action: Any, now_ms: int) -> State:
        return self._inner.reduce(kind, state, action, now_ms)

    def encode_state(self, state: Any) -> Any:
        return _drop_empty_lists(state)


def drops_empty_lists(profile: Profile) -> _TypedClient:
    """The systemic typed-client defect alone."""
    return _TypedClient(Model(profile))


def typed_client_with_two_bugs(profile: Profile) -> _TypedClient:
    """The typed-client defect plus `delta_ignores_turn_id` and `turn_started_keeps_read`."""
    return _TypedClient(
        Model(
            profile,
            overrides={
                "chat/delta": _delta_ignores_turn_id(_real("chat/delta")),
                "chat/turnStarted": _turn_started_keeps_read(_real("chat/turnStarted")),
            },
        )
    )


def _as_floats(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: (float(v) if k in keys and type(v) is int else _as_floats(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_floats(v, keys) for v in value]
    return value


class _FloatWriter(_TypedClient):
    """Reduces like the model; its encoder writes the numbers of some fields as doubles (`3` →
    `3.0`: a JavaScript or Dart client that formats every number as a double)."""

    KEYS = frozenset({"duration", "cols", "rows", "exitCode", "inputTokens", "outputTokens", "line", "character"})

    def encode_state(self, state: Any) -> Any:
        return _as_floats(state, self.KEYS)


def writes_ints_as_floats(profile: Profile) -> _TypedClient:
    """Issue 32's bytes class: integers written as floats (equal by value, not as written)."""
    return _FloatWriter(Model(profile))


class _Twice(dict):  # type: ignore[type-arg]
    """A tool call whose encoder writes its `status` twice: the C JSON encoder writes a dict
    subclass's `items()`, so the name appears twice in the text (it cannot in a plain dict)."""

    def items(self) -> Any:
        return [*super().items(), *((k, v) for k, v in super().items() if k == "status")]


def _status_twice(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _status_twice(v) for k, v in value.items()}
        return _Twice(out) if "toolCallId" in out and "status" in out else out
    if isinstance(value, list):
        return [_status_twice(v) for v in value]
    return value


class _DuplicateKeyWriter(_TypedClient):
    """Reduces like the model; its encoder writes a tool call's `status` twice (one typed client's
    auth-required tool calls: a field of the base type and one of the variant, both named so)."""

    def encode_state(self, state: Any) -> Any:
        return _status_twice(state)


def writes_tool_status_twice(profile: Profile) -> _TypedClient:
    """Issue 32's bytes class: a name written twice in one object (not I-JSON)."""
    return _DuplicateKeyWriter(Model(profile))
