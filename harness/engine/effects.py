"""What a step did in the reference model, as a small signature: the behaviour it exercised.

Reach by action type is not reach by behaviour. `session/workingDirectoryReplaced` that swaps an
entry in place and one that removes the entry because its replacement sits earlier are one type,
two reducer branches; `chat/pendingMessageRemoved` of one message of two and of the last one
likewise. A bug lives in one branch, and a run that sent the type a thousand times may never
have taken it (issue 32: `replace_moves_primary` in 1 seed of 5, `queue_emptied_to_list` in 3).

`effect(before, after)` names the branch from the outside, without instrumenting the reducers:
the structure of the change (a key added or removed, a list's length from → to in buckets
`0 1 2 3 4+`, its first entry another one, a list reordered, a scalar rewritten, each at a path
whose list indices are `*`) and the states (`STATE_KEYS`) that appeared or disappeared in what
changed (a tool call's `status` `running` gone, `cancelled` come). Reducers share what they
leave alone (`{**state, …}`), so the walk stops at every subtree that is the same object before
and after: its cost is the size of the change, not of the state.

A value the model stores other than the action sent it under the same key (a turn's end with
`duration: -5` stored as `0`, a status recomputed where the action wrote one) is a branch of its
own too — a clamp, a normalisation, a guard that overrides — and one a target skips: it is named
`path≠` beside the change's structure (`_sent`, the action's top-level scalars).

The signature is a tuple of sorted tokens; `()` is a step that changed nothing.
"""

from __future__ import annotations

import re
from typing import Any, Final

#: Paths deeper than this end in `~` (changed somewhere below): a signature names a branch, not
#: a leaf of a payload.
DEPTH: Final = 5
#: The keys whose values are a state machine's states: a tool call's `status` (`running` →
#: `cancelled`), a turn's or an input's `state`, how a call was `confirmed` and why it ended
#: (`reason`). Their transitions are the reducers' branches; every other string is data (`kind`
#: of a message part, a text that reads `hello`), whose variety would make every step new.
STATE_KEYS: Final = frozenset({"status", "state", "confirmed", "reason"})
#: A value that reads like an enum member (`running`, `pending-confirmation`, `auth-required`).
_ENUM: Final = re.compile(r"[a-z][a-z-]{1,30}\Z")
#: Enum tokens per signature at most.
ENUM_TOKENS: Final = 6


def effect(before: Any, after: Any, action: Any = None) -> tuple[str, ...]:
    """The signature of the change `before` → `after` (sorted tokens; `()` when nothing changed).

    A subtree the reducer took from `action` as it is (a message, a replaced file list) is data,
    not a branch: it is named once (`path<`), not walked — else every payload would be a new
    effect of its own."""
    if before is after:
        return ()
    tokens: set[str] = set()
    came: set[tuple[str, str]] = set()
    went: set[tuple[str, str]] = set()
    _diff(before, after, "", 0, tokens, came, went, _nodes(action, set()), _sent(action))
    enums = sorted(f"{k}→{v}" for k, v in came - went) + sorted(f"{k}←{v}" for k, v in went - came)
    return tuple(sorted(tokens)) + tuple(enums[:ENUM_TOKENS])


def _sent(action: Any) -> dict[str, Any]:
    """The action's top-level scalars by key (not its `type`): the values a reducer may store."""
    if not isinstance(action, dict):
        return {}
    return {k: v for k, v in action.items()
            if k != "type" and isinstance(v, str | int | float) and not isinstance(v, bool)}


def _overridden(value: Any, path: str, sent: dict[str, Any], tokens: set[str]) -> None:
    """`path≠` for each scalar of a new object (`value`, one level) that the action sent under
    the same key with another value: the reducer stored something else (a clamp)."""
    if not sent or not isinstance(value, dict):
        return
    for k, v in value.items():
        if _stored_otherwise(k, v, sent):
            tokens.add(f"{path}/{k}≠")


def _stored_otherwise(key: str, value: Any, sent: dict[str, Any]) -> bool:
    """A scalar `value` stored under `key` where the action sent another one under that key."""
    return key in sent and isinstance(value, str | int | float) and value != sent[key]


def _nodes(value: Any, out: set[int]) -> set[int]:
    """The ids of every object and array in `value`."""
    if isinstance(value, dict):
        out.add(id(value))
        for v in value.values():
            _nodes(v, out)
    elif isinstance(value, list):
        out.add(id(value))
        for v in value:
            _nodes(v, out)
    return out


def _diff(a: Any, b: Any, path: str, depth: int, tokens: set[str], came: set[tuple[str, str]],
          went: set[tuple[str, str]], given: set[int], sent: dict[str, Any]) -> None:
    if a is b:
        return
    if id(b) in given:
        tokens.add(f"{path}<")  # the action's own value, stored as it is
        return
    if depth >= DEPTH:
        if a != b:
            tokens.add(f"{path}~")
            _enums(a, _key(path), went, 0)
            _enums(b, _key(path), came, 0)
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k, v in b.items():
            p = f"{path}/{k}"
            if k not in a:
                tokens.add(f"{p}+")
                if id(v) not in given:
                    _enums(v, k, came, 0)
                    _overridden(v, p, sent, tokens)
            else:
                _diff(a[k], v, p, depth + 1, tokens, came, went, given, sent)
        for k, v in a.items():
            if k not in b:
                tokens.add(f"{path}/{k}-")
                _enums(v, k, went, 0)
        return
    if isinstance(a, list) and isinstance(b, list):
        _diff_list(a, b, path, depth, tokens, came, went, given, sent)
        return
    if a != b or type(a) is not type(b):
        tokens.add(f"{path}=")
        k = _key(path)
        if _stored_otherwise(k, b, sent):
            tokens.add(f"{path}≠")
        if isinstance(a, str):
            _enums(a, k, went, 0)
        if isinstance(b, str):
            _enums(b, k, came, 0)


def _diff_list(a: list[Any], b: list[Any], path: str, depth: int, tokens: set[str],
               came: set[tuple[str, str]], went: set[tuple[str, str]], given: set[int],
               sent: dict[str, Any]) -> None:
    if len(a) != len(b):
        tokens.add(f"{path}[{_count(len(a))}→{_count(len(b))}]")
        if a and b and a[0] != b[0]:
            tokens.add(f"{path}[head]")  # the first entry is another one now (a primary, the next queued)
        kept = {id(x) for x in a}
        for x in b:
            if id(x) not in kept and id(x) not in given:
                _enums(x, _key(path), came, 0)
                _overridden(x, f"{path}/*", sent, tokens)
        now = {id(x) for x in b}
        for x in a:
            if id(x) not in now:
                _enums(x, _key(path), went, 0)
        return
    if {id(x) for x in a} == {id(x) for x in b} and any(x is not y for x, y in zip(a, b, strict=True)):
        tokens.add(f"{path}[reordered]")
        return
    for x, y in zip(a, b, strict=True):
        _diff(x, y, f"{path}/*", depth + 1, tokens, came, went, given, sent)


def _count(n: int) -> str:
    """A list's length as AFL buckets hit counts: 0, 1, 2 and 3 exactly, then `4+` (an emptied
    list, a last entry removed, a third directory are where the edge cases live)."""
    return str(n) if n < 4 else "4+"


def _key(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _enums(value: Any, key: str, out: set[tuple[str, str]], depth: int) -> None:
    """The (key, value) pairs of enum-like strings in `value`, down to a bounded depth."""
    if isinstance(value, str):
        if key in STATE_KEYS and _ENUM.match(value):
            out.add((key, value))
    elif depth < 6:
        if isinstance(value, dict):
            for k, v in value.items():
                _enums(v, k, out, depth + 1)
        elif isinstance(value, list):
            for v in value:
                _enums(v, key, out, depth + 1)


def near_miss(action: Any, ids: dict[str, list[Any]]) -> tuple[str, ...]:
    """A no-op's signature: which of `action`'s top-level id fields name something the state
    holds under that name (`ids`: `engine.mutation.ids_by_key` of the state) — the newest one
    (`key=`), an older one (`key∈`) or nothing (`key∉`).

    A step that changed nothing is one effect, `()`, however it missed; yet the misses are
    branches too: a `chat/delta` naming an older turn while a part of its `partId` streams in
    the active one must stay a no-op, and a reducer that matches the part alone appends to it
    (issue 32: one typed client's bug, found when that near miss came by chance). The signature
    starts with `noop` so it never equals a change's."""
    if not isinstance(action, dict):
        return ("noop",)
    tokens = ["noop"]
    for key, value in action.items():
        if key == "type" or not isinstance(value, str) or (key not in ids and not _idish(key)):
            continue
        held = ids.get(key) or ()
        tokens.append(f"{key}=" if held and held[-1] == value else f"{key}∈" if value in held else f"{key}∉")
    return tuple(tokens)


def _idish(key: str) -> bool:
    return key == "id" or key.endswith(("Id", "Uri"))
