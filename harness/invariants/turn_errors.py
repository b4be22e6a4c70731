"""I. Durable turn errors and resumable turns (0.9.0; CHANGELOG 0.9.0 "Turn errors are durable
response parts, and resumable errors can reopen the same turn through `chat/turnResume`").

Written from the CHANGELOG and the `ChatTurnResumeAction` schema text, not from the reducers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import _chat
from ._json import as_list, describe_diffs, same, short
from .base import Step, invariant


def _error_parts(state: Any, *, with_active: bool = True) -> list[Any]:
    """Every error response part of the chat's history and (`with_active`) active turn, in order."""
    if not isinstance(state, dict):
        return []
    turns = [t for t in as_list(state.get("turns")) if isinstance(t, dict)]
    active = state.get("activeTurn")
    if isinstance(active, dict) and with_active:
        turns.append(active)
    return [p for t in turns for p in _chat.parts_of(t) if isinstance(p, dict) and p.get("kind") == "error"]


@invariant(
    "INV-X06",
    "Turn errors are durable",
    severity="violation",
    source='CHANGELOG 0.9.0 ("Turn errors are durable response parts"); fixtures 016, 268, 269',
    kinds={"chat"},
)
def durable_errors(step: Step) -> Iterator[str]:
    """From 0.9.0 a turn error is an `ErrorResponsePart` that stays: no chat action but
    `chat/truncated` (which drops turns) removes an error part from the history or the active
    turn, and a resumed or re-ended turn keeps its earlier errors ("a resumed turn preserves its
    prior error when it errors again"). Errors enter only through `chat/error` (fixture 270:
    "chat/responsePart cannot append an error"), whose part ends the turn it names."""
    if not step.profile.durable_turn_errors or step.type == "chat/truncated":
        return
    # A `chat/turnStarted` over an active turn replaces that turn, its errors with it (even one
    # that reuses its id): the known upstream gap of INV-022.reducer (R§11 item 14), not an
    # error removed here.
    discarded = step.type == "chat/turnStarted" and _chat.active_turn(step.before) is not None
    before, after = _error_parts(step.before, with_active=not discarded), _error_parts(step.after)
    if step.type == "chat/error" and _chat.turn_matches(step.before, step.action):
        turns = as_list(step.after.get("turns"))
        parts = _chat.parts_of(turns[-1]) if turns and isinstance(turns[-1], dict) else []
        if not parts or not same(parts[-1], step.action.get("part")):
            yield "chat/error: the ended turn does not end with the action's error part"
    elif len(after) > len(before) and step.type != "chat/turnsLoaded":
        yield f"{step.type} added an error part; errors enter a turn only through chat/error"
    rest = list(after)
    for part in before:
        hit = next((i for i, p in enumerate(rest) if same(p, part)), None)
        if hit is None:
            yield f"{step.type} dropped the error part {short(part)}"
            return
        rest.pop(hit)


@invariant(
    "INV-X07",
    "chat/turnResume reopens only the latest resumable errored turn",
    severity="violation",
    source="ChatTurnResumeAction (1.0.0 actions schema); fixtures 263–267, 269",
    kinds={"chat"},
    actions={"chat/turnResume"},
)
def turn_resume(step: Step) -> Iterator[str]:
    """"The turn MUST be the latest turn, its state MUST be `error`, and its final response part
    MUST be a resumable error. The reducer reopens the same turn with its existing message,
    response parts, and usage intact." With no active turn and such a latest turn of the
    action's id, the turn becomes the active turn (no `duration`, no `state`) and leaves
    `turns`; in every other case the state is unchanged."""
    before, after = step.before, step.after
    turns = [t for t in as_list(before.get("turns")) if isinstance(t, dict)]
    last = turns[-1] if turns else None
    parts = _chat.parts_of(last) if last else []
    final = parts[-1] if parts else None
    applies = (
        before.get("activeTurn") is None and last is not None
        and last.get("id") == step.action.get("turnId") and last.get("state") == "error"
        and isinstance(final, dict) and final.get("kind") == "error" and final.get("resumable") is True
    )
    if not applies:
        if not same(before, after):
            yield "chat/turnResume changed a chat it may not resume: " + describe_diffs(before, after, left="before", right="after")
        return
    active = after.get("activeTurn")
    if not isinstance(active, dict):
        yield "chat/turnResume left no active turn"
        return
    for key in ("id", "message", "responseParts", "usage", "startedAt"):
        if not same(active.get(key), last.get(key)):
            yield f"chat/turnResume: activeTurn.{key} is {short(active.get(key))}, want {short(last.get(key))}"
    for key in ("duration", "state"):
        if key in active:
            yield f"chat/turnResume: the reopened turn still has {key}"
    if not same(as_list(after.get("turns")), turns[:-1]):
        yield "chat/turnResume: turns should lose exactly the reopened turn"
