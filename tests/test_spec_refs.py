"""harness/spec/refs.py: a definition's validator compiled from the definitions it reaches only,
judging exactly as one compiled from the whole document (and without its cost)."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

from harness.spec.refs import reachable, validator_for

DEFS: dict[str, Any] = {
    "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}, "n": {"type": "integer"}},
          "required": ["b"]},
    "B": {"oneOf": [{"$ref": "#/$defs/C"}, {"type": "string"}]},
    "C": {"type": "object", "properties": {"x": {"$ref": "#/$defs/D/properties/y"}}, "required": ["x"]},
    "D": {"type": "object", "properties": {"y": {"type": "boolean"}}},
    "Loop": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Loop"}}},
    "Unrelated": {"type": "number"},
}


def test_reachable_follows_references_transitively_and_stops_at_cycles() -> None:
    assert list(reachable(DEFS, "A")) == ["A", "B", "C", "D"]  # D through a pointer into it
    assert list(reachable(DEFS, "Loop")) == ["Loop"]
    assert list(reachable(DEFS, "Unrelated")) == ["Unrelated"]
    assert reachable(DEFS, "Missing") == {}


@pytest.mark.parametrize("value", [
    {"b": "s"}, {"b": {"x": True}}, {"b": {"x": 1}}, {"b": {}}, {"n": 1}, {"b": 3, "n": "x"}, [],
])
def test_the_validator_judges_as_one_compiled_from_the_whole_document(value: Any) -> None:
    whole = jsonschema_rs.validator_for({"$ref": "#/$defs/A", "$defs": DEFS})
    part = validator_for(DEFS, "A")
    assert part.is_valid(value) == whole.is_valid(value)
    assert [(list(e.instance_path), e.message) for e in part.iter_errors(value)] == \
        [(list(e.instance_path), e.message) for e in whole.iter_errors(value)]


def test_the_spec_action_schema_judges_every_fixture_action_as_before(spec_dir: Any) -> None:
    """Every action of the spec folder's reducer fixtures: the same verdict and message from the
    validators compiled from reached definitions as from validators over the whole document."""
    import json

    from harness.spec.action_schema import ActionSchema, _type_const
    from harness.spec.schema_patches import apply_inv007_patches

    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    doc = json.loads(spec_dir.schema_path("actions").read_text(encoding="utf-8"))
    defs = doc["$defs"]
    apply_inv007_patches(defs)
    whole = {t: [jsonschema_rs.validator_for({"$ref": f"#/$defs/{n}", "$defs": defs})
                 for n, d in defs.items() if _type_const(d) == t] for t in schema.types}
    actions = [a for fx in spec_dir.reducer_fixtures() for a in fx.actions if isinstance(a, dict)]
    assert len(actions) > 50
    for action in actions:
        t = action.get("type")
        if t not in whole:
            continue
        expected = any(v.is_valid(action) for v in whole[t])
        assert (schema.problem(action, nulls_absent=False) is None) == expected, action
