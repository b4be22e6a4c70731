"""The spec's action schema as per-type validators, and the required-field facts it implies.

`ActionSchema.from_spec(spec)` compiles one `jsonschema_rs` validator per action type, once,
from the schema with the INV-007 corrections applied (`schema_patches`; an action type with several variants — `chat/toolCallConfirmed` approved/denied — validates
against any of them). `problem(action)` says why an action is schema-invalid, or None.

JSON `null` is read as absent first (the fixture rule, REDUCERS.md §7): a payload whose
optional key is `null` is the same action as one without it — for the model. The valid lane asks
`wire_problem`, which reads the payload as sent: a `null` the schema does not allow makes the
step a probe (harness/spec/interop.py).

`required_paths(schema)` derives, from the schema, the required fields of each action payload
down to one level of nesting (`request.id`, `turns[].message`): the facts the reference model's
own structural check (`harness.reference.payloads.REQUIRED`) must agree with. A test keeps the
two equal. `payload_shapes(schema)` derives the same at every depth, with the union variants
and the constants that tell them apart: what `harness.spec.payload_shapes` states without a
spec folder (a test keeps those equal too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .refs import validator_for
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

    def __call__(self, action: Any) -> str | None:
        """The model's payload check (`Model(schema=…)`): `problem`."""
        return self.problem(action)

    def wire_problem(self, action: Any) -> str | None:
        """Why `action`, as sent (`null` is not read as absent here), is not schema-valid: a
        `null` the schema does not allow makes a probe of a step (harness/spec/interop.py).
        None: valid, or a type the schema does not list."""
        return self.problem(action, nulls_absent=False)

    def problem(self, action: Any, *, nulls_absent: bool = True) -> str | None:
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
        payload = strip_nulls(dict(action)) if nulls_absent else action
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
            by_type.setdefault(t, []).append(validator_for(defs, name))
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


# -- nested required keys and variants, derived ---------------------------------------------------


def payload_shapes(doc: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The structure facts of an actions schema document, at every depth: what
    `harness.spec.payload_shapes` states by hand (`SHAPES`, `ACTIONS`), derived for comparison.

    Returns (shapes, action type -> shape name). A shape is a `Shape` (required keys, constant
    keys of a union member, nested fields, union members, map values); a field or a list of a
    shape is spelled `Name`, `Name[]`, `Name[N]` (at least N items) or `Name{}` (an object's
    values). Only what can make a payload invalid by a key's *absence* is kept: shapes without a
    required key, a constant, a minimum list length or such a shape below them are dropped, and
    so is a union any object satisfies. Types are not recorded (generators emit the right
    types; the trace shrinker only deletes keys and list items).
    """
    from .payload_shapes import Shape

    defs = doc.get("$defs", {})
    shapes: dict[str, Shape] = {}
    done: dict[str, str | None] = {}
    on_stack: set[str] = set()

    def ref_of(node: Any, name: str, member: bool = False) -> str | None:
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target = node["$ref"].rsplit("/", 1)[-1]
            if target in done:
                return done[target]
            if target in on_stack:
                return target  # recursive: assume it has facts (pruned below if not)
            on_stack.add(target)
            done[target] = ref_of(defs.get(target), target, member)
            on_stack.discard(target)
            return done[target]
        if not isinstance(node, dict):
            return None
        union = node.get("oneOf", node.get("anyOf"))
        if isinstance(union, list):
            variants: list[str] = []
            for i, m in enumerate(union):
                r = _resolve_ref(m, defs)
                if not _is_object(r):
                    continue  # a string | {...} union: only objects are judged
                v = ref_of(m, f"{name}|{i}", member=True)
                if v is None:
                    return None  # a member any object satisfies: the union says nothing
                variants.append(v)
            if not variants:
                return None
            shapes[name] = Shape(variants=tuple(variants))
            return name
        if node.get("type") == "array" or "items" in node:
            item = ref_of(node.get("items"), f"{name}[]")
            least = node.get("minItems", 0)
            if item is None and not least:
                return None
            return f"{item or ''}[{least or ''}]"
        if not _is_object(node):
            return None
        props = node.get("properties", {})
        fields = {}
        for k in sorted(props):
            c = ref_of(props[k], f"{name}.{k}")
            if c is not None:
                fields[k] = c
        consts = {k: c for k, c in ((k, _const(p)) for k, p in sorted(props.items())) if member and c is not None}
        extra = node.get("additionalProperties")
        values = ref_of(extra, f"{name}{{}}") if isinstance(extra, dict) and extra else None
        required = tuple(sorted(node.get("required", [])))
        if not (required or fields or consts or values):
            return None
        shapes[name] = Shape(required, fields, consts, (), values)
        return name

    actions: dict[str, str] = {}
    for name, d in defs.items():
        t = _type_const(d)
        if t is None:
            continue
        r = ref_of({"$ref": f"#/$defs/{name}"}, name)
        if r is not None:
            actions[t] = r
            s = shapes[r]  # the action's own `type` is how it was found: not a fact to check
            shapes[r] = s._replace(required=tuple(k for k in s.required if k != "type"))
    # A union of the variants of one type (chat/toolCallConfirmed approved / denied).
    by_type: dict[str, list[str]] = {}
    for name, d in defs.items():
        t = _type_const(d)
        if t is not None and done.get(name) is not None:
            by_type.setdefault(t, []).append(name)
    for t, names in by_type.items():
        if len(names) > 1:
            union = "|".join(sorted(names))
            for n in names:  # each variant's `type` const is its discriminator too
                s = shapes[n]
                shapes[n] = s._replace(consts={**s.consts, **_member_consts(defs[n])})
            shapes[union] = Shape(variants=tuple(sorted(names)))
            actions[t] = union
    return _reachable(_prune(shapes), actions), actions


def _prune(shapes: dict[str, Any]) -> dict[str, Any]:
    """Drop references to shapes that turned out to have no facts (recursive placeholders)."""
    from .payload_shapes import shape_name

    def keep(ref: str | None) -> bool:
        return ref is not None and (shape_name(ref) in shapes or (shape_name(ref) == "" and ref != "[]"))

    out = {}
    for n, s in shapes.items():
        out[n] = s._replace(
            fields={k: r for k, r in s.fields.items() if keep(r)},
            variants=s.variants,
            values=s.values if keep(s.values) else None,
        )
    return out


def _member_consts(d: Mapping[str, Any]) -> dict[str, Any]:
    props = d.get("properties", {})
    return {k: c for k, c in ((k, _const(p)) for k, p in sorted(props.items())) if k != "type" and c is not None}


def _const(p: Any) -> Any:
    """A property's constant; a tuple of the allowed values for `enum` or a union of constants
    (`{"oneOf": [{"const": "number"}, {"const": "integer"}]}`); None when it has none."""
    if not isinstance(p, dict):
        return None
    if "const" in p:
        return p["const"]
    if isinstance(p.get("enum"), list):
        return tuple(p["enum"])
    union = p.get("oneOf", p.get("anyOf"))
    if isinstance(union, list) and union and all(isinstance(m, dict) and "const" in m for m in union):
        return tuple(m["const"] for m in union)
    return None


def _resolve_ref(node: Any, defs: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1])
        seen += 1
    return node


def _is_object(node: Any) -> bool:
    return isinstance(node, dict) and (
        node.get("type") == "object" or "properties" in node or "oneOf" in node or "anyOf" in node
    )


def _reachable(shapes: dict[str, Any], actions: Mapping[str, str]) -> dict[str, Any]:
    """The shapes reachable from the action shapes, with references to dropped shapes removed."""
    from .payload_shapes import shape_name

    out: dict[str, Any] = {}
    todo = list(actions.values())
    while todo:
        n = todo.pop()
        if n in out or n not in shapes:
            continue
        out[n] = shapes[n]
        s = shapes[n]
        todo += [shape_name(r) for r in (*s.fields.values(), *s.variants, s.values or "")]
    return out
