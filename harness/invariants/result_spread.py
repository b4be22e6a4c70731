"""C. Tool results cannot overwrite tool-call identity, probed (INV-051; REDUCERS.md §11 item 12).

`chat/toolCallComplete` copies every key of `result` over the new tool-call state, so a
schema-valid result with extra keys (`ToolCallResult` allows them) corrupts the call. INV-051
(tool_calls.py) judges the steps the generator makes; this probe asks every reachable chat
state that holds a completable tool call (running, pending-confirmation, auth-required) in its
active turn, with a result that carries `status`, `toolCallId` and `toolName` — so a plain run
reports the issue even when the generator never draws such a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ._chat import IDENTITY_FIELDS, active_turn, parts_of, tool_call
from ._json import fresh, same, short
from .base import Reducer, Step, invariant

#: Tool-call statuses `chat/toolCallComplete` completes (R§5.4).
COMPLETABLE: Final = frozenset({"running", "pending-confirmation", "auth-required"})
#: Where a completion may land (INV-051's statement).
LANDINGS: Final = frozenset({"completed", "pending-result-confirmation"})


def spreading_result(call: dict[str, Any]) -> dict[str, Any]:
    """A schema-valid `ToolCallResult` with keys that name tool-call fields. Failed for an
    auth-required call (a successful one is a no-op there, R§7b)."""
    return {
        "success": call.get("status") != "auth-required",
        "pastTenseMessage": "Done",
        "status": "running",
        "toolCallId": f"{call.get('toolCallId')}-overwritten",
        "toolName": "overwritten",
    }


@invariant(
    "INV-051.probe",
    "Tool results cannot overwrite tool-call identity (probed on reachable chat states)",
    severity="known",
    source="tool-call state machine (guide/state-model.md diagram); ToolCallResult shape "
    "(extra keys allowed); INVARIANTS.md INV-051",
    kinds={"chat"},
    probe=True,
    known_issue="REDUCERS.md §11 item 12 (toolCallComplete copies every key of result over the call)",
)
def result_spread_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """After `chat/toolCallComplete`, the tool call's status is `completed` or
    `pending-result-confirmation` and its identity fields are unchanged, whatever extra keys
    `result` carries (probed with `status`, `toolCallId`, `toolName`)."""
    turn = active_turn(step.before)
    if turn is None:
        return
    for i, part in enumerate(parts_of(turn)):
        call = tool_call(part)
        if call is None or call.get("status") not in COMPLETABLE:
            continue
        action = {
            "type": "chat/toolCallComplete",
            "turnId": turn.get("id"),
            "toolCallId": call.get("toolCallId"),
            "result": spreading_result(call),
        }
        after = reducer("chat", fresh(step.before), action, step.now_ms)
        got = tool_call(p) if (p := _part(after, i)) is not None else None
        if got is None or same(got, call):
            continue
        where = f"responseParts[{i}] ({short(call.get('toolCallId'))})"
        if got.get("status") not in LANDINGS:
            yield f"probe: a result with extra keys left {where} in status {short(got.get('status'))}"
        for f in IDENTITY_FIELDS:
            if not same(call.get(f), got.get(f)):
                yield f"probe: result key {f!r} overwrote {where} {f}: {short(call.get(f))} → {short(got.get(f))}"
        return  # one tool call per state is enough


def _part(state: Any, i: int) -> Any:
    parts = parts_of(active_turn(state)) if isinstance(state, dict) else []
    return parts[i] if i < len(parts) else None
