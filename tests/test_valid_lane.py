"""The valid lane is schema-valid with or without a spec folder (issue 15 item 4).

Without a spec folder the model's own payload check (`harness.reference.payloads`, with the
every-depth facts of `harness.spec.payload_shapes`) is all that decides whether a step is a
valid-lane step — in generation and when the trace shrinker deletes keys of a finding's
actions. These tests draw valid-lane actions with fixed seeds and validate them against the
0.6.0 and 0.7.0 schemas (item-11 corrected); the schema tests skip without $AHP_SPEC_DIR, but
nothing they exercise reads a spec folder.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from harness.engine import generation
from harness.engine.shrink import _smaller_values
from harness.reference import MalformedAction, Model, Profile
from harness.spec import payload_shapes
from harness.spec.action_schema import ActionSchema
from harness.spec.action_schema import payload_shapes as derive_shapes
from harness.spec.schema_patches import apply_inv007_patches
from harness.spec.specdir import SpecDir
from harness.spec.versions import kind_of, kinds_of
from strategies import states as gen_states
from strategies.actions import BUILDERS, action_of_type

from .conftest import sibling_spec

#: The keys `ConfigPropertySchema` declares (state.schema.json, 0.6.0 and 0.7.0).
CONFIG_PROPERTY_KEYS = frozenset(
    {"type", "title", "description", "default", "enum", "enumLabels", "enumDescriptions",
     "readOnly", "items", "properties", "required", "additionalProperties"}
)

#: The issue's schema-invalid valid-lane steps (found against TypeScript without --spec).
ISSUE_STEPS: list[tuple[str, dict[str, Any]]] = [
    ("chat", {"type": "chat/turnStarted", "turnId": "t1", "startedAt": 1,
              "message": {"text": "hi", "origin": {}}}),
    ("chat", {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "tc1",
              "approved": False, "confirmed": "user-action"}),
    ("session", {"type": "session/inputNeededSet",
                 "request": {"kind": "chatInput", "id": "in-1", "chat": "ahp-chat:/c1"}}),
    ("chat", {"type": "chat/toolCallReady", "turnId": "t1", "toolCallId": "tc1",
              "invocationMessage": {}}),
    ("annotations", {"type": "annotations/set", "annotation": {
        "id": "a1", "resource": "file:///a", "turnId": "t1", "resolved": False,
        "entries": [{"text": "x"}]}}),
]


def _actions_doc(spec: SpecDir) -> dict[str, Any]:
    doc = json.loads(spec.schema_path("actions").read_text(encoding="utf-8"))
    apply_inv007_patches(doc["$defs"])
    return doc


def _spec(version: str) -> SpecDir:
    return sibling_spec(version)


# -- without a spec folder -------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "action"), ISSUE_STEPS, ids=[a["type"] for _, a in ISSUE_STEPS])
def test_the_model_refuses_the_issue_s_schema_invalid_steps_without_a_spec(
    kind: str, action: dict[str, Any]
) -> None:
    model = Model(Profile.named("0.7.0"), check_payloads=True)  # no schema: the spec-free check
    problem = model.payload_problem(kind, action)
    assert problem is not None, f"{action['type']} accepted as a valid-lane step"
    with pytest.raises(MalformedAction):
        model.reduce(kind, {}, action, 1_000)


def test_a_denial_needs_a_reason_and_an_approval_is_told_apart_by_approved() -> None:
    base = {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "tc1"}
    assert payload_shapes.problem({**base, "approved": False, "reason": "denied"}) is None
    assert payload_shapes.problem({**base, "approved": True, "confirmed": "user-action"}) is None
    assert "reason" in (payload_shapes.problem({**base, "approved": False, "confirmed": "user-action"}) or "")


def test_generation_reads_no_spec_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("generation read a spec folder")

    monkeypatch.setattr(SpecDir, "__init__", refuse)
    monkeypatch.delenv("AHP_SPEC_DIR", raising=False)
    profile = Profile.named("0.7.0")

    @seed(3)
    @settings(max_examples=10, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(kinds_of(profile.version)))
        state = data.draw(generation.initial_states(kind, profile))
        action = data.draw(generation.state_aware_actions(kind, state, profile))
        Model(profile, check_payloads=True).payload_problem(kind, action)

    draw()


def _nested_config_schemas(config: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def below(prop: dict[str, Any]) -> None:
        for child in [prop.get("items"), *(prop.get("properties") or {}).values()]:
            if isinstance(child, dict):
                out.append(child)
                below(child)

    for prop in config["schema"]["properties"].values():
        below(prop)
    return out


def test_nested_config_schemas_carry_only_declared_keys() -> None:
    seen = Counter[str]()

    @seed(5)
    @settings(max_examples=150, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(gen_states.config_states(session=True))
    def check(config: dict[str, Any]) -> None:
        for nested in _nested_config_schemas(config):
            seen["nested"] += 1
            extra = set(nested) - CONFIG_PROPERTY_KEYS
            assert not extra, f"a nested ConfigPropertySchema carries undeclared {sorted(extra)}"

    check()
    assert seen["nested"] > 20  # the draws did reach nested schemas


# -- against the schemas (skip without a spec folder) -----------------------------------------


def test_the_payload_shapes_are_the_0_7_0_schema_s_facts() -> None:
    shapes, actions = derive_shapes(_actions_doc(_spec("0.7.0")))
    differ = sorted(
        n for n in set(shapes) | set(payload_shapes.SCHEMA_SHAPES)
        if shapes.get(n) != payload_shapes.SCHEMA_SHAPES.get(n)
    )
    assert not differ, "payload_shapes.SCHEMA_SHAPES differs from the schema at: " + ", ".join(differ)
    assert actions == dict(payload_shapes.ACTIONS)


def test_the_config_keys_are_the_declared_ones() -> None:
    doc = json.loads(_spec("0.7.0").schema_path("state").read_text(encoding="utf-8"))
    assert set(doc["$defs"]["ConfigPropertySchema"]["properties"]) == CONFIG_PROPERTY_KEYS


def _where(problem: str) -> str:
    """`type: path` (list indexes dropped); at the top (`$`), with the message."""
    parts = problem.split(": ", 2)
    where = re.sub(r"\[\d+\]", "[]", ": ".join(parts[:2]))
    return problem if parts[1:2] == ["$"] else where


def _valid_lane_problems(version: str, *, examples: int, steps: int) -> tuple[int, Counter[str]]:
    """Draw state-aware valid-lane walks under `version`'s profile; every action the spec-free
    model accepts, and every one-key/one-item deletion of it the model still accepts (what the
    trace shrinker keeps), is validated against the version's item-11-corrected schema."""
    schema = ActionSchema.from_spec(_spec(version))
    assert schema is not None
    profile = Profile.named(version)
    model = Model(profile, check_payloads=True)
    bad: Counter[str] = Counter()
    judged = [0]

    def judge(kind: str, action: Any, what: str) -> None:
        if model.payload_problem(kind, action) is not None:
            return  # not a valid-lane step: a probe
        judged[0] += 1
        problem = schema.problem(action)
        if problem is not None:
            bad[f"{what}: {_where(problem)}"] += 1

    @seed(15)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def walk(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(kinds_of(profile.version)))
        state = data.draw(generation.initial_states(kind, profile))
        for i in range(steps):
            action = data.draw(generation.state_aware_actions(kind, state, profile))
            judge(kind, action, "drawn")
            if schema.problem(action) is None:
                for _, smaller in _smaller_values(action):
                    judge(kind, smaller, "shrunk")
            with contextlib.suppress(MalformedAction):
                state = model.reduce(kind, state, action, 1_000 + i)

    walk()

    @seed(16)
    @settings(max_examples=3, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def every_type(data: st.DataObject) -> None:
        for t in sorted(schema.types):
            kind = kind_of(t)
            if kind is None or t not in BUILDERS.get(kind, {}):
                continue
            judge(kind, data.draw(action_of_type(t)), "drawn")

    every_type()
    return judged[0], bad


def test_every_0_7_0_valid_lane_action_is_schema_valid() -> None:
    judged, bad = _valid_lane_problems("0.7.0", examples=40, steps=8)
    assert judged > 300
    assert not bad, f"{sum(bad.values())} of {judged} valid-lane actions are schema-invalid: {bad.most_common(8)}"


def test_every_action_type_of_the_schemas_has_a_valid_lane_strategy() -> None:
    for version in ("0.6.0", "0.7.0"):
        schema = ActionSchema.from_spec(_spec(version))
        assert schema is not None
        missing = [t for t in sorted(schema.types) if t not in BUILDERS.get(kind_of(t) or "", {})]
        assert not missing, f"{version}: no valid-lane strategy for {missing}"


def test_what_the_shrinker_keeps_of_a_0_6_0_valid_lane_action_is_0_6_0_valid() -> None:
    # The generators draw 0.7.0 shapes (ContentRef tool input, `chat` attachments) under a
    # 0.6.0 profile too, and 0.6.0's published schema types several structured fields as
    # `string` (`changes.items`, `edits.items`, `inputSchema.properties`, file-edit
    # `content`): drawn 0.6.0 actions are not all 0.6.0-valid (left for later, see
    # CHANGELOG). The payload facts are: nothing the shrinker keeps is invalid.
    # One documented exception: a content-less `chat/toolCallDelta` (0.6.0 requires `content`)
    # is accepted under every profile — docs/profiles.md decision 3, fixtures 019/025/090/095.
    judged, bad = _valid_lane_problems("0.6.0", examples=40, steps=8)
    assert judged > 300
    shrunk = {k: n for k, n in bad.items()
              if k.startswith("shrunk:") and k != 'shrunk: chat/toolCallDelta: $: "content" is a required property'}
    assert not shrunk, f"kept by the shrinker but 0.6.0-invalid: {shrunk}"
