"""No two modules in `harness/` import each other, directly or around a longer circle (issue 16
item 10: the `bridge/` circle checks ↔ fixture ↔ fuzz). A circle means neither module can be
read, tested or moved without the other; the shared piece belongs in a module of its own.

Imports are read from every module's AST like tests/test_layering.py: imports inside functions
count the same as top-level ones (a lazy import only hides a circle); imports under
`if TYPE_CHECKING:` do not (they never run). An import names the deepest module it reaches
(`from .a import b` is `pkg.a.b` when that is a module, else `pkg.a`); the packages it passes
through are not edges (a package `__init__` re-exporting its modules is not a circle).
"""

from __future__ import annotations

import ast
from pathlib import Path

from strategies.schema import cyclic_components

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "harness"

#: Circles that exist outside what issue 16 item 10 restructured, each listed so a new one still
#: fails the test: the modules of one circle, sorted. Remove an entry when its circle is undone.
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skip |= {id(n) for n in ast.walk(child)}
    return skip


def imports_of(module: str, path: Path, known: set[str], *, typing_too: bool = False) -> set[str]:
    """The modules of `known` that `module` imports (see the module docstring); `typing_too`:
    imports under `if TYPE_CHECKING:` count as well."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = set() if typing_too else _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                names.add(sub if sub in known else target)
    found = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def cycles(root: Path = HARNESS, *, typing_too: bool = False) -> list[tuple[str, ...]]:
    """Every circle of imports among `root`'s modules, as its sorted modules (one per strongly
    connected component of the import graph: `strategies.schema.cyclic_components`, which finds
    circles of `$ref`s the same way)."""
    mods = _modules(root)
    known = set(mods)
    graph = {m: sorted(imports_of(m, p, known, typing_too=typing_too)) for m, p in mods.items()}
    return sorted(tuple(c) for c in cyclic_components(graph))


def test_no_module_imports_around_a_circle() -> None:
    found = set(cycles())
    new = sorted(found - KNOWN_CYCLES)
    assert not new, "import circles:\n  " + "\n  ".join(" ↔ ".join(c) for c in new)
    gone = sorted(KNOWN_CYCLES - found)
    assert not gone, f"known circles undone (remove them from KNOWN_CYCLES): {gone}"


def test_the_live_rooms_import_one_way_even_for_their_types() -> None:
    """Issue 23: `live/client`, `run`, `pool` and `wild` imported each other (two of the edges only
    for type hints); what the client and the probes need of their run is `live/roles`."""
    live = [c for c in cycles(typing_too=True) if any(m.startswith("harness.live.") for m in c)]
    assert live == [], live


def test_the_engine_imports_one_way_even_for_its_types() -> None:
    """Issue 32: `engine/chunks.py` imported `RunConfig` from `engine/run.py` for its type hints,
    which imports chunks (and `fast.py` typed its config `Any` to avoid the same circle); the
    config and the summary now live in `engine/config.py`."""
    engine = [c for c in cycles(typing_too=True) if any(m.startswith("harness.engine.") for m in c)]
    assert engine == [], engine


def test_the_check_finds_a_crafted_circle_even_behind_a_lazy_import(tmp_path: Path) -> None:
    pkg = tmp_path / "harness" / "bridge"
    pkg.mkdir(parents=True)
    (tmp_path / "harness" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "checks.py").write_text("from .fixture import FileFixture\n")
    (pkg / "fixture.py").write_text("def hints():\n    from .fuzz import BASELINE\n    return BASELINE\n")
    (pkg / "fuzz.py").write_text("from .checks import run\nfrom harness.bridge import fixture\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .alone import X\n")
    (pkg / "alone.py").write_text("from .typed import Y\n")
    assert cycles(tmp_path / "harness") == [("harness.bridge.checks", "harness.bridge.fixture", "harness.bridge.fuzz")]
    assert ("harness.bridge.alone", "harness.bridge.typed") in cycles(tmp_path / "harness", typing_too=True)
