"""Exact rendering (issue 9 (d), (f)): absent, null, [] and {} apart; messages name exactly
what changed; one JSON diff."""

from __future__ import annotations

from harness.diff import ABSENT, at, diff_paths, json_diff, render, shape
from harness.invariants import check_step
from harness.invariants._json import describe_diffs, short
from harness.invariants.base import Step
from harness.reference import Profile

P = Profile.named("0.7.0")


def test_absent_null_empty_list_and_empty_object_render_apart() -> None:
    texts = {render(v) for v in (ABSENT, None, [], {})}
    assert texts == {"<absent>", "null", "[]", "{}"}
    assert at({"a": None}, "a") is None and at({}, "a") is ABSENT and at([1], 3) is ABSENT
    assert short(at({}, "k")) == "<absent>" and short(at({"k": []}, "k")) == "[]"
    assert short(None) == "<absent or null>"  # a bare None cannot tell which: it says so


def test_one_diff_key_presence_sensitive_or_not() -> None:
    a, b = {"x": None, "y": [], "z": {}}, {"y": None, "z": {}}
    lines = json_diff(a, b)
    assert lines == ["$.x: expected null, got <absent>", "$.y: expected [], got null"]
    # the invariants' equality: a null key counts as absent, but the real values are shown
    assert [(p, va, vb) for p, va, vb in diff_paths(a, b, null_is_absent=True)] == [(("y",), [], None)]
    assert describe_diffs({"t": []}, {}, left="reference", right="target") == "t: reference=[] target=<absent>"
    assert json_diff([1, 2], [1]) == ["$[1]: expected 2, got <absent>"]
    assert json_diff({"n": 1}, {"n": 1.0}) == [] and json_diff({"b": True}, {"b": 1}) != []
    assert shape(("turns", 3, "responseParts", 0, "toolCall")) == "turns[].responseParts[].toolCall"


def _chat(status: int) -> dict:
    return {"resource": "ahp-chat:/c", "title": "", "status": status, "modifiedAt": "1970-01-01T00:00:00.000Z", "turns": []}


def test_inv_011_names_the_bit_that_changed_counting_from_zero() -> None:
    before, after = _chat(1), _chat(1 | (1 << 31))
    step = Step("chat", before, {"type": "chat/draftChanged"}, after, 5, P)
    [v] = check_step(step, only={"INV-011"})
    assert "set bit 31 (= 2147483648)" in v.message and "bit 32" not in v.message
    step = Step("chat", _chat(33), {"type": "chat/draftChanged"}, _chat(1), 5, P)
    [v] = check_step(step, only={"INV-011"})
    assert "cleared IsRead (bit 5 = 32)" in v.message
    step = Step("chat", _chat(1 << 31), {"type": "chat/draftChanged"}, _chat(-(1 << 31)), 5, P)
    [v] = check_step(step, only={"INV-011"})
    assert "negative status" in v.message and "bit 32" not in v.message


def test_inv_018_says_the_status_stayed_when_only_other_fields_changed() -> None:
    tc = {"toolCallId": "c1", "toolName": "t", "displayName": "T", "status": "auth-required",
          "contributor": {"kind": "mcp", "customizationId": "x"}, "invocationMessage": "i",
          "auth": {"resource": {"resource": "https://e"}, "reason": "r"}, "content": []}
    lossy = {k: v for k, v in tc.items() if k != "content"}

    def chat(part: dict) -> dict:
        return {**_chat(8), "activeTurn": {"id": "t1", "startedAt": "x", "message": {"text": ""}, "responseParts": [{"kind": "toolCall", "toolCall": part}]}}

    action = {"type": "chat/toolCallComplete", "turnId": "t1", "toolCallId": "c1", "result": {"success": False, "pastTenseMessage": "p"}}
    [v] = check_step(Step("chat", chat(tc), action, chat(lossy), 5, P), only={"INV-018"})
    assert "left responseParts[0]" in v.message and "status unchanged" in v.message and "content" in v.message
    assert "moved" not in v.message
    moved = {**tc, "status": "running"}
    [v] = check_step(Step("chat", chat(tc), action, chat(moved), 5, P), only={"INV-018"})
    assert 'from auth-required to "running"' in v.message
