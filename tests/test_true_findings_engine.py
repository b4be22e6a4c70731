"""Findings must be true, engine side: the valid lane holds only values every implementation reads
alike (harness/spec/interop.py), a cause is what the target did, not where (harness/causes/),
a found cause does not hide a second one on the same step (machine.judge_step), a divergence owns
its consequences (Stepper._resync), and the typed-decoder fidelity class is a note, not a finding.

The targets are crafted in process (`Crafted`: the reference reducers between a decoder and an
encoder a subclass changes), or the three-cause adapter (tests/three_cause_adapter.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.causes import (
    StepView,
    apply_differences,
    check_cause,
    classify,
    rejudger,
    violation_cause,
    violation_causes,
)
from harness.corpus.baseline import Baseline, load_baseline
from harness.diff import ABSENT, diff_paths
from harness.engine.events import EventBus
from harness.engine.machine import Recorder, judge_step
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.engine.stepper import (
    IGNORES_INTEGRAL_FLOAT,
    REFUSES_INTEGRAL_FLOAT,
    TARGET_ERROR,
    Stepper,
    StepResult,
    target_failure,
)
from harness.invariants._json import json_equal
from harness.invariants.base import Violation
from harness.reference import Model, Profile
from harness.spec import interop
from harness.spec.action_schema import ActionSchema
from harness.spec.interop import MAX_SAFE_INTEGER
from harness.spec.modelled import StateSchema, state_schema
from harness.spec.specdir import ENV_VAR, SpecDir
from harness.targets.adapter import AdapterTarget
from harness.targets.base import ReduceSession, TargetError
from tests.test_causes import WRAP, _view

P = Profile.named("0.7.0")
ROOT = Path(__file__).resolve().parent.parent
#: The reducers behind every crafted target (no payload checks, as `ReferenceTarget`'s).
MODEL = Model(P)
T0 = "1970-01-01T00:00:00.000Z"
TURN = {"id": "t1", "startedAt": "1970-01-01T00:00:00.001Z", "message": {"text": "", "origin": {"kind": "user"}},
        "responseParts": []}
CHAT: dict[str, Any] = {"resource": "ahp-chat:/c", "title": "", "status": 1, "modifiedAt": T0, "turns": [],
                        "activeTurn": TURN}
SESSION: dict[str, Any] = {"provider": "p", "title": "", "status": 1, "lifecycle": "ready", "activeClients": [],
                           "chats": []}


def _usage(**usage: Any) -> dict[str, Any]:
    return {"type": "chat/usage", "turnId": "t1", "usage": usage}


# -- crafted targets ------------------------------------------------------------------------------


class Crafted:
    """An in-process target: `decode` the action, the reference reducers, `encode` the state.
    A reducer error becomes a `TargetError`, as an adapter's error reply would."""

    description = "crafted"

    def decode(self, kind: str, action: Any) -> Any:
        return action

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        return after

    def reduce(self, kind: str, state: Any, action: Any, now_ms: int) -> Any:
        decoded = self.decode(kind, action)
        try:
            after = MODEL.reduce(kind, state, decoded, now_ms)
        except Exception as e:
            raise TargetError(f"{type(e).__name__}: {e}") from e
        return self.encode(kind, state, after, decoded)

    def session(self, kind: str, state: Any) -> ReduceSession:
        return ReduceSession(self, kind, state)

    def close(self) -> None:
        return None


def _rounded(value: Any) -> Any:
    """What a JavaScript `JSON.parse` makes of `value`: integers beyond ±(2⁵³−1) become the
    nearest double."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if type(value) is int and abs(value) > MAX_SAFE_INTEGER:
        return int(float(value))
    return value


class JsLike(Crafted):
    def decode(self, kind: str, action: Any) -> Any:
        return _rounded(action)


class RaisesOn(Crafted):
    """Answers an error whenever `refuses(action)`."""

    def __init__(self, refuses: Callable[[Any], Any], message: str = "TypeError: refused") -> None:
        self.refuses = refuses
        self.message = message

    def decode(self, kind: str, action: Any) -> Any:
        if self.refuses(action):
            raise TargetError(self.message)
        return action


class Ignores(Crafted):
    """One action type is a no-op."""

    def __init__(self, atype: str) -> None:
        self.atype = atype

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        return before if isinstance(action, dict) and action.get("type") == self.atype else after


class WrapsAndStringifiesTokens(Crafted):
    """Two independent defects on every state change: the status wraps to int32, and the token
    counts of a turn's usage come back as strings."""

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        if after is before:
            return after
        status = after.get("status")
        after = {**after, "status": status - (1 << 32) if type(status) is int and status >= WRAP else status}
        turn = after.get("activeTurn")
        if isinstance(turn, dict) and isinstance(turn.get("usage"), dict):
            usage = {k: str(v) if type(v) is int else v for k, v in turn["usage"].items()}
            after["activeTurn"] = {**turn, "usage": usage}
        return after


class TypedDecoder(Crafted):
    """A client with a runtime decoder: every key the state schema does not declare at its
    place is dropped (round-trip group B)."""

    def __init__(self, schema: StateSchema) -> None:
        self.schema = schema

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        def keep(value: Any, path: tuple[Any, ...]) -> Any:
            if isinstance(value, dict):
                return {k: keep(v, (*path, k)) for k, v in value.items()
                        if self.schema.modelled(kind, after, (*path, k)) is not False}
            if isinstance(value, list):
                return [keep(v, (*path, i)) for i, v in enumerate(value)]
            return value

        return keep(after, ())


class DropsPartIds(Crafted):
    """Every response part loses its `id` — a key the schema declares on markdown parts."""

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        turn = after.get("activeTurn")
        if not isinstance(turn, dict):
            return after
        parts = [{k: v for k, v in p.items() if k != "id"} for p in turn["responseParts"]]
        return {**after, "activeTurn": {**turn, "responseParts": parts}}


def _stepper(target: Any, kind: str = "chat", state: dict[str, Any] | None = None, schema: Any = None) -> Stepper:
    state = CHAT if state is None else state
    return Stepper(kind, state, Model(P, check_payloads=True, schema=schema), target.session(kind, state), target)


def _stepped(stepper: Stepper, action: Any, now_ms: int) -> tuple[StepResult, StepView]:
    """One valid-lane step and the view the machine judges it by."""
    before, target_before = stepper.reference, stepper.state
    result = stepper.step(action, now_ms)
    return result, StepView(stepper.kind, action, before, target_before, result.expected, result.observed)


def _found(result: StepResult) -> list[Violation]:
    """A valid step's violations but the `known` ones (upstream issues the model shares: a state
    with an active turn trips INV-020.active-probe and INV-022.probe on every target)."""
    return [v for v in result.violations if v.severity != "known"]


def _spec_schema(spec_dir: SpecDir) -> ActionSchema:
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    return schema


# -- 1. the valid lane holds only values every implementation reads alike ------------------------


def test_wire_problem_flags_unsafe_integers_and_integral_floats() -> None:
    m = Model(P, check_payloads=True)
    assert m.wire_problem("chat", _usage(inputTokens=MAX_SAFE_INTEGER, outputTokens=-MAX_SAFE_INTEGER)) is None
    assert m.wire_problem("chat", _usage(inputTokens=1.5)) is None  # not integral: a number like any other
    assert "usage.inputTokens" in (m.wire_problem("chat", _usage(inputTokens=2**53)) or "")
    assert m.wire_problem("chat", _usage(outputTokens=-(2**53))) is not None
    assert "integral float" in (m.wire_problem("chat", _usage(inputTokens=1.0)) or "")
    assert m.wire_problem("chat", {**_usage(inputTokens=3), "_meta": {"on": True, "off": False}}) is None  # not ints
    assert m.wire_problem("chat", {"type": "future/newAction", "n": 2**60}) is None  # a no-op type: nothing to send


def test_a_js_like_target_meets_an_unsafe_integer_only_as_a_probe() -> None:
    target = JsLike()
    big = _usage(inputTokens=2**53 + 1)
    # as a valid step this would diverge: the target reads 2^53 + 1 as 2^53
    assert target.reduce("chat", CHAT, big, 5) != MODEL.reduce("chat", CHAT, big, 5)
    s = _stepper(target)
    result = s.step(big, 5)
    assert result.malformed and result.violations == [] and result.expected is None
    assert s.state is CHAT and s.reference is CHAT  # neither state moved
    # an in-range integer is an ordinary step, and the same target agrees with the model
    result = s.step(_usage(inputTokens=MAX_SAFE_INTEGER), 6)
    assert not result.malformed and _found(result) == []
    assert result.expected is not None and result.observed == result.expected
    assert result.expected["activeTurn"]["usage"] == {"inputTokens": MAX_SAFE_INTEGER}


def test_an_integral_float_is_sent_as_a_probe() -> None:
    s = _stepper(JsLike())  # reads 88.0 as 88, as JavaScript does
    result = s.step(_usage(inputTokens=88.0), 5)
    assert result.malformed and result.violations == []
    assert s.state is CHAT and s.reference is CHAT


@pytest.mark.parametrize("tokens", [2**53, -(2**53) - 7, 2**64 + 1])
def test_an_error_reply_to_an_unsafe_integer_is_no_finding(tokens: int) -> None:
    target = RaisesOn(lambda a: True, "RangeError: integer out of range")
    result = _stepper(target).step(_usage(inputTokens=tokens), 5)
    assert result.malformed and result.violations == []
    # the same answer to an in-range integer is a finding: a valid step must be applied
    result = _stepper(target).step(_usage(inputTokens=MAX_SAFE_INTEGER), 5)
    assert not result.malformed and [v.invariant for v in result.violations] == [TARGET_ERROR]


def test_a_null_the_schema_forbids_is_a_probe_and_one_it_allows_is_a_step(spec_dir: SpecDir) -> None:
    schema = _spec_schema(spec_dir)
    target = RaisesOn(interop.has_null, "DecodeError: unexpected null")
    forbidden = _usage(inputTokens=None, outputTokens=1)  # UsageInfo.inputTokens is a number
    allowed = {**_usage(outputTokens=1), "_meta": {"k": None}}  # `_meta` values are any JSON
    result = _stepper(target, schema=schema).step(forbidden, 5)
    assert result.malformed and result.violations == []
    result = _stepper(target, schema=schema).step(allowed, 5)
    assert not result.malformed and [v.invariant for v in result.violations] == [TARGET_ERROR]
    # only the schema says where `null` is allowed: without one, the forbidden null is trusted
    result = _stepper(target).step(forbidden, 5)
    assert not result.malformed and [v.invariant for v in result.violations] == [TARGET_ERROR]


# -- 2. refusing an integral float: one low-severity finding, one cause ----------------------------


def _any_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_any_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_any_float(v) for v in value)
    return isinstance(value, float)


def test_refusing_an_integral_float_is_one_warning_of_one_cause() -> None:
    target = RaisesOn(_any_float, "TypeError: expected an integer")
    ids = set()
    for action in (_usage(outputTokens=88.0), {"type": "chat/turnComplete", "turnId": "t1", "duration": 5.0}):
        s = _stepper(target)
        result, view = _stepped(s, action, 7)
        assert result.malformed
        (v,) = result.violations
        assert (v.invariant, v.severity, v.cause) == (TARGET_ERROR, "warning", REFUSES_INTEGRAL_FLOAT)
        cause = violation_cause(view, v)
        assert cause is not None and cause.key == ("refuses-integral-float",)
        ids.add(cause.id)
    assert len(ids) == 1  # another field, another action type: the same cause


@pytest.mark.parametrize("action", [
    {"type": "chat/usage", "usage": {"inputTokens": 88.0}},  # no turnId: invalid as integers too
    _usage(inputTokens=88.0, outputTokens=2**60),  # its integer form still holds an unsafe integer
    _usage(inputTokens=1e300),  # integral, but no integer every implementation reads
], ids=["no-turn-id", "unsafe-integer", "huge-float"])
def test_refusing_a_float_whose_integer_form_is_no_valid_step_is_no_finding(action: dict[str, Any]) -> None:
    result = _stepper(RaisesOn(_any_float)).step(action, 7)
    assert result.malformed and result.violations == []


def test_a_target_that_refuses_the_integer_form_too_is_not_said_to_refuse_floats() -> None:
    target = RaisesOn(lambda a: a.get("type") == "chat/usage", "TypeError: usage is not supported")
    whole = _stepper(target).step(_usage(outputTokens=88), 7)
    assert [(v.invariant, v.severity) for v in whole.violations] == [(TARGET_ERROR, "violation")]  # its own cause
    result = _stepper(target).step(_usage(outputTokens=88.0), 7)
    assert [v for v in result.violations if v.cause == REFUSES_INTEGRAL_FLOAT] == []


class IgnoresFloats(Crafted):
    """A typed decoder that reads an action holding an integral float as an unknown action: it
    neither refuses nor applies it (issue 32: one typed client's `Unknown`)."""

    def decode(self, kind: str, action: Any) -> Any:
        return {"type": "x-unknown/decoded"} if _any_float(action) else action


def test_accepting_an_integral_float_and_ignoring_it_is_one_cause() -> None:
    target = IgnoresFloats()
    ids = set()
    for action in (_usage(outputTokens=88.0), {"type": "chat/turnComplete", "turnId": "t1", "duration": 5.0}):
        s = _stepper(target)
        result, _ = _stepped(s, action, 7)
        assert result.malformed  # still a labelled probe: no state moves
        (v,) = result.violations
        assert (v.invariant, v.cause) == ("INV-D01", IGNORES_INTEGRAL_FLOAT)
        view = StepView("chat", action, s.reference, s.state, None, s.state, probe=True)
        cause = violation_cause(view, v)
        assert cause is not None and cause.key == IGNORES_INTEGRAL_FLOAT and "does not apply" in cause.summary
        ids.add(cause.id)
    assert len(ids) == 1


def test_a_target_that_applies_an_integral_float_as_the_integer_is_no_finding() -> None:
    # the control: the reference reducers behind the same decoder path read 88.0 as 88
    result = _stepper(Crafted()).step(_usage(outputTokens=88.0), 7)
    assert result.malformed and result.violations == []
    # and one that ignores the action in both forms is not said to ignore floats (its own cause,
    # told on the valid step with integers)
    deaf = Ignores("chat/usage")
    assert _stepper(deaf).step(_usage(outputTokens=88.0), 7).violations == []


# -- 3. a cause is a transformation, not a place ---------------------------------------------------


def test_an_int32_wrap_is_one_cause_at_any_path_after_any_action() -> None:
    status = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)},
                   atype="chat/turnStarted")

    def usage(tokens: int) -> dict[str, Any]:
        return {"activeTurn": {"usage": {"inputTokens": tokens}}}

    tokens = _view(usage(1), usage(WRAP + 1), usage(WRAP + 1 - (1 << 32)), atype="chat/usage")
    assert [c.key for c in status.causes] == [c.key for c in tokens.causes] == [("int-wrap", "32")]
    assert status.causes[0].id == tokens.causes[0].id


def test_a_lost_empty_list_and_a_lost_empty_object_are_one_cause() -> None:
    lists = _view({}, {"turns": []}, {}, atype="chat/truncated")
    objects = _view({}, {"activeTurn": {"id": "t1", "_meta": {}}}, {"activeTurn": {"id": "t1"}},
                    atype="chat/turnStarted")
    assert [c.key for c in lists.causes] == [c.key for c in objects.causes] == [("dropped-empty",)]
    assert classify(("turns",), [], ABSENT, "x").id == classify(("a", 0, "_meta"), {}, ABSENT, "y").id


def test_a_key_dropped_at_two_paths_is_one_cause() -> None:
    # the target held `_meta` and loses it when the step rewrites the object around it
    meta = {"by": "agent:/a"}
    held = {"id": "t1", "_meta": meta}
    turn = _view({"title": "a", "activeTurn": held}, {"title": "b", "activeTurn": held},
                 {"title": "b", "activeTurn": {"id": "t1"}}, atype="chat/titleChanged")
    old = {"id": "t0", "message": {"text": "x", "_meta": meta}}
    history = _view({"turns": [old]}, {"turns": [old], "draft": {"text": "y"}},
                    {"turns": [{"id": "t0", "message": {"text": "x"}}], "draft": {"text": "y"}},
                    atype="chat/draftChanged")
    assert [c.key for c in turn.causes] == [c.key for c in history.causes] == [("dropped", "_meta")]
    assert turn.causes[0].id == history.causes[0].id
    other_key = classify(("activeTurn", "id"), "t1", ABSENT, "x")
    assert other_key.key == ("dropped", "id") and other_key.id != turn.causes[0].id


def _error_view(atype: str) -> StepView:
    return _view(CHAT, CHAT, CHAT, atype=atype)


def _failure(message: str, atype: str) -> Any:
    """The cause of a target's error reply `message` to a valid `atype` step."""
    v = target_failure(TargetError(message), malformed=False)
    assert v is not None and v.invariant == TARGET_ERROR
    cause = violation_cause(_error_view(atype), v)
    assert cause is not None and cause.transformation == "failure"
    return cause


def test_a_target_error_is_signed_by_its_class_not_by_its_action_type_or_numbers() -> None:
    null = "TypeError: Cannot read properties of null (reading '{}') in {} at step {} (reducer.js:{}:{})"
    a = _failure(null.format("findIndex", "chat/toolCallReady", 12, 212, 31), "chat/toolCallReady")
    b = _failure(null.format("findIndex", "chat/toolCallComplete", 3, 98, 7), "chat/toolCallComplete")
    other = _failure(null.format("map", "chat/toolCallComplete", 3, 98, 7), "chat/toolCallComplete")
    assert a.id == b.id != other.id
    assert a.key[:2] == ("failure", TARGET_ERROR) and "findIndex" in a.key[2]


def test_an_error_naming_a_generated_id_is_one_cause_whatever_the_id() -> None:
    one = _failure("KeyError: 'tc1'", "chat/toolCallReady")
    assert one.id == _failure("KeyError: 'tc27'", "chat/toolCallComplete").id


def test_a_permuted_list_is_one_reorder_cause_not_one_per_leaf() -> None:
    m = [{"id": f"q{i}", "text": f"message {i}"} for i in range(3)]
    view = _view({"queuedMessages": m}, {"queuedMessages": [m[1], m[2], m[0]]},
                 {"queuedMessages": [m[2], m[1], m[0]]}, atype="chat/queuedMessagesReordered")
    (cause,) = view.causes
    assert cause.key == ("reorder", "queuedMessages")
    assert len(view.differences(cause)) == 4  # two items moved, two leaves each: one cause for them all


def test_a_derived_field_left_unchanged_is_one_stale_cause_across_action_types() -> None:
    t5, t7 = "1970-01-01T00:00:05.000Z", "1970-01-01T00:00:07.000Z"
    started = _view({"modifiedAt": T0, "status": 1}, {"modifiedAt": t5, "status": 9, "activeTurn": TURN},
                    {"modifiedAt": T0, "status": 9, "activeTurn": TURN}, atype="chat/turnStarted")
    old = {"id": "t0", "message": {"text": ""}, "responseParts": [], "state": "complete"}
    truncated = _view({"modifiedAt": T0, "turns": [old]}, {"modifiedAt": t7, "turns": []},
                      {"modifiedAt": T0, "turns": []}, atype="chat/truncated")
    assert [c.key for c in started.causes] == [c.key for c in truncated.causes] == [("stale", "modifiedAt")]
    assert started.causes[0].id == truncated.causes[0].id


def test_a_fully_ignored_action_is_unapplied_by_its_type() -> None:
    before = {"modifiedAt": T0, "draft": {"text": "a"}}
    view = _view(before, {"modifiedAt": T0, "draft": {"text": "b"}}, before, atype="chat/draftChanged")
    assert [c.key for c in view.causes] == [("unapplied", "chat/draftChanged")]
    other = _view(before, {"modifiedAt": T0, "draft": {"text": "b"}, "activity": "x"}, before,
                  atype="chat/activityChanged")
    assert [c.key for c in other.causes] == [("unapplied", "chat/activityChanged")]  # one cause per type


def test_a_nested_key_a_probe_reports_dropped_is_the_cause_the_state_difference_gives() -> None:
    seen = check_cause("INV-002", "re-running the step gave a different state: "
                                  'activeTurn._meta: step={"a":1} rerun=<absent>')
    assert seen.transformation == "dropped"
    assert seen.id == classify(("activeTurn", "_meta"), {"a": 1}, ABSENT, "chat/delta").id


# -- 4. a found cause does not hide a second one -------------------------------------------------


def test_a_reported_cause_does_not_hide_a_second_one_on_the_same_step() -> None:
    usage = _usage(inputTokens=5)
    initial = {**CHAT, "status": WRAP + 1}  # a status beyond int32: the target wraps it
    judged = []
    for reported in (False, True):
        s = _stepper(WrapsAndStringifiesTokens(), state=initial)
        result, view = _stepped(s, usage, 5_000)
        assert [c.key for c in view.causes] == [("int-wrap", "32"), ("type", "number", "string")]
        rec = Recorder()
        if reported:
            rec.causes[view.causes[0].id] = 1  # the wrap is found already
        out = judge_step(rec, s, result, view, usage["type"], 5_000, {})
        assert out is not None
        judged.append(out)
    (first, _), (second, told) = judged
    assert first.key == ("int-wrap", "32")  # the louder cause, while unreported
    assert second.key == ("type", "number", "string")
    assert "inputTokens" in told.message and "status" not in told.message  # told in its own words


def test_applying_a_steps_differences_rebuilds_the_targets_state() -> None:
    one = ({"l": [1, 2, 3]}, {"l": [1, 2]})
    assert apply_differences(one[0], list(diff_paths(*one, null_is_absent=True))) == one[1]
    for expected, observed in [({"l": [1, 2, 3, 4]}, {"l": [1, 2]}),
                               ({"turns": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}, {"turns": [{"id": "a"}]})]:
        assert apply_differences(expected, list(diff_paths(expected, observed, null_is_absent=True))) == observed


# -- 5. a divergence owns its consequences (the three-cause adapter, strict decoder) ---------------


THREE = [sys.executable, str(ROOT / "tests" / "three_cause_adapter.py"), "--causes=wrap,ignore,empty,strict",
         "--ignore=chat/usage"]
#: The three seeded causes: the strict decoder's refusals of the states its own encoder emptied
#: are consequences of the third.
SEEDED = {("int-wrap", "32"), ("unapplied", "chat/usage"), ("dropped-empty",)}


def _three_cause_run(seed: int, kinds: tuple[str, ...], chunks: int,
                     baseline: Baseline | None = None) -> tuple[tuple[tuple[str, ...], str, bool], ...]:
    """(cause key, invariant, replays) of each finding of a seeded run (fixed chunks, no clock)."""
    target = AdapterTarget(THREE, profile=P, timeout_s=30.0)
    try:
        config = RunConfig(target=target, target_spec="three-cause strict", target_is_model=False, profile=P,
                           seed=seed, budget_s=None, max_chunks=chunks, chunk_examples=8, max_steps=10, kinds=kinds,
                           probe_every=25, profiles=(P,), heartbeat_s=0, baseline=baseline)
        summary = run_campaign(config, EventBus())
        return tuple((tuple(f.cause["key"]) if f.cause else (), f.invariant,
                      replay(f, target, baseline=baseline).reproduced)
                     for f in summary.findings)
    finally:
        target.close()


@pytest.mark.parametrize(("seed", "chunks"), [(3, 5), (1, 6)], ids=["chat-3", "chat-1"])
def test_with_the_encoder_loss_accepted_the_strict_imitation_shows_the_two_other_causes(seed: int, chunks: int) -> None:
    # bench/three_cause_encoder.baseline.json accepts the dropped empties: what is left is the wrap
    # and the ignored chat/usage — not the strict decoder's refusals, not the baseline's own
    # reading of an emptied state seen as a change (a re-synced target is read as the baseline
    # reads it), not a change the ignored action left half-written taken for a loss
    base = load_baseline(ROOT / "bench" / "three_cause_encoder.baseline.json")
    found = _three_cause_run(seed, ("chat",), chunks, base)
    keys = [k for k, _, _ in found]
    assert len(keys) == len(set(keys))
    assert set(keys) <= SEEDED - {("dropped-empty",)}, keys
    assert ("unapplied", "chat/usage") in keys
    assert all(replays for _, _, replays in found)


@pytest.mark.parametrize(("seed", "kinds", "chunks"),
                         [(3, ("chat",), 5), (4, ("chat",), 5), (1, ("chat", "session"), 6)],
                         ids=["chat-3", "chat-4", "chat+session-1"])
def test_the_strict_decoder_s_refusals_are_no_finding_of_their_own(
        seed: int, kinds: tuple[str, ...], chunks: int) -> None:
    found = _three_cause_run(seed, kinds, chunks)
    keys = [k for k, _, _ in found]
    assert len(keys) == len(set(keys))  # one finding per cause
    assert set(keys) == SEEDED, keys  # no `failure` and no `check` cause for the decoder's refusals
    assert [inv for _, inv, _ in found if inv.startswith("TARGET-")] == []
    assert all(replays for _, _, replays in found)


def test_a_strict_refusal_in_a_probe_on_an_inherited_state_has_no_cause_of_its_own() -> None:
    # The strict decoder refuses the state its own encoder emptied (no `turns`): on the model's
    # state the probe fires only for the dropped `turns: []` again, so the refusal has no cause.
    target = AdapterTarget(THREE, profile=P, timeout_s=30.0)
    try:
        initial = {"resource": "ahp-chat:/c3", "title": "", "modifiedAt": T0, "status": 40,
                   "turns": [{"id": "t2", "state": "error", "responseParts": [],
                              "message": {"text": "", "origin": {"kind": "user"}}}]}
        s = Stepper("chat", initial, Model(P, check_payloads=True), target.session("chat", initial), target)
        result, view = _stepped(s, {"type": "chat/truncated"}, 1_096)  # the encoder drops `turns: []`
        assert ("dropped-empty",) in [c.key for c in view.causes]
        assert "turns" not in s.state and "turns" in s.reference  # what the target's representation keeps
        noop = {"type": "chat/toolCallStart", "turnId": "t1", "toolCallId": "tc3", "toolName": "bash",
                "displayName": "Run Command"}  # no active turn: a no-op for the model
        result, view = _stepped(s, noop, 4_225)
        assert view.causes == [] and view.inherited_only  # the step itself changes nothing
        refused = [v for v in result.violations if "missing required key 'turns'" in v.message]
        assert refused
        rejudge = rejudger(s.probe_reducer(), view, 4_225, P, {})
        view.echo = rejudge.echo  # type: ignore[attr-defined]
        own = [(v.invariant, c.key) for v in refused for c in violation_causes(view, v, rejudge)
               if c.transformation == "check"]
        assert own == []
    finally:
        target.close()


# -- 6. the typed-decoder fidelity class ------------------------------------------------------------


def _state_schema(spec_dir: SpecDir) -> StateSchema:
    schema = state_schema(str(spec_dir.path))
    if schema is None:
        pytest.skip(f"no state schema in {spec_dir.path}")
    return schema


def test_modelled_says_where_the_state_schema_declares_a_key(spec_dir: SpecDir) -> None:
    schema = _state_schema(spec_dir)
    note = {"kind": "systemNotification", "content": "done", "id": "n1", "_meta": {"source": "x"}}
    markdown = {"kind": "markdown", "id": "m1", "content": "x"}
    state = {**CHAT, "activeTurn": {**TURN, "responseParts": [note, markdown]}, "bogus": 1}
    parts = ("activeTurn", "responseParts")
    assert schema.modelled("chat", state, (*parts, 0, "id")) is False  # SystemNotificationResponsePart has none
    assert schema.modelled("chat", state, (*parts, 1, "id")) is True
    assert schema.modelled("chat", state, (*parts, 0, "_meta", "source")) is True  # a map's value
    assert schema.modelled("chat", state, (*parts, 0, "content")) is True
    assert schema.modelled("chat", state, ("bogus",)) is False  # no such ChatState key
    assert schema.modelled("chat", state, ("title",)) is True
    assert schema.modelled("nokind", state, ("title",)) is None  # nothing concluded


def _judged(target: Any, part: dict[str, Any], known: list[Violation]) -> Any:
    s = _stepper(target)
    action = {"type": "chat/responsePart", "turnId": "t1", "part": part}
    result, view = _stepped(s, action, 5_000)
    assert result.violations and not result.malformed
    rec = Recorder(on_known=lambda v, kind: known.append(v))
    return judge_step(rec, s, result, view, action["type"], 5_000, {})


def test_a_typed_decoder_dropping_unmodelled_keys_is_a_note_not_a_finding(
        spec_dir: SpecDir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(spec_dir.path))
    typed = TypedDecoder(_state_schema(spec_dir))
    note = {"kind": "systemNotification", "content": "done", "id": "n1"}
    known: list[Violation] = []
    assert _judged(typed, note, known) is None
    assert "FIDELITY-B" in {v.invariant for v in known}
    # a key the schema declares is a finding, whichever target drops it
    markdown = {"kind": "markdown", "id": "m1", "content": "x"}
    lost = _judged(DropsPartIds(), markdown, [])
    assert lost is not None and lost[0].key == ("dropped", "id")
    # and without a schema to ask, nothing tells the fidelity class: the same loss is a finding
    monkeypatch.delenv(ENV_VAR)
    known.clear()
    blind = _judged(typed, note, known)
    assert blind is not None and blind[0].key == ("dropped", "id")
    assert "FIDELITY-B" not in {v.invariant for v in known}


# -- 7. a foreign family's probe ---------------------------------------------------------------------


def test_a_foreign_probe_its_own_schema_rejects_may_be_refused_a_well_formed_one_not() -> None:
    always = RaisesOn(lambda a: True, "DecodeError: unknown action")
    s = _stepper(always, kind="session", state=SESSION)
    assert s.model.wire_problem("terminal", {"type": "terminal/claimed"}) is not None
    refused = s.probe({"type": "terminal/claimed"}, 5)  # a terminal action without its claim
    assert refused.malformed and refused.violations == []
    # a type of no family, and a foreign type its own schema accepts: each must be a no-op
    future, titled = {"type": "future/newAction"}, {"type": "terminal/titleChanged", "title": "x"}
    assert s.model.owner(future) is None and s.model.wire_problem("terminal", titled) is None
    for unknown in (future, titled):
        assert [v.invariant for v in s.probe(unknown, 6).violations] == [TARGET_ERROR], unknown


# -- 8. the target is resynced to the model after a divergence -----------------------------------


def test_after_a_divergence_the_next_step_inherits_nothing() -> None:
    s = _stepper(Ignores("chat/draftChanged"))
    result = s.step({"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}}}, 10)
    assert "INV-D01" in {v.invariant for v in result.violations}
    assert result.observed is not None and "draft" not in result.observed  # the target ignored it
    assert json_equal(s.state, s.reference) and "draft" in s.state  # resynced to the model's state
    result = s.step({"type": "chat/activityChanged", "activity": "thinking"}, 20)
    assert _found(result) == []


def test_after_a_target_error_target_and_model_stand_on_the_same_state() -> None:
    s = _stepper(RaisesOn(lambda a: a.get("type") == "chat/draftChanged"))
    result = s.step({"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}}}, 10)
    assert [v.invariant for v in result.violations] == [TARGET_ERROR]
    result = s.step({"type": "chat/activityChanged", "activity": "thinking"}, 20)
    assert _found(result) == []
    assert json_equal(s.state, s.reference)


def test_an_ignored_action_is_not_taken_for_the_loss_of_an_empty_value_it_would_have_written() -> None:
    # chat/usage replaces `usage` with `{"_meta": {"": ""}}`; the target ignores it and keeps its
    # old usage: `usage._meta.""` is missing on the target, but not because it lost an empty
    # string — it never wrote it. Its echo (a no-op on the model's state) keeps the empty string,
    # so the step is the ignored action, as the other leaves say.
    old = {"activeTurn": {"id": "t2", "usage": {"inputTokens": 4669, "_meta": {}}}, "status": 8}
    new = {"activeTurn": {"id": "t2", "usage": {"_meta": {"": ""}}}, "status": 8}
    view = StepView("chat", {"type": "chat/usage", "turnId": "t2", "usage": {"_meta": {"": ""}}},
                    old, old, new, old)
    view.echo = lambda: new
    assert [c.key for c in view.causes] == [("unapplied", "chat/usage")]
    lossy = StepView("chat", {"type": "chat/usage", "turnId": "t2", "usage": {"_meta": {"": ""}}},
                     old, old, new, old)
    lossy.echo = lambda: {"activeTurn": {"id": "t2", "usage": {"_meta": {}}}, "status": 8}  # it cannot hold ""
    assert ("dropped-empty",) in [c.key for c in lossy.causes]


def test_a_kept_empty_value_is_the_ignored_action_when_the_target_can_hold_it() -> None:
    # the model removes `usage._meta.""` (chat/usage replaces the usage); the target keeps it.
    # An encoder that cannot send the removal of an empty value would show the same — unless the
    # target, echoing its own state, keeps the value: then it holds it, and ignored the action.
    before = {"activeTurn": {"id": "t2", "usage": {"_meta": {"": ""}}}, "status": 8}
    after = {"activeTurn": {"id": "t2", "usage": {"_meta": {}}}, "status": 8}
    action = {"type": "chat/usage", "turnId": "t2", "usage": {"_meta": {}}}
    holds = StepView("chat", action, before, before, after, before)
    holds.echo, holds.echo_on = (lambda: after), (lambda s: s)
    assert [c.key for c in holds.causes] == [("unapplied", "chat/usage")]
    cannot = StepView("chat", action, before, before, after, before)
    cannot.echo, cannot.echo_on = (lambda: after), (lambda s: {"activeTurn": {"id": "t2", "usage": {}}, "status": 8})
    assert [c.key for c in cannot.causes] == [("dropped-empty",)]


def _two_calls(status_a: str, status_b: str) -> dict[str, Any]:
    part = lambda s: {"kind": "toolCall", "toolCall": {"toolCallId": "tc1", "toolName": "bash", "status": s}}  # noqa: E731
    return {"activeTurn": {"id": "t1", "responseParts": [part(status_a), part(status_b)]}, "status": 8}


@pytest.mark.parametrize("atype", ["chat/toolCallReady", "chat/toolCallComplete"])
def test_namesakes_updated_otherwise_are_one_cause_whatever_the_action(atype: str) -> None:
    # upstream updates every tool call of a `toolCallId` (REDUCERS.md "tool-call update"); a client
    # that updates the first only leaves the second as it was: one cause, not one per action type —
    # and not "the action is not applied", which the first tool call shows it is
    before = _two_calls("streaming", "streaming")
    model, target = _two_calls("running", "running"), _two_calls("running", "streaming")
    view = StepView("chat", {"type": atype, "turnId": "t1", "toolCallId": "tc1"}, before, before, model, target)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("duplicate-id",)]


def test_a_shared_reference_is_no_namesake() -> None:
    # two input requests naming one turn (`turnId`) are two objects, not namesakes
    item = lambda i, s: {"id": i, "turnId": "t1", "kind": "chatInput", "state": s}  # noqa: E731
    before = {"inputNeeded": [item("in1", "a"), item("in2", "a")]}
    model = {"inputNeeded": [item("in1", "a"), item("in2", "b")]}
    view = StepView("session", {"type": "session/inputNeededSet"}, before, before, model, before)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("unapplied", "session/inputNeededSet")]


def test_an_empty_value_a_namesake_was_given_is_the_namesake_cause() -> None:
    # toolCallReady writes `invocationMessage: ""` to every tool call of the id; the target writes
    # it to the first only: the second's missing empty string is not an encoder loss (the first
    # holds it) and not the action ignored (the first shows it applied) — the namesakes again
    part = lambda extra: {"kind": "toolCall", "toolCall": {"toolCallId": "tc1", "toolName": "bash", **extra}}  # noqa: E731
    before = {"activeTurn": {"id": "t1", "responseParts": [part({}), part({})]}, "status": 8}
    model = {"activeTurn": {"id": "t1", "responseParts": [part({"invocationMessage": ""})] * 2}, "status": 8}
    target = {"activeTurn": {"id": "t1", "responseParts": [part({"invocationMessage": ""}), part({})]}, "status": 8}
    view = StepView("chat", {"type": "chat/toolCallReady", "turnId": "t1", "toolCallId": "tc1"},
                    before, before, model, target)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("duplicate-id",)]


def test_a_probe_that_meets_only_keys_the_target_cannot_hold_has_no_cause_of_its_own(
        spec_dir: SpecDir, monkeypatch: pytest.MonkeyPatch) -> None:
    # a running tool call carrying `success` (a key of the completed variant): a typed decoder
    # drops it, so every probe that re-runs the decoder on such a state "changes" it. On the
    # states as the target's representation holds them the probe is silent: the fidelity class
    # (already a note), not a cause of the probe's own (seen against the Go client, INV-004.probe)
    from harness.invariants.base import Step
    from harness.invariants.registry import check_step

    monkeypatch.setenv(ENV_VAR, str(spec_dir.path))
    typed = TypedDecoder(_state_schema(spec_dir))
    call = {"toolCallId": "tc2", "toolName": "search", "displayName": "Edit", "invocationMessage": "",
            "status": "running", "confirmed": "not-needed", "success": False, "pastTenseMessage": "x"}
    state = {"resource": "ahp-chat:/c1", "title": "New Chat", "modifiedAt": T0, "turns": [], "status": 8,
             "activeTurn": {"id": "t1", "startedAt": T0, "message": {"text": "Hello", "origin": {"kind": "user"}},
                            "responseParts": [{"kind": "toolCall", "toolCall": call}]}}
    action = {"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}}}
    after = MODEL.reduce("chat", state, action, 9)
    fired = [v for v in check_step(Step("chat", state, action, after, 9, P), reducer=typed.reduce, probes=True,
                                   only={"INV-004.probe"})]
    assert fired  # the decoder's loss looks like an unknown type changing the state
    view = StepView("chat", action, state, state, after, after)
    rejudge = rejudger(typed.reduce, view, 9, P, {})
    view.echo, view.echo_on = rejudge.echo, rejudge.echo_on  # type: ignore[attr-defined]
    assert all(violation_cause(view, v, rejudge) is None for v in fired)
    # a target that keeps every key, and changes the state on an unknown type anyway, is a finding
    class Noisy(Crafted):
        def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
            return {**after, "title": "changed"} if str(action.get("type", "")).startswith("future/") else after
    loud = [v for v in check_step(Step("chat", state, action, after, 9, P), reducer=Noisy().reduce, probes=True,
                                  only={"INV-004.probe"})]
    assert loud
    quiet = rejudger(Noisy().reduce, view, 9, P, {})
    assert all(violation_cause(view, v, quiet) is not None for v in loud)


def test_a_session_the_target_lost_in_a_restart_is_reopened_not_a_crash() -> None:
    # a hang in a probe check (or another channel's step) restarts an adapter: every session it
    # had is gone; the next step of this channel must not report that as a crash of its own
    target = Crafted()

    class Lost(ReduceSession):
        stale = True

        def step(self, action: Any, now_ms: int) -> Any:
            from harness.targets.base import TargetCrashed

            raise TargetCrashed("the adapter restarted after a crash or timeout; this session's state is gone")

    s = _stepper(target)
    s.session = Lost(target, "chat", CHAT)
    result = s.step(_usage(outputTokens=3), 7)
    assert _found(result) == [] and result.observed is not None
    assert not isinstance(s.session, Lost)
    # the control: the same lost session, not marked stale, is the crash it says it is
    s2 = _stepper(target)
    lost = Lost(target, "chat", CHAT)
    lost.stale = False  # type: ignore[misc]
    s2.session = lost
    assert [v.invariant for v in s2.step(_usage(outputTokens=3), 7).violations] == ["TARGET-CRASH"]


def test_integers_an_adapter_writes_as_floats_are_a_finding_of_their_own() -> None:
    from harness.engine.stepper import INT_AS_FLOAT

    adapter = [sys.executable, "-m", "harness.targets.reference_adapter", "--model",
               f"{Path(__file__).resolve().parent / 'mutants.py'}:writes_ints_as_floats"]
    terminal = {"resource": "ahp-term:/t1", "title": "t", "content": [], "cols": 80, "rows": 24}
    with AdapterTarget(adapter, profile=P) as target:
        s = Stepper("terminal", terminal, Model(P, check_payloads=True), target.session("terminal", terminal), target)
        result = s.step({"type": "terminal/resized", "cols": 100, "rows": 30}, 7)
        found = [v for v in result.violations if v.cause == INT_AS_FLOAT]
        assert len(found) == 1 and "cols" in found[0].message
        view = StepView("terminal", {"type": "terminal/resized"}, terminal, terminal, result.expected, result.observed)
        cause = violation_cause(view, found[0])
        assert cause is not None and cause.key == INT_AS_FLOAT
        # on the next step the floats are the state it had: not new, no finding again
        again = s.step({"type": "terminal/titleChanged", "title": "u"}, 8)
        assert [v for v in again.violations if v.cause == INT_AS_FLOAT] == []
    # the control: the reference model behind the same adapter writes integers
    with AdapterTarget([sys.executable, "-m", "harness.targets.reference_adapter"], profile=P) as plain:
        s = Stepper("terminal", terminal, Model(P, check_payloads=True), plain.session("terminal", terminal), plain)
        assert [v for v in s.step({"type": "terminal/resized", "cols": 100, "rows": 30}, 7).violations
                if v.cause == INT_AS_FLOAT] == []


def test_a_name_an_adapter_writes_twice_in_one_object_is_a_finding_of_its_own() -> None:
    # issue 32, "look at the bytes": a typed client whose encoder writes a tool call's `status`
    # twice. Equal by value once parsed (the last one wins in Python); not I-JSON, and readers
    # disagree on which value counts: its own cause, seen only in the reply's text
    from harness.engine.stepper import DUPLICATE_KEY

    call = {"toolCallId": "tc1", "toolName": "bash", "displayName": "Bash", "invocationMessage": "",
            "status": "streaming"}
    chat = {**CHAT, "status": 8, "activeTurn": {"id": "t1", "startedAt": T0, "message": {"text": "Hi", "origin": {"kind": "user"}},
                                              "responseParts": [{"kind": "toolCall", "toolCall": call}]}}
    # a step that writes a whole tool call (the fast form's reply carries the changes only)
    action = {"type": "chat/toolCallStart", "turnId": "t1", "toolCallId": "tc2", "toolName": "run", "displayName": "Run"}

    def duplicates(model: str | None) -> list[Violation]:
        adapter = [sys.executable, "-m", "harness.targets.reference_adapter"]
        if model is not None:
            adapter += ["--model", f"{Path(__file__).resolve().parent / 'mutants.py'}:{model}"]
        with AdapterTarget(adapter, profile=P) as target:
            s = Stepper("chat", chat, Model(P, check_payloads=True), target.session("chat", chat), target)
            result = s.step(action, 7)
            assert result.observed is not None and result.observed["activeTurn"]["responseParts"][0]["toolCall"] == call
            assert result.observed == result.expected  # once parsed, the state is the model's
            return [v for v in result.violations if v.cause == DUPLICATE_KEY]

    found = duplicates("writes_tool_status_twice")
    assert len(found) == 1 and '"status"' in found[0].message
    after = MODEL.reduce("chat", chat, action, 7)
    view = StepView("chat", action, chat, chat, after, after)
    cause = violation_cause(view, found[0])
    assert cause is not None and cause.key == DUPLICATE_KEY and "twice" in cause.summary
    # the control: the reference model behind the same adapter writes each name once
    assert duplicates(None) == []


def test_the_json_reader_keeps_each_name_written_twice_once() -> None:
    from harness.targets.jsonio import Written, WrittenTokens

    tokens = WrittenTokens()
    value = tokens.loads('{"a": {"s": 1, "t": 2, "s": 3, "s": 4}, "b": [{"t": 1, "t": 1}], "c": 2.0}')
    assert value == {"a": {"s": 4, "t": 2}, "b": [{"t": 1}], "c": 2}
    assert tokens.take() == Written(("2.0",), ("s", "t"))
    assert tokens.take() == Written()
    tokens.loads('{"s": 1, "t": {"s": 2}}')  # the same name in two objects is no duplicate
    assert not any(tokens.take())


def test_a_turn_end_that_leaves_namesake_calls_open_is_the_action_not_the_namesakes() -> None:
    # turnComplete names no tool call: a target that leaves every open call as it was ignores that
    # part of the action, namesakes or not (a mutant's bug read as duplicate-id before)
    before = _two_calls("running", "running")
    model = {"activeTurn": {"id": "t1", "responseParts": _two_calls("cancelled", "cancelled")["activeTurn"]["responseParts"]},
             "status": 8}
    target = before
    view = StepView("chat", {"type": "chat/turnComplete", "turnId": "t1"}, before, before, model, target)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("unapplied", "chat/turnComplete")]


def test_a_turn_end_that_leaves_a_call_open_is_one_cause_though_the_turn_moved() -> None:
    # turnComplete moves activeTurn into turns and cancels its open tool call; a target that moves
    # the turn but leaves the call streaming left it as it was — one level elsewhere: the action's
    # cause, not also a `variant` of the status (two ids for one bug before)
    call = {"toolCallId": "tc1", "toolName": "bash", "status": "streaming"}
    before = {"activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": call}]}, "turns": [], "status": 8}
    ended = lambda c: {"turns": [{"id": "t1", "state": "complete", "responseParts": [{"kind": "toolCall", "toolCall": c}]}],  # noqa: E731
                                 "status": 1}
    model = ended({**call, "status": "cancelled", "reason": "skipped", "invocationMessage": ""})
    target = ended(call)
    view = StepView("chat", {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}, before, before, model, target)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("unapplied", "chat/turnComplete")]


def test_an_empty_value_lost_on_a_step_the_model_leaves_alone_is_the_action() -> None:
    # toolCallConfirmed of a running call is a no-op; a target that rebuilds the call anyway loses
    # its `content: []`, which it held before the step: the action changed the state (one cause),
    # not an encoder dropping empty values (it held that one)
    call = {"toolCallId": "tc1", "toolName": "bash", "status": "running", "content": []}
    before = {"activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": call}]}, "status": 8}
    rebuilt = {"activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": {
        k: v for k, v in call.items() if k != "content"}}]}, "status": 8}
    action = {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "tc1", "approved": True}
    view = StepView("chat", action, before, before, before, rebuilt)
    view.echo, view.echo_on = (lambda: before), (lambda s: s)  # it holds `content: []` when it echoes
    assert [c.key for c in view.causes] == [("not-a-no-op", "chat/toolCallConfirmed")]
    # an encoder that drops empties loses it in its echo too: the encoder's cause, as before
    encoder = StepView("chat", action, before, before, before, rebuilt)
    encoder.echo, encoder.echo_on = (lambda: rebuilt), (lambda s: rebuilt)
    assert [c.key for c in encoder.causes] == [("dropped-empty",)]


def test_a_missing_update_of_the_first_namesake_is_the_action_ignored() -> None:
    # toolCallContentChanged applies to a running call only: the model updates the first of two
    # `tc1` calls (running) and skips the second (streaming); a target that ignores the action
    # updated no namesake at all — no "other namesake" can explain the first's missing content
    before = _two_calls("running", "streaming")
    model = _two_calls("running", "streaming")
    model["activeTurn"]["responseParts"][0]["toolCall"]["content"] = []
    view = StepView("chat", {"type": "chat/toolCallContentChanged", "turnId": "t1", "toolCallId": "tc1", "content": []},
                    before, before, model, before)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("unapplied", "chat/toolCallContentChanged")]


@pytest.mark.parametrize(("first", "key"), [
    # toolCallReady names tc1, which two calls share; a target that updates neither ignored the
    # action (a crafted target ignoring auth-required read as duplicate-id before)
    ("streaming", ("unapplied", "chat/toolCallReady")),
    # the Go client updates the first tool call of an id only; when that first call already holds
    # the new values, nothing changes where it did: still the namesakes, not the action ignored
    ("running", ("duplicate-id",)),
], ids=["ignored-altogether", "first-update-invisible"])
def test_namesakes_the_target_leaves_as_they_were(first: str, key: tuple[str, ...]) -> None:
    before = _two_calls(first, "streaming")
    model = _two_calls("running", "running")
    view = StepView("chat", {"type": "chat/toolCallReady", "turnId": "t1", "toolCallId": "tc1"},
                    before, before, model, before)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [key]


def test_an_update_of_the_second_namesake_left_undone_is_told_from_a_first_only_client_by_asking() -> None:
    # recall r12, crafted `auth_required_ignored` seed 3 (a FALSE duplicate-id): two `tc4` calls,
    # the first a client's (running), the second an MCP server's (running). The model sends the
    # second to auth-required (its guard skips the client's call); a target that ignores the
    # action changed neither — and so does a client that updates the first call of an id only (its
    # guard skips the client's call). The step alone cannot tell them apart; the target can.
    before = _two_calls("running", "running")
    calls = before["activeTurn"]["responseParts"]
    calls[1]["toolCall"] = {**calls[1]["toolCall"], "contributor": {"kind": "mcp", "customizationId": "c"}}
    model = json.loads(json.dumps(before))
    model["activeTurn"]["responseParts"][1]["toolCall"].update(status="auth-required", auth={"reason": "required"})
    action = {"type": "chat/toolCallAuthRequired", "turnId": "t1", "toolCallId": "tc1", "auth": {"reason": "required"}}
    def ignores(state: Any) -> Any:  # the crafted target: the action left undone
        return state

    def first_only(state: Any) -> Any:  # a client that updates the first call of the id only
        out = json.loads(json.dumps(state))
        call = out["activeTurn"]["responseParts"][0]["toolCall"]
        if call.get("contributor", {}).get("kind") == "mcp":
            call.update(status="auth-required", auth=action["auth"])
        return out

    keys = {}
    for name, target in (("ignores", ignores), ("first-only", first_only), ("not asked", None)):
        view = StepView("chat", action, before, before, model, before)
        view.echo, view.answer_on = (lambda: model), target
        keys[name] = [c.key for c in view.causes]
    # asked to apply the action with the client's namesake taken out: the crafted target still
    # ignores it, a first-only client applies it; with no target to ask, the namesakes as before
    assert keys == {"ignores": [("unapplied", "chat/toolCallAuthRequired")], "first-only": [("duplicate-id",)],
                    "not asked": [("duplicate-id",)]}


class LateToolActionsNoOp(Crafted):
    """A stale tool-call action is a no-op, status included (the fixtures' reading); `status`:
    instead, writes this status on it (another reading of its own)."""

    def __init__(self, status: int | None = None) -> None:
        self.status = status

    def encode(self, kind: str, before: Any, after: Any, action: Any) -> Any:
        if isinstance(action, dict) and action.get("type") == "chat/toolCallAuthRequired" and after is not before:
            return before if self.status is None else {**before, "status": self.status}
        return after


@pytest.mark.parametrize(("target", "found"), [(LateToolActionsNoOp(), []), (LateToolActionsNoOp(status=4), ["INV-D01"])],
                         ids=["the-fixtures-reading", "another-status"])
def test_a_stale_tool_call_action_left_a_no_op_is_the_known_issue(target: Crafted, found: list[str]) -> None:
    # recall r14, crafted `auth_required_ignored` seed 5 (a FALSE `stale status`): after
    # `chat/error` the reducers recompute status on a tool-call action for another turn (Error →
    # Idle), the fixtures call it a no-op (REDUCERS.md §11 item 18). A target that keeps the state
    # follows the documented reading: known (INV-015.strict), not a divergence. One that writes a
    # status of its own is still a divergence (the control).
    s = _stepper(target)
    ended, _ = _stepped(s, {"type": "chat/error", "turnId": "t1", "duration": 5,
                            "error": {"message": "m", "errorType": "auth"}}, 5_000)
    assert not ended.malformed and not _found(ended)
    held = s.state["status"]
    result, _ = _stepped(s, {"type": "chat/toolCallAuthRequired", "turnId": "r3", "toolCallId": "tc1",
                             "auth": {"reason": "required", "resource": {"resource": "https://x/mcp"}}}, 6_000)
    assert result.expected is not None and result.expected["status"] != held  # the reducers recompute
    failing = {v.invariant for v in _found(result)}
    assert failing == set() if not found else set(found) <= failing
    if not found:
        assert "INV-015.strict" in {v.invariant for v in result.violations if v.severity == "known"}


def test_a_nested_status_in_the_payload_does_not_write_the_chats_status() -> None:
    # the Go client's first-namesake bug on a toolCallReady carrying `riskAssessment.status`: the
    # chat's recomputed `status` follows from the namesakes' difference, it is not the action's
    # own write (read as `unapplied chat/toolCallReady` beside duplicate-id before)
    before = _two_calls("completed", "streaming")
    model = _two_calls("completed", "pending-confirmation")
    model["status"] = 24  # InputNeeded, recomputed from the call awaiting confirmation
    action = {"type": "chat/toolCallReady", "turnId": "t1", "toolCallId": "tc1",
              "riskAssessment": {"kind": "judge", "status": "complete"}}
    view = StepView("chat", action, before, before, model, before)
    view.echo = lambda: model
    assert [c.key for c in view.causes] == [("duplicate-id",)]


def test_a_reordered_queue_is_a_permutation_whatever_the_numbers_look_like() -> None:
    # a target that writes integers as floats (`3` -> `3.0`) reorders its queue: the same messages,
    # in another order (INV-024 read `3.0` as another message: a second id for int-as-float)
    from harness.invariants.pending import _reorder_problem

    msg = lambda i, line: {"id": i, "message": {"text": "x", "attachments": [{"range": {"start": {"line": line}}}]}}  # noqa: E731
    before = [msg("m3", 3), msg("m4", 4), msg("m2", 2)]
    after = [msg("m4", 4.0), msg("m3", 3.0), msg("m2", 2.0)]
    assert _reorder_problem(before, after, ["m4"]) is None
    assert _reorder_problem(before, [msg("m4", 4.5), msg("m3", 3), msg("m2", 2)], ["m4"]) is not None


def test_namesakes_the_target_changed_as_the_model_did_are_no_namesake_question() -> None:
    # recall, turn_end_no_duration_clamp seed 1: the ended turn joined a history turn of its id;
    # the target appended it as the model did, with a duration unclamped. Which namesake was
    # updated is not in question: the value is (read as `duplicate-id` before)
    old = {"id": "t1", "state": "cancelled", "responseParts": []}
    active = {"id": "t1", "startedAt": "1970-01-01T00:00:00.000Z", "responseParts": []}
    before = {"status": 1, "turns": [old], "activeTurn": active}
    ended = {**active, "state": "cancelled"}
    model = {"status": 1, "turns": [old, {**ended, "duration": 0}]}
    target = {"status": 1, "turns": [old, {**ended, "duration": -5}]}
    view = StepView("chat", {"type": "chat/turnCancelled", "turnId": "t1", "duration": -5}, before, before, model, target)
    view.echo = lambda: model
    keys = [c.key for c in view.causes]
    assert keys and ("duplicate-id",) not in keys


def test_a_first_only_client_whose_encoder_drops_empties_is_still_the_namesake_cause() -> None:
    # recall r17, the Go client (7 FALSE `unapplied chat/toolCall…`): it updates the first call of
    # an id only and its encoder drops empty values. Asked with the other namesake taken out, it
    # wrote the auth without `scopes_supported: []`; and a namesake whose empty `_meta` it dropped
    # is not one it wrote. Both are the namesakes (and the empties another cause), not the action
    # left undone.
    before = _two_calls("running", "running")
    calls = before["activeTurn"]["responseParts"]
    calls[1]["toolCall"] = {**calls[1]["toolCall"], "contributor": {"kind": "mcp", "customizationId": "c"}, "_meta": {}}
    auth = {"reason": "required", "resource": {"resource": "https://r", "scopes_supported": []}}
    model = json.loads(json.dumps(before))
    model["activeTurn"]["responseParts"][1]["toolCall"].update(status="auth-required", auth=auth)
    action = {"type": "chat/toolCallAuthRequired", "turnId": "t1", "toolCallId": "tc1", "auth": auth}
    target = json.loads(json.dumps(before))
    del target["activeTurn"]["responseParts"][1]["toolCall"]["_meta"]  # dropped: `{}`

    def first_only_dropping_empties(state: Any) -> Any:
        out = json.loads(json.dumps(state))
        call = out["activeTurn"]["responseParts"][0]["toolCall"]
        if call.get("contributor", {}).get("kind") == "mcp":
            call.update(status="auth-required", auth={"reason": "required", "resource": {"resource": "https://r"}})
        call.pop("_meta", None)
        return out

    view = StepView("chat", action, before, before, model, target)
    view.echo, view.answer_on = (lambda: model), first_only_dropping_empties
    assert ("duplicate-id",) in [c.key for c in view.causes]
    assert ("unapplied", "chat/toolCallAuthRequired") not in [c.key for c in view.causes]
