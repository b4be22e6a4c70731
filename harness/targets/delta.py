"""Fast-form change lists: compute them by identity, apply them copy-on-write.

A change is `{"path": [k0, k1, …], "value": v}` (set) or `{"path": […], "delete": true}`.
Path elements are object keys (strings) and array indices (integers). Changes apply in
order, each to the result of the ones before:

* set on an object key adds or replaces that key; set on an array index `i < len` replaces
  the element, `i == len` appends; the empty path replaces the whole state;
* delete on an object key removes the key (it must be present); delete on an array index
  removes that element and shifts the rest down.

`diff(old, new)` produces such a list by comparing old and new *by identity*: a reducer that
shares unchanged subtrees (as the reference and upstream reducers do) makes that walk touch
only the changed path. `apply_changes(state, changes)` never mutates `state`: it copies the
containers along each changed path and shares everything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Change = dict[str, Any]
PathElem = str | int

_MISSING = object()


class ChangeError(ValueError):
    """A change list that does not apply to the state (a protocol error of the adapter)."""


# -- diff -------------------------------------------------------------------------------------


def diff(old: Any, new: Any) -> list[Change]:
    """Changes that turn `old` into `new`, found by identity (equal scalars count as same)."""
    out: list[Change] = []
    _diff(old, new, [], out)
    return out


def _same_scalar(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _diff(old: Any, new: Any, path: list[PathElem], out: list[Change]) -> None:
    if old is new:
        return
    to, tn = type(old), type(new)
    if to is dict and tn is dict:
        _diff_dict(old, new, path, out)
    elif to is list and tn is list:
        _diff_list(old, new, path, out)
    elif to is tn and to is not dict and to is not list and old == new:
        return
    else:
        out.append({"path": path, "value": new})


def _collapse(sub: list[Change], size: int) -> bool:
    """Send the whole container instead when the child diff is no smaller than it."""
    return len(sub) > 1 and len(sub) >= size


def _diff_dict(
    old: dict[str, Any], new: dict[str, Any], path: list[PathElem], out: list[Change]
) -> None:
    sub: list[Change] = []
    added = 0
    for k, v in new.items():
        ov = old.get(k, _MISSING)
        if ov is v:
            continue
        if ov is _MISSING:
            added += 1
            sub.append({"path": [*path, k], "value": v})
        else:
            _diff(ov, v, [*path, k], sub)
    if len(old) > len(new) - added:  # some old key is gone
        for k in old:
            if k not in new:
                sub.append({"path": [*path, k], "delete": True})
    if path and _collapse(sub, len(new)):
        out.append({"path": path, "value": new})
    else:
        out.extend(sub)


def _diff_list(old: list[Any], new: list[Any], path: list[PathElem], out: list[Change]) -> None:
    n_old, n_new = len(old), len(new)
    if n_new < n_old:
        out.append({"path": path, "value": new})
        return
    sub: list[Change] = []
    for i in range(n_old):
        a, b = old[i], new[i]
        if a is not b and not _same_scalar(a, b):
            _diff(a, b, [*path, i], sub)
    for i in range(n_old, n_new):
        sub.append({"path": [*path, i], "value": new[i]})
    if path and _collapse(sub, n_new):
        out.append({"path": path, "value": new})
    else:
        out.extend(sub)


# -- apply ------------------------------------------------------------------------------------


def apply_changes(state: Any, changes: Sequence[Change]) -> Any:
    """The state after `changes`, sharing every untouched subtree with `state` (not mutated).

    Raises ChangeError when a change is malformed or does not fit the state.
    """
    if not changes:
        return state
    if len(changes) == 1:  # the common case: one path, copied level by level
        path, delete = _checked(changes[0], 0)
        if not path:
            return changes[0]["value"]
        return _set_in(state, path, changes[0], delete)
    fresh: set[int] = set()  # ids of containers created here (safe to mutate in place)
    root = state
    for n, change in enumerate(changes):
        path, delete = _checked(change, n)
        if not path:
            root = change["value"]
            continue
        root = _owned(root, fresh, n, [])
        parent = root
        for depth, key in enumerate(path[:-1]):
            child = _get(parent, key, n, path[: depth + 1])
            if id(child) not in fresh:
                child = _owned(child, fresh, n, path[: depth + 1])
                parent[key] = child
            parent = child
        _assign(parent, path[-1], change, delete, n, path)
    return root


def _checked(change: Any, n: int) -> tuple[list[Any], bool]:
    if type(change) is not dict:
        raise ChangeError(f"change #{n} is not an object: {change!r:.200}")
    path = change.get("path")
    if type(path) is not list:
        raise ChangeError(f"change #{n} has no path list: {change!r:.200}")
    delete = change.get("delete", False) is True
    if delete:
        if not path:
            raise ChangeError(f"change #{n} deletes the whole state")
    elif "value" not in change:
        raise ChangeError(f"change #{n} has neither value nor delete: {change!r:.200}")
    return path, delete


def _set_in(root: Any, path: list[Any], change: Change, delete: bool) -> Any:
    """A copy of `root` with one change applied: copies the containers along `path` only."""
    chain = []
    node = root
    last = len(path) - 1
    for i in range(last):
        key = path[i]
        t = type(node)
        if t is dict:
            if type(key) is not str or key not in node:
                raise ChangeError(f"change #0: no object key at {path[: i + 1]!r}")
        elif t is list:
            if type(key) is not int or not 0 <= key < len(node):
                raise ChangeError(f"change #0: no array element at {path[: i + 1]!r}")
        else:
            raise ChangeError(
                f"change #0: path {path[:i]!r} goes through a {t.__name__}, not an object or array"
            )
        chain.append(node)
        node = node[key]
    t = type(node)
    if t is not dict and t is not list:
        raise ChangeError(
            f"change #0: path {path[:last]!r} goes through a {t.__name__}, not an object or array"
        )
    new = node.copy()
    _assign(new, path[last], change, delete, 0, path)
    for i in range(last - 1, -1, -1):
        parent = chain[i].copy()
        parent[path[i]] = new
        new = parent
    return new


def _owned(container: Any, fresh: set[int], n: int, path: list[Any]) -> Any:
    if id(container) in fresh:
        return container
    t = type(container)
    if t is dict or t is list:
        copy = container.copy()
        fresh.add(id(copy))
        return copy
    raise ChangeError(
        f"change #{n}: path {path!r} goes through a {t.__name__}, not an object or array"
    )


def _get(parent: Any, key: Any, n: int, path: list[Any]) -> Any:
    if type(parent) is dict:
        if type(key) is not str or key not in parent:
            raise ChangeError(f"change #{n}: no object key at {path!r}")
        return parent[key]
    if type(key) is not int or not 0 <= key < len(parent):
        raise ChangeError(f"change #{n}: no array element at {path!r}")
    return parent[key]


def _assign(parent: Any, key: Any, change: Change, delete: bool, n: int, path: list[Any]) -> None:
    value = change.get("value")
    if type(parent) is dict:
        if type(key) is not str:
            raise ChangeError(f"change #{n}: object key {key!r} at {path!r} is not a string")
        if delete:
            if key not in parent:
                raise ChangeError(f"change #{n}: delete of absent key at {path!r}")
            del parent[key]
        else:
            parent[key] = value
    else:
        if type(key) is not int or not 0 <= key <= len(parent) or (delete and key == len(parent)):
            raise ChangeError(f"change #{n}: array index out of range at {path!r}")
        if delete:
            del parent[key]
        elif key == len(parent):
            parent.append(value)
        else:
            parent[key] = value
