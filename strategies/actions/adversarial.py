"""Adversarial actions: unknown and near-miss types (INV-004), foreign-family actions (INV-005),
missing and extra fields, wrong JSON types (at the top and one level in), actions from a later
version (INV-046), oversized strings, deep nesting, tool results with extra keys that override
tool-call fields (INV-051)."""

from __future__ import annotations

import functools
from typing import Any, Final

from hypothesis import strategies as st

from harness.reference import DEFAULT_PROFILE, Profile
from harness.reference.payloads import required_for
from harness.spec.versions import (
    ACTION_INTRODUCED_IN,
    KIND_INTRODUCED_IN,
    KIND_PREFIX,
    format_version,
    is_known_to,
    kinds_of,
    parse_version,
)

from .._common import Json, json_scalars, short_text
from .dispatch import action_of_type, valid_actions
from .required import ANY_TYPED_FIELDS, REQUIRED_FIELDS

FUTURE_TYPES: Final = (
    "future/newAction",
    "chat/nonExistentAction",
    "session/nonExistentAction",
    "canvas/updated",
    "automation/runStarted",
)


def unknown_action_types(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial (INV-004): a type no version defines, with plausible payload fields."""
    prefix = KIND_PREFIX[kind] if kind else ""
    names = st.one_of(
        st.sampled_from(FUTURE_TYPES),
        st.sampled_from(("nonExistentAction", "x", "", "turnStarted2")).map(lambda n: prefix + n),
        st.text(max_size=12).map(lambda n: prefix + n),
    ).filter(lambda t: t not in ACTION_INTRODUCED_IN)
    return st.builds(
        lambda t, extra: {"type": t, **extra},
        names,
        st.dictionaries(st.sampled_from(("turnId", "id", "data")), short_text(4), max_size=2),
    )


def near_miss_types(action_type: str) -> list[str]:
    """Spellings close to `action_type` that are not action types (case, slashes, spaces,
    another family's prefix)."""
    family, _, name = action_type.partition("/")
    others = [p.rstrip("/") for p in KIND_PREFIX.values() if p.rstrip("/") != family]
    candidates = [
        action_type.upper(),
        family + "/" + name[:1].upper() + name[1:],
        family.capitalize() + "/" + name,
        action_type + "/",
        "/" + action_type,
        action_type + " ",
        " " + action_type,
        family + "//" + name,
        family + "." + name,
        family + ":" + name,
        *(o + "/" + name for o in others),
        action_type + "\u200b",
        action_type.replace("/", "\u2215"),
    ]
    return [
        c for c in dict.fromkeys(candidates) if c not in ACTION_INTRODUCED_IN and c != action_type
    ]


def near_miss_type_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial (INV-004): a valid action whose `type` is a near miss of a real type."""
    return valid_actions(kind, version).flatmap(
        lambda a: st.sampled_from(near_miss_types(a["type"])).map(lambda t: {**a, "type": t})
    )


def foreign_family_actions(kind: str, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial (INV-005): a valid action of another family (one `version` has) handed to
    `kind`'s reducer."""
    others = [k for k in kinds_of(version) if k != kind]
    return st.sampled_from(others).flatmap(lambda k: valid_actions(k, version))


def missing_field_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one required field removed (`type` itself when the
    type has no other required field). `missing_required` tells which one is missing."""
    return valid_actions(kind, version).flatmap(_drop_top)


def _drop_top(a: Json) -> st.SearchStrategy[Json]:
    req = REQUIRED_FIELDS.get(a["type"], ())
    names = [k for k in req if k in a] or ["type"]
    return st.sampled_from(names).map(lambda k: {n: v for n, v in a.items() if n != k})


EXTRA_FIELD_NAMES: Final = (
    "unknownField",
    "x-extra",
    "__proto__",
    "constructor",
    "Type",
    "turnID",
    "channel",
    "serverSeq",
)


def extra_field_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial: a valid action plus keys no action declares (the schemas allow them; a
    reducer must ignore them — INV-051 is the place where the reference reducer does not)."""
    return st.builds(
        lambda a, extra: {**a, **{k: v for k, v in extra.items() if k not in a}},
        valid_actions(kind, version),
        st.dictionaries(st.sampled_from(EXTRA_FIELD_NAMES), json_scalars(), min_size=1, max_size=3),
    ).filter(lambda a: any(k in a for k in EXTRA_FIELD_NAMES))


def _wrong_values(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return ["true", 1, None, []]
    if isinstance(value, (int, float)):
        return [str(value), None, [], {"n": value}, True]
    if isinstance(value, str):
        return [123, None, [], {"s": value}, True]
    if isinstance(value, list):
        return [{}, "x", 1, None, True]
    if isinstance(value, dict):
        return [[], "x", 1, None, True]
    return ["x", 1]


def wrong_type_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one payload field replaced by a value of another JSON
    type (string <-> number, object <-> array, boolean -> string, null)."""
    return valid_actions(kind, version).flatmap(_swap_top)


def _swap_top(a: Json) -> st.SearchStrategy[Json]:
    names = [k for k in a if k != "type" and (a["type"], k) not in ANY_TYPED_FIELDS]
    if not names:
        return st.just({**a, "type": 42})
    return st.sampled_from(names).flatmap(
        lambda k: st.sampled_from(_wrong_values(a[k])).map(lambda v: {**a, k: v})
    )


#: A place one level inside an action: (field, index of a list item or None, member or None).
_Inner = tuple[str, int | None, str | None]


def _inner_places(a: Json, version: str) -> tuple[list[_Inner], list[_Inner]]:
    """Where `a` holds what its schema requires one level in (`payloads.required_for`: `x.y`
    and `x[].y`): the required members present (`x.y`, `x[i].y`) and the list items (`x[i]`)
    that must be objects."""
    members: list[_Inner] = []
    items: list[_Inner] = []
    for path in required_for(parse_version(version)).get(a.get("type"), ()):  # type: ignore[arg-type]
        head, _, sub = path.partition(".")
        if not sub:
            continue
        key = head.removesuffix("[]")
        value = a.get(key)
        if head.endswith("[]") and isinstance(value, list):
            for i, item in enumerate(value):
                if (key, i, None) not in items:
                    items.append((key, i, None))
                if isinstance(item, dict) and sub in item:
                    members.append((key, i, sub))
        elif not head.endswith("[]") and isinstance(value, dict) and sub in value:
            members.append((key, None, sub))
    return members, items


def _at_inner(a: Json, place: _Inner, new: Any = None, *, drop: bool = False) -> Json:
    """`a` with the value at `place` replaced by `new` (or its member dropped)."""
    key, i, sub = place
    parent = a[key]
    target = parent[i] if i is not None else parent
    if sub is not None:
        target = {k: v for k, v in target.items() if k != sub} if drop else {**target, sub: new}
    else:
        target = new
    if i is None:
        return {**a, key: target}
    return {**a, key: [*parent[:i], target, *parent[i + 1 :]]}


def missing_inner_field_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with a field its schema requires one level in removed (an
    agent's `provider`, a file's `edit`, a lifecycle's `status`) — what a typed decoder reads
    without a check. An action with none drops a required top-level field instead."""

    def drop(a: Json) -> st.SearchStrategy[Json]:
        members, _ = _inner_places(a, version)
        if not members:
            return _drop_top(a)
        return st.sampled_from(members).map(lambda place: _at_inner(a, place, drop=True))

    return valid_actions(kind, version).flatmap(drop)


def wrong_inner_type_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with a value one level in of another JSON type — a list item
    that must be an object given as `null`, a number, a string, a list, or a required member
    of an object swapped like `wrong_type_actions` swaps a top-level field. An action with
    nothing required one level in swaps a top-level field instead."""

    def swap(a: Json) -> st.SearchStrategy[Json]:
        members, items = _inner_places(a, version)
        places = members + items
        if not places:
            return _swap_top(a)

        def wrong(place: _Inner) -> list[Any]:
            key, i, sub = place
            if sub is None:
                return [None, 7, "x", [], True]
            holder = a[key][i] if i is not None else a[key]
            return _wrong_values(holder[sub])

        return st.sampled_from(places).flatmap(
            lambda place: st.sampled_from(wrong(place)).map(lambda v: _at_inner(a, place, v))
        )

    return valid_actions(kind, version).flatmap(swap)


def later_version_actions(version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial (INV-046): a valid action of a type introduced *after* `version`."""
    later = sorted(t for t in ACTION_INTRODUCED_IN if not is_known_to(t, version))
    if not later:
        raise ValueError(f"no known action type is newer than {version}")
    return st.sampled_from(later).flatmap(lambda t: action_of_type(t))


STRING_FIELDS: Final = (
    "title",
    "data",
    "content",
    "directory",
    "activity",
    "clientId",
    "id",
    "turnId",
    "chat",
)


def oversized_string_actions(
    kind: str | None = None, min_size: int = 65_536, max_size: int = 1_048_576, version: str = "0.7.0"
) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one string field (or a new `_meta` string) made
    64 KiB–1 MiB long."""

    def grow(a: Json, n: int, ch: str) -> Json:
        target = next((k for k in STRING_FIELDS if isinstance(a.get(k), str)), None)
        big = ch * n
        if target is None:
            return {**a, "_meta": {"blob": big}}
        return {**a, target: big}

    return st.builds(
        grow,
        valid_actions(kind, version),
        st.integers(min_size, max_size),
        st.sampled_from(("a", "é", "🙂", "\x00")),
    )


def nested_value(depth: int, leaf: Any = 0) -> Any:
    """A JSON value nested `depth` levels deep (alternating objects and arrays)."""
    v = leaf
    for i in range(depth):
        v = {"n": v} if i % 2 else [v]
    return v


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value (scalars are 0); iterative, safe for deep values."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            best = max(best, d + 1)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            best = max(best, d + 1)
            stack.extend((x, d + 1) for x in v)
    return best


def deeply_nested_actions(
    kind: str | None = None, min_depth: int = 64, max_depth: int = 400, version: str = "0.7.0"
) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action carrying a value nested `min_depth..max_depth` deep in
    `_meta` (which every schema allows to hold any JSON)."""
    return st.builds(
        lambda a, d: {**a, "_meta": {"deep": nested_value(d)}},
        valid_actions(kind, version),
        st.integers(min_depth, max_depth),
    )


RESULT_OVERRIDE_KEYS: Final = (
    "status",
    "toolCallId",
    "toolName",
    "confirmed",
    "invocationMessage",
    "contributor",
)


def tool_results_with_extra_keys() -> st.SearchStrategy[Json]:
    """Adversarial (INV-051): `chat/toolCallComplete` whose schema-valid `result` carries keys
    that overwrite tool-call fields when spread (`status`, `toolCallId`, …)."""
    extra = st.dictionaries(
        st.sampled_from(RESULT_OVERRIDE_KEYS),
        st.sampled_from(("running", "tc-other", "pending-confirmation", "hijacked")),
        min_size=1,
        max_size=3,
    )
    return st.builds(
        lambda a, e: {**a, "result": {**a["result"], **e}},
        action_of_type("chat/toolCallComplete"),
        extra,
    )


@functools.lru_cache(maxsize=64)
def adversarial_actions(kind: str, profile: Profile = DEFAULT_PROFILE) -> st.SearchStrategy[Json]:
    """Any adversarial action for a reducer of `kind` (the union of the tactics above)."""
    later = sorted(t for t in ACTION_INTRODUCED_IN if not is_known_to(t, profile.version))
    # A kind newer than the profile: its own actions are all too new; draw them at its version.
    v = format_version(max(profile.version, KIND_INTRODUCED_IN.get(kind, profile.version)))
    tactics = [
        unknown_action_types(kind),
        near_miss_type_actions(kind, v),
        foreign_family_actions(kind, v),
        missing_field_actions(kind, v),
        extra_field_actions(kind, v),
        wrong_type_actions(kind, v),
        missing_inner_field_actions(kind, v),
        wrong_inner_type_actions(kind, v),
        oversized_string_actions(kind, min_size=4_096, max_size=65_536, version=v),
        deeply_nested_actions(kind, min_depth=16, max_depth=128, version=v),
    ]
    if later:
        tactics.append(st.sampled_from(sorted(later)).flatmap(lambda t: action_of_type(t)))
    if kind == "chat":
        tactics.append(tool_results_with_extra_keys())
    return st.one_of(tactics)
