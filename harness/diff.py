"""Readable structural diffs of JSON values, by path (`$.turns[0].state`)."""

from __future__ import annotations

import json
from typing import Any

_ABSENT = object()


def _show(v: Any) -> str:
    if v is _ABSENT:
        return "(absent)"
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def json_diff(expected: Any, actual: Any, path: str = "$", *, limit: int = 20) -> list[str]:
    """Lines `path: expected X, got Y` for each differing leaf, at most `limit` of them.

    Key presence matters: an absent key differs from `null` and from `[]`.
    """
    out: list[str] = []
    _walk(expected, actual, path, out, limit)
    return out


def _walk(e: Any, a: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(e, dict) and isinstance(a, dict):
        for k in list(e) + [k for k in a if k not in e]:
            _walk(e.get(k, _ABSENT), a.get(k, _ABSENT), f"{path}.{k}", out, limit)
        return
    if isinstance(e, list) and isinstance(a, list):
        if len(e) != len(a):
            out.append(f"{path}: expected {len(e)} items, got {len(a)}")
        for i in range(min(len(e), len(a))):
            _walk(e[i], a[i], f"{path}[{i}]", out, limit)
        for i in range(min(len(e), len(a)), max(len(e), len(a))):
            if len(out) >= limit:
                return
            ev = e[i] if i < len(e) else _ABSENT
            av = a[i] if i < len(a) else _ABSENT
            out.append(f"{path}[{i}]: expected {_show(ev)}, got {_show(av)}")
        return
    if type(e) is not type(a) or e != a:
        out.append(f"{path}: expected {_show(e)}, got {_show(a)}")
