"""One validator per schema definition, compiled from the definitions it reaches only.

The spec's schema documents keep every type under `$defs` (the 0.7.0 actions schema: 271
definitions, 268 kB). A validator for one definition needs the definitions its `$ref`s reach,
not the whole document: compiling `{"$ref": "#/$defs/X", "$defs": <all>}` converts and indexes
the whole document every time (≈ 12 ms each, 1.3 s for the 86 action types), where the
definitions `X` reaches (8 on average) take well under 1 ms. The validator is the same: every
reference it can follow is there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema_rs

_PREFIX = "#/$defs/"


def reachable(defs: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """`names` and every definition their local references reach, transitively (in `defs` order)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen.add(n)
        todo.extend(_refs(defs[n]))
    return {k: v for k, v in defs.items() if k in seen}


def refs_of(node: Any) -> set[str]:
    """The definitions `node`'s local references name (`#/$defs/X`, or a pointer into X)."""
    return set(_refs(node))


def _refs(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            ref = x.get("$ref")
            if isinstance(ref, str) and ref.startswith(_PREFIX):
                yield ref[len(_PREFIX):].split("/", 1)[0]  # a pointer into a definition: its definition
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)


def validator_for(defs: Mapping[str, Any], name: str, *, dialect: str | None = None) -> Any:
    """A `jsonschema_rs` validator of the definition `name` of `defs` (`dialect`: the document's
    `$schema`, when it names one)."""
    schema: dict[str, Any] = {"$ref": f"{_PREFIX}{name}", "$defs": reachable(defs, name)}
    if dialect is not None:
        schema = {"$schema": dialect, **schema}
    return jsonschema_rs.validator_for(schema)
