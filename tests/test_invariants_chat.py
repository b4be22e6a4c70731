"""C. Chat: turns, tool calls, input requests, pending messages (INV-015…024, 051, X03)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.reference import Profile
from tests.invariant_cases import (
    MSG,
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    input_part,
    md,
    step,
    tool_part,
    turn,
    with_after,
)

JSON = dict[str, Any]
P060 = Profile.for_version("0.6.0")


def _last_turn(s: JSON) -> JSON:
    return s["turns"][-1]


def _parts(s: JSON) -> list[JSON]:
    return s["activeTurn"]["responseParts"]


def _tc(s: JSON, i: int = 0) -> JSON:
    return _parts(s)[i]["toolCall"]


DELTA = {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"}
COMPLETE = {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}
ERROR = {"type": "chat/error", "turnId": "t1", "duration": -3, "error": {"message": "boom"}}
CONFIRM_STALE = {
    "type": "chat/toolCallConfirmed",
    "turnId": "old",
    "toolCallId": "tc1",
    "approved": True,
    "confirmed": "user-action",
}
OPTIONS = [
    {"id": "o1", "label": "Allow", "kind": "approve"},
    {"id": "o2", "label": "Deny", "kind": "deny"},
]
PENDING = tool_part("tc1", "pending-confirmation", options=OPTIONS, toolInput="ls")
CONFIRM = {
    "type": "chat/toolCallConfirmed",
    "turnId": "t1",
    "toolCallId": "tc1",
    "approved": True,
    "confirmed": "user-action",
    "selectedOptionId": "o1",
}
RESULT = {"success": True, "pastTenseMessage": "ran"}
COMPLETE_TOOL = {
    "type": "chat/toolCallComplete",
    "turnId": "t1",
    "toolCallId": "tc1",
    "result": RESULT,
}
MCP = {"kind": "mcp", "customizationId": "m1"}
AUTH = {
    "type": "chat/toolCallAuthRequired",
    "turnId": "t1",
    "toolCallId": "tc1",
    "auth": {"resource": "https://x"},
}
TRUNC = {"type": "chat/truncated", "turnId": "a"}
DONE_A = {"id": "a", "message": MSG, "responseParts": [], "state": "complete"}
DONE_B = {"id": "b", "message": MSG, "responseParts": [], "state": "complete"}
DONE_C = {"id": "c", "message": MSG, "responseParts": [], "state": "complete"}
LOADED = {"type": "chat/turnsLoaded", "turns": [DONE_A, DONE_B], "turnsNextCursor": "k2"}
Q1 = {"id": "q1", "message": MSG}
Q2 = {"id": "q2", "message": {**MSG, "text": "two"}}
Q3 = {"id": "q3", "message": {**MSG, "text": "three"}}
REORDER = {"type": "chat/queuedMessagesReordered", "order": ["q3", "q3", "gone", "q1"]}
ANSWER = {
    "type": "chat/inputAnswerChanged",
    "requestId": "r1",
    "questionId": "a",
    "answer": {"state": "draft", "value": {"kind": "text", "value": "x"}},
}

with_turn = chat(status=8, activeTurn=turn("t1", md()))
two_tools = chat(
    status=8,
    activeTurn=turn("t1", tool_part("tc1", "running"), tool_part("tc2", "streaming"), md()),
)


FAILING = [
    # INV-015 — wrong turnId is a no-op
    Case(
        "INV-015",
        with_after(
            step("chat", with_turn, {**DELTA, "turnId": "t0"}),
            lambda s: _parts(s)[0].update(content="x"),
        ),
        "delta-on-wrong-turn-applied",
    ),
    Case(
        "INV-015",
        with_after(
            step("chat", chat(), {**COMPLETE, "turnId": "t0"}), lambda s: s.update(turns=[DONE_A])
        ),
        "complete-without-active-turn",
    ),
    Case(
        "INV-015.strict",
        step("chat", chat(status=2, turns=[DONE_A]), CONFIRM_STALE),
        "stale-confirm-erases-Error",
    ),
    # INV-016 — turn end postconditions
    Case(
        "INV-016",
        with_after(
            step("chat", two_tools, COMPLETE),
            lambda s: _last_turn(s)["responseParts"][0]["toolCall"].update(status="running"),
        ),
        "running-call-not-cancelled",
    ),
    Case(
        "INV-016",
        with_after(
            step("chat", two_tools, COMPLETE), lambda s: s.update(activeTurn=s["turns"][-1])
        ),
        "active-turn-kept",
    ),
    Case(
        "INV-016",
        with_after(step("chat", with_turn, ERROR), lambda s: _last_turn(s).update(duration=-3)),
        "negative-duration-not-clamped",
    ),
    Case(
        "INV-016",
        with_after(
            step("chat", with_turn, COMPLETE), lambda s: _last_turn(s).update(state="cancelled")
        ),
        "wrong-end-state",
    ),
    Case(
        "INV-016",
        with_after(
            step("chat", with_turn, COMPLETE),
            lambda s: (
                _last_turn(s)["responseParts"].reverse()
                or _last_turn(s)["responseParts"].append(md("p2"))
            ),
        ),
        "parts-changed",
    ),
    # INV-020 — truncation
    Case(
        "INV-020",
        with_after(
            step("chat", chat(turns=[DONE_A, DONE_B]), TRUNC), lambda s: s.update(turns=[DONE_B])
        ),
        "wrong-prefix",
    ),
    Case(
        "INV-020",
        with_after(
            step(
                "chat",
                chat(turns=[DONE_A], turnsNextCursor="k", draft=MSG),
                {"type": "chat/truncated"},
            ),
            lambda s: s.update(turnsNextCursor="k", draft=None),
        ),
        "cursor-kept-and-draft-lost",
    ),
    Case(
        "INV-020",
        with_after(
            step(
                "chat",
                chat(status=8, turns=[DONE_A], activeTurn=turn("t1")),
                {"type": "chat/truncated", "turnId": "zz"},
            ),
            lambda s: s.pop("activeTurn"),
        ),
        "unknown-turn-changes-state",
    ),
    # INV-021 — turnsLoaded
    Case(
        "INV-021",
        with_after(
            step("chat", chat(turns=[DONE_C], turnsNextCursor="k1"), LOADED),
            lambda s: s.update(turns=[DONE_C, DONE_A, DONE_B]),
        ),
        "appended-not-prepended",
    ),
    Case(
        "INV-021",
        with_after(
            step("chat", chat(turns=[DONE_B], turnsNextCursor="k1"), LOADED),
            lambda s: s.update(turns=[DONE_A, DONE_B, DONE_B]),
        ),
        "duplicate-of-present-turn",
    ),
    Case(
        "INV-021",
        with_after(
            step(
                "chat",
                chat(turns=[], turnsNextCursor="k1"),
                {"type": "chat/turnsLoaded", "turns": [DONE_A]},
            ),
            lambda s: s.update(turnsNextCursor="k1"),
        ),
        "stale-cursor-kept",
    ),
    # INV-X03 — response parts append-only
    Case(
        "INV-X03",
        with_after(
            step(
                "chat", with_turn, {"type": "chat/responsePart", "turnId": "t1", "part": md("p2")}
            ),
            lambda s: _parts(s).reverse(),
        ),
        "parts-reordered",
    ),
    Case(
        "INV-X03",
        with_after(step("chat", with_turn, DELTA), lambda s: _parts(s).clear()),
        "part-removed",
    ),
    # INV-017 — tool-call state machine
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                two_tools,
                {"type": "chat/toolCallDelta", "turnId": "t1", "toolCallId": "tc2", "content": "a"},
            ),
            lambda s: _tc(s, 1).update(status="completed"),
        ),
        "streaming-to-completed",
    ),
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                chat(status=8, activeTurn=turn("t1", tool_part("tc1", "completed", success=True))),
                COMPLETE_TOOL,
            ),
            lambda s: _tc(s).update(pastTenseMessage="again"),
        ),
        "completed-is-absorbing",
    ),
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                two_tools,
                {
                    "type": "chat/toolCallContentChanged",
                    "turnId": "t1",
                    "toolCallId": "tc1",
                    "content": [],
                },
            ),
            lambda s: _tc(s).update(toolName="rm"),
        ),
        "identity-changed",
    ),
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                with_turn,
                {
                    "type": "chat/toolCallStart",
                    "turnId": "t1",
                    "toolCallId": "tc9",
                    "toolName": "x",
                    "displayName": "X",
                },
            ),
            lambda s: _parts(s)[-1]["toolCall"].update(status="running"),
        ),
        "start-not-streaming",
    ),
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                chat(
                    status=8,
                    activeTurn=turn(
                        "t1",
                        tool_part(
                            "tc1", "streaming", contributor={"kind": "client", "clientId": "A"}
                        ),
                    ),
                ),
                {
                    "type": "chat/toolCallReady",
                    "turnId": "t1",
                    "toolCallId": "tc1",
                    "invocationMessage": "go",
                    "contributor": {"kind": "client", "clientId": "B"},
                },
            ),
            lambda s: _tc(s).update(contributor={"kind": "client", "clientId": "B"}),
        ),
        "ready-moves-client-ownership",
    ),
    Case(
        "INV-017",
        with_after(
            step(
                "chat",
                two_tools,
                {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"},
            ),
            lambda s: _parts(s).pop(0),
        ),
        "tool-call-disappears",
    ),
    # INV-018 — auth-required
    Case(
        "INV-018",
        with_after(
            step("chat", chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))), AUTH),
            lambda s: _tc(s).update(status="auth-required", auth=AUTH["auth"]),
        ),
        "non-mcp-call-enters-auth",
    ),
    Case(
        "INV-018",
        with_after(
            step(
                "chat",
                chat(
                    status=24,
                    activeTurn=turn("t1", tool_part("tc1", "auth-required", contributor=MCP)),
                ),
                COMPLETE_TOOL,
            ),
            lambda s: _tc(s).update(status="completed", success=True),
        ),
        "success-completes-auth-required",
    ),
    Case(
        "INV-018",
        with_after(
            step(
                "chat",
                chat(
                    status=24,
                    activeTurn=turn("t1", tool_part("tc1", "auth-required", contributor=MCP)),
                ),
                {
                    **COMPLETE_TOOL,
                    "result": {"success": False, "pastTenseMessage": "no"},
                    "requiresResultConfirmation": True,
                },
            ),
            lambda s: _tc(s).update(status="pending-result-confirmation"),
        ),
        "failure-asks-result-confirmation",
    ),
    # INV-019 — selectedOption
    Case(
        "INV-019",
        with_after(
            step("chat", chat(status=24, activeTurn=turn("t1", PENDING)), CONFIRM),
            lambda s: _tc(s).update(
                selectedOption={"id": "o9", "label": "Made up", "kind": "approve"}
            ),
        ),
        "option-not-offered",
    ),
    Case(
        "INV-019",
        with_after(
            step(
                "chat",
                chat(
                    status=8,
                    activeTurn=turn("t1", tool_part("tc1", "running", selectedOption=OPTIONS[0])),
                ),
                COMPLETE_TOOL,
            ),
            lambda s: _tc(s).pop("selectedOption"),
        ),
        "selection-dropped-on-complete",
    ),
    Case(
        "INV-019",
        with_after(
            step(
                "chat",
                chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))),
                COMPLETE_TOOL,
            ),
            lambda s: _tc(s).update(selectedOption=OPTIONS[0]),
        ),
        "selection-gained-outside-confirmation",
    ),
    # INV-051 — tool results cannot overwrite identity (known: the reference reducer spreads result)
    Case(
        "INV-051",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))),
            {**COMPLETE_TOOL, "result": {**RESULT, "status": "running", "toolCallId": "evil"}},
        ),
        "reference-spreads-result",
    ),
    # INV-023 — input requests
    Case(
        "INV-023",
        with_after(
            step(
                "chat",
                chat(status=24, activeTurn=turn("t1", input_part("r1"), input_part("r2"))),
                ANSWER,
            ),
            lambda s: _parts(s)[1]["request"].update(answers={"a": 1}),
        ),
        "answers-other-request",
    ),
    Case(
        "INV-023",
        with_after(
            step(
                "chat",
                chat(status=8, activeTurn=turn("t1", input_part("r1", "accept"))),
                {"type": "chat/inputRequested", "request": {"id": "r2"}},
            ),
            lambda s: _parts(s)[0].update(response="decline"),
        ),
        "responded-part-modified",
    ),
    Case(
        "INV-023",
        with_after(
            step(
                "chat",
                chat(status=24, activeTurn=turn("t1", input_part("r1", answers={"a": 1}))),
                {"type": "chat/inputAnswerChanged", "requestId": "r1", "questionId": "a"},
            ),
            lambda s: _parts(s)[0]["request"].update(answers={}),
        ),
        "empty-answers-kept",
    ),
    # INV-024 — pending messages
    Case(
        "INV-024",
        with_after(
            step(
                "chat",
                chat(queuedMessages=[Q1]),
                {"type": "chat/pendingMessageSet", "kind": "queued", "id": "q2", "message": MSG},
            ),
            lambda s: s.update(queuedMessages=[Q1, Q1]),
        ),
        "duplicate-queued-id",
    ),
    Case(
        "INV-024",
        with_after(
            step(
                "chat",
                chat(queuedMessages=[Q1]),
                {"type": "chat/pendingMessageRemoved", "kind": "queued", "id": "q1"},
            ),
            lambda s: s.update(queuedMessages=[]),
        ),
        "emptied-queue-left-as-list",
    ),
    Case(
        "INV-024",
        with_after(
            step("chat", chat(queuedMessages=[Q1, Q2, Q3]), REORDER),
            lambda s: s.update(queuedMessages=[Q3, Q1]),
        ),
        "reorder-drops-a-message",
    ),
    Case(
        "INV-024",
        with_after(
            step("chat", chat(queuedMessages=[Q1, Q2, Q3]), REORDER),
            lambda s: s.update(queuedMessages=[Q3, Q2, Q1]),
        ),
        "reorder-wrong-order",
    ),
    Case(
        "INV-024",
        with_after(
            step(
                "chat",
                chat(),
                {"type": "chat/pendingMessageSet", "kind": "steering", "id": "s1", "message": MSG},
            ),
            lambda s: s.update(steeringMessage=[{"id": "s1", "message": MSG}]),
        ),
        "steering-list",
    ),
]

PASSING = [
    Case("INV-015", step("chat", with_turn, {**DELTA, "turnId": "t0"}), "delta-on-wrong-turn"),
    Case(
        "INV-015",
        step("chat", chat(status=2, turns=[DONE_A]), CONFIRM_STALE),
        "stale-confirm-may-fix-status",
    ),
    Case(
        "INV-015.strict",
        step("chat", chat(status=1, turns=[DONE_A]), CONFIRM_STALE),
        "stale-confirm-on-idle-chat",
    ),
    Case("INV-016", step("chat", two_tools, COMPLETE), "force-cancel"),
    Case("INV-016", step("chat", with_turn, ERROR), "error-clamps-duration"),
    Case(
        "INV-016",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", input_part("r1"), tool_part("tc1", "completed"))),
            {**COMPLETE, "type": "chat/turnCancelled"},
        ),
        "cancel-keeps-finished-parts",
    ),
    Case(
        "INV-020",
        step("chat", chat(turns=[DONE_A, DONE_B], turnsNextCursor="k"), TRUNC),
        "prefix-keeps-cursor",
    ),
    Case(
        "INV-020",
        step(
            "chat",
            chat(
                status=8,
                turns=[DONE_A],
                turnsNextCursor="k",
                activeTurn=turn(),
                queuedMessages=[Q1],
            ),
            {"type": "chat/truncated"},
        ),
        "truncate-all",
    ),
    Case(
        "INV-020",
        step(
            "chat",
            chat(status=8, turns=[DONE_A], activeTurn=turn("t1")),
            {"type": "chat/truncated", "turnId": "zz"},
        ),
        "unknown-turn-noop",
    ),
    Case(
        "INV-021",
        step("chat", chat(turns=[DONE_B], turnsNextCursor="k1"), LOADED),
        "skips-present-prepends-new",
    ),
    Case(
        "INV-021",
        step("chat", chat(turns=[DONE_C]), {"type": "chat/turnsLoaded", "turns": [DONE_A, DONE_A]}),
        "in-batch-duplicates-kept",
    ),
    Case(
        "INV-X03",
        step("chat", with_turn, {"type": "chat/responsePart", "turnId": "t1", "part": md("p2")}),
        "append",
    ),
    Case(
        "INV-X03",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", input_part("r1"))),
            {"type": "chat/inputCompleted", "requestId": "r1", "response": "accept"},
        ),
        "complete-in-place",
    ),
    Case("INV-017", step("chat", two_tools, COMPLETE), "force-cancel-edges"),
    Case(
        "INV-017", step("chat", chat(status=24, activeTurn=turn("t1", PENDING)), CONFIRM), "confirm"
    ),
    Case(
        "INV-017",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", tool_part("tc1", "streaming"))),
            {
                "type": "chat/toolCallReady",
                "turnId": "t1",
                "toolCallId": "tc1",
                "invocationMessage": "go",
                "intention": "look",
                "contributor": MCP,
            },
        ),
        "ready-refines-mcp-0.7",
    ),
    Case(
        "INV-017",
        step(
            "chat",
            with_turn,
            {
                "type": "chat/toolCallStart",
                "turnId": "t1",
                "toolCallId": "tc9",
                "toolName": "x",
                "displayName": "X",
            },
        ),
        "start-streams",
    ),
    Case(
        "INV-018",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running", contributor=MCP))),
            AUTH,
        ),
        "mcp-call-enters-auth",
    ),
    Case(
        "INV-018",
        step(
            "chat",
            chat(
                status=24, activeTurn=turn("t1", tool_part("tc1", "auth-required", contributor=MCP))
            ),
            COMPLETE_TOOL,
        ),
        "success-ignored",
    ),
    Case(
        "INV-018",
        step(
            "chat",
            chat(
                status=24, activeTurn=turn("t1", tool_part("tc1", "auth-required", contributor=MCP))
            ),
            {
                **COMPLETE_TOOL,
                "result": {"success": False, "pastTenseMessage": "no"},
                "requiresResultConfirmation": True,
            },
        ),
        "failure-completes",
    ),
    Case(
        "INV-018",
        step("chat", chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))), AUTH),
        "client-call-auth-ignored",
    ),
    Case(
        "INV-019",
        step("chat", chat(status=24, activeTurn=turn("t1", PENDING)), CONFIRM),
        "offered-option",
    ),
    Case(
        "INV-019",
        step(
            "chat",
            chat(
                status=8,
                activeTurn=turn("t1", tool_part("tc1", "running", selectedOption=OPTIONS[0])),
            ),
            COMPLETE_TOOL,
        ),
        "carried-into-completed",
    ),
    Case(
        "INV-051",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))),
            COMPLETE_TOOL,
        ),
        "plain-result",
    ),
    Case(
        "INV-051",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))),
            {**COMPLETE_TOOL, "result": {**RESULT, "extra": 1}},
        ),
        "harmless-extra-key",
    ),
    Case(
        "INV-023",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", input_part("r1"), input_part("r2"))),
            ANSWER,
        ),
        "answer-targets-one",
    ),
    Case(
        "INV-023",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", input_part("r1", answers={"a": 1}))),
            {"type": "chat/inputAnswerChanged", "requestId": "r1", "questionId": "a"},
        ),
        "last-answer-removed-clears",
    ),
    Case(
        "INV-023",
        step(
            "chat",
            chat(status=8, activeTurn=turn("t1", input_part("r1", "accept"))),
            {"type": "chat/inputRequested", "request": {"id": "r1"}},
        ),
        "same-id-after-response-appends",
    ),
    Case(
        "INV-024",
        step(
            "chat",
            chat(queuedMessages=[Q1]),
            {"type": "chat/pendingMessageRemoved", "kind": "queued", "id": "q1"},
        ),
        "emptied-queue-removed",
    ),
    Case("INV-024", step("chat", chat(queuedMessages=[Q1, Q2, Q3]), REORDER), "stale-order"),
    Case(
        "INV-024",
        step(
            "chat",
            chat(queuedMessages=[Q1]),
            {
                "type": "chat/turnStarted",
                "turnId": "t1",
                "startedAt": "x",
                "message": MSG,
                "queuedMessageId": "q1",
            },
        ),
        "turnStarted-consumes",
    ),
    Case("INV-024", step("chat", chat(), REORDER), "reorder-without-queue"),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_0_6_0_ready_may_not_change_intention() -> None:
    """Before 0.7.0 `chat/toolCallReady` carries no intention: a change is an identity change."""
    s = step(
        "chat",
        chat(status=8, activeTurn=turn("t1", tool_part("tc1", "streaming"))),
        {
            "type": "chat/toolCallReady",
            "turnId": "t1",
            "toolCallId": "tc1",
            "invocationMessage": "go",
        },
        profile=P060,
    )
    bad = with_after(s, lambda a: _tc(a).update(intention="changed"))
    assert any(
        "intention" in v.message for v in assert_fails(Case("INV-017", bad, "0.6-intention"))
    )


def test_result_override_is_left_to_inv_051() -> None:
    """A result carrying `status` is INV-051's known issue, not an INV-017 violation."""
    s = step(
        "chat",
        chat(status=8, activeTurn=turn("t1", tool_part("tc1", "running"))),
        {**COMPLETE_TOOL, "result": {**RESULT, "status": "running"}},
    )
    assert_passes(Case("INV-017", s, "override-deferred"))
    assert_fails(Case("INV-051", s, "override-reported"))
