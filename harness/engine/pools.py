"""Pools filled while stepping: a pool whose values are drawn the first time a step needs one.

The fast lane (engine/fast.py) fills an arm's pools before its first trace runs. Part of a
fill is only needed now and then — the adversarial actions, sent instead of about one step in
ten — and drawing them (a Hypothesis run per kind, its strategies validated on first use: about
0.1 s each at start-up) before the run's first step delays it. `Deferred` keeps the draw for the
first step that asks: the fill's seed is taken where the fill was (the run's PRNG advances as
before, so a seed draws the same values), the draw runs on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload


class Deferred(Sequence[Any]):
    """A sequence computed by `make()` on first use (`len`, indexing, iteration, truth)."""

    def __init__(self, make: Callable[[], list[Any]]) -> None:
        self._make: Callable[[], list[Any]] | None = make
        self._values: list[Any] = []

    @property
    def drawn(self) -> bool:
        return self._make is None

    def _get(self) -> list[Any]:
        if self._make is not None:
            make, self._make = self._make, None
            self._values = make()
        return self._values

    def __len__(self) -> int:
        return len(self._get())

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return self._get()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._get())
