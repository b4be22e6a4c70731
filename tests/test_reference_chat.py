"""Chat reducer behaviours that REDUCERS.md states as verified but no upstream fixture covers.

States are crafted inline; no spec directory is needed. Section numbers refer to REDUCERS.md.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.reference.chat import HANDLERS
from harness.reference.profile import Ctx, Profile

NOW_MS = 9999
NOW_ISO = "1970-01-01T00:00:09.999Z"
OLD_ISO = "1970-01-01T00:00:02.000Z"
REF = {"uri": "file:///tool-inputs/tc-1.json"}
MESSAGE = {"text": "Hello", "origin": {"kind": "user"}}


def run(
    state: dict[str, Any],
    *actions: dict[str, Any],
    version: str = "0.7.0",
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Fold `actions` over `state` with the chat table; assert no input was mutated."""
    sink = warnings if warnings is not None else []
    ctx = Ctx(now_ms=NOW_MS, profile=Profile.for_version(version), warn=sink.append)
    for action in actions:
        before, action_before = copy.deepcopy(state), copy.deepcopy(action)
        nxt = HANDLERS[action["type"]](state, action, ctx)
        assert state == before, f"{action['type']} mutated its input state"
        assert action == action_before, f"{action['type']} mutated its action"
        state = nxt
    return state


def chat(
    *parts: dict[str, Any], status: int = 8, active: bool = True, **extra: Any
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "resource": "ahp-chat:/c1",
        "title": "Chat",
        "status": status,
        "modifiedAt": OLD_ISO,
        "turns": [],
        **extra,
    }
    if active:
        state["activeTurn"] = {
            "id": "t1",
            "startedAt": "1970-01-01T00:00:01.000Z",
            "message": MESSAGE,
            "responseParts": list(parts),
        }
    return state


def tool(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "toolCall",
        "toolCall": {
            "toolCallId": "tc-1",
            "toolName": "bash",
            "displayName": "Run",
            "status": status,
            **fields,
        },
    }


def tc_action(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": f"chat/{kind}", "turnId": "t1", "toolCallId": "tc-1", **fields}


def the_tool_call(state: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return state["activeTurn"]["responseParts"][index]["toolCall"]


def test_table_covers_the_chat_types_of_every_version() -> None:
    from harness.reference.dispatch import tables_for
    from harness.spec.versions import action_types

    assert set(HANDLERS) == set(action_types("1.0.0", "chat"))
    assert len(HANDLERS) == 37
    assert len(tables_for(Profile.named("0.7.0"))["chat"]) == 29
    assert len(tables_for(Profile.named("0.9.0"))["chat"]) == 30  # + chat/turnResume


# -- §5.1 / §11 item 18: status recompute even when the tool-call update is a no-op ----------


@pytest.mark.parametrize(
    "action",
    [
        tc_action("toolCallConfirmed", approved=True, confirmed="user-action"),
        tc_action("toolCallComplete", result={"success": True}),
        tc_action("toolCallResultConfirmed", approved=True),
    ],
    ids=["confirmed", "complete", "resultConfirmed"],
)
def test_late_tool_call_action_after_error_resets_status_to_idle(action: dict[str, Any]) -> None:
    state = run(
        chat(tool("pending-confirmation"), status=8 | 32),
        {"type": "chat/error", "turnId": "t1", "duration": 5, "error": {"message": "boom"}},
    )
    assert state["status"] == 2 | 32
    after = run(state, action)
    assert after["status"] == 1 | 32  # the error indication is erased, IsRead kept
    assert after["turns"] == state["turns"]
    assert after["modifiedAt"] == state["modifiedAt"]  # recompute does not stamp


def test_noop_tool_call_action_with_unchanged_status_returns_same_object() -> None:
    state = chat(tool("running"), status=8)
    assert run(state, tc_action("toolCallConfirmed", approved=True, confirmed="x")) is state


def test_noop_tool_call_ready_repairs_stale_status_after_response_part() -> None:
    """§11 item 16: responsePart does not recompute; a later no-op Ready does."""
    request_part = {"kind": "inputRequest", "request": {"id": "r1", "message": "?"}}
    state = run(chat(status=8), {"type": "chat/responsePart", "turnId": "t1", "part": request_part})
    assert state["status"] == 8
    repaired = run(state, tc_action("toolCallReady", toolCallId="unknown", invocationMessage="x"))
    assert repaired["status"] == 24
    assert repaired["activeTurn"] is state["activeTurn"]


# -- §5.4 tool-call transitions ----------------------------------------------------------------


def test_result_with_extra_status_key_overwrites_status() -> None:
    state = run(
        chat(tool("running", confirmed="not-needed")),
        tc_action(
            "toolCallComplete", result={"success": True, "status": "running", "toolCallId": "x"}
        ),
    )
    tc = the_tool_call(state)
    assert tc["status"] == "running"
    assert tc["toolCallId"] == "x"
    assert tc["success"] is True


def test_complete_from_running_keeps_selected_option_drops_live_content() -> None:
    option = {"id": "o1", "label": "Approve", "kind": "approve"}
    state = run(
        chat(
            tool(
                "running",
                confirmed="user-action",
                selectedOption=option,
                content=[{"type": "text"}],
            )
        ),
        tc_action("toolCallComplete", result={"success": True}, requiresResultConfirmation=True),
    )
    tc = the_tool_call(state)
    assert tc["status"] == "pending-result-confirmation"
    assert tc["selectedOption"] == option
    assert "content" not in tc
    assert state["status"] == 24


def test_complete_from_pending_confirmation_defaults_confirmed_and_has_no_selected_option() -> None:
    option = {"id": "o1", "label": "Approve"}
    state = run(
        chat(tool("pending-confirmation", options=[option], selectedOption=option)),
        tc_action("toolCallComplete", result={"success": True}),
    )
    tc = the_tool_call(state)
    assert tc["status"] == "completed"
    assert tc["confirmed"] == "not-needed"
    assert "selectedOption" not in tc
    assert "options" not in tc


def test_confirmed_with_unknown_selected_option_omits_it() -> None:
    state = run(
        chat(tool("pending-confirmation", options=[{"id": "o1", "label": "A"}])),
        tc_action(
            "toolCallConfirmed", approved=True, confirmed="user-action", selectedOptionId="nope"
        ),
    )
    tc = the_tool_call(state)
    assert tc["status"] == "running"
    assert "selectedOption" not in tc


def test_update_applies_to_every_part_with_the_tool_call_id() -> None:
    state = run(
        chat(tool("streaming"), tool("streaming")),
        tc_action("toolCallDelta", content="ab"),
        tc_action("toolCallDelta", content="c"),
    )
    assert [the_tool_call(state, i)["partialInput"] for i in (0, 1)] == ["abc", "abc"]


def test_delta_without_content_does_not_create_partial_input() -> None:
    state = run(chat(tool("streaming")), tc_action("toolCallDelta", invocationMessage="msg"))
    tc = the_tool_call(state)
    assert "partialInput" not in tc
    assert tc["invocationMessage"] == "msg"


def test_turn_end_force_cancels_streaming_call_with_empty_message_and_no_input() -> None:
    state = run(
        chat(tool("streaming", partialInput="{", _meta={"m": 1}), tool("completed", success=True)),
        {"type": "chat/turnComplete", "turnId": "t1", "duration": -3},
    )
    turn = state["turns"][-1]
    assert turn["duration"] == 0
    assert turn["responseParts"][0]["toolCall"] == {
        "status": "cancelled",
        "toolCallId": "tc-1",
        "toolName": "bash",
        "displayName": "Run",
        "_meta": {"m": 1},
        "invocationMessage": "",
        "reason": "skipped",
    }
    assert turn["responseParts"][1]["toolCall"]["status"] == "completed"
    assert "activeTurn" not in state
    assert state["modifiedAt"] == NOW_ISO
    assert state["status"] == 1


# -- §5.3 streaming: first identifier match --------------------------------------------------


def test_delta_uses_first_identifier_match_even_if_not_markdown() -> None:
    state = chat(
        {"kind": "reasoning", "id": "p1", "content": "r"},
        {"kind": "markdown", "id": "p1", "content": "m"},
    )
    action = {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "+"}
    assert run(state, action) is state


def test_delta_appends_only_to_the_first_of_duplicate_markdown_parts() -> None:
    state = run(
        chat(
            {"kind": "markdown", "id": "p1", "content": "a"},
            {"kind": "markdown", "id": "p1", "content": "b"},
        ),
        {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "+"},
    )
    assert [p["content"] for p in state["activeTurn"]["responseParts"]] == ["a+", "b"]


def test_delta_matches_a_tool_call_id_and_appends_nothing() -> None:
    state = chat(tool("streaming"), {"kind": "markdown", "id": "tc-1", "content": "m"})
    action = {"type": "chat/delta", "turnId": "t1", "partId": "tc-1", "content": "+"}
    assert run(state, action) is state


# -- §5.2 turn lifecycle -----------------------------------------------------------------------


def test_turn_started_over_existing_active_turn_discards_it() -> None:
    old = chat({"kind": "markdown", "id": "p1", "content": "lost"}, status=8 | 32)
    state = run(
        old,
        {"type": "chat/turnStarted", "turnId": "t2", "startedAt": "x", "message": MESSAGE},
    )
    assert state["turns"] == []
    assert state["activeTurn"] == {
        "id": "t2",
        "startedAt": "x",
        "message": MESSAGE,
        "responseParts": [],
    }
    assert state["status"] == 8  # recomputed, IsRead cleared
    assert state["modifiedAt"] == NOW_ISO


def test_turn_started_with_unknown_queued_id_removes_a_present_empty_queue() -> None:
    state = run(
        chat(active=False, status=1, queuedMessages=[]),
        {
            "type": "chat/turnStarted",
            "turnId": "t2",
            "startedAt": "x",
            "message": MESSAGE,
            "queuedMessageId": "q9",
        },
    )
    assert "queuedMessages" not in state


def test_turn_started_consumes_steering_and_every_queued_entry_with_that_id() -> None:
    entry = {"id": "q1", "message": MESSAGE}
    state = run(
        chat(
            active=False,
            status=1,
            steeringMessage=entry,
            queuedMessages=[entry, {"id": "q2", "message": MESSAGE}, entry],
        ),
        {
            "type": "chat/turnStarted",
            "turnId": "t2",
            "startedAt": "x",
            "message": MESSAGE,
            "queuedMessageId": "q1",
        },
    )
    assert "steeringMessage" not in state
    assert [m["id"] for m in state["queuedMessages"]] == ["q2"]


def test_turns_loaded_keeps_duplicates_within_the_page() -> None:
    turn = {"id": "old", "message": MESSAGE, "responseParts": [], "state": "complete"}
    known = {"id": "k", "message": MESSAGE, "responseParts": [], "state": "complete"}
    state = run(
        chat(active=False, status=1, turns=[known], turnsNextCursor="c1"),
        {"type": "chat/turnsLoaded", "turns": [turn, known, turn]},
    )
    assert [t["id"] for t in state["turns"]] == ["old", "old", "k"]
    assert "turnsNextCursor" not in state


def test_truncated_unknown_turn_is_noop_even_with_active_turn() -> None:
    state = chat(status=8)
    assert run(state, {"type": "chat/truncated", "turnId": "missing"}) is state


# -- §5.6 pending messages ---------------------------------------------------------------------


def test_reorder_with_stale_and_duplicate_ids() -> None:
    queue = [{"id": q, "message": MESSAGE} for q in ("q1", "q2", "q3")]
    state = run(
        chat(active=False, status=1, queuedMessages=queue),
        {"type": "chat/queuedMessagesReordered", "order": ["q3", "q3", "gone", "q1"]},
    )
    assert [m["id"] for m in state["queuedMessages"]] == ["q3", "q1", "q2"]


def test_reorder_of_present_empty_queue_stays_empty() -> None:
    state = chat(active=False, status=1, queuedMessages=[])
    after = run(state, {"type": "chat/queuedMessagesReordered", "order": ["a"]})
    assert after["queuedMessages"] == []


def test_removing_last_queued_message_removes_the_key() -> None:
    state = run(
        chat(active=False, status=1, queuedMessages=[{"id": "q1", "message": MESSAGE}]),
        {"type": "chat/pendingMessageRemoved", "kind": "queued", "id": "q1"},
    )
    assert "queuedMessages" not in state


# -- §5.8 input requests -----------------------------------------------------------------------


def test_input_requested_after_completed_part_with_same_id_appends_new_part() -> None:
    done = {"kind": "inputRequest", "request": {"id": "r1"}, "response": "accept"}
    state = run(
        chat(done, status=8 | 32),
        {"type": "chat/inputRequested", "request": {"id": "r1", "message": "again"}},
    )
    parts = state["activeTurn"]["responseParts"]
    assert len(parts) == 2
    assert parts[0] == done
    assert parts[1] == {"kind": "inputRequest", "request": {"id": "r1", "message": "again"}}
    assert state["status"] == 24  # InputNeeded, IsRead cleared
    assert state["modifiedAt"] == NOW_ISO


def test_input_completed_overlays_payload_answers_on_drafts() -> None:
    drafts = {"a": {"state": "draft"}, "b": {"state": "draft"}}
    part = {"kind": "inputRequest", "request": {"id": "r1", "answers": drafts}}
    state = run(
        chat(part, status=24),
        {
            "type": "chat/inputCompleted",
            "requestId": "r1",
            "response": "accept",
            "answers": {"b": {"state": "submitted"}},
        },
    )
    done = state["activeTurn"]["responseParts"][0]
    assert done["request"]["answers"] == {"a": {"state": "draft"}, "b": {"state": "submitted"}}
    assert done["response"] == "accept"
    assert state["status"] == 8


# -- §7b.2 contributor ownership (0.7.0) -------------------------------------------------------

CLIENT_X = {"kind": "client", "clientId": "X"}
CLIENT_Y = {"kind": "client", "clientId": "Y"}
MCP_1 = {"kind": "mcp", "customizationId": "m1"}
MCP_2 = {"kind": "mcp", "customizationId": "m2"}


@pytest.mark.parametrize(
    ("current", "proposed", "expected", "warning"),
    [
        (CLIENT_X, None, CLIENT_X, None),
        (None, None, None, None),
        (CLIENT_X, {**CLIENT_X, "extra": 1}, {**CLIENT_X, "extra": 1}, None),
        (CLIENT_X, CLIENT_Y, CLIENT_X, "ignoring contributor change"),
        (CLIENT_X, MCP_1, CLIENT_X, "ignoring contributor change"),
        (None, CLIENT_X, None, "late client contributor"),
        (MCP_1, CLIENT_X, MCP_1, "late client contributor"),
        (None, MCP_1, MCP_1, None),
        (MCP_1, MCP_2, MCP_2, None),
    ],
)
def test_ready_contributor_ownership_rule(
    current: dict[str, Any] | None,
    proposed: dict[str, Any] | None,
    expected: dict[str, Any] | None,
    warning: str | None,
) -> None:
    fields = {"contributor": current} if current is not None else {}
    action = tc_action("toolCallReady", invocationMessage="go", confirmed="not-needed")
    if proposed is not None:
        action["contributor"] = proposed
    warnings: list[str] = []
    tc = the_tool_call(run(chat(tool("streaming", **fields)), action, warnings=warnings))
    assert tc.get("contributor") == expected
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warning in warnings[0]


def test_ready_ignores_contributor_and_intention_in_0_6_0() -> None:
    action = tc_action(
        "toolCallReady",
        invocationMessage="go",
        confirmed="not-needed",
        contributor=MCP_1,
        intention="new",
    )
    tc = the_tool_call(run(chat(tool("streaming", intention="old")), action, version="0.6.0"))
    assert tc["intention"] == "old"
    assert "contributor" not in tc
    tc7 = the_tool_call(run(chat(tool("streaming", intention="old")), action))
    assert tc7["intention"] == "new"
    assert tc7["contributor"] == MCP_1


def test_ready_empty_intention_replaces_in_0_7_0() -> None:
    action = tc_action("toolCallReady", invocationMessage="go", intention="")
    assert the_tool_call(run(chat(tool("streaming", intention="old")), action))["intention"] == ""


def test_mcp_refined_at_ready_can_enter_auth_required_only_in_0_7_0() -> None:
    actions = (
        tc_action(
            "toolCallReady", invocationMessage="go", confirmed="not-needed", contributor=MCP_1
        ),
        tc_action("toolCallAuthRequired", auth={"reason": "required"}),
    )
    modern = run(chat(tool("streaming")), *actions)
    assert the_tool_call(modern)["status"] == "auth-required"
    assert modern["status"] == 24
    old = run(chat(tool("streaming")), *actions, version="0.6.0")
    assert the_tool_call(old)["status"] == "running"
    assert old["status"] == 8


# -- §7b row 7: tool-input fallback on Ready ---------------------------------------------------


@pytest.mark.parametrize("previous", ["running", "pending-confirmation"])
@pytest.mark.parametrize("with_confirmed", [True, False])
@pytest.mark.parametrize("tool_input", ['{"a":1}', REF])
def test_ready_without_tool_input_keeps_previous_input_in_0_7_0(
    previous: str, with_confirmed: bool, tool_input: Any
) -> None:
    action = tc_action("toolCallReady", invocationMessage="again")
    if with_confirmed:
        action["confirmed"] = "not-needed"
    tc = the_tool_call(
        run(chat(tool(previous, toolInput=tool_input, confirmed="user-action")), action)
    )
    assert tc["status"] == ("running" if with_confirmed else "pending-confirmation")
    assert tc["toolInput"] == tool_input


@pytest.mark.parametrize(
    ("previous", "with_confirmed", "kept"),
    [
        ("running", True, False),
        ("running", False, False),
        ("pending-confirmation", True, False),
        ("pending-confirmation", False, True),
    ],
)
def test_ready_without_tool_input_in_0_6_0(previous: str, with_confirmed: bool, kept: bool) -> None:
    action = tc_action("toolCallReady", invocationMessage="again")
    if with_confirmed:
        action["confirmed"] = "not-needed"
    tc = the_tool_call(run(chat(tool(previous, toolInput="in")), action, version="0.6.0"))
    assert tc.get("toolInput") == ("in" if kept else None)


@pytest.mark.parametrize("version", ["0.6.0", "0.7.0"])
def test_ready_from_streaming_without_tool_input_leaves_it_absent(version: str) -> None:
    action = tc_action("toolCallReady", invocationMessage="go", confirmed="not-needed")
    tc = the_tool_call(run(chat(tool("streaming", toolInput="stray")), action, version=version))
    assert "toolInput" not in tc


def test_ready_payload_tool_input_wins() -> None:
    action = tc_action("toolCallReady", invocationMessage="go", toolInput="new")
    assert the_tool_call(run(chat(tool("running", toolInput="old")), action))["toolInput"] == "new"


def test_mid_execution_reconfirmation_drops_running_fields() -> None:
    state = run(
        chat(
            tool(
                "running",
                toolInput="in",
                confirmed="user-action",
                selectedOption={"id": "o"},
                content=[],
            )
        ),
        tc_action("toolCallReady", invocationMessage="more"),
    )
    tc = the_tool_call(state)
    assert tc["status"] == "pending-confirmation"
    assert not {"confirmed", "selectedOption", "content"} & set(tc)
    assert state["status"] == 24


# -- §7b row 9: editedToolInput ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "current", "expected"),
    [
        ("0.7.0", "orig", "edited"),
        ("0.7.0", REF, REF),
        ("0.7.0", None, None),
        ("0.6.0", "orig", "edited"),
        ("0.6.0", REF, "edited"),
        ("0.6.0", None, "edited"),
    ],
)
def test_edited_tool_input(version: str, current: Any, expected: Any) -> None:
    fields = {"toolInput": current} if current is not None else {}
    action = tc_action(
        "toolCallConfirmed", approved=True, confirmed="user-action", editedToolInput="edited"
    )
    tc = the_tool_call(run(chat(tool("pending-confirmation", **fields)), action, version=version))
    assert tc["status"] == "running"
    assert tc.get("toolInput") == expected


def test_denied_confirmation_ignores_edited_tool_input() -> None:
    action = tc_action(
        "toolCallConfirmed", approved=False, reason="denied", editedToolInput="edited"
    )
    tc = the_tool_call(run(chat(tool("pending-confirmation", toolInput="orig")), action))
    assert tc["status"] == "cancelled"
    assert tc["toolInput"] == "orig"
    assert tc["reason"] == "denied"


# -- §8.4 chat working directories -------------------------------------------------------------


def test_working_directory_set_on_absent_subset_narrows_to_one() -> None:
    state = chat(active=False, status=1)
    after = run(state, {"type": "chat/workingDirectorySet", "directory": "file:///b"})
    assert after["workingDirectories"] == ["file:///b"]
    assert after["modifiedAt"] == OLD_ISO and after["status"] == 1


def test_working_directory_removing_last_leaves_empty_list() -> None:
    state = chat(active=False, status=1, workingDirectories=["file:///b"])
    after = run(state, {"type": "chat/workingDirectoryRemoved", "directory": "file:///b"})
    assert after["workingDirectories"] == []


def test_working_directory_remove_on_absent_subset_is_identity() -> None:
    state = chat(active=False, status=1)
    assert run(state, {"type": "chat/workingDirectoryRemoved", "directory": "file:///b"}) is state


# -- draft / activity ----------------------------------------------------------------------------


def test_draft_and_activity_cleared_when_omitted() -> None:
    state = chat(active=False, status=1, draft=MESSAGE, activity="thinking")
    after = run(state, {"type": "chat/draftChanged"}, {"type": "chat/activityChanged"})
    assert "draft" not in after and "activity" not in after
    assert after["modifiedAt"] == OLD_ISO


def test_integral_float_status_is_a_bitset() -> None:
    # JSON Schema's `integer` admits 8.0; the model treats it as the number it is.
    from harness.reference import reduce

    s = {"provider": "p", "title": "t", "status": 8.0, "lifecycle": "ready", "activeClients": [], "chats": []}
    assert reduce("session", s, {"type": "session/isReadChanged", "isRead": True}, now_ms=1)["status"] == 40
    c = {"resource": "ahp-chat:/c", "title": "t", "status": 33.0, "modifiedAt": "x", "turns": []}
    started = reduce(
        "chat", c,
        {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "x", "message": {"text": "hi"}},
        now_ms=1,
    )
    assert started["status"] == 8
