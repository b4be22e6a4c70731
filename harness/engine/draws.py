"""Seeded values of the project's Hypothesis strategies, drawn outside a test.

The fast lanes draw pools of seed traces and payloads from the strategies, deterministic given a
seed. Running Hypothesis' test engine for it (`@given` with `max_examples=n`) has two costs:
the engine's set-up per call (~2 ms), and its first example is always the *simplest* value, and
its second leans the other way — whatever the seed (every integer 0, every `one_of` its first
branch, then its last). A fill of one was that simplest value every time: every payload drawn
for a state took the first branch of every choice (issue 32: never the earlier-entry
`workingDirectoryReplaced`, a queued `pendingMessageSet` once in 460 sends).

`values` draws each value from its own `ConjectureData` fed by a seeded `random.Random`: the
distribution Hypothesis generates with (its provider's edge-value bias included), no engine, no
simplest-first. The simplest value is an edge case of its own (every optional key absent: a chat
with no directory subset at all), so it is still drawn — as one value in `SIMPLEST` of them, and
first when asked (`simplest_first`: an arm's first fill). A draw a filter or `assume` rejects is retried with the next random data, up to
`ATTEMPTS` times. Hypothesis' conjecture layer is internal API: the version is pinned
(constraints.txt), and if it ever changes shape (an import, or a signature, fails) the engine
path (`_engine_values`) takes over, with its first two values dropped.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from . import generation

#: Rejected draws (filters, `assume`) retried per value before it is given up.
ATTEMPTS: Final = 32
#: Choices one draw may make (Hypothesis' own engine bounds a test case alike).
MAX_CHOICES: Final = 8 * 1024
#: The share of values drawn as the simplest one (every choice its simplest: integers 0, each
#: `one_of` its first branch, optional keys absent).
SIMPLEST: Final = 0.125

try:  # internal API, pinned; see the module docstring
    from hypothesis.control import BuildContext
    from hypothesis.errors import StopTest, UnsatisfiedAssumption
    from hypothesis.internal.conjecture.choice import ChoiceTemplate
    from hypothesis.internal.conjecture.data import ConjectureData
except ImportError:  # pragma: no cover - a Hypothesis without the conjecture layer
    ConjectureData = None  # type: ignore[assignment,misc]


def values(strategy: st.SearchStrategy[Any], n: int, draw_seed: int, *, simplest_first: bool = False) -> list[Any]:
    """Up to `n` values of `strategy`, deterministic given `draw_seed`."""
    if not _internal_ok():  # pragma: no cover - a Hypothesis whose conjecture layer changed
        return _engine_values(strategy, n, draw_seed)
    return _values(strategy, n, draw_seed, simplest_first)


@lru_cache(maxsize=1)
def _internal_ok() -> bool:
    """Hypothesis' conjecture layer has the shape this module uses (pyproject allows any 6.x;
    constraints.txt pins the one it was written against): one plain and one simplest draw."""
    if ConjectureData is None:
        return False
    try:
        rng = random.Random(0)
        with generation.pinned_constants():
            return all(_draw(st.integers(0, 9), rng, simplest=s) is not _NONE for s in (False, True))
    except Exception:  # any failure of an internal API means: do not use it
        return False


def _values(strategy: st.SearchStrategy[Any], n: int, draw_seed: int, simplest_first: bool) -> list[Any]:
    rng = random.Random(draw_seed)
    out: list[Any] = []
    with generation.pinned_constants():
        for i in range(n):
            if (simplest_first and i == 0) or rng.random() < SIMPLEST:
                value = _draw(strategy, rng, simplest=True)
                if value is not _NONE:
                    out.append(value)
                    continue
            for _ in range(ATTEMPTS):
                value = _draw(strategy, rng, simplest=False)
                if value is not _NONE:
                    out.append(value)
                    break
    return out


_NONE: Final = object()  # a rejected draw (a JSON value may be None)


def _draw(strategy: st.SearchStrategy[Any], rng: random.Random, *, simplest: bool) -> Any:
    prefix = [ChoiceTemplate("simplest", count=None)] if simplest else None
    data = ConjectureData(random=rng, max_choices=MAX_CHOICES, prefix=prefix)
    try:
        with BuildContext(data, wrapped_test=_no_test):
            return data.draw(strategy)
    except (StopTest, UnsatisfiedAssumption):
        return _NONE


def _no_test() -> None:  # BuildContext wants the test it builds for; there is none
    return None


def _engine_values(strategy: st.SearchStrategy[Any], n: int, draw_seed: int) -> list[Any]:
    """The same through Hypothesis' test engine, its first two (simplest-first) values dropped."""
    out: list[Any] = []

    @settings(max_examples=n + 2, database=None, deadline=None, phases=[Phase.generate],
              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck))
    @seed(draw_seed)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    with generation.pinned_constants():
        collect()
    return (out[2:] or out)[:n]
