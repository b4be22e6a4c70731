"""`ahp-fuzz invariants` and the generated reference page docs/invariants.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.invariants import REGISTRY
from harness.invariants.listing import render_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs" / "invariants.md"


def test_json_lists_every_entry_with_its_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invariants", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in doc["invariants"]] == list(REGISTRY)
    assert doc["summary"]["total"] == len(REGISTRY)
    assert doc["summary"]["checkable"] == sum(inv.checkable for inv in REGISTRY.values())
    entry = next(e for e in doc["invariants"] if e["id"] == "INV-014")
    assert entry["severity"] == "known" and entry["probe"] and "§11 item 2" in entry["known_issue"]
    live = next(e for e in doc["invariants"] if e["id"] == "INV-042")
    assert live["checked"].startswith("elsewhere: the live machine") and not live["checkable"]


def test_filters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invariants", "--json", "--kind", "changeset", "--severity", "known"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in doc["invariants"]] == ["INV-050.contentChanged"]
    assert main(["invariants", "--json", "--scope", "wire"]) == 0
    assert {e["scope"] for e in json.loads(capsys.readouterr().out)["invariants"]} == {"wire"}


def test_table_is_honest_about_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invariants"]) == 0
    out = capsys.readouterr().out
    assert "INV-016" in out and "not yet checkable" in out and "every step" in out
    assert "checked per step" in out


def test_self_check_passes_on_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invariants", "--self-check"]) == 0
    assert "matches" in capsys.readouterr().out


def test_markdown_is_the_docs_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invariants", "--markdown"]) == 0
    assert capsys.readouterr().out == render_markdown()


def test_docs_page_is_up_to_date() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_markdown(), (
        "docs/invariants.md is stale: run `ahp-fuzz invariants --markdown > docs/invariants.md`"
    )
