"""Steering schemathesis towards the fixture without changing what is valid.

A random string is almost never a file of the fixture, so a generated body gets, with some
probability, its hinted fields replaced by fixture values (its directories, spellings that
escape them, channel names; `FileFixture.hints`). The replacement is a `flatmap_body` hook on
the loaded schema, so it reaches every phase (positive, negative, stateful), and it is
*type-preserving*, which keeps negative testing truthful:

* a present field is replaced only when its current value already has the JSON type of the
  hint values (a string, a boolean; an array of those) — a field the negative generator broke
  stays broken;
* an absent field is added only when it is optional — a "missing required field" mutation
  stays missing.

So a body that violated the schema still violates it, and a valid one stays valid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

Hints = Mapping[str, Mapping[str, Sequence[Any]]]


def _typed(value: Any, array: bool, sample: Any) -> bool:
    """`value` has the JSON type of the hint values (`sample` is one of them)."""
    if array:
        return isinstance(value, list) and all(type(v) is type(sample) for v in value)
    return type(value) is type(sample)


def hinted_body(body: Any, hints: Mapping[str, Sequence[Any]], required: set[str],
                properties: set[str]) -> st.SearchStrategy[Any]:
    """A strategy of `body` with some hinted fields replaced (see the module docstring); only
    `properties` of the command are ever touched."""
    if not isinstance(body, dict) or not hints:
        return st.just(body)
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for key, values in hints.items():
        if not values:
            continue
        array = key.endswith("[]")
        name = key[:-2] if array else key
        if name not in properties:
            continue
        if name in body:
            if not _typed(body[name], array, values[0]):
                continue
        elif name in required:
            continue
        pick = st.lists(st.sampled_from(list(values)), min_size=1, max_size=3) if array else st.sampled_from(list(values))
        parts[name] = st.one_of(pick, st.none())  # None: keep (or leave out) the field
    if not parts:
        return st.just(body)

    def apply(choice: dict[str, Any]) -> Any:
        out = dict(body)
        for name, value in choice.items():
            if value is not None:
                out[name] = value
        return out

    return st.fixed_dictionaries(parts).map(apply)


def install(schema: Any, hints: Hints, document: Mapping[str, Any]) -> None:
    """Register the `flatmap_body` hook on one loaded schemathesis schema."""
    required: dict[str, set[str]] = {}
    properties: dict[str, set[str]] = {}
    for path, item in document.get("paths", {}).items():
        body_schema = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        method = path.rsplit("/", 1)[-1]
        required[method] = set(body_schema.get("required", []))
        properties[method] = set(body_schema.get("properties", {}))

    def flatmap_body(context: Any, body: Any) -> st.SearchStrategy[Any]:
        method = str(context.operation.path).rsplit("/", 1)[-1]
        return hinted_body(body, hints.get(method, {}), required.get(method, set()), properties.get(method, set()))

    schema.hook(flatmap_body)
