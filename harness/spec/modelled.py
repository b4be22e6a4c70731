"""Whether the state schema models a key at its place: the fidelity class of typed decoders.

Upstream's round-trip corpus (KNOWN-FIDELITY-GAPS.md, group B) makes it canonical that a client
with a runtime decoder (Go, Rust, Swift, Kotlin) drops the wire keys its type does not model: a
typed struct has no field for them. So a target that loses such a key is not a divergence to
report per key; it is one fidelity note for the whole run (harness/causes/signing.py).

`modelled(kind, state, path)` walks the state schema of a spec folder (`schema/state.schema.json`)
along `path` through `state` (a state of `kind`, holding the key), choosing among the variants of
a union by the constants the value carries (`kind: "markdown"`, `state: "skipped"`), and says
whether the last key is declared there:

* True — a property of the object (of any variant that fits), a value of a map
  (`additionalProperties` with a schema) or inside a free-form object (no properties declared);
* False — the object declares its properties and this key is none of them (nor of a fitting
  variant): a typed decoder has nowhere to keep it;
* None — the schema cannot be read along the path (no spec folder, an unknown kind, a `$ref` it
  cannot resolve): nothing is concluded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from .versions import STATE_DEFINITIONS

_MAX_NODES: Final = 64  # union variants followed at one level, at most


class StateSchema:
    """The `$defs` of one state schema document, read for `modelled`."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs

    def modelled(self, kind: str, state: Any, path: tuple[Any, ...]) -> bool | None:
        root = STATE_DEFINITIONS.get(kind)
        if root is None or root not in self.defs or not path:
            return None
        nodes: list[Any] = [{"$ref": f"#/$defs/{root}"}]
        value = state
        for i, step in enumerate(path):
            objects = self._expand(nodes, value)
            if objects is None:
                return None
            last = i == len(path) - 1
            nxt: list[Any] = []
            for node in objects:
                if isinstance(step, int):
                    items = node.get("items")
                    if isinstance(items, dict):
                        nxt.append(items)
                    elif node.get("type") == "array" and "items" not in node:
                        return True  # a free-form list
                    continue
                props = node.get("properties")
                extra = node.get("additionalProperties")
                if isinstance(props, dict) and step in props:
                    nxt.append(props[step])
                elif isinstance(extra, dict):
                    nxt.append(extra)
                elif extra is True or (not props and extra is None and node.get("type", "object") == "object"):
                    return True  # a free-form object keeps any key
            if not nxt:
                return False if last and not isinstance(step, int) else None
            if last:
                return True
            nodes = nxt
            value = _at(value, step)
        return None

    def _expand(self, nodes: list[Any], value: Any) -> list[dict[str, Any]] | None:
        """The object schemas `nodes` stand for (refs resolved, unions narrowed by `value`)."""
        out: list[dict[str, Any]] = []
        todo = list(nodes)
        while todo:
            if len(out) + len(todo) > _MAX_NODES:
                return None
            node = todo.pop()
            if not isinstance(node, dict):
                continue
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = self.defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/$defs/") else None
                if target is None:
                    return None
                todo.append(target)
                continue
            union = node.get("oneOf") or node.get("anyOf")
            if isinstance(union, list):
                fitting = [v for v in union if self._fits(v, value)]
                todo.extend(fitting or union)
                continue
            parts = node.get("allOf")
            if isinstance(parts, list):
                merged: dict[str, Any] = {"properties": {}}
                for part in self._expand(parts, value) or []:
                    merged["properties"].update(part.get("properties") or {})
                    if "additionalProperties" in part:
                        merged["additionalProperties"] = part["additionalProperties"]
                out.append(merged)
                continue
            out.append(node)
        return out

    def _fits(self, variant: Any, value: Any) -> bool:
        """`value` carries every constant `variant` declares (a discriminator); a variant of
        another JSON type does not fit."""
        objects = self._expand([variant], None) if isinstance(variant, dict) and "$ref" in variant else [variant]
        for node in objects or []:
            if not isinstance(node, dict):
                continue
            t = node.get("type")
            if t == "object" and not isinstance(value, dict):
                return False
            if t in ("string", "number", "integer", "boolean", "array") and isinstance(value, dict):
                return False
            for k, prop in (node.get("properties") or {}).items():
                allowed = _constants(prop)
                if allowed is not None and isinstance(value, dict) and value.get(k) not in allowed:
                    return False
        return True


def _constants(prop: Any) -> list[Any] | None:
    """The values a discriminating property allows (`const`, `enum`, a union of consts), or None."""
    if not isinstance(prop, dict):
        return None
    if "const" in prop:
        return [prop["const"]]
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    union = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(union, list) and union and all(isinstance(u, dict) and "const" in u for u in union):
        return [u["const"] for u in union]
    return None


def _at(value: Any, step: Any) -> Any:
    if isinstance(step, int):
        return value[step] if isinstance(value, list) and 0 <= step < len(value) else None
    return value.get(step) if isinstance(value, dict) else None


@lru_cache(maxsize=8)
def state_schema(spec_path: str) -> StateSchema | None:
    """The state schema of the spec folder at `spec_path` (None: it has none, or it is not JSON)."""
    path = Path(spec_path) / "schema" / "state.schema.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    defs = doc.get("$defs") if isinstance(doc, dict) else None
    return StateSchema(defs) if isinstance(defs, dict) else None
