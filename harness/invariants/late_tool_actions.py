"""C. Tool-call actions for an ended turn are no-ops, status included (REDUCERS.md §11 item 18).

Fixtures 025 and 095–098 call a tool-call action for a turn that is not the active one a
no-op, but the six status-recomputing tool-call actions recompute the chat status anyway: after
`chat/error` (activity Error) a late `chat/toolCallComplete` for the ended turn resets it to
Idle, erasing the error indication. `INV-015.strict` (turns.py) judges the steps the generator
makes; this probe asks every reachable chat state whose status differs from what a recompute
would give it (typically Error after `chat/error`), with a schema-valid late completion for a
turn that is not active.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._chat import active_turn, status_of
from ._json import as_list, fresh, same_except, short
from .base import Reducer, Step, invariant


def _late_turn_id(state: dict[str, object]) -> str:
    """The id of the last ended turn, else one no turn has."""
    turns = [t for t in as_list(state.get("turns")) if isinstance(t, dict)]
    if turns and isinstance(turns[-1].get("id"), str):
        return str(turns[-1]["id"])
    return "probe-ended-turn"


@invariant(
    "INV-015.strict-probe",
    "A late tool-call action for an ended turn changes nothing (probed on reachable chat states)",
    severity="known",
    source="fixtures 025, 095–098 (described as no-ops); INVARIANTS.md INV-015 strict variant",
    kinds={"chat"},
    probe=True,
    known_issue="REDUCERS.md §11 item 18 (a stale tool-call action after chat/error resets Error to Idle)",
)
def late_completion_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """From the step's state without an active turn: a `chat/toolCallComplete` for a turn that
    is not active is a no-op, status included — it does not erase the Error of a turn that
    ended with `chat/error`."""
    state = step.before
    if active_turn(state) is not None or status_of(state) is None:
        return
    action = {
        "type": "chat/toolCallComplete",
        "turnId": _late_turn_id(state),
        "toolCallId": "probe-late-call",
        "result": {"success": True, "pastTenseMessage": "Done"},
    }
    after = reducer("chat", fresh(state), action, step.now_ms)
    b, a = status_of(state), status_of(after)
    if b != a and same_except(state, after, frozenset({"status"})):
        yield (
            f"probe: a late chat/toolCallComplete for turn {short(action['turnId'])} changed "
            f"status {b} → {a}"
        )
