"""Schema validity of produced states (INV-007) and the published-schema mismatch of REDUCERS.md
§11 item 11 (INV-007.published). The checks read the spec directory from $AHP_SPEC_DIR; these
tests skip without one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness.invariants import check_step
from harness.invariants.published_schema import corrected
from harness.reference import Profile
from harness.spec.specdir import ENV_VAR, SpecDir
from tests.conftest import sibling_spec
from tests.invariant_cases import (
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    session,
    step,
    tool_part,
    turn,
    with_after,
)

TITLE = {"type": "session/titleChanged", "title": "New"}
READ = {"type": "session/isReadChanged", "isRead": True}
CALL_DONE = {
    "type": "chat/toolCallComplete",
    "turnId": "t1",
    "toolCallId": "tc1",
    "result": {"success": True, "pastTenseMessage": "Ran"},
}

FAILING = [
    Case(
        "INV-007",
        with_after(step("session", session(), TITLE), lambda s: s.update(lifecycle="exploded")),
        "lifecycle-outside-its-enum",
    ),
    Case(
        "INV-007",
        with_after(step("session", session(), TITLE), lambda s: s.pop("provider")),
        "required-provider-dropped",
    ),
    Case("INV-007.published", step("session", session(), READ), "idle-plus-read-is-33"),
]

PASSING = [
    Case("INV-007", step("session", session(), TITLE), "title-change"),
    Case("INV-007", step("session", session(), READ), "33-is-valid-once-corrected"),
    Case("INV-007.published", step("session", session(), TITLE), "status-stays-in-the-enum"),
    Case(
        "INV-007.published",
        step("session", session(status=33), TITLE),
        "combined-status-came-with-the-start-state",
    ),
]


@pytest.fixture(autouse=True)
def _needs_spec(spec_dir: SpecDir) -> None:
    if not spec_dir.has_schemas():
        pytest.skip(f"{spec_dir} has no schema/ folder")


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def _ids(s: Any) -> list[str]:
    return [v.invariant for v in check_step(s, only={"INV-007", "INV-007.published"})]


def test_messages_name_the_path_and_the_value() -> None:
    [v] = assert_fails(FAILING[0])
    assert "/lifecycle" in v.message and "exploded" in v.message
    [k] = assert_fails(FAILING[2])
    assert "/status" in k.message and "33" in k.message


def test_an_invalid_start_state_or_action_is_not_judged() -> None:
    broken = with_after(step("session", session(), TITLE), lambda s: s.update(lifecycle="exploded"))
    assert _ids(replace(broken, before=session(lifecycle="also-bad"))) == []
    assert _ids(replace(broken, action={**TITLE, "title": 42})) == []


def test_a_spec_of_another_version_does_not_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    s = with_after(step("session", session(), TITLE), lambda x: x.update(lifecycle="exploded"))
    assert _ids(s) == ["INV-007"]
    assert _ids(replace(s, profile=Profile.for_version("0.6.0"))) == []
    monkeypatch.delenv(ENV_VAR)
    assert _ids(s) == []


def test_a_spread_tool_result_is_left_to_inv_051() -> None:
    before = chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running")))
    spread = {**CALL_DONE, "result": {**CALL_DONE["result"], "status": "exploded"}}
    s = step("chat", before, spread)
    assert s.after["activeTurn"]["responseParts"][0]["toolCall"]["status"] == "exploded"
    found = check_step(s, only={"INV-007", "INV-007.published", "INV-051"})
    assert [v.invariant for v in found] == ["INV-051"]


def test_the_correction_touches_only_item_11(spec_dir: SpecDir) -> None:
    state = spec_dir.schemas["state"]
    fixed = corrected(state)
    changed = sorted(k for k in state["$defs"] if state["$defs"][k] != fixed["$defs"][k])
    assert "SessionStatus" in changed
    assert set(changed) <= {"SessionStatus", "Turn", "ActiveTurn"}
    assert state["$defs"]["SessionStatus"].get("enum")  # the original is not modified


def test_0_6_0_turns_without_usage_are_known(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = sibling_spec("0.6.0")
    monkeypatch.setenv(ENV_VAR, str(spec.path))
    before = chat(status=8, activeTurn=turn("t1"))
    done = {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}
    s = step("chat", before, done, profile=Profile.for_version("0.6.0"))
    found = check_step(s, only={"INV-007", "INV-007.published"})
    assert [(v.invariant, v.severity) for v in found] == [("INV-007.published", "known")]
    assert "usage" in found[0].message
