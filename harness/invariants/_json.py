"""JSON helpers shared by the checks: absent-aware equality, readable paths and short values.

"Equal" in the catalogue means deep equality after dropping `None`-valued (absent) keys on both
sides (REDUCERS.md §1). `same` takes the fast path first (identity, then `==`) and normalizes only
when that fails, so checks stay cheap on the common, unchanged paths.
"""

from __future__ import annotations

import contextlib
import json
import pickle
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from harness.diff import ABSENT, at, render
from harness.diff import diff_paths as _diff_paths
from harness.spec.interop import as_integers

__all__ = ["ABSENT", "at", "render"]

Path = tuple[str | int, ...]


def normalize(value: Any) -> Any:
    """Drop every `None`-valued dict key, recursively (absent == null)."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """Deep equality with absent == `None` (identity and `==` first)."""
    if a is b:
        return True
    if a == b:
        return True
    return bool(normalize(a) == normalize(b))


def json_equal(a: Any, b: Any) -> bool:
    """Strict JSON equality with absent == `None`: `true` differs from `1`, `1` equals `1.0`.

    A single walk that stops at the first difference and skips shared subtrees by identity.
    """
    if a is b:
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        for k, v in a.items():
            if v is None:
                if b.get(k) is not None:
                    return False
            elif k not in b or not json_equal(v, b[k]):
                return False
        return all(v is None or k in a for k, v in b.items())
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def same_except(a: Mapping[str, Any], b: Mapping[str, Any], ignore: frozenset[str]) -> bool:
    """`same` on two dicts, ignoring the top-level keys in `ignore`."""
    if a is b:
        return True
    keys = (set(a) | set(b)) - ignore
    return all(same(a.get(k), b.get(k)) for k in keys)


def get(value: Any, *path: str | int) -> Any:
    """Follow `path` through dicts and lists; None when any step is missing."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return None
            value = value[step]
        else:
            if not isinstance(value, dict):
                return None
            value = value.get(step)
    return value


def fmt_path(path: Path) -> str:
    """`('turns', 0, 'id')` -> `turns[0].id`; the empty path is `<root>`."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "<root>"


def short(value: Any, limit: int = 80) -> str:
    """A compact JSON rendering of `value`, cut at `limit` characters.

    `ABSENT` (from `at`) renders as `<absent>`. A bare None cannot say whether the key was
    missing or held `null` (`x.get(k)` returns None for both), so it renders as
    `<absent or null>`; call sites that know use `at(x, k)` and get the exact text.
    """
    if value is None:
        return "<absent or null>"
    return render(value, limit)


def diff_paths(a: Any, b: Any, path: Path = ()) -> Iterator[tuple[Path, Any, Any]]:
    """`harness.diff.diff_paths` with the catalogue's equality (a `null` key counts as absent);
    the values yielded are the real ones (`ABSENT` for a missing key or item)."""
    return _diff_paths(a, b, path, null_is_absent=True)


def first_diffs(a: Any, b: Any, limit: int = 3) -> list[tuple[Path, Any, Any]]:
    out: list[tuple[Path, Any, Any]] = []
    for d in diff_paths(a, b):
        out.append(d)
        if len(out) >= limit:
            break
    return out


def describe_diffs(a: Any, b: Any, *, left: str, right: str, limit: int = 3) -> str:
    """`path: left=… right=…; …` for the first `limit` differences (empty when equal); absent,
    `null`, `[]` and `{}` render apart."""
    parts = [
        f"{fmt_path(p)}: {left}={render(va, 80)} {right}={render(vb, 80)}"
        for p, va, vb in first_diffs(a, b, limit)
    ]
    return "; ".join(parts)


def fresh(value: Any) -> Any:
    """A copy of a JSON value for a probe call: new dicts and lists all the way down.

    Much cheaper than `copy.deepcopy` (no memo, scalars shared): probes hand the target a fresh
    copy per call, so a reducer that mutates its inputs cannot corrupt the recorded step.

    Inside `fresh_copies()` (one step's checks) the copies of one value are cached by its
    identity: the value is pickled once and each later copy is an unpickling, about twice as
    fast as the walk below, and the probes of one step copy the same `before` a dozen times.
    The scope is one step's checks, during which the recorded values are never changed (every
    reducer call gets a copy), so a cached pickle cannot go stale.
    """
    cache = _COPIES.get()
    if cache is not None and type(value) in (dict, list):
        hit = cache.pickled.get(id(value))
        if hit is not None and hit[0] is value:
            COPY_STATS.from_cache += 1
            return pickle.loads(hit[1])
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # not plain data (e.g. an object an adversarial step produced)
            return _copy(value)
        cache.pickled[id(value)] = (value, data)
        COPY_STATS.pickled += 1
        return pickle.loads(data)
    COPY_STATS.walked += 1
    return _copy(value)


def _copy(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return {k: _copy(v) for k, v in value.items()}
    if t is list:
        return [_copy(v) for v in value]
    return value


@dataclass
class _Copies:
    pickled: dict[int, tuple[Any, bytes]] = field(default_factory=dict)


@dataclass
class CopyStats:
    """How probe copies were made over the process's life (report.json `extra.probeCopies`)."""

    walked: int = 0  # copied by the walk (outside a step's checks)
    pickled: int = 0  # first copy of a value in a step: pickled (and unpickled)
    from_cache: int = 0  # later copies of the same value in the same step: unpickled

    def to_json(self) -> dict[str, int]:
        return {"walked": self.walked, "firstInStep": self.pickled, "fromCache": self.from_cache}


COPY_STATS = CopyStats()
_COPIES: ContextVar[_Copies | None] = ContextVar("ahp_fuzz_fresh_copies", default=None)


@contextlib.contextmanager
def fresh_copies() -> Iterator[None]:
    """Cache `fresh` copies by identity for the duration (one step's checks; see `fresh`)."""
    token = _COPIES.set(_Copies())
    try:
        yield
    finally:
        _COPIES.reset(token)


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else `[]` (states after adversarial steps may hold anything)."""
    return value if isinstance(value, list) else []


def hkey(value: Any) -> Any:
    """A hashable key for any JSON value (ids in malformed states may be objects or lists)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return canonical(value)


def canonical(value: Any) -> str:
    """A stable text key for a JSON value (for multiset comparisons): `1` and `1.0` are one number
    (as in `json_equal`; how a target writes its numbers is a cause of its own, `int-as-float`)."""
    return json.dumps(as_integers(normalize(value)), sort_keys=True, separators=(",", ":"))
