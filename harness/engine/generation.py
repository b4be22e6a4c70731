"""What the engine draws from: the project's Hypothesis strategies, behind three names.

Keeping the engine's view of generation this narrow lets the machines stay independent of how
`strategies/` is organised.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from harness.reference import Profile
from strategies import actions as gen_actions
from strategies import states as gen_states


@lru_cache(maxsize=64)
def initial_states(kind: str, profile: Profile) -> st.SearchStrategy[dict[str, Any]]:
    """Valid starting states of `kind` (schema-consistent, often already populated)."""
    return gen_states.states(kind)


def state_aware_actions(kind: str, state: dict[str, Any], profile: Profile) -> st.SearchStrategy[Any]:
    """Actions for `kind` that refer to what `state` holds, with a share of stale/near-miss ids."""
    return gen_actions.actions_for(kind, state, profile)


@lru_cache(maxsize=64)
def adversarial_actions(kind: str, profile: Profile) -> st.SearchStrategy[Any]:
    """Unknown/near-miss types, missing/extra fields, wrong JSON types, later-version actions."""
    return gen_actions.adversarial_actions(kind, profile)
