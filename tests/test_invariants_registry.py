"""The registry itself: shape of every entry, coverage of the catalogue and of the tests,
and how `check_step` runs checks."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from harness.invariants import REGISTRY, InvariantCheckError, Step, check_step, for_kind
from harness.invariants.base import SCOPES, SEVERITIES
from harness.invariants.dispatchability import model_self_check
from harness.invariants.registry import applicable
from harness.reference import Model
from harness.spec.versions import CLIENT_DISPATCHABLE, KINDS
from tests import (
    test_invariants_1_0,
    test_invariants_channels,
    test_invariants_chat,
    test_invariants_clock,
    test_invariants_contradictions,
    test_invariants_core,
    test_invariants_published_schema,
    test_invariants_session,
    test_invariants_status,
)
from tests.invariant_cases import chat, session, step

CASE_MODULES = (
    test_invariants_1_0,
    test_invariants_core,
    test_invariants_status,
    test_invariants_chat,
    test_invariants_session,
    test_invariants_channels,
    test_invariants_clock,
    test_invariants_published_schema,
    test_invariants_contradictions,
)
CHECKABLE = sorted(i for i, inv in REGISTRY.items() if inv.checkable)


def _ids(attr: str) -> set[str]:
    return {case.id for module in CASE_MODULES for case in getattr(module, attr)}


@pytest.mark.parametrize("inv_id", CHECKABLE)
def test_every_checkable_invariant_has_a_counterexample(inv_id: str) -> None:
    assert inv_id in _ids("FAILING"), f"{inv_id} has no crafted counterexample"


@pytest.mark.parametrize("inv_id", CHECKABLE)
def test_every_checkable_invariant_has_a_passing_step(inv_id: str) -> None:
    assert inv_id in _ids("PASSING"), f"{inv_id} has no correct step that passes"


def test_cases_name_registered_invariants() -> None:
    assert (_ids("FAILING") | _ids("PASSING")) <= set(REGISTRY)


def test_the_whole_catalogue_is_registered() -> None:
    catalogued = {inv.catalogue_id for inv in REGISTRY.values()}
    missing = {f"INV-{n:03d}" for n in range(1, 54)} - catalogued
    assert not missing, f"INVARIANTS.md entries without a registry entry: {sorted(missing)}"


@pytest.mark.parametrize("inv_id", list(REGISTRY))
def test_entry_is_well_formed(inv_id: str) -> None:
    inv = REGISTRY[inv_id]
    assert inv.id == inv_id
    assert re.match(r"^INV-(\d{3}|[XDH]\d{2})(\.[\w-]+)?$", inv_id)  # H: a host in the wild (issue 16)
    assert inv.severity in SEVERITIES and inv.scope in SCOPES
    assert inv.title and inv.source and len(inv.statement) > 20
    assert inv.kinds and inv.kinds <= set(KINDS)
    assert (inv.severity == "known") == (inv.known_issue is not None)
    if inv.check is None:
        assert inv.note, "an entry that is not checked must say why"
        assert not inv.probe
    if inv.scope != "reducer":
        assert inv.check is None, "live and wire properties are not checkable per reducer step yet"
    if inv.actions is not None:
        assert inv.check is not None and inv.actions


def test_known_entries_point_at_the_upstream_issue_list() -> None:
    for inv in REGISTRY.values():
        if inv.severity == "known":
            assert "REDUCERS.md §11" in (inv.known_issue or "")


def test_variants_belong_to_a_catalogue_entry() -> None:
    for inv_id, inv in REGISTRY.items():
        if "." in inv_id:
            assert inv.catalogue_id in REGISTRY


def test_for_kind_includes_catalogue_only_entries() -> None:
    ids = {inv.id for inv in for_kind("chat")}
    assert {"INV-016", "INV-022", "INV-042", "INV-D01"} <= ids
    assert "INV-050" not in ids


def test_applicable_filters_by_action_type_and_version() -> None:
    ids = {inv.id for inv in applicable("chat", "chat/delta")}
    assert "INV-015" in ids and "INV-016" not in ids and "INV-010" in ids
    assert "INV-029" in {
        inv.id for inv in applicable("chat", "chat/workingDirectorySet", (0, 7, 0))
    }
    assert "INV-029" not in {
        inv.id for inv in applicable("chat", "chat/workingDirectorySet", (0, 6, 0))
    }


def test_probes_run_only_with_a_reducer() -> None:
    s = step("session", session(), {"type": "session/titleChanged", "title": "x"})
    probe_ids = {i for i, inv in REGISTRY.items() if inv.probe}

    def mutating(kind: str, state: dict, action: dict, now_ms: int) -> dict:
        state["title"] = "scribbled"
        return Model().reduce(kind, state, action, now_ms)

    assert not {v.invariant for v in check_step(s)} & probe_ids
    assert not {v.invariant for v in check_step(s, reducer=mutating, probes=False)} & probe_ids
    assert "INV-001" in {v.invariant for v in check_step(s, reducer=mutating)}


def test_only_restricts_the_run() -> None:
    s = step("chat", chat(), {"type": "future/newAction"})
    bad = replace(s, after={**s.after, "title": "x"})
    assert {v.invariant for v in check_step(bad)} == {"INV-004"}
    assert check_step(bad, only={"INV-010"}) == []


class _Exploding(dict):  # type: ignore[type-arg]
    """A state whose reads fail: stands in for a bug inside a check."""

    def get(self, *args: object) -> object:
        raise RuntimeError("boom")


def test_a_check_that_raises_is_a_harness_bug() -> None:
    broken = Step("session", _Exploding(), {"type": "session/titleChanged"}, session(), 0)
    with pytest.raises(InvariantCheckError, match="harness bug"):
        check_step(broken)


def test_a_non_object_target_state_is_reported_once() -> None:
    s = step("session", session(), {"type": "session/titleChanged", "title": "x"})
    found = check_step(replace(s, after=[]))  # type: ignore[arg-type]
    assert [(v.invariant, v.severity) for v in found] == [("INV-007", "violation")]
    assert "list" in found[0].message


def test_a_non_object_action_is_an_unknown_action() -> None:
    s = Step("chat", chat(), ["not", "an", "action"], chat(), 0)  # type: ignore[arg-type]
    assert check_step(s) == []
    tampered = replace(s, after={**s.after, "title": "x"})
    assert {v.invariant for v in check_step(tampered)} == {"INV-004"}


def test_dispatchability_table_matches_the_spec_counts() -> None:
    assert model_self_check() == []


def test_dispatchability_self_check_reports_a_wrong_table() -> None:
    wrong = (CLIENT_DISPATCHABLE | {"session/defaultChatChanged", "session/bogus"}) - {
        "terminal/input"
    }
    found = model_self_check(dispatchable=wrong)
    text = " | ".join(v.message for v in found)
    assert {v.invariant for v in found} == {"INV-053"}
    assert "session/defaultChatChanged is server-only" in text
    assert "session/bogus" in text
    assert "0.6.0 terminal: (types, client-dispatchable) is (11, 4), want (11, 5)" in text
