"""States and steps drawn for profile P validate against P's own schemas (issue 34): jsonschema-rs
over the state schema (INV-007-patched, as the published-schema check reads it) and the action
schema (`ActionSchema`, the valid lane's judge), for 0.6.0, 0.7.0 and 1.0.0.

The number of draws is bounded by examples, never by time: `AHP_DRAWS` per profile (default a
few hundred, so the test stays fast; bench/results/versions.md records a ≥ 10,000-draw run:
`AHP_DRAWS=10000 pytest tests/test_versioned_generation.py`)."""

from __future__ import annotations

import copy
import os
from collections import Counter
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness.engine.generation import initial_states, state_aware_actions
from harness.reference import Model, Profile
from harness.spec.action_schema import ActionSchema
from harness.spec.schema_patches import apply_inv007_patches
from harness.spec.specdir import SpecDir
from harness.spec.versions import STATE_DEFINITIONS, kinds_of
from strategies.versioned import shaped, state_shapers
from tests.conftest import sibling_spec

DRAWS = int(os.environ.get("AHP_DRAWS", "240"))
STEPS = 3  # steps drawn (and applied) after each state


def _state_validators(spec: SpecDir) -> dict[str, Any]:
    doc = copy.deepcopy(spec.schemas["state"])
    apply_inv007_patches(doc["$defs"])
    return {
        kind: jsonschema_rs.validator_for(
            {"$schema": doc.get("$schema"), "$defs": doc["$defs"], "$ref": f"#/$defs/{name}"}
        )
        for kind, name in STATE_DEFINITIONS.items()
        if name in doc["$defs"]
    }


def _draw_and_validate(version: str, draws: int) -> tuple[Counter[str], list[str]]:
    """Draw `draws` initial states (spread over the profile's kinds) and `STEPS` state-aware
    steps after each; return (what was drawn, the first problems found)."""
    spec = sibling_spec(version)
    profile = Profile.named(version)
    states = _state_validators(spec)
    actions = ActionSchema.from_spec(spec)
    assert actions is not None
    model = Model(profile, check_payloads=True)
    drawn: Counter[str] = Counter()
    problems: list[str] = []
    kinds = kinds_of(profile.version)

    @settings(max_examples=draws, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(kinds))
        state = data.draw(initial_states(kind, profile))
        drawn["states"] += 1
        for e in states[kind].iter_errors(state):
            problems.append(f"{kind} state at {list(e.instance_path)}: {e.message[:160]}")
        for _ in range(STEPS):
            action = data.draw(state_aware_actions(kind, state, profile))
            drawn["steps"] += 1
            bad = actions.problem(action) or model.wire_problem(kind, action)
            if bad:
                problems.append(f"{kind} step {action.get('type')}: {bad[:200]}")
                break
            state = model.reduce(kind, state, action, 5_000)

    check()
    return drawn, problems[:10]


@pytest.mark.parametrize("version", ["0.6.0", "0.7.0", "1.0.0"])
def test_drawn_states_and_steps_validate_against_the_profiles_own_schemas(version: str) -> None:
    drawn, problems = _draw_and_validate(version, DRAWS)
    assert drawn["states"] >= DRAWS and drawn["steps"] >= DRAWS
    assert problems == []


def test_without_the_version_shapes_0_6_0_draws_fail_its_schema() -> None:
    # The shapes are what makes the test above pass: the 0.7.0-shaped chat states of the base
    # strategies (workingDirectories, object toolInput, rich chat origins) fail 0.6.0's schema.
    spec = sibling_spec("0.6.0")
    validator = _state_validators(spec)["chat"]
    base = shaped(initial_states("chat", Profile.named("0.7.0")), ())
    bad = 0

    @settings(max_examples=80, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(base)
    def count(state: dict[str, Any]) -> None:
        nonlocal bad
        bad += not validator.is_valid(state)

    count()
    assert bad > 0
    assert state_shapers("chat", (0, 6, 0))  # and 0.6.0 has shapers that fix them


def test_a_0_6_0_tool_call_delta_without_content_is_not_a_valid_step() -> None:
    # 0.6.0's schema requires `content`: the model refuses a delta without it (a probe), and
    # the 0.6.0 generation always sends it.
    action = {"type": "chat/toolCallDelta", "turnId": "t1", "toolCallId": "tc1"}
    assert Model(Profile.named("0.6.0"), check_payloads=True).wire_problem("chat", action)
    assert Model(Profile.named("0.7.0"), check_payloads=True).wire_problem("chat", action) is None
    state = {"resource": "ahp-chat:/c1", "title": "t", "status": 8, "modifiedAt": "x", "turns": [],
             "activeTurn": {"id": "t1", "startedAt": "x", "message": {"text": "hi", "origin": {"kind": "user"}},
                            "responseParts": [{"kind": "toolCall", "toolCall": {
                                "status": "streaming", "toolCallId": "tc1", "toolName": "bash",
                                "displayName": "Bash"}}]}}
    sent = []

    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(state_aware_actions("chat", state, Profile.named("0.6.0")))
    def collect(a: dict[str, Any]) -> None:
        if a.get("type") == "chat/toolCallDelta":
            sent.append(a)

    collect()
    assert all("content" in a for a in sent)
