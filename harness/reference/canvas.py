"""1.0.0 canvas channel (`ahp-canvas:`, reducer `canvas`, experimental): state `CanvasState
{instanceId, extensionId, canvasId, extensionName?, title?, status?, url?}`.

`canvas/stateChanged {canvas}` carries the new authoritative state: it replaces the state
whole (a key the new state lacks — `url` when the source became unavailable — is gone).
"""

from __future__ import annotations

from .profile import Action, Ctx, Handler, State


def state_changed(state: State, action: Action, ctx: Ctx) -> State:
    canvas = action["canvas"]
    return state if canvas == state else dict(canvas)


HANDLERS: dict[str, Handler] = {
    "canvas/stateChanged": state_changed,
}
