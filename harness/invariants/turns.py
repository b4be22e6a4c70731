"""C. Chat turns (INVARIANTS.md INV-015, 016, 020, 021, 022) and the response-part stream."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from harness.reference import status as bits

from . import _chat
from ._chat import TURN_END, TURN_SCOPED, activity_name, status_of
from ._json import as_list, describe_diffs, hkey, same, same_except, short
from .base import Step, catalogue_entry, invariant

_STATUS: Final = frozenset({"status"})


@invariant(
    "INV-015",
    "Wrong or absent turnId is a no-op",
    severity="violation",
    source="chat action docs (turn-scoped actions target the active turn); fixtures 011, 012, "
    "018, 090–093; R§5.1",
    kinds={"chat"},
    actions=TURN_SCOPED,
)
def wrong_turn_noop(step: Step) -> Iterator[str]:
    """For every turn-scoped chat action (delta, reasoning, responsePart, usage, all toolCall*,
    turnComplete, turnCancelled, error), if there is no active turn or `turnId ≠ activeTurn.id`,
    the state is unchanged — except that the six status-recomputing tool-call actions may correct
    a stale `status`."""
    if _chat.turn_matches(step.before, step.action):
        return
    ignore = _STATUS if step.type in _chat.RECOMPUTING_TOOL_ACTIONS else frozenset()
    if same_except(step.before, step.after, ignore):
        return
    turn = _chat.active_turn(step.before)
    target = "no active turn" if turn is None else f"active turn {short(turn.get('id'))}"
    yield (
        f"{step.type} for turn {short(step.action.get('turnId'))} ({target}) changed the state: "
        + (
            describe_diffs(
                {k: v for k, v in step.before.items() if k not in ignore},
                {k: v for k, v in step.after.items() if k not in ignore},
                left="before",
                right="after",
            )
        )
    )


@invariant(
    "INV-015.strict",
    "Wrong or absent turnId is a no-op, status included",
    severity="known",
    source="fixtures 025, 095–098 (described as no-ops); INVARIANTS.md INV-015 strict variant",
    kinds={"chat"},
    known_issue="REDUCERS.md §11 item 18 (a stale tool-call action after chat/error resets Error to Idle)",
    actions=_chat.RECOMPUTING_TOOL_ACTIONS,
)
def wrong_turn_noop_strict(step: Step) -> Iterator[str]:
    """A tool-call action for a turn that is not the active one is a no-op, status included: it
    does not erase the Error of a turn that ended with `chat/error`."""
    if _chat.turn_matches(step.before, step.action):
        return
    b, a = status_of(step.before), status_of(step.after)
    if b != a and same_except(step.before, step.after, _STATUS):
        yield f"{step.type} for turn {short(step.action.get('turnId'))} changed status {b} → {a}"


_END_STATE: Final = {
    "chat/turnComplete": "complete",
    "chat/turnCancelled": "cancelled",
    "chat/error": "error",
}


def _cancelled_part_problem(i: int, btc: dict[str, Any], ap: Any) -> str | None:
    atc = _chat.tool_call(ap)
    if atc is None:
        return (
            f"responseParts[{i}]: the unfinished tool call {short(btc.get('toolCallId'))} is gone"
        )
    if atc.get("status") != "cancelled" or atc.get("reason") != "skipped":
        return (
            f"responseParts[{i}]: unfinished tool call {short(btc.get('toolCallId'))} "
            f"({btc.get('status')}) ended as status={short(atc.get('status'))} "
            f"reason={short(atc.get('reason'))}, not cancelled/skipped"
        )
    for f in _chat.IDENTITY_FIELDS:
        if not same(btc.get(f), atc.get(f)):
            return f"responseParts[{i}]: force-cancel changed {f} {short(btc.get(f))} → {short(atc.get(f))}"
    return None


@invariant(
    "INV-016",
    "Turn end postconditions",
    severity="violation",
    source='guide/state-model.md ("When a turn completes, non-terminal tool calls … are '
    "force-cancelled with reason 'skipped'\"); fixtures 014–017, 099, 107, 240, 250; R§5.2",
    kinds={"chat"},
    actions=TURN_END,
)
def turn_end(step: Step) -> Iterator[str]:
    """After turnComplete/turnCancelled/error with the active turn's id: no active turn; `turns`
    grew by exactly one; the new last turn has that id, the active turn's message, startedAt and
    usage, state complete/cancelled/error, duration = max(0, payload), `error` only for
    chat/error; unfinished tool calls are cancelled with reason skipped; all other parts are
    unchanged and in order; activity is Idle (Error for chat/error). From 0.9.0 (durable turn
    errors) `chat/error` stores no `error`: its `part` is appended after the other parts."""
    if not _chat.turn_matches(step.before, step.action):
        return
    t, action = step.type, step.action
    durable = t == "chat/error" and step.profile.durable_turn_errors
    active = _chat.active_turn(step.before) or {}
    if step.after.get("activeTurn") is not None:
        yield f"{t}: the active turn is still present"
    b_turns = as_list(step.before.get("turns"))
    a_turns = step.after.get("turns")
    if not isinstance(a_turns, list) or len(a_turns) != len(b_turns) + 1:
        n = len(a_turns) if isinstance(a_turns, list) else short(a_turns)
        yield f"{t}: turns has {n} entries, want {len(b_turns) + 1}"
        return
    if not same(a_turns[:-1], b_turns):
        yield f"{t}: earlier turns changed: " + describe_diffs(
            b_turns, a_turns[:-1], left="before", right="after"
        )
    last = a_turns[-1]
    if not isinstance(last, dict):
        yield f"{t}: the new turn is {short(last)}"
        return
    expect = {
        "id": action.get("turnId"),
        "message": active.get("message"),
        "startedAt": active.get("startedAt"),
        "usage": active.get("usage"),
        "state": _END_STATE[t],
        "error": action.get("error") if t == "chat/error" and not durable else None,
    }
    duration = action.get("duration")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        expect["duration"] = max(0, duration)
    for key, want in expect.items():
        if not same(last.get(key), want):
            yield f"{t}: turns[-1].{key} is {short(last.get(key))}, want {short(want)}"
    b_parts = _chat.parts_of(active)
    a_parts = _chat.parts_of(last)
    if durable:
        if not a_parts or not same(a_parts[-1], action.get("part")):
            yield f"{t}: the ended turn's last response part is {short(a_parts[-1] if a_parts else None)}, want the action's part"
        a_parts = a_parts[:-1]
    if len(a_parts) != len(b_parts):
        yield f"{t}: the ended turn has {len(a_parts)} response parts, the active turn had {len(b_parts)}"
    else:
        for i, (bp, ap) in enumerate(zip(b_parts, a_parts, strict=True)):
            btc = _chat.tool_call(bp)
            if btc is not None and btc.get("status") not in _chat.TERMINAL_TOOL_STATUSES:
                problem = _cancelled_part_problem(i, btc, ap)
                if problem:
                    yield f"{t}: {problem}"
            elif not same(bp, ap):
                yield f"{t}: responseParts[{i}] changed: " + describe_diffs(
                    bp, ap, left="before", right="after"
                )
    value = status_of(step.after)
    want_activity = bits.ERROR if t == "chat/error" else bits.IDLE
    if value is not None and value & bits.ACTIVITY_MASK != want_activity:
        yield f"{t}: status activity is {activity_name(value & bits.ACTIVITY_MASK)}, want {activity_name(want_activity)}"


_UNTOUCHED_BY_TRUNCATION: Final = ("steeringMessage", "queuedMessages", "draft")


@invariant(
    "INV-020",
    "Truncation postconditions",
    severity="violation",
    source="chat/truncated action doc; guide/state-model.md §Chat Truncation; fixtures 063–069, 234",
    kinds={"chat"},
    actions={"chat/truncated"},
)
def truncation(step: Step) -> Iterator[str]:
    """`chat/truncated` without `turnId` yields `turns = []`, no active turn, no
    `turnsNextCursor`, activity Idle. With a `turnId` present in `turns` it yields the prefix up
    to and including it, no active turn, activity Idle, cursor kept. With an unknown `turnId` the
    state is unchanged. Pending messages and draft are never touched."""
    before, after, tid = step.before, step.after, step.action.get("turnId")
    for key in _UNTOUCHED_BY_TRUNCATION:
        if not same(before.get(key), after.get(key)):
            yield f"chat/truncated changed {key}: {short(before.get(key))} → {short(after.get(key))}"
    b_turns = as_list(before.get("turns"))
    if tid is None:
        want_turns: list[Any] = []
        if after.get("turnsNextCursor") is not None:
            yield f"chat/truncated without turnId kept turnsNextCursor {short(after.get('turnsNextCursor'))}"
    else:
        ids = [x.get("id") if isinstance(x, dict) else None for x in b_turns]
        if tid not in ids:
            if not same(before, after):
                yield (
                    f"chat/truncated to unknown turn {short(tid)} changed the state: "
                    + describe_diffs(before, after, left="before", right="after")
                )
            return
        want_turns = b_turns[: ids.index(tid) + 1]
        if not same(before.get("turnsNextCursor"), after.get("turnsNextCursor")):
            yield "chat/truncated with a turnId changed turnsNextCursor"
    if not same(after.get("turns"), want_turns):
        got = after.get("turns")
        yield (
            f"chat/truncated({short(tid)}): turns has ids "
            f"{[x.get('id') for x in got if isinstance(x, dict)] if isinstance(got, list) else short(got)}, "
            f"want {[x.get('id') for x in want_turns]}"
        )
    if after.get("activeTurn") is not None:
        yield "chat/truncated left an active turn"
    value = status_of(after)
    if value is not None and value & bits.ACTIVITY_MASK != bits.IDLE:
        yield f"chat/truncated: status activity is {activity_name(value & bits.ACTIVITY_MASK)}, want 1 (Idle)"


def _first_occurrences(turns: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for x in turns:
        key = hkey(x.get("id")) if isinstance(x, dict) else None
        if key in seen:
            continue
        seen.add(key)
        out.append(x)
    return out


@invariant(
    "INV-021",
    "History paging prepends only new turns",
    severity="violation",
    source="specification/subscriptions.md §Snapshot views; specification/chat-channel.md §State; "
    "ChatState.turnsNextCursor doc; fixtures 232, 233 (INVARIANTS.md INV-021(a))",
    kinds={"chat"},
    actions={"chat/turnsLoaded"},
    note="Part (b), paging through a live host with fetchTurns, needs a live host (later issue).",
)
def turns_loaded(step: Step) -> Iterator[str]:
    """(a) `chat/turnsLoaded` yields payload-turns-not-already-present ++ old turns and never
    reorders existing turns; the cursor is updated or cleared as the payload says."""
    b_turns = as_list(step.before.get("turns"))
    payload = as_list(step.action.get("turns"))
    present = {hkey(x.get("id")) for x in b_turns if isinstance(x, dict)}
    new = [x for x in payload if not (isinstance(x, dict) and hkey(x.get("id")) in present)]
    got = step.after.get("turns")
    if not isinstance(got, list):
        yield f"chat/turnsLoaded left turns as {short(got)}"
        return
    if not (same(got, new + b_turns) or same(got, _first_occurrences(new) + b_turns)):
        yield "chat/turnsLoaded: turns are not new-payload-turns ++ old turns: " + describe_diffs(
            new + b_turns, got, left="want", right="got"
        )
    if not same(step.after.get("turnsNextCursor"), step.action.get("turnsNextCursor")):
        yield (
            f"chat/turnsLoaded: turnsNextCursor is {short(step.after.get('turnsNextCursor'))}, "
            f"payload says {short(step.action.get('turnsNextCursor'))}"
        )


INV_022 = catalogue_entry(
    "INV-022",
    "Turn ids are unique and turns are never lost",
    severity="violation",
    scope="live",
    kinds={"chat"},
    source='ChatState.turns ("Completed turns"); server validation sections; R§11 item 14',
    statement="Within a chat, ids in `turns` plus `activeTurn.id` are pairwise distinct, and a "
    "started turn always ends up in `turns` unless removed by `chat/truncated`.",
    note="Needs a live host (later issue): the reducer does not enforce it — turnStarted over an "
    "active turn discards it and turnsLoaded keeps in-batch duplicates (R§11 item 14).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)


def _part_key(part: Any) -> tuple[Any, Any]:
    if not isinstance(part, dict):
        return (type(part).__name__, None)
    kind = part.get("kind")
    tc = _chat.tool_call(part)
    if tc is not None:
        return (kind, tc.get("toolCallId"))
    if kind == "inputRequest":
        return (kind, _chat.request_id(part))
    return (kind, part.get("id"))


@invariant(
    "INV-X03",
    "Response parts are an append-only stream within a turn",
    severity="violation",
    source='guide/state-model.md §Response parts ("All response content … lives in a single '
    'responseParts array in stream order"); InputRequestResponsePart doc ("Completion updates '
    'this part in place so its stream position is stable"). Not in INVARIANTS.md.',
    kinds={"chat"},
)
def parts_append_only(step: Step) -> Iterator[str]:
    """Within one active turn, a step never removes or reorders response parts: every part keeps
    its position, its kind and its identifier (part id, tool-call id or input-request id); new
    parts are only appended."""
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None or paired[2]:
        return
    b_parts, a_parts, _ = paired
    if b_parts is a_parts:
        return
    if len(a_parts) < len(b_parts):
        yield f"{step.type} removed response parts: {len(b_parts)} → {len(a_parts)}"
        return
    for i, bp in enumerate(b_parts):
        ap = a_parts[i]
        if ap is not bp and _part_key(bp) != _part_key(ap):
            yield f"{step.type}: responseParts[{i}] was {short(_part_key(bp))}, is now {short(_part_key(ap))}"
            return
