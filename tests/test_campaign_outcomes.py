"""The action × outcome classifier and its report section (harness/campaign/outcomes.py)."""

from __future__ import annotations

from collections import Counter

from harness.campaign.outcomes import OutcomeMatrix, matrix_report
from harness.reference import Model, Profile

MODEL = Model(Profile.named("0.7.0"))


def _classify(kind: str, before: dict, action: dict) -> str:
    matrix = OutcomeMatrix()
    after = MODEL.reduce(kind, before, action, 5_000)
    label = matrix(kind, before, action, after, False)
    assert label is not None
    return label.split(": ", 1)[1]


CHAT = {"turns": [], "status": 0, "activeTurn": {"id": "t1", "responseParts": [], "message": {"text": "hi"},
                                                  "startedAt": "1970-01-01T00:00:01.000Z"}}


def test_applied_when_the_state_changes() -> None:
    assert _classify("chat", {"turns": [], "status": 0}, {"type": "chat/draftChanged", "draft": {"text": "x"}}) == "applied"


def test_no_active_turn_and_stale_turn_are_told_apart() -> None:
    idle = {"turns": [], "status": 0}
    assert _classify("chat", idle, {"type": "chat/delta", "turnId": "t1", "partId": "p", "content": "x"}) == "no-op: no active turn"
    assert _classify("chat", CHAT, {"type": "chat/delta", "turnId": "t9", "partId": "p", "content": "x"}) == "no-op: stale turn"


def test_unknown_id_field_is_named() -> None:
    label = _classify("chat", CHAT, {"type": "chat/delta", "turnId": "t1", "partId": "nope", "content": "x"})
    assert label == "no-op: unknown partId"


def test_same_value_is_not_a_guard() -> None:
    matrix = OutcomeMatrix()
    before = {"status": 0}
    assert matrix("root", before, {"type": "root/x"}, {"status": 0}, False) == "root/x: no-op: same value"
    assert matrix("root", before, {"type": "root/x"}, before, False) == "root/x: no-op: guard"


def test_rejected_and_untyped() -> None:
    matrix = OutcomeMatrix()
    assert matrix("chat", {}, {"type": "chat/delta"}, None, True) == "chat/delta: rejected"
    assert matrix("chat", {}, ["not", "an", "action"], None, False) is None
    assert matrix.counts == Counter({("chat", "chat/delta", "rejected"): 1})


def test_matrix_report_counts_pairs_and_invariants_exercised() -> None:
    counts = Counter({("chat", "chat/delta", "applied"): 3, ("chat", "chat/delta", "no-op: stale turn"): 2,
                      ("session", "session/titleChanged", "applied"): 1})
    rep = matrix_report(counts)
    assert rep["distinctPairs"] == 3
    delta = rep["types"]["chat/delta"]
    assert delta["steps"] == 5 and delta["outcomes"] == {"applied": 3, "no-op: stale turn": 2}
    assert delta["invariants"], "every chat step runs some checks"
    some = delta["invariants"][0]
    assert rep["invariantSteps"][some] >= 5


def test_wire_form_round_trips() -> None:
    m = OutcomeMatrix()
    m.counts[("chat", "chat/delta", "applied")] = 4
    other = OutcomeMatrix()
    other.merge_json(m.to_json())
    other.merge_json(m.to_json())
    assert other.counts[("chat", "chat/delta", "applied")] == 8
