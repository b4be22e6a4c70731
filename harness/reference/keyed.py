"""Keyed-list helpers shared by reducers: first-match lookup, upsert in place, removal.

Ids and URIs compare by exact string equality (REDUCERS.md §1, §8.7). Every helper returns a new
list only when something changed, so callers can test identity for "no-op".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def index_of(items: Sequence[Any], key: str, value: Any) -> int:
    """Index of the first dict whose `key` equals `value`, or -1."""
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get(key) == value:
            return i
    return -1


def upsert(items: Sequence[Any], key: str, entry: dict[str, Any]) -> list[Any]:
    """Replace the first entry with the same `key` wholesale, in place; else append."""
    i = index_of(items, key, entry.get(key))
    if i < 0:
        return [*items, entry]
    return [*items[:i], entry, *items[i + 1 :]]


def remove_first(items: Sequence[Any], key: str, value: Any) -> Sequence[Any]:
    """Remove the first entry whose `key` equals `value`; the same object when none matches."""
    i = index_of(items, key, value)
    if i < 0:
        return items
    return [*items[:i], *items[i + 1 :]]


def update_first(
    items: Sequence[Any], key: str, value: Any, change: Callable[[dict[str, Any]], dict[str, Any]]
) -> Sequence[Any]:
    """Replace the first entry whose `key` equals `value` by `change(entry)`; same object if none."""
    i = index_of(items, key, value)
    if i < 0:
        return items
    return [*items[:i], change(items[i]), *items[i + 1 :]]


def without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of `d` without `keys` (the same object when none is present)."""
    if not any(k in d for k in keys):
        return d
    return {k: v for k, v in d.items() if k not in keys}


def set_or_clear(d: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`d` with `key` := `value`, or with `key` removed when `value` is None (cleared = absent)."""
    if value is None:
        return without(d, key)
    return {**d, key: value}


def field_handler(key: str, source: str | None = None, *, clear_if_absent: bool = False) -> Callable[..., Any]:
    """A reducer handler `state[key] := action[source or key]`.

    With `clear_if_absent`, an omitted (or null) payload value removes the key instead (the
    same state object when it was already absent).
    """
    src = source or key

    def handler(state: dict[str, Any], action: Mapping[str, Any], ctx: Any) -> dict[str, Any]:
        if clear_if_absent:
            return set_or_clear(state, key, action.get(src))
        return {**state, key: action[src]}

    handler.__name__ = f"set_{key}"
    return handler
