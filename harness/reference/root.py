"""Root channel reducer (`ahp-root://`, REDUCERS.md §3)."""

from __future__ import annotations

from .config import config_changed
from .profile import Action, Ctx, Handler, State


def _replace(key: str, field: str | None = None) -> Handler:
    """A full-replacement handler: `state[key] := action[field or key]`."""
    source = field or key

    def handler(state: State, action: Action, ctx: Ctx) -> State:
        return {**state, key: action[source]}

    handler.__name__ = f"replace_{key}"
    return handler


HANDLERS: dict[str, Handler] = {
    "root/agentsChanged": _replace("agents"),
    "root/activeSessionsChanged": _replace("activeSessions"),
    "root/terminalsChanged": _replace("terminals"),
    "root/configChanged": config_changed,
}
