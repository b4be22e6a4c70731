"""The table from action type to builder, and the public valid / state-aware strategies.

`actions_for` chooses the action *type* first — weighted by what the state makes applicable —
and builds only that type's strategy: reading a state is cheap, building Hypothesis strategies
is not (the engine asks for a fresh strategy every step). Every choice is still a Hypothesis
draw, so shrinking and the example database work as before.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from harness.reference import DEFAULT_PROFILE, Profile
from harness.spec.versions import KINDS, action_types, is_known_to, kind_of

from .._common import Json
from ..versioned import action_shapers, shaped
from ._base import ActionContext, Builder, Make
from .annotations import ANNOTATIONS_BUILDERS, RESOURCE_WATCH_BUILDERS
from .automation import AUTOMATION_BUILDERS, AUTOMATION_RUN_BUILDERS
from .canvas import CANVAS_BUILDERS
from .changeset import CHANGESET_BUILDERS
from .chat import CHAT_BUILDERS
from .chat_flags import CHAT_LATER_BUILDERS
from .root import ROOT_BUILDERS
from .session import SESSION_BUILDERS
from .terminal import TERMINAL_BUILDERS

BUILDERS: Final[Mapping[str, Mapping[str, Builder]]] = MappingProxyType(
    {
        "root": ROOT_BUILDERS,
        "session": SESSION_BUILDERS,
        "chat": MappingProxyType({**CHAT_BUILDERS, **CHAT_LATER_BUILDERS}),
        "terminal": TERMINAL_BUILDERS,
        "changeset": CHANGESET_BUILDERS,
        "annotations": ANNOTATIONS_BUILDERS,
        "resourceWatch": RESOURCE_WATCH_BUILDERS,
        "automation": AUTOMATION_BUILDERS,
        "automationRun": AUTOMATION_RUN_BUILDERS,
        "canvas": CANVAS_BUILDERS,
    }
)

_EMPTY: Final[Json] = {}


def builder(action_type: str) -> Builder:
    table = BUILDERS.get(kind_of(action_type) or "", {})
    if action_type not in table:
        raise KeyError(f"no strategy for action type {action_type!r}")
    return table[action_type]


def action_of_type(
    action_type: str, state: Json | None = None, context: ActionContext | None = None
) -> st.SearchStrategy[Json]:
    """A valid action of one type; state-aware when `state` is given (ids from it)."""
    ctx = context or ActionContext()
    make = builder(action_type)(state if state is not None else _EMPTY, ctx)[1]
    return _in_version(action_type, 1.0, make, ctx.profile.version)[1]()


@functools.lru_cache(maxsize=32)
def valid_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Any valid action of `kind` (every kind when None) known to `version` (state-free)."""
    types = action_types(version, kind)
    return st.sampled_from(types).flatmap(lambda t: _state_free(t, version))


@functools.lru_cache(maxsize=256)
def _state_free(action_type: str, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    profile = DEFAULT_PROFILE if version == "0.7.0" else Profile.for_version(version)
    return action_of_type(action_type, context=ActionContext(profile=profile))


@functools.lru_cache(maxsize=256)
def _known_types(kind: str, version: object, types: tuple[str, ...] | None) -> tuple[str, ...]:
    table = BUILDERS[kind]
    # `types` keeps the caller's order; otherwise the table's (both fixed, never a set's order).
    return tuple(t for t in (types if types is not None else table) if t in table and is_known_to(t, version))  # type: ignore[arg-type]


#: Resolution of the type choice: a type's share of index slots is proportional to its weight.
_RESOLUTION: Final = 4


@functools.lru_cache(maxsize=128)  # each holds a list of up to ~1,000 slots (bounded memory)
def _index(weights: tuple[float, ...]) -> st.SearchStrategy[int]:
    """An index into `weights`, each drawn in proportion to its weight. Sampling one slot from
    a list in which each index appears in proportion keeps the choice uniform over slots and
    shrinks toward index 0 (the first, most applicable type)."""
    smallest = min(weights)
    slots: list[int] = []
    for i, w in enumerate(weights):
        ratio = w / smallest
        slots.extend([i] * (max(1, round(_RESOLUTION * ratio)) if ratio < 50 else 50 * _RESOLUTION))
    return st.sampled_from(slots)


_CACHE_MAX: Final = 512
#: (kind, id(state), context, types) -> (state, strategy): the engine asks again for the same
#: state after every no-op step; the state is kept so its id is not reused while cached.
_STRATEGIES: dict[tuple[object, ...], tuple[Json, st.SearchStrategy[Json]]] = {}


def actions_for(
    kind: str,
    state: Json,
    profile: Profile = DEFAULT_PROFILE,
    *,
    types: Sequence[str] | None = None,
    context: ActionContext | None = None,
) -> st.SearchStrategy[Json]:
    """A valid action of `kind` that refers to what is in `state` (the engine's main entry).

    Only types known to `profile.version` are drawn (0.8.0's replace needs a 0.8.0 profile).
    Types whose guard the state satisfies are weighted up; `types` restricts the choice (the
    benchmark measures one type at a time). Use inside a stateful machine via `data.draw`.
    """
    if kind not in BUILDERS:
        raise ValueError(f"unknown state kind {kind!r} (want one of {', '.join(KINDS)})")
    ctx = context if context is not None else ActionContext(profile=profile)
    wanted = tuple(types) if types is not None else None
    key = (kind, id(state), ctx, wanted)
    hit = _STRATEGIES.get(key)
    if hit is not None and hit[0] is state:
        return hit[1]
    chosen = _known_types(kind, ctx.profile.version, wanted)
    if not chosen:
        raise ValueError(f"no {kind} action type known to {ctx.profile.label} among {types}")
    table = BUILDERS[kind]
    offers = [(t, *_in_version(t, *table[t](state, ctx), ctx.profile.version)) for t in chosen]
    offers = [o for o in offers if o[1] > 0]
    # Hypothesis draws the first branch far more often than its weight says (zero-extended and
    # mutated examples), so put the applicable types first, in an order that varies with the
    # state but is stable across runs and processes (crc32, never the salted `hash`).
    fingerprint = _fingerprint(state)
    offers.sort(key=lambda o: (-o[1], zlib.crc32(f"{o[0]}|{fingerprint}".encode())))
    strategy = _chosen_then_built([m for _, _, m in offers], tuple(w for _, w, _ in offers))
    if len(_STRATEGIES) >= _CACHE_MAX:
        _STRATEGIES.clear()
    _STRATEGIES[key] = (state, strategy)
    return strategy


def offer(action_type: str, state: Json, ctx: ActionContext) -> tuple[float, Make]:
    """(weight, make) of one type on `state`, its strategy in the profile's shapes."""
    return _in_version(action_type, *BUILDERS[kind_of(action_type) or ""][action_type](state, ctx), ctx.profile.version)


def _in_version(action_type: str, weight: float, make: Make, version: object) -> tuple[float, Make]:
    """The offer with its strategy in `version`'s shapes (`strategies.versioned`)."""
    shapers = action_shapers(action_type, version)  # type: ignore[arg-type]
    if not shapers:
        return weight, make
    return weight, lambda: shaped(make(), shapers)


def _chosen_then_built(makes: list[Make], weights: tuple[float, ...]) -> st.SearchStrategy[Json]:
    if len(makes) == 1:
        return st.deferred(makes[0])
    built: dict[int, st.SearchStrategy[Json]] = {}

    def make(i: int) -> st.SearchStrategy[Json]:
        s = built.get(i)
        if s is None:
            s = built[i] = makes[i]()
        return s

    return _index(weights).flatmap(make)


def _fingerprint(state: Json) -> str:
    return ",".join(
        f"{k}{len(v) if isinstance(v, (list, dict, str)) else v}" for k, v in sorted(state.items())
    )


def stale_actions_for(
    kind: str, state: Json, profile: Profile = DEFAULT_PROFILE
) -> st.SearchStrategy[Json]:
    """Adversarial: every id field is stale or a near miss (INV-015, no-op paths)."""
    return actions_for(
        kind,
        state,
        profile,
        context=ActionContext(profile=profile, stale=1.0, equivalent_spellings=0.0),
    )
