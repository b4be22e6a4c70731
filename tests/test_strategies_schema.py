"""Schema lint, INV-007 patches, validation and schema-derived strategies."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from harness.spec.schema_patches import INV007_PATCHES, apply_inv007_patches
from harness.spec.specdir import SpecDir
from harness.spec.versions import STATE_DEFINITIONS, action_types
from strategies.actions import REQUIRED_FIELDS
from strategies.schema import (
    HEAVY_DEFINITIONS,
    SchemaProblem,
    SchemaSet,
    lint,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _doc(defs: dict[str, Any], draft: str = DRAFT) -> dict[str, Any]:
    return {"$schema": draft, "$defs": defs}


# --- lint on synthetic schemas (no spec directory needed) ---------------------------------------


def test_lint_repairs_a_dangling_union_member() -> None:
    docs = {
        "actions": _doc(
            {"A": {"type": "object"}, "U": {"oneOf": [{"$ref": "#/$defs/"}, {"$ref": "#/$defs/A"}]}}
        )
    }
    report, repaired = lint(docs)
    [issue] = report.by_code("dangling-ref")
    assert issue.severity == "error" and issue.repair is not None
    assert issue.pointer == "/$defs/U/oneOf/0"
    assert repaired["actions"]["$defs"]["U"]["oneOf"] == [{"$ref": "#/$defs/A"}]
    assert docs["actions"]["$defs"]["U"]["oneOf"][0] == {"$ref": "#/$defs/"}  # input untouched
    report.raise_for_errors()  # repaired: not raised


def test_lint_raises_a_distinct_error_for_unrepairable_problems() -> None:
    docs = {
        "actions": _doc({"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Missing"}}}})
    }
    with pytest.raises(SchemaProblem) as info:
        SchemaSet(docs)
    assert [i.code for i in info.value.issues] == ["dangling-ref"]
    assert not isinstance(info.value, AssertionError)


def test_lint_reports_draft_recursion_undeclared_required_and_conflicts() -> None:
    docs = {
        "actions": _doc(
            {
                "Tree": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                },
                "Info": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name", "description"],
                },
            }
        ),
        "state": _doc(
            {"Info": {"type": "object"}}, draft="http://json-schema.org/draft-07/schema#"
        ),
    }
    report, _ = lint(docs)
    codes = {i.code for i in report.issues}
    assert {
        "recursive-definition",
        "required-not-declared",
        "conflicting-definition",
        "unsupported-draft",
    } <= codes
    assert [i.file for i in report.by_code("unsupported-draft")] == ["state"]
    with pytest.raises(SchemaProblem):
        report.raise_for_errors()


def test_inv007_patches_are_exactly_the_documented_ones() -> None:
    defs = {
        "SessionStatus": {"enum": [1, 2, 8, 24, 32, 64], "type": "number"},
        "Turn": {"type": "object", "required": ["id", "usage"]},
        "ActiveTurn": {"type": "object", "required": ["usage", "id"]},
        "ActionEnvelope": {"type": "object", "required": ["channel", "origin"]},
        "SessionActivityChangedAction": {"type": "object", "required": ["type", "activity"]},
        "Other": {"type": "object", "required": ["usage"]},
    }
    before = copy.deepcopy(defs)
    applied = apply_inv007_patches(defs)
    assert set(applied) <= set(INV007_PATCHES) and len(applied) == 5
    assert defs["SessionStatus"] == {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}
    assert defs["Turn"]["required"] == ["id"] and defs["ActiveTurn"]["required"] == ["id"]
    assert defs["ActionEnvelope"]["required"] == ["channel"]
    assert defs["Other"] == before["Other"]
    assert apply_inv007_patches(defs) == []  # idempotent


# --- the published 0.7.0 schemas --------------------------------------------------------------


@pytest.fixture(scope="module")
def schemas(spec_dir: SpecDir) -> SchemaSet:
    return SchemaSet.from_spec_dir(spec_dir)


def test_lint_finds_the_published_dangling_ref(spec_dir: SpecDir) -> None:
    report, repaired = lint(spec_dir.schemas)
    dangling = report.by_code("dangling-ref")
    assert [(i.file, i.pointer) for i in dangling] == [("actions", "/$defs/StateAction/oneOf/0")]
    assert all(i.repair for i in dangling)
    assert {"$ref": "#/$defs/"} not in repaired["actions"]["$defs"]["StateAction"]["oneOf"]
    assert any(
        i.code == "recursive-definition" and "ConfigPropertySchema" in i.message
        for i in report.issues
    )


def test_action_definitions_cover_every_0_7_0_type(schemas: SchemaSet) -> None:
    assert set(schemas.action_definitions()) == set(action_types("0.7.0"))
    assert schemas.action_definition("chat/toolCallConfirmed") == "ChatToolCallConfirmedAction"


def test_required_fields_table_matches_the_schema(schemas: SchemaSet) -> None:
    for t, name in schemas.action_definitions().items():
        body = schemas.defs[name]
        members = (
            [schemas.defs[m["$ref"].rsplit("/", 1)[1]] for m in body["oneOf"]]
            if "oneOf" in body
            else [body]
        )
        common = set.intersection(*(set(m.get("required", [])) for m in members)) - {"type"}
        assert set(REQUIRED_FIELDS[t]) == common, t


def test_session_status_patch_accepts_combined_bits(schemas: SchemaSet) -> None:
    for value in (1, 33, 97, 2147483720, 2**32 - 1):
        assert schemas.is_valid("SessionStatus", value)
    for value in (-1, 2**32, 1.5, "1"):
        assert not schemas.is_valid("SessionStatus", value)
    assert schemas.patches == [INV007_PATCHES[0]]  # 0.7.0 already fixed the required keys


def test_collection_draft_extension(spec_dir: SpecDir) -> None:
    s = SchemaSet.from_spec_dir(spec_dir, collections=True)
    member = {"type": "simple", "label": "m"}
    assert s.is_valid(
        "MessageAttachment", {"type": "collection", "label": "c", "attachments": [member]}
    )
    assert not s.is_valid(
        "MessageAttachment", {"type": "collection", "label": "c", "attachments": []}
    )
    nested = {
        "type": "collection",
        "label": "c",
        "attachments": [{"type": "collection", "label": "d", "attachments": [member]}],
    }
    assert not s.is_valid("MessageAttachment", nested)


def test_definition_groups(schemas: SchemaSet) -> None:
    assert schemas.definitions("states") == sorted(STATE_DEFINITIONS.values())
    assert "CreateSessionParams" in schemas.definitions("params")
    assert len(schemas.definitions("actions")) == 85


# --- schema-derived strategies (schemathesis engine) --------------------------------------------

#: Light action definitions, one per family, for the default tier.
LIGHT = [
    "SessionWorkingDirectorySetAction",
    "ChatToolCallConfirmedAction",
    "ChatTruncatedAction",
    "TerminalCommandExecutedAction",
    "ChangesetFilesReviewChangedAction",
    "AnnotationsEntryRemovedAction",
    "RootActiveSessionsChangedAction",
    "ConfigPropertySchema",  # recursive
]


def _generates_valid(schemas: SchemaSet, name: str, n: int) -> None:
    @settings(max_examples=n, suppress_health_check=list(HealthCheck), deadline=None)
    @given(schemas.strategy(name))
    def check(value: Any) -> None:
        errors = schemas.errors(name, value)
        assert not errors, (name, errors[:3], value)

    check()


@pytest.mark.parametrize("name", LIGHT)
def test_schema_strategy_output_validates(schemas: SchemaSet, name: str) -> None:
    _generates_valid(schemas, name, 10)


def test_schema_strategies_are_cached_per_definition(schemas: SchemaSet) -> None:
    assert schemas.strategy("ChatTruncatedAction") is schemas.strategy("ChatTruncatedAction")
    assert schemas.validator("ChatTruncatedAction") is schemas.validator("ChatTruncatedAction")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HEAVY_DEFINITIONS))
def test_heavy_schema_strategy_output_validates(schemas: SchemaSet, name: str) -> None:
    if name not in schemas.defs:
        pytest.skip(f"{name} not in this spec")
    _generates_valid(schemas, name, 5)


@pytest.mark.slow
def test_every_action_and_params_definition_generates(schemas: SchemaSet) -> None:
    for name in [*schemas.definitions("actions"), *schemas.definitions("params")]:
        if name not in HEAVY_DEFINITIONS:
            _generates_valid(schemas, name, 3)
