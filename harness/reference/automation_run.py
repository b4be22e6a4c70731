"""0.9.0 automation-run channel (`ahp-automation-run:/…`, reducer `automationRun`): state
`AutomationRunState {resource, automation, origin, lifecycle, sessions, primarySession?}`.

`lifecycleChanged` replaces the lifecycle (pending → running → completed | failed | cancelled,
host-emitted for every transition); `sessionSet` appends a session URI not linked yet
(`sessions` is ordered and unique); `sessionRemoved` drops it; `primarySessionChanged` sets the
primary session or, omitted, clears it; `cancelRequested` "deliberately leaves optimistic state
unchanged" (its schema).
"""

from __future__ import annotations

from .keyed import field_handler
from .profile import Action, Ctx, Handler, State, no_state_effect


def session_set(state: State, action: Action, ctx: Ctx) -> State:
    sessions = state.get("sessions", [])
    uri = action["session"]
    if uri in sessions:
        return state
    return {**state, "sessions": [*sessions, uri]}


def session_removed(state: State, action: Action, ctx: Ctx) -> State:
    sessions = state.get("sessions", [])
    uri = action["session"]
    if uri not in sessions:
        return state
    return {**state, "sessions": [s for s in sessions if s != uri]}


@no_state_effect
def cancel_requested(state: State, action: Action, ctx: Ctx) -> State:
    return state


HANDLERS: dict[str, Handler] = {
    "automationRun/lifecycleChanged": field_handler("lifecycle"),
    "automationRun/sessionSet": session_set,
    "automationRun/sessionRemoved": session_removed,
    "automationRun/primarySessionChanged": field_handler("primarySession", clear_if_absent=True),
    "automationRun/cancelRequested": cancel_requested,
}
