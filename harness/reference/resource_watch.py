"""Resource-watch channel reducer (`ahp-resource-watch:/<id>`, REDUCERS.md §6.4).

Change events are consumed from the action stream, not stored: the state never changes.
"""

from __future__ import annotations

from .profile import Action, Ctx, Handler, State, no_state_effect


@no_state_effect
def changed(state: State, action: Action, ctx: Ctx) -> State:
    return state


HANDLERS: dict[str, Handler] = {"resourceWatch/changed": changed}
