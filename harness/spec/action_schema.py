"""The spec's action schema as per-type validators, and the required-field facts it implies.

`ActionSchema.from_spec(spec)` compiles one `jsonschema_rs` validator per action type, once,
from the schema with the INV-007 corrections applied (`schema_patches`; an action type with several variants — `chat/toolCallConfirmed` approved/denied — validates
against any of them). `problem(action)` says why an action is schema-invalid, or None.

JSON `null` is read as absent first (the fixture rule, REDUCERS.md §7): a payload whose
optional key is `null` is the same action as one without it.

`required_paths(schema)` derives, from the schema, the required fields of each action payload
down to one level of nesting (`request.id`, `turns[].message`): the facts the reference model's
own structural check (`harness.reference.payloads.REQUIRED`) must agree with. A test keeps the
two equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from .schema_patches import apply_inv007_patches
from .specdir import SpecDir, strip_nulls


@dataclass(frozen=True)
class ActionSchema:
    """Validators of the action payloads of one spec folder, by action type."""

    source: Path
    validators: Mapping[str, tuple[Any, ...]]

    @classmethod
    def from_spec(cls, spec: SpecDir) -> ActionSchema | None:
        """The action schema of `spec`, or None when the folder has no actions schema."""
        path = spec.schema_path("actions")
        if not path.is_file():
            return None
        return _load(str(path))

    @property
    def types(self) -> frozenset[str]:
        return frozenset(self.validators)

    def problem(self, action: Any) -> str | None:
        """Why `action` is not a schema-valid payload of its type (None: valid, or a type the
        schema does not list — unknown types are judged by the reducer, as no-ops)."""
        if not isinstance(action, Mapping):
            return f"an action must be an object, not {type(action).__name__}"
        t = action.get("type")
        if not isinstance(t, str):
            return "an action's type must be a string"
        variants = self.validators.get(t)
        if variants is None:
            return None
        payload = strip_nulls(dict(action))
        for v in variants:
            if v.is_valid(payload):
                return None
        errors = [e for e in variants[0].iter_errors(payload)]
        first = errors[0] if errors else None
        if first is None:
            return f"{t}: not valid against the schema"
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.instance_path)
        return f"{t}: {where or '$'}: {first.message}"


@cache
def _load(path: str) -> ActionSchema:
    import json

    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    defs = doc.get("$defs", {})
    # The schema as INV-007 reads it (REDUCERS.md §11 item 11), as everywhere else a produced or
    # generated value is validated: the published one rejects legitimate payloads (0.6.0's
    # `turns[].usage` required — upstream fixture 233 omits it —, combined SessionStatus bits).
    apply_inv007_patches(defs)
    by_type: dict[str, list[Any]] = {}
    for name, d in defs.items():
        t = _type_const(d)
        if t is not None:
            by_type.setdefault(t, []).append(
                jsonschema_rs.validator_for({"$ref": f"#/$defs/{name}", "$defs": defs})
            )
    return ActionSchema(Path(path), {t: tuple(v) for t, v in by_type.items()})


def _type_const(d: Any) -> str | None:
    if not isinstance(d, dict):
        return None
    prop = d.get("properties", {}).get("type")
    t = prop.get("const") if isinstance(prop, dict) else None
    return t if isinstance(t, str) and "/" in t else None


# -- required fields, derived -------------------------------------------------------------------


def required_paths(doc: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Action type -> required payload paths, one level deep, from an actions schema document.

    `x` is required at the top; `x.y` means "when `x` is present, it has `y`"; `x[].y` means
    "every item of the list `x` has `y`". A union (oneOf/anyOf) contributes the keys all its
    variants require; an action type with several variants the keys all of them require.
    """
    defs = doc.get("$defs", {})

    def resolve(x: Any) -> Any:
        while isinstance(x, dict) and "$ref" in x and set(x) <= {"$ref", "description"}:
            x = defs[x["$ref"].rsplit("/", 1)[-1]]
        return x

    def required_of(x: Any) -> set[str] | None:
        x = resolve(x)
        if not isinstance(x, dict):
            return None
        union = x.get("oneOf", x.get("anyOf"))
        if union is not None:
            found = [required_of(v) for v in union]
            if not found or any(r is None for r in found):
                return None  # some variant is not an object (e.g. string | {markdown})
            return set.intersection(*found)  # type: ignore[arg-type]
        if x.get("type") == "object" or "properties" in x:
            return set(x.get("required", []))
        return None

    variants: dict[str, list[dict[str, Any]]] = {}
    for d in defs.values():
        t = _type_const(d)
        if t is not None:
            variants.setdefault(t, []).append(d)
    out: dict[str, frozenset[str]] = {}
    for t, ds in variants.items():
        paths: set[str] = set.intersection(*(set(d.get("required", [])) for d in ds)) - {"type"}
        for d in ds:
            for name, prop in d.get("properties", {}).items():
                if name == "type":
                    continue
                x = resolve(prop)
                if isinstance(x, dict) and x.get("type") == "array":
                    nested, fmt = required_of(x.get("items", {})), f"{name}[].{{}}"
                else:
                    nested, fmt = required_of(prop), f"{name}.{{}}"
                paths |= {fmt.format(f) for f in nested or ()}
        out[t] = frozenset(paths)
    return out
