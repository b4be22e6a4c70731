"""Where a live scenario's choices come from: Hypothesis, or pools and a seeded PRNG.

The scenarios of `ops` never call Hypothesis themselves: they ask a `Draws` for a choice among
options, an integer, a coin, a permutation, a compound value (an attachment collection) or a
state-aware action. `HypothesisDraws` answers through a Hypothesis `DataObject` — the
Hypothesis live lane (`--lane hypothesis`, `pytest -m fuzz`): every choice a labelled draw,
exactly as before. `live/fast.py`'s `PoolDraws` answers the same questions from pools that
Hypothesis fills now and then and a seeded `random.Random` (the fast lane, the default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from harness.reference import Profile
from strategies.actions import ActionContext, action_of_type, actions_for

T = TypeVar("T")


class Draws(Protocol):
    """The choices a scenario makes (`label` names the choice in Hypothesis' output)."""

    def choice(self, options: Sequence[T], label: str) -> T: ...

    def integer(self, lo: int, hi: int, label: str) -> int: ...

    def boolean(self, label: str) -> bool: ...

    def permutation(self, values: Sequence[T], label: str) -> list[T]: ...

    def subset(self, values: Sequence[T], label: str) -> list[T]:
        """A non-empty list of distinct members of `values`."""
        ...

    def value(self, key: str, strategy: st.SearchStrategy[Any], label: str) -> Any:
        """A value of a strategy that does not depend on the run's state (`key` names it)."""
        ...

    def action(
        self,
        kind: str,
        state: dict[str, Any],
        types: Sequence[str],
        context: ActionContext,
        label: str,
    ) -> Any:
        """A state-aware valid-lane action of one of `types` for `state` (a client's fold)."""
        ...

    def typed_action(self, action_type: str, state: dict[str, Any] | None, label: str) -> Any:
        """An action of `action_type` (its payload shaped after `state`, when given)."""
        ...


class HypothesisDraws:
    """Every choice a Hypothesis draw (the Hypothesis live lane)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def choice(self, options: Sequence[T], label: str) -> T:
        return self.data.draw(st.sampled_from(options), label=label)

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self.data.draw(st.integers(lo, hi), label=label)

    def boolean(self, label: str) -> bool:
        return self.data.draw(st.booleans(), label=label)

    def permutation(self, values: Sequence[T], label: str) -> list[T]:
        return list(self.data.draw(st.permutations(values), label=label))

    def subset(self, values: Sequence[T], label: str) -> list[T]:
        return list(
            self.data.draw(st.lists(st.sampled_from(values), min_size=1, unique=True), label=label)
        )

    def value(self, key: str, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self.data.draw(strategy, label=label)

    def action(
        self,
        kind: str,
        state: dict[str, Any],
        types: Sequence[str],
        context: ActionContext,
        label: str,
    ) -> Any:
        profile: Profile = context.profile
        return self.data.draw(
            actions_for(kind, state, profile, types=list(types), context=context), label=label
        )

    def typed_action(self, action_type: str, state: dict[str, Any] | None, label: str) -> Any:
        return self.data.draw(action_of_type(action_type, state), label=label)
