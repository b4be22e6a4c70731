"""The reference model's own map, for the report's branch coverage: which module handles which
action types of which state kind, which modules use which, and which are on the reducer path
(reached by imports from `Model.reduce`'s dispatch and its handlers). A module off that path
(the wire codec, the collection draft's host-side helpers, the CLI's profile choice) is code no
reducer step runs, which branch coverage, measured on the model's calls, does not see."""

from __future__ import annotations

import sys
from functools import cache

_PKG = "harness.reference"


def module_label(module: str) -> str:
    return "harness/reference/__init__.py" if module == _PKG else module.replace(".", "/") + ".py"


@cache
def reference_map() -> tuple[dict[str, dict[str, list[str]]], dict[str, frozenset[str]], frozenset[str]]:
    """From the reference model itself: module label → {state kind → action types handled
    there}; module label → labels of the modules that use it; labels reached from `Model.reduce`."""
    from harness.reference.dispatch import TABLES

    handlers: dict[str, dict[str, list[str]]] = {}
    for kind, table in TABLES.items():
        for action_type, handler in table.items():
            module = getattr(handler, "__module__", None) or getattr(getattr(handler, "func", None), "__module__", "")
            if module and module.startswith(_PKG):
                handlers.setdefault(module_label(module), {}).setdefault(kind, []).append(action_type)
    uses: dict[str, set[str]] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == _PKG or name.startswith(_PKG + ".")):
            continue
        for value in vars(module).values():
            other = value.__name__ if isinstance(value, type(sys)) else getattr(value, "__module__", None)
            if isinstance(other, str) and other.startswith(_PKG) and other != name:
                uses.setdefault(module_label(name), set()).add(module_label(other))
    used_by: dict[str, set[str]] = {}
    for user, used in uses.items():
        for label in used:
            used_by.setdefault(label, set()).add(user)
    reached, todo = set(), ["harness/reference/dispatch.py", *handlers]
    while todo:
        label = todo.pop()
        if label not in reached:
            reached.add(label)
            todo += sorted(uses.get(label, ()))
    return handlers, {k: frozenset(v) for k, v in used_by.items()}, frozenset(reached)


def off_reducer_path(label: str) -> bool:
    """A module of `harness/reference` that no reducer step runs (see the module's doc)."""
    return label not in reference_map()[2]
