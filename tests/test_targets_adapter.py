"""The adapter path: the reference model served as a subprocess, both forms, and failures."""

from __future__ import annotations

import gc
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.reference import DEFAULT_PROFILE, MalformedAction, Model, Profile
from harness.targets import (
    ReduceSession,
    TargetCrashed,
    TargetError,
    TargetProtocolError,
    TargetSetupError,
    TargetTimeout,
    open_target,
)
from harness.targets.adapter import AdapterTarget, FastSession
from tests.targets_workload import chat_actions, chat_state, terminal_actions, terminal_state

REFERENCE_ADAPTER = [sys.executable, "-m", "harness.targets.reference_adapter"]
NOW = 1_000


Outcome = tuple[str, Any]  # ("ok", state) | ("error", error type name)


def model_outcomes(kind: str, state: dict[str, Any], actions: list[dict[str, Any]]) -> list[Outcome]:
    model = Model(DEFAULT_PROFILE)
    out: list[Outcome] = []
    for i, a in enumerate(actions):
        try:
            state = model.reduce(kind, state, a, NOW + i)
            out.append(("ok", state))
        except MalformedAction:
            out.append(("error", "MalformedAction"))
    return out


def session_outcomes(session: Any, actions: list[dict[str, Any]]) -> list[Outcome]:
    out: list[Outcome] = []
    for i, a in enumerate(actions):
        try:
            out.append(("ok", session.step(a, NOW + i)))
        except TargetCrashed:
            raise
        except TargetError as e:
            out.append(("error", e.error_type))
    return out


@pytest.fixture(scope="module")
def reference_adapter() -> Iterator[AdapterTarget]:
    target = AdapterTarget(REFERENCE_ADAPTER, profile=DEFAULT_PROFILE)
    yield target
    target.close()


WORKLOADS = [
    ("chat", chat_state, lambda: chat_actions(7, 300)),
    ("terminal", terminal_state, lambda: terminal_actions(8, 150)),
]


# -- announcement and profile ---------------------------------------------------------------------


def test_announces_both_forms_and_the_profile_version(reference_adapter: AdapterTarget) -> None:
    assert reference_adapter.forms == ("simple", "fast")
    assert reference_adapter.announcement["protocolVersion"] == "0.7.0"
    assert reference_adapter.description.endswith("(reference, 0.7.0)")


def test_profile_reaches_the_adapter_through_the_environment() -> None:
    with AdapterTarget(REFERENCE_ADAPTER, profile=Profile.for_version("0.6.0")) as t:
        assert t.announcement["protocolVersion"] == "0.6.0"
        # a 0.7.0 action type is unknown to a 0.6.0 reducer: no-op
        chat = chat_state()
        action = {"type": "chat/workingDirectorySet", "directory": "file:///w"}
        assert t.reduce("chat", chat, action, NOW) == chat
    with AdapterTarget(REFERENCE_ADAPTER) as t:
        assert t.reduce("chat", chat, action, NOW)["workingDirectories"] == ["file:///w"]


def test_named_profiles_pass_whole_and_the_command_line_wins() -> None:
    with AdapterTarget(REFERENCE_ADAPTER, profile=Profile.named("0.7.0-main")) as t:
        assert t.announcement["profile"] == "0.7.0-main"
    with AdapterTarget([*REFERENCE_ADAPTER, "--profile", "0.6.0"], profile=Profile.named("0.8.0")) as t:
        assert t.announcement["profile"] == "0.6.0"


def test_an_adapter_announcing_several_versions_is_fuzzed_in_a_lane_per_version() -> None:
    from harness.engine.arms import lanes_for

    replaced = {"type": "session/workingDirectoryReplaced", "directory": "file:///a", "replacement": "file:///b"}
    session = {"provider": "p", "title": "", "status": 1, "lifecycle": "ready", "activeClients": [], "chats": [],
               "workingDirectories": ["file:///a"]}
    with AdapterTarget([*REFERENCE_ADAPTER, "--announce-versions", "0.7.0,0.8.0,9.9.9"],
                       profile=Profile.named("0.7.0")) as t:
        assert t.profiles == ("0.7.0", "0.8.0")  # 9.9.9: no rules for it, no lane
        lanes = lanes_for(t, target_is_model=False, profile=Profile.named("0.7.0"))
        assert [lane.profile.label for lane in lanes] == ["0.7.0", "0.8.0"]
        newer = lanes[1].target
        assert newer is not t and newer.announcement["profile"] == "0.8.0" and newer.pid != t.pid
        # each lane's process reduces as its version does: 0.8.0's replace is a no-op at 0.7.0
        assert t.reduce("session", session, replaced, NOW) == session
        assert newer.reduce("session", session, replaced, NOW)["workingDirectories"] == ["file:///b"]
    assert newer._proc is None  # closed with the target that started it
    # the control: an adapter that names one version gets the run's lane only
    with AdapterTarget(REFERENCE_ADAPTER, profile=Profile.named("0.7.0")) as one:
        assert len(lanes_for(one, target_is_model=False, profile=Profile.named("0.7.0"))) == 1


# -- equivalence with the in-process model ---------------------------------------------------------


@pytest.mark.parametrize(("kind", "state", "actions"), WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_simple_form_matches_in_process_model(
    reference_adapter: AdapterTarget, kind: str, state: Any, actions: Any
) -> None:
    acts = actions()
    expected = model_outcomes(kind, state(), acts)
    got = session_outcomes(ReduceSession(reference_adapter, kind, state()), acts)
    assert got == expected
    assert sum(1 for o in expected if o[0] == "error") > 0 or kind != "chat"


@pytest.mark.parametrize(("kind", "state", "actions"), WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_fast_form_matches_in_process_model(
    reference_adapter: AdapterTarget, kind: str, state: Any, actions: Any
) -> None:
    acts = actions()
    expected = model_outcomes(kind, state(), acts)
    with reference_adapter.session(kind, state()) as session:
        assert isinstance(session, FastSession)
        got = session_outcomes(session, acts)
        assert got == expected
        assert session.read() == expected[-1][1] or expected[-1][0] == "error"


@pytest.mark.parametrize(("kind", "state", "actions"), WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_pipelined_steps_match_in_process_model(
    reference_adapter: AdapterTarget, kind: str, state: Any, actions: Any
) -> None:
    acts = actions()
    expected = model_outcomes(kind, state(), acts)
    with reference_adapter.session(kind, state()) as session:
        assert isinstance(session, FastSession)
        results = session.step_many([(a, NOW + i) for i, a in enumerate(acts)])
    got = [("error", r.error_type) if isinstance(r, TargetError) else ("ok", r) for r in results]
    assert got == expected


def test_fast_form_mirror_shares_unchanged_subtrees(reference_adapter: AdapterTarget) -> None:
    state = chat_state()
    with reference_adapter.session("chat", state) as session:
        s1 = session.step({"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "x"}}, NOW)
        s2 = session.step(
            {"type": "chat/responsePart", "turnId": "t1", "part": {"kind": "markdown", "id": "p", "content": ""}}, NOW
        )
        s3 = session.step({"type": "chat/delta", "turnId": "t1", "partId": "p", "content": "hi"}, NOW)
        assert s3["activeTurn"]["responseParts"][0]["content"] == "hi"
        assert s3["turns"] is s2["turns"] is s1["turns"]
        assert s3["activeTurn"]["message"] is s2["activeTurn"]["message"]
        assert s2["activeTurn"]["responseParts"][0]["content"] == ""  # earlier states untouched


def test_fast_form_equals_model_on_every_spec_fixture(reference_adapter: AdapterTarget, spec_dir: Any) -> None:
    fixtures = spec_dir.reducer_fixtures()
    model = Model(DEFAULT_PROFILE)
    checked = 0
    for fx in fixtures:
        state = fx.initial
        with reference_adapter.session(fx.kind, fx.initial) as session:
            for a in fx.actions:
                try:
                    state = model.reduce(fx.kind, state, a, 9999)
                except MalformedAction:
                    with pytest.raises(TargetError):
                        session.step(a, 9999)
                    continue
                assert session.step(a, 9999) == state, fx.name
                checked += 1
            assert session.read() == state, fx.name
    assert checked > 400


def test_error_reply_carries_type_and_leaves_state_unchanged(reference_adapter: AdapterTarget) -> None:
    with reference_adapter.session("chat", chat_state()) as session:
        with pytest.raises(TargetError) as info:
            session.step({"type": "chat/turnStarted"}, NOW)
        assert info.value.error_type == "MalformedAction"
        assert info.value.code == "reducerError"
        assert session.read() == chat_state()


def test_unknown_kind_is_an_error_reply(reference_adapter: AdapterTarget) -> None:
    with pytest.raises(TargetError) as info:
        reference_adapter.reduce("nosuchkind", {}, {"type": "nosuchkind/x"}, NOW)  # canvas is 1.0.0's
    assert info.value.code == "unknownKind"


def test_served_model_can_be_replaced_by_a_broken_copy(tmp_path: Path) -> None:
    broken = tmp_path / "broken_model.py"
    broken.write_text(
        textwrap.dedent(
            """
            from harness.reference import Model

            class TitleIgnored(Model):
                def reduce(self, kind, state, action, now_ms):
                    if action.get("type") == "terminal/titleChanged":
                        return state
                    return super().reduce(kind, state, action, now_ms)
            """
        )
    )
    cmd = [*REFERENCE_ADAPTER, "--model", f"{broken}:TitleIgnored"]
    with AdapterTarget(cmd) as t:
        assert t.announcement["name"].startswith("model ")
        action = {"type": "terminal/titleChanged", "title": "new"}
        assert t.reduce("terminal", terminal_state(), action, NOW)["title"] == "sh"
        resized = t.reduce("terminal", terminal_state(), {"type": "terminal/resized", "cols": 3, "rows": 4}, NOW)
        assert (resized["cols"], resized["rows"]) == (3, 4)


def test_bad_model_option_fails_at_startup_with_the_reason() -> None:
    with pytest.raises(TargetSetupError, match=r"exited before announcing itself \(exit code 2\)[\s\S]*--model"):
        AdapterTarget([*REFERENCE_ADAPTER, "--model", "no_colon_here"])


def test_simple_only_adapter_gets_a_reduce_session() -> None:
    with AdapterTarget([*REFERENCE_ADAPTER, "--forms", "simple"]) as t:
        assert t.forms == ("simple",)
        session = t.session("terminal", terminal_state())
        assert isinstance(session, ReduceSession)
        assert session.step({"type": "terminal/titleChanged", "title": "x"}, NOW)["title"] == "x"


def test_adapter_spelling_and_clean_shutdown() -> None:
    t = open_target("adapter:" + " ".join(REFERENCE_ADAPTER), profile=DEFAULT_PROFILE)
    assert isinstance(t, AdapterTarget)
    proc = t._proc
    assert proc is not None
    t.close()
    assert proc.returncode == 0  # exited by itself on stdin EOF


# -- failures: crash, hang, garbage, wrong id -------------------------------------------------------

MISBEHAVING = '''
import json, os, sys, time
print(json.dumps({"ahpAdapter": 1, "name": "misbehaving", "forms": ["simple", "fast"]}), flush=True)
handles = {}
for line in sys.stdin:
    req = json.loads(line)
    rid, op = req["id"], req["op"]
    action = req.get("action") or {}
    what = action.get("type", "")
    if op == "load":
        handles[req["handle"]] = req["state"]
        print(json.dumps({"id": rid}), flush=True)
        continue
    if what == "test/crash":
        print("about to crash: segfault simulated", file=sys.stderr, flush=True)
        os._exit(3)
    if what == "test/exitAfterReply":
        print(json.dumps({"id": rid, "state": req["state"]}), flush=True)
        sys.exit(0)
    if what == "test/hang":
        time.sleep(60)
    if what == "test/garbage":
        print("this is not json", flush=True)
        continue
    if what == "test/wrongId":
        print(json.dumps({"id": rid + 100, "state": {}}), flush=True)
        continue
    if what == "test/badChange":
        print(json.dumps({"id": rid, "changes": [{"path": ["no", "such"], "value": 1}]}), flush=True)
        continue
    if what == "test/silentChange":  # changes its state but reports no change
        handles[req["handle"]] = dict(handles[req["handle"]], title="changed")
        print(json.dumps({"id": rid, "changes": []}), flush=True)
        continue
    if op == "read":
        print(json.dumps({"id": rid, "state": handles[req["handle"]]}), flush=True)
    elif op == "step":
        print(json.dumps({"id": rid, "changes": []}), flush=True)
    elif op == "drop":
        print(json.dumps({"id": rid}), flush=True)
    else:
        print(json.dumps({"id": rid, "state": req["state"]}), flush=True)
'''


HANG_TIMEOUT_S = 5.0


@pytest.fixture
def misbehaving(tmp_path: Path) -> Iterator[AdapterTarget]:
    script = tmp_path / "misbehaving.py"
    script.write_text(MISBEHAVING)
    # the per-request timeout a hang waits out: generous, so that a healthy reply on a loaded
    # machine never reaches it (0.5 s did)
    target = AdapterTarget([sys.executable, str(script)], timeout_s=HANG_TIMEOUT_S)
    yield target
    target.close()


OK = {"type": "terminal/input", "data": "x"}


def test_crash_reports_exit_code_and_stderr_then_restarts(misbehaving: AdapterTarget) -> None:
    state = terminal_state()
    assert misbehaving.reduce("terminal", state, OK, NOW) == state
    first_pid = misbehaving.pid
    with pytest.raises(TargetCrashed) as info:
        misbehaving.reduce("terminal", state, {"type": "test/crash"}, NOW)
    assert info.value.exit_code == 3
    assert any("segfault simulated" in line for line in info.value.stderr_tail)
    assert "exit code 3" in str(info.value) and "segfault simulated" in str(info.value)
    assert misbehaving.reduce("terminal", state, OK, NOW) == state  # restarted
    assert misbehaving.restarts == 1 and misbehaving.pid != first_pid


def test_exit_between_requests_is_a_crash(misbehaving: AdapterTarget) -> None:
    state = terminal_state()
    assert misbehaving.reduce("terminal", state, {"type": "test/exitAfterReply"}, NOW) == state
    proc = misbehaving._proc
    assert proc is not None
    assert proc.wait_exit(5.0) == 0
    with pytest.raises(TargetCrashed, match=r"exited after its last reply \(exit code 0\)"):
        misbehaving.reduce("terminal", state, OK, NOW)
    assert misbehaving.reduce("terminal", state, OK, NOW) == state


def test_hang_times_out_kills_and_restarts(misbehaving: AdapterTarget) -> None:
    state = terminal_state()
    with pytest.raises(TargetTimeout) as info:  # (the adapter would hang for minutes)
        misbehaving.reduce("terminal", state, {"type": "test/hang"}, NOW)
    assert info.value.timeout_s == HANG_TIMEOUT_S
    assert misbehaving.reduce("terminal", state, OK, NOW) == state
    assert misbehaving.restarts == 1


def test_session_is_stale_after_a_restart(misbehaving: AdapterTarget) -> None:
    session = misbehaving.session("terminal", terminal_state())
    with pytest.raises(TargetTimeout):
        session.step({"type": "test/hang"}, NOW)
    with pytest.raises(TargetCrashed, match="restarted"):
        session.step(OK, NOW)
    fresh = misbehaving.session("terminal", terminal_state())
    assert fresh.step(OK, NOW) == terminal_state()


@pytest.mark.parametrize(
    ("action_type", "message"),
    [
        ("test/garbage", "is not JSON"),
        ("test/wrongId", "expected a reply with id"),
    ],
)
def test_protocol_breaks_are_crashes(misbehaving: AdapterTarget, action_type: str, message: str) -> None:
    with pytest.raises(TargetProtocolError, match=message):
        misbehaving.reduce("terminal", terminal_state(), {"type": action_type}, NOW)
    assert misbehaving.reduce("terminal", terminal_state(), OK, NOW) == terminal_state()


def test_change_list_that_does_not_fit_is_a_protocol_error(misbehaving: AdapterTarget) -> None:
    session = misbehaving.session("terminal", terminal_state())
    with pytest.raises(TargetProtocolError, match="no object key"):
        session.step({"type": "test/badChange"}, NOW)


def test_checkpoint_catches_a_diverged_mirror(misbehaving: AdapterTarget) -> None:
    misbehaving.checkpoint_every = 2
    session = misbehaving.session("terminal", terminal_state())
    session.step({"type": "test/silentChange"}, NOW)
    with pytest.raises(TargetProtocolError, match=r"diverged[\s\S]*\['title'\]"):
        session.step(OK, NOW)


ANNOUNCE_PROBLEMS = {
    "no announcement": ('print("hello there", flush=True)', "not an adapter announcement"),
    "exits first": ('import sys; print("cannot start: missing lib", file=sys.stderr); sys.exit(4)', r"exit code 4\)[\s\S]*missing lib"),
    "wrong protocol": ('print(\'{"ahpAdapter": 2, "forms": ["simple"]}\', flush=True)', "adapter protocol 2"),
    "silent": ("import time; time.sleep(30)", "no announcement line within"),
}


@pytest.mark.parametrize("case", list(ANNOUNCE_PROBLEMS))
def test_startup_problems_are_setup_errors(tmp_path: Path, case: str) -> None:
    code, message = ANNOUNCE_PROBLEMS[case]
    script = tmp_path / "adapter.py"
    script.write_text(code)
    # only the silent adapter's verdict is the wait running out; the others answer or exit, and a
    # wait far longer than any start-up keeps their verdict off the machine's speed
    with pytest.raises(TargetSetupError, match=message):
        AdapterTarget([sys.executable, str(script)], startup_timeout_s=0.5 if case == "silent" else 300)


def test_missing_command_is_a_setup_error() -> None:
    with pytest.raises(TargetSetupError, match="cannot start"):
        open_target("adapter:/nonexistent/adapter --flag")


def test_sessions_collected_without_close_are_dropped_on_the_next_load(
    reference_adapter: AdapterTarget,
) -> None:
    session = reference_adapter.session("terminal", terminal_state())
    handle = session.handle
    del session
    gc.collect()
    assert reference_adapter._released[-1] == (reference_adapter.generation, handle)
    fresh = reference_adapter.session("terminal", terminal_state())
    assert reference_adapter._released == []
    reply = reference_adapter._call({"op": "read", "handle": handle})
    assert reply["error"]["code"] == "unknownHandle"
    fresh.close()


def test_stderr_can_be_echoed_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "misbehaving.py"
    script.write_text(MISBEHAVING)
    with (
        AdapterTarget([sys.executable, str(script)], stderr="inherit") as target,
        pytest.raises(TargetCrashed),
    ):
        target.reduce("terminal", terminal_state(), {"type": "test/crash"}, NOW)
    assert "[adapter] about to crash: segfault simulated" in capsys.readouterr().err
