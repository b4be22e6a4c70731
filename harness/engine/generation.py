"""What the engine draws from: the project's Hypothesis strategies, behind a few names.

Keeping the engine's view of generation this narrow lets the machines stay independent of how
`strategies/` is organised.

Determinism. Hypothesis mixes into its draws "local constants": the integer, float and string
literals of every module of the project that happens to be imported (`HypothesisProvider`,
`providers._get_local_constants`). A run inside pytest (test modules, other strategies imported)
therefore drew different values for the same seed than the same run in a fresh process.
`pinned_constants()` pins that pool to empty for the duration of a run, so the same seed, target
and budget generate the same steps whatever else the process imported or ran.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from harness.reference import Profile
from harness.spec.versions import is_known_to
from strategies import actions as gen_actions
from strategies import sequences as gen_sequences
from strategies import uris as gen_uris
from strategies import versioned as gen_versioned


@lru_cache(maxsize=64)
def initial_states(kind: str, profile: Profile) -> st.SearchStrategy[dict[str, Any]]:
    """Valid starting states of `kind` in `profile`'s shapes (schema-consistent, often already
    populated; `strategies.versioned`)."""
    return gen_versioned.states(kind, profile.version)


def state_aware_actions(
    kind: str,
    state: dict[str, Any],
    profile: Profile,
    session_directories: tuple[str, ...] | None = None,
) -> st.SearchStrategy[Any]:
    """Actions for `kind` that refer to what `state` holds, with a share of stale/near-miss ids.
    `session_directories`: the owning session's set, when a chat is fuzzed with its session."""
    if session_directories is None:
        return gen_actions.actions_for(kind, state, profile)
    return gen_actions.actions_for(kind, state, profile, context=_context(profile, session_directories))


@lru_cache(maxsize=256)
def _context(profile: Profile, session_directories: tuple[str, ...]) -> gen_actions.ActionContext:
    return gen_actions.ActionContext(profile=profile, session_directories=session_directories)


def type_offers(
    kind: str,
    state: dict[str, Any],
    profile: Profile,
    session_directories: tuple[str, ...] | None = None,
) -> list[tuple[str, float, Any]]:
    """(type, weight, make) for every `kind` action type known to `profile` and worth drawing
    on `state`: the applicability weights `state_aware_actions` chooses the type by, and the
    thunk that builds that type's state-aware strategy (the fast lane, engine/fast.py)."""
    ctx = _context(profile, session_directories) if session_directories is not None else _plain(profile)
    offers = [(t, *gen_actions.offer(t, state, ctx)) for t in _types(kind, profile)]
    return [o for o in offers if o[1] > 0]


@lru_cache(maxsize=64)
def _plain(profile: Profile) -> gen_actions.ActionContext:
    return gen_actions.ActionContext(profile=profile)


@lru_cache(maxsize=64)
def _types(kind: str, profile: Profile) -> tuple[str, ...]:
    return tuple(t for t in gen_actions.BUILDERS[kind] if is_known_to(t, profile.version))


def uri_spelling(uri: str, pick: int, k: int) -> str | None:
    """Another spelling of `uri` (class number `pick` of `strategies.uris.UriClass`, variant
    `k`), or None when that class does not apply to it."""
    classes = [c for c in gen_uris.UriClass if c is not gen_uris.UriClass.SAME]
    try:
        v = gen_uris.make_variant(uri, classes[pick % len(classes)], k)
    except (IndexError, ValueError):  # strategies/uris.py `_scheme_case` on a one-letter scheme
        return None
    return v.variant if v is not None else None


@lru_cache(maxsize=64)
def adversarial_actions(kind: str, profile: Profile) -> st.SearchStrategy[Any]:
    """Unknown/near-miss types, missing/extra fields, wrong JSON types, later-version actions."""
    return gen_actions.adversarial_actions(kind, profile)


@lru_cache(maxsize=8)
def channel_groups(profile: Profile) -> st.SearchStrategy[gen_sequences.ChannelGroup]:
    """A session together with 1–3 of its chats (catalog mirrors them; chat subsets absent,
    empty or partial), for runs that step several channels in one sequence; in `profile`'s
    shapes (`strategies.versioned`)."""
    v = profile.version
    session_shapers = gen_versioned.state_shapers("session", v)
    chat_shapers = gen_versioned.state_shapers("chat", v)
    if not session_shapers and not chat_shapers:
        return gen_sequences.channel_groups()

    @st.composite
    def shaped(draw: st.DrawFn) -> gen_sequences.ChannelGroup:
        g = draw(gen_sequences.channel_groups())
        session = g.session
        for f in session_shapers:
            session = f(draw, session)
        chats = []
        for c in g.chats:
            for f in chat_shapers:
                c = f(draw, c)
            chats.append(c)
        return gen_sequences.ChannelGroup(g.session_uri, session, tuple(chats))

    return shaped()


@contextlib.contextmanager
def pinned_constants() -> Iterator[None]:
    """Run with Hypothesis' pool of local constants pinned to empty (see the module docstring).

    Restores the library's own function afterwards. If a Hypothesis upgrade removes the hook,
    this does nothing and `tests/test_determinism.py` says so.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the provider module
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover
        yield
        return
    empty = providers.Constants()
    cache.cache.clear()  # entries computed with the process's own pool
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()
