"""`open_target` is a registry the concrete targets fill (issue 16 item 10): `targets/base.py`
imports no concrete target; each target module registers its spellings; the package imports them."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from harness.targets import base
from harness.targets.base import SPELLINGS, open_target, register_target

TARGETS = Path(__file__).resolve().parent.parent / "harness" / "targets"
CONCRETE = {"reference", "adapter", "typescript", "live", "reference_adapter"}


def test_base_imports_no_concrete_target() -> None:
    tree = ast.parse((TARGETS / "base.py").read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            imported |= {mod.rpartition(".")[2]} | ({a.name for a in node.names} if node.level and not mod else set())
        elif isinstance(node, ast.Import):
            imported |= {a.name.rpartition(".")[2] for a in node.names}
    assert not imported & CONCRETE, f"targets/base.py imports {sorted(imported & CONCRETE)}"


def test_every_concrete_target_registered_its_spellings_in_order() -> None:
    prefixes = [p for s in SPELLINGS for p in s.prefixes]
    assert prefixes == ["reference", "adapter:", "ts:", "js:", "ws://", "wss://", "host-cmd:", "host:"]
    assert {s.opener.__module__ for s in SPELLINGS} == {
        "harness.targets.reference", "harness.targets.adapter", "harness.targets.typescript", "harness.targets.live",
    }


def test_a_registered_spelling_opens_and_is_listed_when_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new target needs only `register_target`: `open_target` finds it and the error lists it."""
    monkeypatch.setattr(base, "SPELLINGS", list(SPELLINGS))
    opened: list[tuple[str, dict[str, Any]]] = []

    def opener(text: str, **kw: Any) -> Any:
        opened.append((text, kw))
        return "a target"

    register_target(("toy:",), ("toy:<anything>",), opener)
    assert open_target(" toy:x ", timeout_s=2.0, flag=1) == "a target"
    assert opened[0][0] == "toy:x" and opened[0][1]["timeout_s"] == 2.0 and opened[0][1]["flag"] == 1
    with pytest.raises(ValueError, match=r"host:embedded\[\?defect=NAME\] or toy:<anything>\)"):
        open_target("nosuch:x")
    assert "toy:" not in [p for s in SPELLINGS for p in s.prefixes]  # the real registry is untouched
