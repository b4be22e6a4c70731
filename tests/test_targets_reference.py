"""The in-process reference target and the target spellings."""

from __future__ import annotations

import pytest

from harness.reference import DEFAULT_PROFILE, Model, Profile
from harness.targets import Target, TargetError, TargetSession, open_target
from harness.targets.base import TargetSetupError
from harness.targets.reference import ReferenceTarget
from tests.targets_workload import chat_actions, chat_state, terminal_state


def test_reference_spelling_and_description() -> None:
    t = open_target("reference", profile=Profile.for_version("0.6.0"))
    assert isinstance(t, ReferenceTarget)
    assert isinstance(t, Target)
    assert t.description == "reference (0.6.0)"
    assert open_target(" reference ").description == "reference (0.7.0)"


def test_reduce_and_session_agree_with_the_model() -> None:
    target = open_target("reference")
    model = Model(DEFAULT_PROFILE)
    session = target.session("chat", chat_state())
    assert isinstance(session, TargetSession)
    state = chat_state()
    applied = 0
    for i, action in enumerate(chat_actions(3, 200)):
        try:
            expected = model.reduce("chat", state, action, i)
        except ValueError:
            with pytest.raises(TargetError):
                target.reduce("chat", state, action, i)
            with pytest.raises(TargetError):
                session.step(action, i)
            continue
        assert target.reduce("chat", state, action, i) == expected
        assert session.step(action, i) is not None
        assert session.read() == expected
        state = expected
        applied += 1
    assert applied > 150


def test_malformed_action_becomes_a_target_error() -> None:
    with pytest.raises(TargetError) as info:
        open_target("reference").reduce("chat", chat_state(), {"type": "chat/turnStarted"}, 0)
    assert info.value.error_type == "MalformedAction"
    assert info.value.code == "reducerError"


def test_unknown_kind_is_a_caller_error() -> None:
    target = open_target("reference")
    with pytest.raises(ValueError, match="unknown state kind"):
        target.reduce("nope", {}, {"type": "x"}, 0)
    with pytest.raises(ValueError, match="unknown state kind"):
        target.session("nope", {})


def test_clock_is_the_injected_now() -> None:
    action = {"type": "chat/turnStarted", "turnId": "t", "message": {"text": "x"}}
    after = open_target("reference").reduce("chat", chat_state(), action, 9999)
    assert after["modifiedAt"] == "1970-01-01T00:00:09.999Z"


def test_session_error_leaves_state_unchanged() -> None:
    session = open_target("reference").session("terminal", terminal_state())
    with pytest.raises(TargetError):
        session.step({"type": "terminal/resized"}, 0)
    assert session.read() == terminal_state()


def test_live_spellings_open_a_live_target() -> None:
    target = open_target("host:embedded")  # the embedded host starts; the live machine drives it
    assert getattr(target, "is_live", False)
    target.close()
    with pytest.raises(TargetSetupError, match="cannot reach"):
        open_target("ws://127.0.0.1:1")  # nothing listens there


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus", "unknown target"),
        ("adapter:", "needs a command line"),
        ("adapter:node 'unclosed", "No closing quotation"),
        ("ts:", "needs the path of an AHP checkout"),
    ],
)
def test_bad_spellings_say_what_is_wanted(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_target(spec)
