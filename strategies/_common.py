"""Building blocks shared by every strategy module: id pools, short text, JSON values, `_meta`.

Ids are drawn from *small pools* on purpose (INVARIANTS.md conventions): with four turn ids
and four tool-call ids, duplicate ids, stale ids and wrong turn ids happen often, which is
where reducers disagree. Everything here produces plain JSON (dicts, lists, str, int, float,
bool, None) that `json.dumps` encodes in strict UTF-8 (no lone surrogates, no NaN).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

from hypothesis import strategies as st

JSON = Any
Json = dict[str, Any]
T = TypeVar("T")

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

#: Memoize a strategy factory (Hypothesis strategies are immutable, and building them is far
#: more expensive than drawing from them). Bounded: at most 64 argument combinations each — the
#: arguments are often drawn from states (ids, directory lists), so a cache fills for as long as a
#: campaign meets new states, and 81 factories × 512 strategy trees made a reference worker grow
#: ≈ 1.2 MB a minute for its first half hour (bench/results/campaign.md).
memo = functools.lru_cache(maxsize=64)

# --- id pools ------------------------------------------------------------------------------

TURN_IDS: Final = ("t1", "t2", "t3", "t4")
PART_IDS: Final = ("p1", "p2", "p3", "p4")
TOOL_CALL_IDS: Final = ("tc1", "tc2", "tc3", "tc4")
REQUEST_IDS: Final = ("r1", "r2", "r3")
QUESTION_IDS: Final = ("q1", "q2", "q3")
OPTION_IDS: Final = ("o1", "o2", "o3")
MESSAGE_IDS: Final = ("m1", "m2", "m3", "m4")
CLIENT_IDS: Final = ("client-1", "client-2", "client-3")
CUSTOMIZATION_IDS: Final = ("cust-1", "cust-2", "cust-3", "cust-4")
FILE_IDS: Final = ("f1", "f2", "f3", "f4")
OPERATION_IDS: Final = ("op1", "op2", "op3")
ANNOTATION_IDS: Final = ("a1", "a2", "a3")
ENTRY_IDS: Final = ("e1", "e2", "e3")
COMMAND_IDS: Final = ("cmd1", "cmd2", "cmd3")
INPUT_NEEDED_IDS: Final = ("in1", "in2", "in3")
CONFIG_KEYS: Final = ("model", "mode", "autoApprove", "theme")


def pool(ids: Sequence[str]) -> st.SearchStrategy[str]:
    """One id from a small pool."""
    return _pool(tuple(ids))


@memo
def _pool(ids: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(ids)


def near_misses(real: str) -> list[str]:
    """Spellings that are *almost* `real`: case, whitespace, prefix/suffix, look-alikes, empty.

    None of them equals `real` (that is the point: a reducer must treat them as different ids).
    """
    out = [
        real.upper() if real != real.upper() else real.lower(),
        real + " ",
        " " + real,
        real + "0",
        real[:-1] if len(real) > 1 else real + real,
        real.replace("1", "l") if "1" in real else real + "\u200b",
        "",
        real + "\u0000",
    ]
    seen: set[str] = set()
    unique = []
    for s in out:
        if s != real and s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


@memo
def near_miss(real: str) -> st.SearchStrategy[str]:
    """A near-miss spelling of `real` (never equal to it)."""
    return st.sampled_from(near_misses(real))


def id_from(
    present: Sequence[str],
    fallback: Sequence[str],
    *,
    stale: float = 0.1,
) -> st.SearchStrategy[str]:
    """An id that names something in `present` most of the time.

    With probability about `stale`, the id is stale (a pool id that is not present) or a near
    miss of a present id — never a present id. When nothing is present, the fallback pool is
    used.
    """
    if not present:
        return pool(fallback)
    real = st.sampled_from(tuple(present))
    if stale <= 0:
        return real
    taken = set(present)
    absent = [i for i in fallback if i not in taken]
    misses = real.flatmap(near_miss).filter(lambda x: x not in taken)
    if absent:
        misses = st.one_of(pool(absent), misses)
    if stale >= 1:
        return misses
    return weighted([(1.0 - stale, real), (stale, misses)])


def weighted(choices: Sequence[tuple[float, st.SearchStrategy[T]]]) -> st.SearchStrategy[T]:
    """Pick one of several strategies with the given relative weights (then draw from it)."""
    live = [(w, s) for w, s in choices if w > 0]
    if not live:
        raise ValueError("weighted() needs at least one positive weight")
    if len(live) == 1:
        return live[0][1]
    # Hypothesis has no weighted one_of. Sampling an index from a list in which each branch
    # appears in proportion to its weight keeps the choice uniform over slots (floats would be
    # biased to their boundaries) and shrinks toward the first (usually the "real") branch.
    smallest = min(w for w, _ in live)
    slots: list[int] = []
    for i, (w, _) in enumerate(live):
        slots.extend(
            [i]
            * max(1, round(_RESOLUTION * w / smallest) if w / smallest < 50 else 50 * _RESOLUTION)
        )
    branches = [s for _, s in live]
    return st.sampled_from(slots).flatmap(lambda i: branches[i])


_RESOLUTION: Final = 4


# --- scalars and JSON -----------------------------------------------------------------------

#: Printable-ish text, strict-UTF-8 encodable (no lone surrogates).
_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))

WORDS: Final = ("hello", "fix the bug", "run tests", "ok", "", "résumé", "日本語", "a\nb", "🙂")


@memo
def short_text(max_size: int = 12) -> st.SearchStrategy[str]:
    """Short text: usually a word from a fixed list, sometimes arbitrary unicode."""
    return st.one_of(st.sampled_from(WORDS), st.text(_CHARS, max_size=max_size))


@memo
def label() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(("file.ts", "README.md", "screenshot", "selection", "")), short_text(8)
    )


@memo
def non_negative_ints(max_value: int = 10_000) -> st.SearchStrategy[int]:
    return st.integers(0, max_value)


@memo
def finite_numbers() -> st.SearchStrategy[float | int]:
    """JSON numbers every implementation reads alike: integers within ±(2⁵³−1) (I-JSON) and
    floats that are not integral (no NaN or infinity; `8.0` is a labelled probe only)."""
    return st.one_of(
        st.integers(-(2**53 - 1), 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    )


@memo
def json_scalars() -> st.SearchStrategy[JSON]:
    return st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), short_text(6))


@memo
def json_values(max_leaves: int = 6) -> st.SearchStrategy[JSON]:
    """Small arbitrary JSON values (nested lists/objects of scalars)."""
    return st.recursive(
        json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(short_text(5), inner, max_size=3),
        ),
        max_leaves=max_leaves,
    )


META_KEYS: Final = ("group", "part", "source", "traceId", "vscode.id", "")


@memo
def meta() -> st.SearchStrategy[Json]:
    """A `_meta` object: small, keys from a pool (so collection and member metas can collide)."""
    return st.dictionaries(st.sampled_from(META_KEYS), json_scalars(), max_size=3)


@memo
def iso_timestamps() -> st.SearchStrategy[str]:
    """ISO-8601 UTC with millisecond precision and `Z` (the form the reducers write)."""
    return st.integers(0, 4_102_444_800_000).map(_iso)


def _iso(ms: int) -> str:
    t = _EPOCH + timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# --- object assembly ------------------------------------------------------------------------


def obj(
    required: Mapping[str, st.SearchStrategy[Any]],
    optional: Mapping[str, st.SearchStrategy[Any]] | None = None,
) -> st.SearchStrategy[Json]:
    """A JSON object with every `required` key and any subset of the `optional` keys.

    Optional keys are *absent* when not chosen (never `null`): absent and `null` differ on
    the wire (round-trip fixtures) and the reducers treat `null` as absent anyway.
    """
    return st.fixed_dictionaries(dict(required), optional=dict(optional or {}))


def with_type(
    type_name: str, **fields: st.SearchStrategy[Any]
) -> dict[str, st.SearchStrategy[Any]]:
    return {"type": st.just(type_name), **fields}


def maybe(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.one_of(st.none(), strategy)


def unique_by(
    elements: st.SearchStrategy[Json],
    key: Callable[[Json], Any],
    *,
    min_size: int = 0,
    max_size: int = 4,
) -> st.SearchStrategy[list[Json]]:
    """A list of objects whose `key` values are pairwise distinct."""
    return st.lists(elements, min_size=min_size, max_size=max_size, unique_by=key)
