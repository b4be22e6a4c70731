"""B. The status bitset (INV-010…014)."""

from __future__ import annotations

import pytest

from harness.reference import Model, Profile
from tests.invariant_cases import (
    MSG,
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    input_part,
    session,
    step,
    tool_part,
    turn,
    with_after,
)

REF = Model().reduce
START = {
    "type": "chat/turnStarted",
    "turnId": "t1",
    "startedAt": "2026-01-01T00:00:01.000Z",
    "message": MSG,
}
COMPLETE = {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}
REQUEST = {"id": "q1", "chat": "ahp-chat:/c1", "kind": "chatInput", "request": {"id": "r1"}}
NEEDED_SET = {"type": "session/inputNeededSet", "request": REQUEST}
NEEDED_REMOVED = {"type": "session/inputNeededRemoved", "id": "q1"}
EXEC = {
    "id": "x1",
    "chat": "ahp-chat:/c1",
    "kind": "toolClientExecution",
    "clientId": "c",
    "turnId": "t1",
    "toolCall": {},
}
READY = {
    "type": "chat/toolCallReady",
    "turnId": "t1",
    "toolCallId": "tc1",
    "invocationMessage": "go",
}
RESPONSE_PART_INPUT = {"type": "chat/responsePart", "turnId": "t1", "part": input_part("r9")}
STALE_CONFIRM = {
    "type": "chat/toolCallConfirmed",
    "turnId": "gone",
    "toolCallId": "tc1",
    "approved": True,
    "confirmed": "user-action",
}
P080 = Profile.for_version("0.8.0")

FAILING = [
    Case(
        "INV-010",
        with_after(
            step("session", session(), {"type": "session/titleChanged", "title": "x"}),
            lambda s: s.update(status=9),
        ),
        "two-activities",
    ),
    Case(
        "INV-010",
        with_after(step("chat", chat(), START), lambda s: s.update(status="busy")),
        "status-not-an-int",
    ),
    Case(
        "INV-011",
        with_after(
            step("session", session(), {"type": "session/titleChanged", "title": "x"}),
            lambda s: s.update(status=1 | 64),
        ),
        "archived-by-titleChanged",
    ),
    Case(
        "INV-011",
        with_after(
            step(
                "session",
                session(status=1 | 128),
                {"type": "session/isReadChanged", "isRead": True},
            ),
            lambda s: s.update(status=1 | 32),
        ),
        "unknown-high-bit-dropped",
    ),
    Case(
        "INV-011",
        with_after(
            step("session", session(), {"type": "session/isReadChanged", "isRead": True}),
            lambda s: s.update(status=1),
        ),
        "isRead-not-applied",
    ),
    Case(
        "INV-011",
        with_after(
            step("chat", chat(status=1), {"type": "chat/draftChanged", "draft": MSG}),
            lambda s: s.update(status=1 | 32),
        ),
        "chat-sets-IsRead",
    ),
    Case(
        "INV-011",
        with_after(
            step("chat", chat(status=1 | 32, activeTurn=turn()), COMPLETE),
            lambda s: s.update(status=1),
        ),
        "turnComplete-clears-IsRead",
    ),
    Case(
        "INV-012",
        with_after(
            step("chat", chat(status=8, activeTurn=turn()), COMPLETE), lambda s: s.update(status=8)
        ),
        "complete-leaves-InProgress",
    ),
    Case(
        "INV-012",
        with_after(
            step(
                "chat", chat(status=8, activeTurn=turn("t1", tool_part(status="streaming"))), READY
            ),
            lambda s: s.update(status=8),
        ),
        "ready-without-InputNeeded",
    ),
    Case(
        "INV-012",
        with_after(
            step(
                "chat",
                chat(status=8, activeTurn=turn()),
                {**COMPLETE, "type": "chat/error", "error": {"message": "boom"}},
            ),
            lambda s: s.update(status=1),
        ),
        "error-not-Error",
    ),
    Case(
        "INV-012.strong",
        step("chat", chat(status=8, activeTurn=turn()), RESPONSE_PART_INPUT),
        "responsePart-inserts-open-request",
    ),
    Case(
        "INV-013",
        with_after(step("session", session(), NEEDED_SET), lambda s: s.update(status=8)),
        "entries-without-bit",
    ),
    Case(
        "INV-013",
        with_after(
            step("session", session(status=24, inputNeeded=[REQUEST]), NEEDED_REMOVED),
            lambda s: s.update(inputNeeded=[]),
        ),
        "empty-list-kept",
    ),
    Case(
        "INV-013",
        with_after(
            step(
                "session",
                session(status=8),
                {"type": "session/inputNeededSet", "request": EXEC},
                profile=P080,
            ),
            lambda s: s.update(status=24),
        ),
        "exec-entry-raises-bit-under-0.8",
    ),
    Case("INV-014", step("session", session(status=1), NEEDED_SET), "idle-ends-in-progress", REF),
    Case(
        "INV-014",
        step("session", session(status=2 | 32), NEEDED_SET),
        "error-read-ends-in-progress",
        REF,
    ),
]

PASSING = [
    Case("INV-010", step("chat", chat(), START), "turnStarted"),
    Case(
        "INV-010",
        step("session", session(status=1 | 32 | 64 | 256), NEEDED_SET),
        "flags-and-high-bits",
    ),
    Case(
        "INV-011",
        step(
            "session",
            session(status=1 | 128),
            {"type": "session/isArchivedChanged", "isArchived": True},
        ),
        "archive-keeps-high-bit",
    ),
    Case("INV-011", step("chat", chat(status=1 | 32), START), "turnStarted-clears-IsRead"),
    Case(
        "INV-011",
        step(
            "chat",
            chat(status=8 | 32, activeTurn=turn()),
            {"type": "chat/inputRequested", "request": {"id": "r1"}},
        ),
        "inputRequested-clears-IsRead",
    ),
    Case("INV-012", step("chat", chat(status=8, activeTurn=turn()), COMPLETE), "complete-idles"),
    Case(
        "INV-012",
        step("chat", chat(status=8, activeTurn=turn("t1", tool_part(status="streaming"))), READY),
        "ready-needs-input",
    ),
    Case(
        "INV-012",
        step("chat", chat(status=2), STALE_CONFIRM),
        "stale-tool-action-not-this-checks-business",
    ),
    Case(
        "INV-012",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", input_part())),
            {"type": "chat/inputCompleted", "requestId": "r1", "response": "accept"},
        ),
        "input-completed-back-to-progress",
    ),
    Case(
        "INV-012.strong",
        step(
            "chat",
            chat(status=8, activeTurn=turn()),
            {
                "type": "chat/responsePart",
                "turnId": "t1",
                "part": {"kind": "markdown", "id": "p1", "content": ""},
            },
        ),
        "markdown-part-keeps-status",
    ),
    Case(
        "INV-012.strong",
        step("chat", chat(status=2), {"type": "chat/draftChanged", "draft": MSG}),
        "error-persists-while-idle",
    ),
    Case("INV-013", step("session", session(), NEEDED_SET), "set-raises-bit"),
    Case(
        "INV-013",
        step("session", session(status=24, inputNeeded=[REQUEST]), NEEDED_REMOVED),
        "remove-last-deletes-key",
    ),
    Case(
        "INV-013",
        step(
            "session",
            session(status=8),
            {"type": "session/inputNeededSet", "request": EXEC},
            profile=P080,
        ),
        "exec-entry-does-not-count-under-0.8",
    ),
    Case("INV-014", step("session", session(status=8), NEEDED_SET), "in-progress-round-trips", REF),
    Case(
        "INV-014",
        step(
            "session",
            session(status=1),
            {"type": "session/inputNeededSet", "request": EXEC},
            profile=P080,
        ),
        "exec-entry-round-trips-under-0.8",
        Model(P080).reduce,
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_round_trip_message_names_both_activities() -> None:
    found = assert_fails(FAILING[-2])
    assert "1 (Idle)" in found[0].message and "8 (InProgress)" in found[0].message


def test_inconsistent_start_is_not_blamed_on_the_step() -> None:
    """INV-013 only reports a step that breaks a consistent state."""
    bad_start = session(status=24)  # InputNeeded without entries
    assert_passes(
        Case(
            "INV-013",
            step("session", bad_start, {"type": "session/titleChanged", "title": "x"}),
            "inconsistent-start",
        )
    )
