"""0.9.0 automation catalogue channel (`ahp-automations://`, reducer `automation`): state
`{entries: AutomationEntry[]}` keyed by `resource` (CHANGELOG 0.9.0, 1.0.0).

`automation/set` upserts the host's authoritative entry in place; `automation/removed` drops
it. `automation/createRequested` and `automation/updateRequested` are a client's requests to
the host — side effects that leave the state as it is until the host answers with
`automation/set` (the same as `automationRun/cancelRequested`, whose schema says so).
"""

from __future__ import annotations

from .keyed import remove_first, upsert
from .profile import Action, Ctx, Handler, State, no_state_effect

KEY = "entries"


def set_(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, KEY: upsert(state.get(KEY, []), "resource", action["automation"])}


def removed(state: State, action: Action, ctx: Ctx) -> State:
    items = state.get(KEY, [])
    remaining = remove_first(items, "resource", action["resource"])
    return state if remaining is items else {**state, KEY: remaining}


@no_state_effect
def requested(state: State, action: Action, ctx: Ctx) -> State:
    return state  # a request to the host: the state changes when the host publishes the result


HANDLERS: dict[str, Handler] = {
    "automation/set": set_,
    "automation/removed": removed,
    "automation/createRequested": requested,
    "automation/updateRequested": requested,
}
