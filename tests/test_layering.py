"""The import direction, enforced on every module's AST (ARCHITECTURE.md, "Imports flow one way").

* nothing under `harness/engine/` imports `harness.report` (the engine emits events; reporters
  subscribe: "the engine never imports a reporter");
* nothing outside `harness/cli/` imports `harness.cli` (the command line wires the layers; no
  layer reaches up into it). `harness/pytest_plugin.py` is a top-level wiring entry like the
  CLI: it may import any layer (the CLI included);
* nothing under `harness/corpus/` imports `harness.engine` (findings are data; replay's
  stepping lives in the engine, which imports the corpus, never the reverse);
* nothing under `harness/engine/` imports `harness.live` (the live half sits above the engine:
  it drives the engine's run loop and events, targets, invariants and the corpus; the engine
  never reaches up into it), and nothing under `harness/live/` imports `harness.report` (like
  the engine, it emits events that reporters subscribe to);
* nothing under `harness/causes/` imports `harness.engine`, `harness.live` or `harness.report`
  (the cause model sits between the engine and the invariants: it reads the invariants,
  `harness.targets.base`, `harness.spec` and `harness.diff`; the engine signs with it, never the
  reverse; `harness.cli` is out of reach as for every layer), and nothing under
  `harness/corpus/` imports `harness.causes` (findings are data: a finding holds its cause as
  JSON, the room that makes causes writes it there).

Imports inside functions count the same as top-level ones. A violation names the file, the line
and the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "harness"

#: (modules the rule applies to, forbidden import prefix, why)
RULES: list[tuple[str, str, str]] = [
    ("harness.engine", "harness.report", "the engine never imports a reporter"),
    ("harness.corpus", "harness.engine", "the corpus holds data; the engine imports it, not the reverse"),
    ("harness", "harness.cli", "only the command line wires the layers; nothing imports it"),
    ("harness.engine", "harness.live", "the live half sits above the engine; the engine never imports it"),
    ("harness.live", "harness.report", "the live machine emits events; it never imports a reporter"),
    ("harness.causes", "harness.engine", "the cause model sits below the engine; the engine signs with it"),
    ("harness.causes", "harness.live", "the cause model sits below the live half; it never imports it"),
    ("harness.causes", "harness.report", "the cause model never imports a reporter"),
    ("harness.corpus", "harness.causes", "the corpus holds causes as data; it never imports the cause model"),
]
#: Modules a rule does not apply to: the command line itself, and `harness/pytest_plugin.py`, a
#: top-level wiring entry like the CLI (it may import whatever it needs).
EXEMPT = {"harness.cli": ("harness.cli",), "harness.pytest_plugin": ("harness.cli", "harness.report")}


def _module_name(path: Path, base: Path) -> str:
    rel = path.relative_to(base).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    """Every absolute module name `path` imports (relative imports resolved), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from harness import cli` imports harness.cli too
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path = HARNESS) -> list[str]:
    """Every import breaking a rule, as `file:line: imports X (why)`; `root` is a `harness/`."""
    base = root.parent
    out = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, base)
        for line, imported in _imports(path, module):
            for scope, forbidden, why in RULES:
                if not _under(module, scope) or not _under(imported, forbidden):
                    continue
                if any(_under(module, ex) and forbidden in allowed for ex, allowed in EXEMPT.items()):
                    continue
                rel = path.relative_to(base)
                out.append(f"{rel}:{line}: imports {imported} ({why})")
    return out


def test_imports_flow_one_way() -> None:
    found = violations()
    assert not found, "import rules broken:\n  " + "\n  ".join(found)


def test_the_rule_catches_a_violation_and_names_file_and_import(tmp_path: Path) -> None:
    """The checker itself bites: a crafted engine module importing a reporter is reported."""
    fake_root = tmp_path
    engine = fake_root / "harness" / "engine"
    engine.mkdir(parents=True)
    (fake_root / "harness" / "__init__.py").write_text("")
    (engine / "__init__.py").write_text("")
    (engine / "bad.py").write_text("def f():\n    from harness.report.console import ConsoleReporter\n")
    (fake_root / "harness" / "corpus").mkdir()
    (fake_root / "harness" / "corpus" / "worse.py").write_text("from ..engine import replay\n")
    (engine / "up.py").write_text("from harness.live.machine import run_live\n")
    (fake_root / "harness" / "live").mkdir()
    (fake_root / "harness" / "live" / "out.py").write_text("from ..report import writers\n")
    (fake_root / "harness" / "causes").mkdir()
    (fake_root / "harness" / "causes" / "down.py").write_text("from harness.engine.stepper import Stepper\n")
    (fake_root / "harness" / "corpus" / "data.py").write_text("from ..causes import Cause\n")
    (fake_root / "harness" / "targets").mkdir()
    (fake_root / "harness" / "targets" / "up.py").write_text("from harness import cli\n")
    (fake_root / "harness" / "pytest_plugin.py").write_text(
        "from harness.engine import run\nfrom harness.cli._common import parse_duration\n"
    )
    found = violations(fake_root / "harness")
    assert any("harness/engine/bad.py:2: imports harness.report.console" in v for v in found), found
    assert any("harness/corpus/worse.py:1: imports harness.engine" in v for v in found), found
    assert any("harness/targets/up.py:1: imports harness.cli" in v for v in found), found
    assert any("harness/engine/up.py:1: imports harness.live.machine" in v for v in found), found
    assert any("harness/live/out.py:1: imports harness.report" in v for v in found), found
    assert any("harness/causes/down.py:1: imports harness.engine.stepper" in v for v in found), found
    assert any("harness/corpus/data.py:1: imports harness.causes" in v for v in found), found
    assert not any("pytest_plugin" in v for v in found), found  # a wiring entry may import layers


@pytest.mark.parametrize("module", ["harness.cli.run", "harness.cli.__init__"])
def test_the_cli_itself_is_exempt(module: str) -> None:
    path = ROOT / (module.replace(".", "/") + ".py")
    assert path.is_file()
    assert not [v for v in violations() if str(path.relative_to(ROOT)) in v]
