"""B. The SessionStatus bitset (INVARIANTS.md INV-010…014, REDUCERS.md §2.5, §4.1, §5.1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from harness.reference import status as bits
from harness.spec.versions import is_known_to

from . import _chat
from ._chat import activity_name, status_of
from ._json import at, fresh, get, short
from .base import Reducer, Step, invariant

_FLAG_NAMES: Final = {bits.IS_READ: "IsRead", bits.IS_ARCHIVED: "IsArchived"}


def _bit_name(bit: int) -> str:
    """`IsRead (bit 5 = 32)`, `bit 31 (= 2147483648)`: bits numbered from 0, value shown."""
    value = 1 << bit
    name = _FLAG_NAMES.get(value)
    return f"{name} (bit {bit} = {value})" if name else f"bit {bit} (= {value})"


def _flag_changes(before: int, after: int, changed: int) -> str:
    """Exactly which of the `changed` flag bits were set and which cleared."""
    if before < 0 or after < 0:
        return f"status {before} → {after}: a negative status is not a bitset (a 32-bit signed overflow?)"
    gained, lost = changed & after, changed & before
    parts = []
    if gained:
        parts.append("set " + ", ".join(_bit_name(b) for b in range(gained.bit_length()) if gained >> b & 1))
    if lost:
        parts.append("cleared " + ", ".join(_bit_name(b) for b in range(lost.bit_length()) if lost >> b & 1))
    return f"{'; '.join(parts)} (status {before} → {after})"


@invariant(
    "INV-010",
    "Exactly one activity value",
    severity="violation",
    source='guide/state-model.md §Session Status Bitset ("Bits 0–4 encode mutually-exclusive '
    'activity status (exactly one is set at a time)")',
    kinds={"session", "chat"},
)
def one_activity(step: Step) -> Iterator[str]:
    """For every reachable session or chat state (from one that satisfies it), `status & 31` is
    one of 1 (Idle), 2 (Error), 8 (InProgress) or 24 (InputNeeded)."""
    before, after = status_of(step.before), status_of(step.after)
    if before is None or before & bits.ACTIVITY_MASK not in bits.ACTIVITIES:
        return
    if after is None:
        yield f"status became {short(at(step.after, 'status'))} (not an integer bitset)"
    elif after & bits.ACTIVITY_MASK not in bits.ACTIVITIES:
        yield f"status {after}: activity bits {after & bits.ACTIVITY_MASK} are not one of 1, 2, 8, 24"


#: kind -> (flag, the action that owns it, its payload key). The chat rows are 1.0.0's: an
#: older profile never applies those types (they are unknown to it, no-ops).
_FLAG_ACTIONS: dict[str, tuple[tuple[int, str, str], ...]] = {
    "session": (
        (bits.IS_READ, "session/isReadChanged", "isRead"),
        (bits.IS_ARCHIVED, "session/isArchivedChanged", "isArchived"),
    ),
    "chat": (
        (bits.IS_READ, "chat/isReadChanged", "isRead"),
        (bits.IS_ARCHIVED, "chat/isArchivedChanged", "isArchived"),
    ),
}


@invariant(
    "INV-011",
    "Orthogonal flags change only on their own actions",
    severity="violation",
    source='guide/state-model.md (IsRead "Cleared automatically when a new turn starts or an '
    'input request arrives"); R§4, R§5.1; fixtures 071–075, 230, 231',
    kinds={"session", "chat"},
)
def flags_orthogonal(step: Step) -> Iterator[str]:
    """IsArchived (64) changes only via `session/isArchivedChanged` (and, from 1.0.0, a chat's
    via `chat/isArchivedChanged`); unknown bits ≥ 7 never change; session IsRead (32) changes
    only via `session/isReadChanged`; chat IsRead is cleared by `chat/turnStarted` and
    `chat/inputRequested`, and set or cleared only by 1.0.0's `chat/isReadChanged`."""
    before, after = status_of(step.before), status_of(step.after)
    if before is None or after is None:
        return
    changed = (before ^ after) & ~bits.ACTIVITY_MASK
    t = step.type
    for flag, own, key in _FLAG_ACTIONS.get(step.kind, ()):
        if t == own and is_known_to(own, step.profile.version):
            changed &= ~flag
            want = step.action.get(key)
            if isinstance(want, bool) and bool(after & flag) != want:
                yield f"{t} {key}={want} left status {after} with {_FLAG_NAMES[flag]}={bool(after & flag)}"
    if step.kind == "chat" and (
        t in ("chat/turnStarted", "chat/inputRequested")
        and changed & bits.IS_READ
        and not after & bits.IS_READ
    ):
        changed &= ~bits.IS_READ
    if changed:
        yield f"{t} changed status flags: {_flag_changes(before, after, changed)}"


def _applies_recompute(step: Step) -> bool:
    """Whether a recomputing chat action is on its non-no-op path (R§5.1)."""
    t, before, action = step.type, step.before, step.action
    if t == "chat/turnStarted":
        return True
    if t in _chat.TURN_END:
        return _chat.turn_matches(before, action)
    if t == "chat/inputRequested":
        return _chat.active_turn(before) is not None
    if t == "chat/inputCompleted":
        rid = action.get("requestId")
        return any(
            _chat.is_open_input(p) and _chat.request_id(p) == rid
            for p in _chat.parts_of(_chat.active_turn(before))
        )
    if t == "chat/truncated":
        tid = action.get("turnId")
        turns = before.get("turns")
        return tid is None or (
            isinstance(turns, list)
            and any(isinstance(x, dict) and x.get("id") == tid for x in turns)
        )
    if t in _chat.RECOMPUTING_TOOL_ACTIONS:
        return _chat.turn_matches(before, action)
    return False


RECOMPUTING: Final = (
    _chat.RECOMPUTING_TOOL_ACTIONS
    | _chat.TURN_END
    | {
        "chat/turnStarted",
        "chat/inputRequested",
        "chat/inputCompleted",
        "chat/truncated",
    }
)


@invariant(
    "INV-012",
    "Chat status equals the derived status after recomputing actions",
    severity="violation",
    source="guide/elicitation.md §Status And Cleanup; guide/state-model.md status table; R§5.1; "
    "fixtures 106, 111, 112, 248, 249",
    kinds={"chat"},
    actions=RECOMPUTING,
)
def chat_status_derived(step: Step) -> Iterator[str]:
    """After a status-recomputing chat action the activity bits equal the derived activity:
    Error only immediately after `chat/error`; else InputNeeded iff the active turn has an open
    input request or a tool call in pending-confirmation / pending-result-confirmation /
    auth-required; else InProgress iff an active turn exists; else Idle."""
    if not _applies_recompute(step):
        return
    after = status_of(step.after)
    if after is None:
        return
    want = bits.ERROR if step.type == "chat/error" else _chat.derived_activity(step.after)
    got = after & bits.ACTIVITY_MASK
    if got == want:
        return
    if step.type in _chat.RECOMPUTING_TOOL_ACTIONS:
        b_parts = _chat.parts_of(_chat.active_turn(step.before))
        a_parts = _chat.parts_of(_chat.active_turn(step.after))
        if b_parts == a_parts and status_of(step.before) == after:
            return  # the tool-call update was a no-op and the status was left alone
    yield f"after {step.type} the status activity is {activity_name(got)}, derived {activity_name(want)}"


def _consistent(state: dict[str, Any]) -> bool:
    value = status_of(state)
    if value is None:
        return True
    got = value & bits.ACTIVITY_MASK
    if got == bits.ERROR and _chat.active_turn(state) is None:
        return True  # Error stays until the next turn starts
    return got == _chat.derived_activity(state)


@invariant(
    "INV-012.strong",
    "Chat status equals the derived status after every chat action",
    severity="known",
    source='guide/elicitation.md §Status And Cleanup ("while any unresolved input-request part '
    'exists the chat status carries InputNeeded"); INVARIANTS.md INV-012 note',
    kinds={"chat"},
    known_issue="REDUCERS.md §11 item 16 (chat/responsePart does not recompute status)",
)
def chat_status_always_derived(step: Step) -> Iterator[str]:
    """While any unresolved input-request part (or a tool call waiting for the user) exists the
    chat status carries InputNeeded: after every chat action — not only the recomputing ones —
    a state whose status agreed with its parts still agrees (Error may persist while idle)."""
    if step.type in RECOMPUTING or step.after is step.before:
        return
    if _consistent(step.before) and not _consistent(step.after):
        got = (status_of(step.after) or 0) & bits.ACTIVITY_MASK
        want = _chat.derived_activity(step.after)
        yield f"after {step.type} the status activity is {activity_name(got)}, derived {activity_name(want)}"


def _counting(step: Step, entries: list[Any]) -> list[Any]:
    if step.profile.client_execution_blocks:
        return entries
    return [
        e for e in entries if not (isinstance(e, dict) and e.get("kind") == "toolClientExecution")
    ]


def _input_needed_problem(step: Step, state: dict[str, Any]) -> str | None:
    value = status_of(state)
    entries = state.get("inputNeeded")
    if entries is None:
        entries_list: list[Any] = []
    elif not isinstance(entries, list):
        return f"inputNeeded is {short(entries)}, not a list"
    elif not entries:
        return "inputNeeded is [] (must be absent when empty)"
    else:
        entries_list = entries
    if value is None:
        return None
    needs = bool(_counting(step, entries_list))
    has = value & bits.ACTIVITY_MASK == bits.INPUT_NEEDED
    if needs and not has:
        return f"inputNeeded has {len(entries_list)} entr(ies) but status {value} lacks InputNeeded"
    if has and not needs:
        rule = "" if step.profile.client_execution_blocks else " counting"
        return f"status {value} carries InputNeeded but inputNeeded has no{rule} entries"
    return None


@invariant(
    "INV-013",
    "Session inputNeeded and the InputNeeded bit agree",
    severity="violation",
    source='specification/session-channel.md §Aggregated input requests ("Whenever the list is '
    "non-empty the session's status carries the InputNeeded bit\"); fixtures 223–231; R§7b row 10",
    kinds={"session"},
)
def input_needed_agrees(step: Step) -> Iterator[str]:
    """`inputNeeded` is either absent or non-empty (never `[]`); it is non-empty iff the status
    activity is InputNeeded (24). Under the 0.8.0 rule (profile without
    `client_execution_blocks`) `toolClientExecution` entries do not count."""
    if step.after is step.before or _input_needed_problem(step, step.before) is not None:
        return
    problem = _input_needed_problem(step, step.after)
    if problem:
        yield f"after {step.type}: {problem}"


@invariant(
    "INV-014",
    "Input-needed round trip restores the previous activity",
    severity="known",
    source='upstream reducer comment ("an already-idle session stays idle"); '
    'guide/state-model.md (InProgress means "A turn is active"); R§4.1',
    kinds={"session"},
    probe=True,
    known_issue="REDUCERS.md §11 item 2 (Idle → 24 → 8, Error|Read 34 → 56 → 40)",
    actions={"session/inputNeededSet"},
)
def input_needed_round_trip(step: Step, reducer: Reducer) -> Iterator[str]:
    """From a session with activity A and empty `inputNeeded`, `inputNeededSet(x)` followed by
    `inputNeededRemoved(x.id)` restores activity A."""
    if step.before.get("inputNeeded"):
        return
    before = status_of(step.before)
    rid = get(step.action, "request", "id")
    if before is None or rid is None:
        return
    undo = {"type": "session/inputNeededRemoved", "id": rid}
    result = reducer("session", fresh(step.after), undo, step.now_ms)
    after = status_of(result)
    if after is None or after & bits.ACTIVITY_MASK != before & bits.ACTIVITY_MASK:
        yield (
            f"inputNeededSet then inputNeededRemoved({rid!r}) turned activity "
            f"{activity_name(before & bits.ACTIVITY_MASK)} into "
            f"{activity_name((after or 0) & bits.ACTIVITY_MASK)}"
        )
