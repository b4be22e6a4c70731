"""A. Reducer core: purity, determinism, the clock, unknown and foreign actions (INV-001…006)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.reference import Model, Profile, iso_ms
from tests.invariant_cases import (
    MSG,
    NOW,
    Case,
    Faulty,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    session,
    step,
    step_with,
    turn,
    with_after,
)

JSON = dict[str, Any]
REF = Model().reduce
TITLE = {"type": "session/titleChanged", "title": "New"}
START = {
    "type": "chat/turnStarted",
    "turnId": "t1",
    "startedAt": "2026-01-01T00:00:01.000Z",
    "message": MSG,
}
DELTA = {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"}


def _mutates_input(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    state["title"] = "scribbled"
    action["scribbled"] = True
    return result


def _counts_calls(kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int) -> JSON:
    return {**result, "title": f"call {calls}"}


def _reads_clock_into_title(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    return {**result, "title": f"at {now}"}


def _stamps_wrong_time(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    return {**result, "modifiedAt": iso_ms(now + 1)} if "modifiedAt" in result else result


def _known(action: JSON) -> bool:
    return action.get("type") in {"session/titleChanged", "terminal/titleChanged", "chat/delta"}


def _touches_unknown(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    return result if _known(action) else {**result, "unknownSeen": action.get("type")}


def _raises_on_unknown(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    if not _known(action):
        raise KeyError(action.get("type"))
    return result


def _any_title_changed(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    if str(action.get("type")).endswith("/titleChanged"):
        return {**result, "title": action.get("title")}
    return result


TERMINAL = {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c1"}}
TERMINAL_TITLE = {"type": "terminal/titleChanged", "title": "zsh"}

FAILING = [
    Case(
        "INV-001",
        step("session", session(), TITLE),
        "reducer-scribbles-on-inputs",
        Faulty(_mutates_input),
    ),
    Case(
        "INV-002",
        step_with(Faulty(_counts_calls), "session", session(), TITLE),
        "result-depends-on-call-count",
        Faulty(_counts_calls),
    ),
    Case(
        "INV-003",
        step_with(Faulty(_reads_clock_into_title), "session", session(), TITLE),
        "title-depends-on-now",
        Faulty(_reads_clock_into_title),
    ),
    Case(
        "INV-003",
        step_with(Faulty(_stamps_wrong_time), "chat", chat(), START),
        "modifiedAt-not-iso-of-now",
        Faulty(_stamps_wrong_time),
    ),
    Case(
        "INV-003.stamp",
        with_after(
            step("chat", chat(activeTurn=turn()), DELTA), lambda s: s.update(modifiedAt=iso_ms(NOW))
        ),
        "delta-writes-modifiedAt",
    ),
    Case(
        "INV-003.stamp",
        with_after(
            step("chat", chat(), START), lambda s: s.update(modifiedAt="1970-01-01T00:00:09Z")
        ),
        "stamp-without-milliseconds",
    ),
    Case(
        "INV-004",
        with_after(
            step("chat", chat(), {"type": "future/newAction"}), lambda s: s.update(title="changed")
        ),
        "future-type-changes-state",
    ),
    Case(
        "INV-004",
        with_after(
            step(
                "chat",
                chat(),
                {"type": "chat/workingDirectorySet", "directory": "file:///a"},
                profile=Profile.for_version("0.6.0"),
            ),
            lambda s: s.update(workingDirectories=["file:///a"]),
        ),
        "0.7.0-type-applied-on-0.6.0",
    ),
    Case(
        "INV-004.probe",
        step("session", session(), TITLE),
        "near-miss-types-touch-state",
        Faulty(_touches_unknown),
    ),
    Case(
        "INV-004.probe",
        step("session", session(), TITLE),
        "near-miss-types-raise",
        Faulty(_raises_on_unknown),
    ),
    Case(
        "INV-005",
        with_after(step("chat", chat(), TITLE), lambda s: s.update(title="New")),
        "session-action-applied-to-chat",
    ),
    Case(
        "INV-005.probe",
        step("terminal", TERMINAL, TERMINAL_TITLE),
        "other-families-titleChanged-applied",
        Faulty(_any_title_changed),
    ),
]

PASSING = [
    Case("INV-001", step("chat", chat(), START), "reference-turnStarted", REF),
    Case("INV-001", step("session", session(), TITLE), "reference-titleChanged", REF),
    Case(
        "INV-002",
        step("chat", chat(activeTurn=turn()), START),
        "reference-turnStarted-over-a-turn",
        REF,
    ),
    Case("INV-003", step("chat", chat(), START), "turnStarted-stamps-modifiedAt", REF),
    Case("INV-003", step("session", session(), TITLE), "session-is-clock-free", REF),
    Case("INV-003.stamp", step("chat", chat(), START), "turnStarted-stamps-now"),
    Case(
        "INV-003.stamp",
        step(
            "chat",
            chat(activeTurn=turn("t1", {"kind": "markdown", "id": "p1", "content": ""})),
            DELTA,
        ),
        "delta-leaves-modifiedAt",
    ),
    Case(
        "INV-004", step("chat", chat(), {"type": "future/newAction", "x": 1}), "future-type-is-noop"
    ),
    Case(
        "INV-004",
        step(
            "chat",
            chat(),
            {"type": "chat/workingDirectorySet", "directory": "file:///a"},
            profile=Profile.for_version("0.6.0"),
        ),
        "0.7.0-type-ignored-on-0.6.0",
    ),
    Case("INV-004.probe", step("session", session(), TITLE), "reference-ignores-near-misses", REF),
    Case("INV-005", step("chat", chat(), TITLE), "session-action-ignored-by-chat"),
    Case(
        "INV-005.probe",
        step("terminal", TERMINAL, TERMINAL_TITLE),
        "reference-ignores-foreign",
        REF,
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_purity_names_the_mutated_paths() -> None:
    [v] = assert_fails(FAILING[0])[:1]
    assert "title" in v.message


def test_clock_probe_reports_the_now_dependent_field() -> None:
    found = assert_fails(FAILING[2])
    assert any("title" in v.message for v in found)


def test_a_reducer_raising_in_a_probe_is_a_finding_not_a_crash() -> None:
    found = assert_fails(FAILING[9])
    assert any("raised" in v.message and "KeyError" in v.message for v in found)
