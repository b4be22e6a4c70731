"""`*/configChanged` on a `{schema, values}` config block (root and session, REDUCERS.md §3, §4.2)."""

from __future__ import annotations

from .profile import Action, Ctx, State


def config_changed(state: State, action: Action, ctx: Ctx) -> State:
    """Merge (or with `replace`, replace) `config.values`; a no-op when the state has no config."""
    config = state.get("config")
    if config is None:
        return state
    patch = action["config"]
    values = dict(patch) if action.get("replace") else {**config.get("values", {}), **patch}
    return {**state, "config": {**config, "values": values}}
