"""The invariants of what 0.9.0 and 1.0.0 add (INV-X06…X11): each with a crafted counterexample
it must report and a correct step it must accept."""

from __future__ import annotations

import pytest

from harness.reference import Profile
from tests.invariant_cases import (
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    md,
    session,
    step,
    turn,
    with_after,
)

V1 = Profile.named("1.0.0")
V07 = Profile.named("0.7.0")
ERR = {"kind": "error", "error": {"errorType": "quota", "message": "more tokens"}, "resumable": True}
FATAL = {"kind": "error", "error": {"errorType": "fatal", "message": "no"}}
ERRORED = turn("t1", md("p1", "hi"), ERR, state="error", duration=10)
SHELL = {"kind": "shell", "id": "shell-1", "label": "tests", "command": "npm test", "startedAt": "2026-01-01T00:00:00.000Z"}
C1 = {"resource": "ahp-chat:/c1", "title": "One", "status": 1, "modifiedAt": "2026-01-01T00:00:00.000Z"}
C2 = {"resource": "ahp-chat:/c2", "title": "Two", "status": 1, "modifiedAt": "2026-01-01T00:00:00.000Z"}
C3 = {"resource": "ahp-chat:/c3", "title": "Three", "status": 33, "modifiedAt": "2026-01-01T00:00:00.000Z"}


def _resumed() -> object:
    return step("chat", chat(turns=[ERRORED], status=2), {"type": "chat/turnResume", "turnId": "t1"}, profile=V1)


def _drop_last_part(after: dict) -> None:
    after["activeTurn"]["responseParts"].pop()


def _drop_error_after_end(after: dict) -> None:
    after["turns"][-1]["responseParts"] = []


FAILING = [
    Case("INV-X06", with_after(_resumed(), _drop_last_part), "a resume drops the error part"),
    Case("INV-X06", with_after(
        step("chat", chat(activeTurn=turn("t1"), status=8), {"type": "chat/error", "turnId": "t1", "duration": 5, "part": FATAL}, profile=V1),
        _drop_error_after_end), "chat/error's part is not kept"),
    Case("INV-X06", with_after(
        step("chat", chat(turns=[ERRORED], activeTurn=turn("t2"), status=8),
             {"type": "chat/turnStarted", "turnId": "t3", "message": {"text": "again"}}, profile=V1),
        lambda a: a.update(turns=[])), "a turnStarted over an active turn also drops an errored turn of the history"),
    Case("INV-X07", with_after(
        step("chat", chat(turns=[turn("t1", FATAL, state="error")], status=2), {"type": "chat/turnResume", "turnId": "t1"}, profile=V1),
        lambda a: a.update(activeTurn=turn("t1", FATAL), turns=[])), "resumes an unresumable error"),
    Case("INV-X07", with_after(_resumed(), lambda a: a["activeTurn"].update(state="error")), "the reopened turn keeps its state"),
    Case("INV-X08", with_after(
        step("session", session(chats=[C1, C2]), {"type": "session/chatUpdated", "chat": "ahp-chat:/c1", "changes": {"status": 33}}, profile=V1),
        lambda a: a["chats"][1].update(status=33)), "the status is mirrored into a sibling too"),
    Case("INV-X08", with_after(
        step("session", session(chats=[C1]), {"type": "session/titleChanged", "title": "x"}, profile=V1),
        lambda a: a["chats"][0].update(status=3)), "a catalogue status with two activities"),
    Case("INV-X09", with_after(
        step("chat", chat(), {"type": "chat/movableChanged", "movable": True}, profile=V1),
        lambda a: a.update(changes={"files": 0, "additions": 4})), "lines changed in no file"),
    Case("INV-X09", with_after(
        step("session", session(chats=[C1]), {"type": "session/titleChanged", "title": "x"}, profile=V1),
        lambda a: a["chats"][0].update(changes={"files": -1})), "a negative count in the catalogue"),
    Case("INV-X10", with_after(
        step("chat", chat(activeTurn=turn("t1"), status=8, backgroundWork=[SHELL]),
             {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}, profile=V1),
        lambda a: a.pop("backgroundWork")), "a turn's end clears the background work"),
    Case("INV-X10", with_after(
        step("chat", chat(backgroundWork=[SHELL]), {"type": "chat/backgroundWorkRemoved", "id": "shell-1"}, profile=V1),
        lambda a: a.update(backgroundWork=[SHELL])), "a removal that removes nothing"),
    Case("INV-X11", with_after(
        step("session", session(chats=[C1, C2, C3]), {"type": "session/chatsReordered", "chats": ["ahp-chat:/c2", "ahp-chat:/c1"]}, profile=V1),
        lambda a: a.update(chats=[C2, C1, C3])), "an incomplete order is applied"),
    Case("INV-X11", with_after(
        step("session", session(chats=[C1, C2, C3]), {"type": "session/chatsReordered", "chats": ["ahp-chat:/c3", "ahp-chat:/c1", "ahp-chat:/c2"]}, profile=V1),
        lambda a: a.update(chats=[C3, C2, C1])), "the order is not the one given"),
]

PASSING = [
    Case("INV-X06", _resumed(), "a resume keeps the error part"),
    Case("INV-X06", step("chat", chat(turns=[ERRORED], status=2), {"type": "chat/truncated"}, profile=V1), "truncation drops errored turns"),
    Case("INV-X06", step("chat", chat(activeTurn=turn("t1", md("p1", "hi"), ERR), status=8),
                         {"type": "chat/turnStarted", "turnId": "t2", "message": {"text": "again"}}, profile=V1),
         "turnStarted over a resumed turn discards it (INV-022's known R§11 item 14)"),
    Case("INV-X06", step("chat", chat(activeTurn=turn("t1", md("p1", "hi"), ERR), status=8),
                         {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "again"}}, profile=V1),
         "turnStarted reusing the resumed turn's id replaces it, errors and all"),
    Case("INV-X07", _resumed(), "the latest resumable turn is reopened"),
    Case("INV-X07", step("chat", chat(turns=[ERRORED, turn("t2", state="complete")], status=1),
                         {"type": "chat/turnResume", "turnId": "t1"}, profile=V1), "not the latest turn: a no-op"),
    Case("INV-X08", step("session", session(chats=[C1, C2]), {"type": "session/chatUpdated", "chat": "ahp-chat:/c1", "changes": {"status": 33}}, profile=V1), "fixture 288"),
    Case("INV-X09", step("chat", chat(), {"type": "chat/movableChanged", "movable": True}, profile=V1), "no counts"),
    Case("INV-X10", step("chat", chat(activeTurn=turn("t1"), status=8, backgroundWork=[SHELL]),
                         {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}, profile=V1), "a turn ends, the shell runs on"),
    Case("INV-X11", step("session", session(chats=[C1, C2, C3]), {"type": "session/chatsReordered", "chats": ["ahp-chat:/c3", "ahp-chat:/c1", "ahp-chat:/c2"]}, profile=V1), "fixture 277"),
    Case("INV-X11", step("session", session(chats=[C1, C2, C3]), {"type": "session/chatsReordered", "chats": ["ahp-chat:/c1", "ahp-chat:/c1", "ahp-chat:/c2"]}, profile=V1), "a duplicate: a no-op"),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_the_checks_of_1_0_0_stay_silent_under_older_profiles() -> None:
    # The same tampered steps under 0.7.0: the rules did not exist, nothing is reported.
    old = with_after(
        step("chat", chat(activeTurn=turn("t1"), status=8, backgroundWork=[SHELL]),
             {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}, profile=V07),
        lambda a: a.pop("backgroundWork"))
    from harness.invariants import check_step

    assert check_step(old, only={"INV-X10"}) == []


def test_a_response_part_carrying_an_error_is_reported_when_applied() -> None:
    applied = with_after(
        step("chat", chat(activeTurn=turn("t1"), status=8),
             {"type": "chat/responsePart", "turnId": "t1", "part": FATAL}, profile=V1),
        lambda a: a["activeTurn"]["responseParts"].append(FATAL))
    assert_fails(Case("INV-X06", applied, "responsePart appends an error"))
