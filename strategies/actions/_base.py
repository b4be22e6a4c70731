"""What every state-aware builder shares: the context, the builder shape, weights, id choices,
and the per-state view cache.

A *builder* answers two questions about one action type and one state: how much the type is
worth drawing here (`weight`: `HOT` when the state holds what the type's guard needs, `COLD`
when the action is a certain no-op), and — only if the type is chosen — which strategy draws
it (`make`, a thunk). Reading the state is cheap and done for every type; building Hypothesis
strategies is not, so only the chosen type's thunk runs (`dispatch.actions_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from hypothesis import strategies as st

from harness.reference import DEFAULT_PROFILE, Profile

from .. import uris
from .._common import Json, weighted

STALE: Final = 0.07  # per id field
HOT, COLD = 1.0, 0.08  # weights: the action's guard holds / the action is a certain no-op

Make = Callable[[], st.SearchStrategy[Json]]
Offer = tuple[float, Make]


@dataclass(frozen=True)
class ActionContext:
    """What a state-aware strategy may know beyond the state itself.

    `stale`: probability that an id field is stale or a near miss. `session_directories`: the
    owning session's set, for chat directory actions (a chat state alone does not know it).
    `equivalent_spellings`: probability that a directory is an equivalence variant (INV-034).
    """

    profile: Profile = DEFAULT_PROFILE
    stale: float = STALE
    session_directories: tuple[str, ...] | None = None
    equivalent_spellings: float = 0.12


Builder = Callable[[Json, ActionContext], Offer]


def act(type_: str, **fields: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {"type": st.just(type_), **fields}


def fresh_id(
    present: Sequence[str], pool_ids: Sequence[str], ctx: ActionContext
) -> st.SearchStrategy[str]:
    """An id not in `present` (from the pool, else a new one); now and then an existing one."""
    unused = [i for i in pool_ids if i not in present]
    new = (
        st.sampled_from(unused)
        if unused
        else st.integers(5, 99).map(lambda n: f"{pool_ids[0]}-{n}")
    )
    if present and ctx.stale > 0:
        return weighted([(1 - ctx.stale, new), (ctx.stale, st.sampled_from(tuple(present)))])
    return new


def ids(items: Sequence[Any], key: str) -> list[str]:
    return [x[key] for x in items if isinstance(x, dict) and isinstance(x.get(key), str)]


def flag(status: Any, bit: int) -> bool:
    return isinstance(status, int) and bool(status & bit)


def directory_choice(
    present: Sequence[str], universe: Sequence[str], ctx: ActionContext, *, want_present: bool
) -> st.SearchStrategy[str]:
    """A directory to set (absent from `present`) or to remove (in `present`), with a share of
    equivalent spellings of present entries and stale picks."""
    absent = [d for d in universe if d not in present] or list(uris.DIRECTORIES)
    main = (
        st.sampled_from(tuple(present))
        if (want_present and present)
        else st.sampled_from(tuple(absent))
    )
    choices: list[tuple[float, st.SearchStrategy[str]]] = [
        (1.0 - ctx.stale - ctx.equivalent_spellings, main)
    ]
    if present:
        base = st.sampled_from(tuple(present))
        choices.append(
            (
                ctx.equivalent_spellings,
                base.flatmap(lambda b: uris.uri_variants(base=b)).map(lambda v: v.variant),
            )
        )
    choices.append(
        (
            ctx.stale,
            st.sampled_from(tuple(present) if (not want_present and present) else uris.DIRECTORIES),
        )
    )
    return weighted(choices)


V = TypeVar("V")

#: id(state) -> (state, view); the state itself is kept so its id cannot be reused while cached.
_VIEWS: dict[tuple[int, type], tuple[Json, Any]] = {}
_VIEWS_MAX: Final = 256


def view(state: Json, cls: Callable[[Json], V]) -> V:
    """`cls(state)`, computed once per state object (states are immutable and shared: the
    engine asks for the same state's view once per type builder, and again on no-op steps)."""
    key = (id(state), cls)  # type: ignore[arg-type]
    hit = _VIEWS.get(key)  # type: ignore[arg-type]
    if hit is not None and hit[0] is state:
        return hit[1]  # type: ignore[no-any-return]
    if len(_VIEWS) >= _VIEWS_MAX:
        _VIEWS.clear()
    made = cls(state)
    _VIEWS[key] = (state, made)  # type: ignore[index]
    return made
