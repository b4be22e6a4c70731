"""Field mutations of one JSON action or state: what the fast lanes change in what they pool.

Split from `engine/fast.py` (issue 32): the `Mutator` (ids from the state, boundary numbers,
high bits and flags of a bitset, integral floats, absent ↔ null ↔ [] ↔ {}, URI spellings,
values seen elsewhere), retargeting a pooled payload to the state at hand, and the id helpers
both lanes judge a mutated action by (an id repeated inside one collection makes a probe).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any, Final, Protocol

from harness.reference.status import IS_ARCHIVED, IS_READ

from . import generation


class MutationCounts(Protocol):
    """Where a mutator counts what it did (`FastStats`, per kind of change)."""

    field_mutations: Counter[str]


URI_RETARGET: Final = 0.5  # per URI field of a retargeted action: it names a member of the state's URI sets
NEWEST: Final = 0.5  # per id field of a retargeted action: it names the newest object of that name
#: Integer edges, where typed code breaks (AFL's and libFuzzer's "interesting values"): int32 and
#: uint32 limits and their neighbours, the I-JSON limit ±(2⁵³−1) and one past it (a probe: no
#: implementation must accept it), −1, 0, 1.
BOUNDARY_NUMBERS: Final = (
    0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32 - 1, 2**32,
    2**53 - 1, -(2**53 - 1), 2**53, 2**53 + 1,
)
#: Keys whose integer is a bitset (SessionStatus, in a state, its catalog and a `chatUpdated`):
#: a mutation keeps its low bits and sets a high one. Unknown bits must survive every reducer
#: (INV-008/011); bit 31 is where int32 bit operations wrap (issue 32: the TS reducers'
#: `status & ~mask` turns it negative), bit 30 the last one they keep. The bitset is 32 bits wide
#: everywhere (JavaScript's bit operations, a Go `uint32`): a bit above 31 is no status a
#: conformant implementation must hold (the Go client refuses to decode one), so none is drawn.
BITSET_KEYS: Final = frozenset({"status"})
HIGH_BITS: Final = (1 << 31, 1 << 31, 1 << 30, 1 << 29)
#: The bitsets' own flags (IsRead 32, IsArchived 64): independent of the activity bits, so a
#: state with one flipped stays valid. A fill draws only a few initial states per arm, and a
#: behaviour that needs a flag (`chat/turnStarted` clears IsRead) is unreachable when none of
#: them has it (0.7.0 has no chat action that sets IsRead): a mutated trace flips one now and then.
FLAG_BITS: Final = (IS_READ, IS_ARCHIVED)
EMPTIES: Final = ("<absent>", None, [], {})
_ABSENT: Final = "<absent>"
#: A field emptied to `[]` / `{}`: the protocol's collections are absent or non-empty (INV-023,
#: INV-024, inputNeeded, …) and a reducer passes a payload's value through, so an action with
#: a new empty container is sent as a probe only (the schema does not say so).
EMPTY_CONTAINER: Final = "emptied to []/{}"


def uri_members(state: Any) -> list[str]:
    """The URIs a state holds as members of a set: every top-level list of strings with a `:` in
    each (a session's or a chat's `workingDirectories`)."""
    out: list[str] = []
    if not isinstance(state, dict):
        return out
    for v in state.values():
        if isinstance(v, list) and v and all(isinstance(x, str) and ":" in x for x in v):
            out.extend(v)
    return out


Path = tuple[str | int, ...]


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, value) below the root, the top-level `type` excepted."""
    if isinstance(value, dict):
        for k, v in value.items():
            if path or k != "type":
                yield (*path, k), v
                yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*path, i), v
            yield from _leaves(v, (*path, i))


def _set(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with `new` at `path` (copied along the path only); `_ABSENT` deletes."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        if not rest and new == _ABSENT:
            out.pop(head, None)  # type: ignore[call-overload]
        else:
            out[head] = _set(value[head], rest, new)  # type: ignore[index]
        return out
    items = list(value)
    if not rest and new == _ABSENT:
        del items[head]  # type: ignore[call-overload]
    else:
        items[head] = _set(items[head], rest, new)  # type: ignore[call-overload]
    return items


def _at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _empty(value: Any) -> bool:
    """`[]`, `{}`, or an object whose every value is null (absent == null)."""
    if isinstance(value, dict):
        return all(v is None for v in value.values())
    return isinstance(value, list) and not value


def _is_id_key(key: Any) -> bool:
    return isinstance(key, str) and (key == "id" or key.endswith(("Id", "Uri", "uri")) or key in _ID_KEYS)


_ID_KEYS: Final = frozenset({"resource", "directory", "session", "chat", "terminal", "target"})


def state_ids(state: Any) -> list[str]:
    """The strings a state holds under id-like keys (ids, URIs): what a mutated action names."""
    out: list[str] = []
    for path, v in _leaves(state):
        if isinstance(v, str) and path and _is_id_key(path[-1]):
            out.append(v)
    return out


def repeats_an_id(value: Any) -> bool:
    """A list in `value` holding the same id twice: objects with the same `id` / `clientId`,
    or the same string (directory sets, subsets)."""
    if isinstance(value, dict):
        return any(repeats_an_id(v) for v in value.values())
    if not isinstance(value, list):
        return False
    keys = [_item_key(v) for v in value]
    named = [k for k in keys if k is not None]
    return len(set(named)) < len(named) or any(repeats_an_id(v) for v in value)


def id_repeats(state: Any) -> int:
    """How often an object `id` repeats within the whole tree of one top-level collection of
    `state` (nested children included). An `activeX` object belongs to the collection `xs` it
    moves into (`activeTurn` to `turns`): a turn started under a finished turn's id makes two
    turns of one id when it ends (the recall run of cfaae50: a turnCancelled on such a state,
    seen as two namesakes, `duplicate-id`)."""
    total = 0
    if isinstance(state, dict):
        for key, v in state.items():
            if isinstance(v, list):
                active = state.get(_active_of(key))
                ids = list(_object_ids([*v, active] if isinstance(active, dict) else v))
                total += len(ids) - len(set(ids))
    return total


def _active_of(key: str) -> str:
    """`turns` -> `activeTurn`: the top-level object that joins the collection `key` when it ends."""
    singular = key[:-1] if key.endswith("s") else key
    return "active" + singular[:1].upper() + singular[1:]


def _object_ids(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("id"), str):
            yield value["id"]
        for v in value.values():
            yield from _object_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from _object_ids(v)


def _item_key(item: Any) -> Any:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        key = item.get("id", item.get("clientId"))
        return key if isinstance(key, str | int) else None
    return None


def ids_by_key(state: Any) -> dict[str, list[Any]]:
    """Values a state holds per id key name, also under the name an action uses for them:
    the `id` of an object under `turns` / `activeTurn` is also a `turnId`, under
    `queuedMessages` a `queuedMessageId`, under `request` a `requestId`, and so on."""
    out: dict[str, list[Any]] = {}
    _walk_ids(state, "", out)
    return out


def _walk_ids(v: Any, parent: str, out: dict[str, list[Any]]) -> None:
    # a module function, not a closure: a recursive closure is a reference cycle per call,
    # left to the cyclic collector (bench/results/live.md)
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "id" and isinstance(x, str):
                for name in _id_names(parent):
                    out.setdefault(name, []).append(x)
            elif _is_id_key(k) and isinstance(x, str):
                out.setdefault(k, []).append(x)
            else:
                _walk_ids(x, k, out)
    elif isinstance(v, list):
        for x in v:
            _walk_ids(x, parent, out)


def _family(value: str) -> str:
    """`tc12` -> `tc`, `ahp-chat:/c3` -> `ahp-chat:/c`: an id without its trailing number."""
    return value.rstrip("0123456789-_")


def _id_names(parent: str) -> tuple[str, ...]:
    base = parent[6].lower() + parent[7:] if parent.startswith("active") and len(parent) > 6 else parent
    singular = base[:-1] if base.endswith("s") else base
    # and by its last word: an action names a `responseParts` entry's id `partId`
    last = _LAST_WORD.search(singular)
    tail = (last.group(0).lower() + "Id",) if last else ()
    return tuple(dict.fromkeys(("id", f"{singular}Id", f"{base}Id", *tail)))


_LAST_WORD: Final = re.compile(r"(?<=[a-z])[A-Z][a-z]+\Z")


class Mutator:
    """Structured field mutations of one JSON action, drawn from a seeded PRNG."""

    def __init__(self, rng: random.Random, stats: MutationCounts) -> None:
        self.rng = rng
        self.stats = stats
        self.values: dict[str, list[Any]] = {}  # values seen per key name (a dictionary)

    def learn(self, value: Any) -> None:
        for path, v in _leaves(value):
            key = path[-1]
            if isinstance(key, str) and isinstance(v, str | int | float | bool) and len(repr(v)) < 200:
                seen = self.values.setdefault(key, [])
                if v not in seen and len(seen) < 32:
                    seen.append(v)

    def edge_state(self, state: Any, *, flag: bool = False) -> Any:
        """`state` with one bitset (`BITSET_KEYS`, at any depth) given a high bit (`HIGH_BITS`),
        its low bits kept — or, with `flag`, one of its flags (`FLAG_BITS`) flipped; `state`
        itself when it holds none. A valid state stays valid: unknown status bits are part of
        every state (INV-008/011), and the flags are independent of the activity."""
        found = [p for p, v in _leaves(state) if p[-1] in BITSET_KEYS and type(v) is int and v >= 0]
        if not found:
            return state
        path = self.rng.choice(found)
        if flag:
            self.stats.field_mutations["state flag flipped"] += 1
            return _set(state, path, _at(state, path) ^ self.rng.choice(FLAG_BITS))
        self.stats.field_mutations["state high bit"] += 1
        return _set(state, path, _at(state, path) | self.rng.choice(HIGH_BITS))

    def retarget(self, action: Any, state: Any, ids: dict[str, list[Any]] | None = None) -> Any:
        """`action` with each top-level id field set to a value the state holds under that
        name (the cheap analogue of a state-aware draw: a spliced or inserted action names
        what is in this state). The same JSON types: a valid action stays valid. `ids`: the
        state's `ids_by_key`, when the caller has it."""
        if not isinstance(action, dict):
            return action
        if ids is None:
            ids = ids_by_key(state)
        members: list[str] | None = None
        out = action
        for k, v in action.items():
            if not isinstance(v, str) or k == "type":
                continue
            if k in ids:
                # Same family first: ids come from small pools (m1…, t1…, tc1…, r1…), so an
                # `id` naming a message is replaced by a message id of this state.
                family = [x for x in ids[k] if isinstance(x, str) and _family(x) == _family(v)] or ids[k]
                # Half the time the last one the state holds: the newest object of its name, the
                # live one (the active turn after the history, the last call started).
                new = family[-1] if self.rng.random() < NEWEST else self.rng.choice(family)
            elif ":" in v and self.rng.random() < URI_RETARGET:
                # A URI field (`directory`, `replacement`) names a member of a URI set the state
                # holds (its working directories): a pooled replace then names two entries of
                # *this* list, the earlier-one branch included.
                if members is None:
                    members = uri_members(state)
                scheme = v.split(":", 1)[0]
                same = [x for x in members if x.split(":", 1)[0] == scheme]
                if not same:
                    continue
                new = self.rng.choice(same)
            else:
                continue
            if new != v:
                out = {**out, k: new} if out is action else out
                out[k] = new
        if out is not action:
            self.stats.field_mutations["ids retargeted"] += 1
        return out

    def miss_one(self, action: Any, ids: dict[str, list[Any]]) -> Any | None:
        """`action` (retargeted) with one of its id fields naming nothing the state holds, the
        others as they are — None unless at least two of its top-level id fields name something
        here. A reducer guards on each id (a `chat/delta` on its `turnId` *and* its `partId`):
        one right and one wrong is a branch of its own, the guard that a target drops (a typed
        client matching the part alone), and retargeting, which names what is held, never
        makes it. The missing value is the held one with a suffix: a string as before."""
        if not isinstance(action, dict):
            return None
        named = [k for k, v in action.items()
                 if k != "type" and isinstance(v, str) and ":" not in v and v in (ids.get(k) or ())]
        if len(named) < 2:
            return None
        key = self.rng.choice(named)
        self.stats.field_mutations["one id missed"] += 1
        return {**action, key: f"{action[key]}-gone"}

    def edge_number(self, action: Any) -> Any | None:
        """`action` with one top-level integer field (not a bitset) set to one of the
        `BOUNDARY_NUMBERS` — None when it has none. A reducer clamps, bounds or converts what it
        stores (a turn's end clamps a negative `duration` to 0), and a pooled payload holds the
        small positive values a draw favours: the edge is where the branch is that a target
        skips. A value the schema or I-JSON refuses is the caller's to drop (a probe)."""
        if not isinstance(action, dict):
            return None
        numeric = [k for k, v in action.items() if type(v) is int and k not in BITSET_KEYS]
        if not numeric:
            return None
        key = self.rng.choice(numeric)
        new = self.rng.choice([n for n in BOUNDARY_NUMBERS if n != action[key]])
        self.stats.field_mutations["edge number"] += 1
        return {**action, key: new}

    def mutate(self, action: Any, state: Any) -> tuple[Any, str | None]:
        """`action` with one field changed, and the kind of change (None: unchanged)."""
        leaves = list(_leaves(action))
        if not leaves:
            return action, None
        path, value = self.rng.choice(leaves)
        op, new = self._new_value(path, value, state)
        if op is None:
            return action, None
        out = _set(action, path, new)
        if (new == _ABSENT or new is None) and len(path) > 1 and _empty(_at(out, path[:-1])):
            op = EMPTY_CONTAINER  # the last entry removed: the container is empty now
        self.stats.field_mutations[op] += 1
        return out, op

    def _new_value(self, path: Path, value: Any, state: Any) -> tuple[str | None, Any]:
        rng, key = self.rng, path[-1]
        roll = rng.random()
        if isinstance(value, str) and _is_id_key(key) and roll < 0.45:
            ids = state_ids(state)
            if ids:
                return "id from state", rng.choice(ids)
        if isinstance(value, str) and ":" in value and roll < 0.6:
            spelling = generation.uri_spelling(value, rng.randrange(64), rng.randrange(8))
            if spelling is not None:
                return "uri spelling", spelling
        if isinstance(value, int | float) and not isinstance(value, bool) and roll < 0.7:
            if isinstance(value, int) and rng.random() < 0.3:
                return "integral float", float(value)
            if type(value) is int and key in BITSET_KEYS and value >= 0:
                return "high bit", value | rng.choice(HIGH_BITS)
            return "boundary number", rng.choice(BOUNDARY_NUMBERS)
        seen = self.values.get(key) if isinstance(key, str) else None
        if seen and roll < 0.85:
            return "seen value", rng.choice(seen)
        empty = rng.choice(EMPTIES)
        if isinstance(key, int) and empty == _ABSENT:
            return "list item removed", _ABSENT
        if empty == _ABSENT or empty is None:
            return "absent/null", empty
        return EMPTY_CONTAINER, empty
