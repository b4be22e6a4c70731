"""The one structural JSON diff of the harness, and exact rendering of JSON values.

Absent, `null`, `[]` and `{}` are four different things and every message shows them apart:
a missing key renders as `<absent>`, JSON null as `null`. `diff_paths` walks two JSON values
and yields each differing leaf as `(path, left, right)`, with `ABSENT` standing for a missing
key or list item. Two comparisons share it:

* key-presence-sensitive (the default): absent differs from `null` (fixtures, replay diffs);
* `null_is_absent=True`: a `null`-valued key counts as absent (the invariants' equality,
  REDUCERS.md §1) — but the values shown are still the real ones.

Numbers compare by value (`1` equals `1.0`); `true` is not `1`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

Path = tuple[str | int, ...]


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


#: Stands for a missing dict key or list item.
ABSENT: Final = _Absent()


def at(container: Any, key: str | int) -> Any:
    """`container[key]`, or `ABSENT` when the key (index) is not there."""
    if isinstance(key, int):
        return container[key] if isinstance(container, list) and -len(container) <= key < len(container) else ABSENT
    return container.get(key, ABSENT) if isinstance(container, dict) else ABSENT


def render(value: Any, limit: int = 160) -> str:
    """Compact JSON for `value` (`<absent>` for ABSENT, `null` for None), cut at `limit`."""
    if value is ABSENT:
        return "<absent>"
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def diff_paths(a: Any, b: Any, path: Path = (), *, null_is_absent: bool = False) -> Iterator[tuple[Path, Any, Any]]:
    """Yield `(path, a_value, b_value)` for each place the two JSON values differ, depth first
    (object keys sorted, list items by index; extra items each at their own index)."""
    if a is b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            va, vb = a.get(k, ABSENT), b.get(k, ABSENT)
            if null_is_absent and (va is None or va is ABSENT) and (vb is None or vb is ABSENT):
                continue
            yield from diff_paths(va, vb, (*path, k), null_is_absent=null_is_absent)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            yield from diff_paths(at(a, i), at(b, i), (*path, i), null_is_absent=null_is_absent)
        return
    if a is ABSENT or b is ABSENT or _kind(a) != _kind(b) or a != b:
        yield path, a, b


def fmt_path(path: Path, root: str = "$") -> str:
    """`('turns', 0, 'id')` -> `$.turns[0].id` (with `root=""`: `turns[0].id`, `<root>` if empty)."""
    out = root
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "<root>"


def shape(path: Path) -> str:
    """A path with its list indices generalised: `turns[].responseParts[].toolCall`."""
    return fmt_path(tuple(-1 if isinstance(s, int) else s for s in path), "").replace("[-1]", "[]")


def json_diff(expected: Any, actual: Any, path: str = "$", *, limit: int = 20) -> list[str]:
    """Lines `path: expected X, got Y` for each differing leaf (key presence matters), at most
    `limit` of them."""
    out: list[str] = []
    for p, e, a in diff_paths(expected, actual):
        if len(out) >= limit:
            break
        out.append(f"{fmt_path(p, path)}: expected {render(e)}, got {render(a)}")
    return out
