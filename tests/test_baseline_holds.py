"""Baselines that hold (issue 15 item 3): an accepted difference never fails a run, a replay or
a shrink; baseline entries apply to probes; format 2 normalisations (`0`, `false`, `""`,
`[]` ≡ `null`, `!` exclusions); a known upstream issue is never saved as a violation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.causes import Cause, StepView, Witnesses, cause_json, rejudger, violation_cause
from harness.corpus.baseline import BaselineError, parse_baseline
from harness.corpus.finding import Finding, TraceStep, load_finding
from harness.engine.events import EventBus, KnownSeen
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.engine.shrink import TraceShrinker
from harness.engine.stepper import Stepper
from harness.reference import Model, Profile
from harness.targets.base import ReduceSession
from harness.targets.reference import ReferenceTarget

from . import baseline_targets as bt

P = Profile.named("0.7.0")
ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
EDIT = {"after": {"uri": "file:///a", "content": {"uri": "file:///a"}}}
F1 = {"id": "f1", "edit": EDIT}
CLEARED = {"type": "changeset/cleared"}
TO_ERROR = {"type": "changeset/statusChanged", "status": "error", "error": {"errorType": "failed", "message": "boom"}}
REMOVE_F1 = {"type": "changeset/fileRemoved", "fileId": "f1"}
NOOP = {"type": "changeset/filesReviewChanged", "files": ["nope"], "reviewed": True}


def doc(*entries: dict[str, Any], version: int = 2) -> dict[str, Any]:
    return {"format": "ahp-fuzz/baseline", "formatVersion": version, "entries": list(entries)}


#: Accepts the one quirk of `clear_ignored`: `changeset/cleared` is a no-op on this target.
CLEAR_IS_NOOP = {"id": "clear-noop", "reason": "the client ignores cleared (tracked as client#7)",
                 "known": {"invariant": "INV-D01", "actionType": "changeset/cleared"}}


def _target(factory: Any) -> ReferenceTarget:
    return ReferenceTarget(P, model=factory(P))


def _finding(invariant: str, actions: list[Any], *, severity: str = "divergence", initial: Any = None,
             message: str = "m", target: str = "reference") -> Finding:
    return Finding(
        invariant=invariant, severity=severity, title=invariant, message=message, profile="0.7.0",
        target=target, kind="changeset",
        initial=initial if initial is not None else {"status": "ready", "files": [F1]},
        steps=[TraceStep(a, 1_000 + 10 * i) for i, a in enumerate(actions)], failing_step=len(actions) - 1,
    )


# -- an accepted-only difference never fails a replay -----------------------------------------


def test_a_difference_only_the_baseline_accepts_does_not_reproduce_on_replay() -> None:
    finding = _finding("INV-D01", [CLEARED])
    target = _target(bt.clear_ignored)
    assert replay(finding, target).reproduced  # without the baseline it is a divergence
    baseline = parse_baseline(doc(CLEAR_IS_NOOP))
    result = replay(finding, target, baseline=baseline)
    # before: the step fired INV-D01 as `known` and the replay still said "reproduced"
    assert not result.reproduced, result.summary(finding)
    assert [(i, v.invariant, v.severity) for i, v in result.violations] == [(0, "INV-D01", "known")]
    assert "[baseline clear-noop:" in result.violations[0][1].message
    assert baseline.entries[0].hits == 1


def _adapter(name: str) -> str:
    return f"adapter:{sys.executable} -m harness.targets.reference_adapter --model {HERE / 'baseline_targets.py'}:{name}"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_replay_with_the_baseline_marks_the_accepted_step_known_and_exits_0(tmp_path: Path) -> None:
    base = tmp_path / "b.json"
    base.write_text(json.dumps(doc(CLEAR_IS_NOOP)))
    finding = _finding("INV-D01", [CLEARED], target=_adapter("clear_ignored"))
    finding.extra["baseline"] = parse_baseline(doc(CLEAR_IS_NOOP), str(base)).provenance()
    path = tmp_path / "f.json"
    path.write_text(json.dumps(finding.to_json()))
    plain = _cli("replay", str(path))
    assert plain.returncode == 1, plain.stdout + plain.stderr
    assert f"note: found under baseline {base}" in plain.stderr  # the run's verdict needs it
    accepted = _cli("replay", str(path), "--baseline", str(base))
    # before: "step 0: INV-D01 [known] …" and still exit 1
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "found under baseline" not in accepted.stderr
    other = tmp_path / "b2.json"
    other.write_text(json.dumps(doc({**CLEAR_IS_NOOP, "reason": "another reason"})))
    assert "is another" in _cli("replay", str(path), "--baseline", str(other)).stderr
    assert "step 0: INV-D01 [known]" in accepted.stdout
    assert "known: INV-D01 fires at step 0 only as known (accepted by the baseline, entry clear-noop)" in accepted.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**doc(CLEAR_IS_NOOP), "formatVersion": 9}))
    refused = _cli("replay", str(path), "--baseline", str(bad))
    assert refused.returncode == 2 and "format version 9" in refused.stderr


@pytest.mark.parametrize("seed", [1, 2])
def test_a_run_saves_no_finding_of_an_accepted_difference(seed: int) -> None:
    # `cleared` ignored is accepted; `statusChanged` ignored is not. Before, both seeds saved
    # an INV-D01 "finding" of one `cleared` step tagged "[baseline clear-noop: …]".
    baseline = parse_baseline(doc(CLEAR_IS_NOOP))
    target = _target(bt.clear_and_status_ignored)
    config = RunConfig(target=target, target_spec="test", target_is_model=False, profile=P, seed=seed,
                       budget_s=None, max_chunks=4, chunk_examples=10, max_steps=25, kinds=("changeset",),
                       baseline=baseline, heartbeat_s=0, profiles=(P,))
    events: list[Any] = []
    findings = run_campaign(config, EventBus(events.append)).findings
    assert findings, "the statusChanged defect is found"
    # reported as accepted by the entry, not as an upstream issue
    assert [e.known_issue for e in events if isinstance(e, KnownSeen) and e.invariant == "INV-D01"] == \
        ["accepted by baseline entry clear-noop"]
    assert baseline.entries[0].hits > 0
    for f in findings:
        assert "[baseline" not in f.message, f.message
        assert f.steps[f.failing_step].action["type"] != "changeset/cleared", f.message
        assert replay(f, target, baseline=baseline).reproduced, f.message
        assert f.extra["baseline"] == {"source": "baseline", "digest": baseline.digest, "entries": ["clear-noop"]}


# -- the shrinker keeps the difference that is not accepted -----------------------------------


def test_the_shrinker_keeps_the_difference_the_baseline_does_not_accept() -> None:
    # Step 0 shows the accepted quirk (cleared ignored), step 2 the real defect (statusChanged
    # ignored); the run raised at step 2. Before, the shrinker's predicate was "INV-D01 fires",
    # met by the accepted step 0: the finding shrank to one step of accepted difference.
    finding = _finding("INV-D01", [CLEARED, NOOP, TO_ERROR, NOOP])
    baseline = parse_baseline(doc(CLEAR_IS_NOOP))
    shrunk = TraceShrinker(_target(bt.clear_and_status_ignored), target_is_model=False,
                           baseline=baseline, max_attempts=200).shrink(finding)
    assert "[baseline" not in shrunk.message
    assert [s.action["type"] for s in shrunk.steps] == ["changeset/statusChanged"], shrunk.steps
    assert "status" in shrunk.message
    assert replay(shrunk, _target(bt.clear_and_status_ignored), baseline=baseline).reproduced


def _cause_at(finding: Finding, target: ReferenceTarget, step: int) -> Cause:
    """The root cause a run gives `finding`'s INV-D01 at `step` (as the machine computes it)."""
    s = Stepper("changeset", finding.initial, Model(P), target.session("changeset", finding.initial), target)
    for i, t in enumerate(finding.steps):
        reference, state = s.reference, s.state
        r = s.step(t.action, t.now_ms)
        if i == step:
            v = next(v for v in r.violations if v.invariant == "INV-D01")
            view = StepView("changeset", t.action, reference, state, r.expected, r.observed)
            rejudge = rejudger(s.probe_reducer(), view, t.now_ms, s.profile, {})
            view.echo = rejudge.echo  # type: ignore[attr-defined]
            cause = violation_cause(view, v, rejudge)
            assert cause is not None
            return cause
    raise AssertionError("no such step")


def test_the_shrinker_keeps_the_root_cause_the_run_saw_not_an_earlier_one() -> None:
    # Two defects under one invariant: statusChanged ignored (step 0) and fileRemoved ignored
    # (step 2). The run reported the status cause already and raised for the fileRemoved one.
    target = _target(bt.status_and_remove_ignored)
    finding = _finding("INV-D01", [TO_ERROR, NOOP, REMOVE_F1])
    removal = _cause_at(finding, target, 2)
    assert removal.id != _cause_at(finding, target, 0).id
    finding.cause = cause_json(removal, Witnesses())  # the cause the campaign files it under
    shrunk = TraceShrinker(target, target_is_model=False, max_attempts=200).shrink(finding)
    assert shrunk.cause is not None and shrunk.cause["id"] == removal.id
    # before, the shrinker had no cause to keep: it cut at the first INV-D01, the status one,
    # a cause already reported (the run then dropped the finding as a duplicate: lost)
    assert [s.action["type"] for s in shrunk.steps] == ["changeset/fileRemoved"]
    assert "files" in shrunk.message
    # a finding without a recorded cause keeps the first firing of its invariant
    finding.cause = None
    first = TraceShrinker(target, target_is_model=False, max_attempts=200).shrink(finding)
    assert [s.action["type"] for s in first.steps] == ["changeset/statusChanged"]


# -- a known upstream issue is never saved as a violation -------------------------------------

CONTENT_ERROR = {"type": "changeset/contentChanged", "files": [], "error": {"errorType": "failed", "message": "diff failed"}}
CONTENT_OK = {"type": "changeset/contentChanged", "files": []}


def test_a_known_issue_never_stands_in_for_a_violation_while_shrinking() -> None:
    # Step 0: contentChanged sets an error on a ready changeset — the upstream issue (§11
    # item 10), shown by the reference too: known. Step 1: the target keeps that error where the
    # reference deletes it — INV-050.contentChanged broken the target's own way: a violation.
    target = _target(bt.content_changed_keeps_error)
    initial = {"status": "ready", "files": []}
    s = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target)
    first, second = s.step(CONTENT_ERROR, 1_000), s.step(CONTENT_OK, 1_010)
    assert [(v.invariant, v.severity) for v in first.violations if v.invariant.startswith("INV-050")] == \
        [("INV-050.contentChanged", "known")]
    own_way = next(v for v in second.violations if v.invariant == "INV-050.contentChanged")
    assert own_way.severity == "violation" and "its own way" in own_way.message
    finding = _finding("INV-050.contentChanged", [CONTENT_ERROR, CONTENT_OK], severity="violation",
                       initial=initial, message=own_way.message)
    shrunk = TraceShrinker(target, target_is_model=False, max_attempts=200).shrink(finding)
    # before: the known firing at step 0 met the predicate; the "violation" saved was the
    # upstream issue alone, and its replay on the reference exited 1
    assert len(shrunk.steps) == 2 and shrunk.failing_step == 1
    assert "its own way" in shrunk.message
    assert not replay(shrunk, ReferenceTarget(P), target_is_model=True).reproduced


def test_a_known_issue_saved_as_a_violation_replays_as_known_on_the_reference(tmp_path: Path) -> None:
    known = load_finding(ROOT / "corpora/known/inv-050.contentchanged-changeset-1773cfcccfe8.json")
    as_violation = Finding(**{**known.__dict__, "severity": "violation"})
    path = tmp_path / "f.json"
    path.write_text(json.dumps(as_violation.to_json()))
    proc = _cli("replay", str(path), "--target", "reference")
    # before: "reproduced: INV-050.contentChanged fires at step 0" and exit 1 on the reference
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "only as known (known upstream issue: REDUCERS.md §11 item 10" in proc.stdout
    # the checked-in known finding still reproduces: it must keep failing (corpora/README.md)
    assert replay(known, ReferenceTarget(P), target_is_model=True).reproduced


# -- baseline entries apply to probes ----------------------------------------------------------


class _MovesOnUnknown:
    """A changeset target that answers an action type it does not know by changing the state
    (INV-004: an unknown action must be a no-op), and drops empty lists when it encodes."""

    description = "moves on unknown types"

    def __init__(self) -> None:
        self.model = Model(P)

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        if self.model.handler(kind, action) is None:
            return bt.drop_empty({**state, "status": "error"})
        return bt.drop_empty(self.model.reduce(kind, state, action, now_ms))

    def session(self, kind: str, state: dict[str, Any]) -> ReduceSession:
        return ReduceSession(self, kind, state)

    def close(self) -> None:
        return None


UNKNOWN = {"type": "changeset/futureThing"}


def test_known_entries_apply_to_probes() -> None:
    initial = {"status": "ready", "files": [F1]}
    target = _MovesOnUnknown()
    plain = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target).probe(UNKNOWN, 1_000)
    fired = {v.invariant for v in plain.violations if v.severity != "known"}
    assert fired, "the probe must show the unknown-type difference"
    entries = [{"id": f"k{i}", "reason": "unknown types reset the status (client#9)", "known": {"invariant": inv}}
               for i, inv in enumerate(sorted(fired))]
    baseline = parse_baseline(doc(*entries))
    s = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target, baseline=baseline)
    result = s.probe(UNKNOWN, 1_000)
    # before: the probe path did not classify; the entries stayed "STALE: never matched"
    assert all(v.severity == "known" for v in result.violations), result.violations
    assert baseline.stale == []
    finding = Finding(invariant=sorted(fired)[0], severity="violation", title="t", message="m", profile="0.7.0",
                      target="t", kind="changeset", initial=initial, steps=[TraceStep(UNKNOWN, 1_000, probe=True)],
                      failing_step=0)
    assert replay(finding, target).reproduced
    assert not replay(finding, target, baseline=baseline).reproduced


def test_normalisations_apply_to_what_a_target_answers_a_probe() -> None:
    initial = {"status": "ready", "files": []}

    class DropsOnly(_MovesOnUnknown):
        def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
            return bt.drop_empty(state if self.model.handler(kind, action) is None
                                 else self.model.reduce(kind, state, action, now_ms))

    target = DropsOnly()
    plain = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target).probe(UNKNOWN, 1_000)
    assert [v for v in plain.violations if v.severity != "known"]  # files: [] → <absent>
    baseline = parse_baseline(doc({"id": "lists", "reason": "omitempty", "normalise": {"absentEquals": [], "paths": ["**"]}}))
    s = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target, baseline=baseline)
    assert s.probe(UNKNOWN, 1_000).violations == []
    assert baseline.entries[0].hits >= 1


# -- format 2: 0, false, "", [] ≡ null, and exclusions -----------------------------------------


def _norm(values: list[Any], paths: list[str], *, absent: bool = True, id: str = "n") -> dict[str, Any]:
    return {"id": id, "reason": "r", "normalise": {"values": values, "absent": absent, "paths": paths}}


def test_format_2_normalises_zero_false_and_empty_markdown_to_absent() -> None:
    b = parse_baseline(doc(_norm([0], ["usage.*"], id="zero"), _norm([False], ["*.reviewed"], id="flag"),
                           _norm([""], ["message.markdown"], id="md")))
    expected = {"usage": {"inputTokens": 0, "outputTokens": 5}, "f": {"reviewed": False},
                "message": {"markdown": "", "text": "x"}}
    observed = {"usage": {"outputTokens": 5}, "f": {}, "message": {"text": "x"}}
    assert b.normalise(expected, observed) == expected
    assert [e.hits for e in b.entries] == [1, 1, 1]
    # JSON types count: the target's `false` is not the reference's `0`, nor `0` an absent `false`
    assert b.normalise({"usage": {"inputTokens": 0}}, {"usage": {"inputTokens": False}}) == {"usage": {"inputTokens": False}}
    assert b.normalise({"f": {"reviewed": 0}}, {"f": {}}) == {"f": {}}
    # and only the members: a real value stays a difference
    assert b.normalise({"usage": {"inputTokens": 3}}, {"usage": {}}) == {"usage": {}}


def test_format_2_makes_empty_lists_and_objects_equal_to_null_and_absent() -> None:
    b = parse_baseline(doc(_norm([[], {}, None], ["**"])))
    expected = {"a": [], "b": {}, "c": None, "d": [], "items": [[], {"x": []}]}
    observed = {"a": None, "b": None, "c": [], "items": [None, {"x": None}]}
    assert b.normalise(expected, observed) == expected
    # without "absent", a missing key stays a difference
    strict = parse_baseline(doc(_norm([[], None], ["**"], absent=False)))
    assert strict.normalise({"a": [], "d": []}, {"a": None}) == {"a": []}


def test_an_exclusion_keeps_one_path_out_of_a_normalisation() -> None:
    # seed 001 (chat state.ts): a chat's `workingDirectories: []` means "no directories",
    # absent means "all of the session's" — "empty list = absent everywhere" must not hide it
    b = parse_baseline(doc(_norm([[]], ["**", "!chats[].workingDirectories"])))
    expected = {"chats": [{"resource": "c1", "workingDirectories": [], "tags": []}], "activeClients": []}
    observed = {"chats": [{"resource": "c1"}]}
    out = b.normalise(expected, observed)
    assert out == {"chats": [{"resource": "c1", "tags": []}], "activeClients": []}
    # the exclusion covers what lies under the path too
    deep = parse_baseline(doc(_norm([[]], ["**", "!chats"])))
    assert deep.normalise(expected, observed) == {"chats": [{"resource": "c1"}], "activeClients": []}


def test_the_excluded_loss_is_still_a_finding_on_a_session_step() -> None:
    class DropsEmptyLists:
        description = "drops empty lists"

        def __init__(self) -> None:
            self.model = Model(P)

        def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
            return bt.drop_empty(self.model.reduce(kind, state, action, now_ms))

        def session(self, kind: str, state: dict[str, Any]) -> ReduceSession:
            return ReduceSession(self, kind, state)

        def close(self) -> None:
            return None

    session = {"provider": "local", "title": "s", "lifecycle": "ready", "activeClients": [], "chats": [], "status": 1,
               "workingDirectories": ["file:///a"]}
    add = {"type": "session/chatAdded", "summary": {"resource": "ahp-chat:/c1", "workingDirectories": []}}

    def fired(paths: list[str]) -> list[str]:
        b = parse_baseline(doc(_norm([[]], paths)))
        t = DropsEmptyLists()
        s = Stepper("session", session, Model(P), t.session("session", session), t, baseline=b)
        return [v.invariant for v in s.step(add, 1_000).violations if v.severity != "known"]

    assert fired(["**"]) == []  # "empty list = absent everywhere" hides the chat's lost []
    assert "INV-D01" in fired(["**", "!chats[].workingDirectories"])


@pytest.mark.parametrize(
    ("entry", "version", "needle"),
    [
        (_norm([0], ["**"]), 1, '"formatVersion": 2'),
        ({"id": "x", "reason": "r", "normalise": {"absentEquals": [], "paths": ["**", "!a"]}}, 1, "needs \"formatVersion\": 2"),
        (_norm([1], ["**"]), 2, "may hold only 0, false"),
        (_norm(["x"], ["**"]), 2, "may hold only"),
        (_norm([[]], ["**"], absent=False), 2, "two things to make equal"),
        (_norm([], ["**"]), 2, "non-empty list"),
        (_norm([[]], ["!a"]), 2, "only exclusions"),
        (_norm([[]], ["**", "!"]), 2, '"!" alone'),
        ({"id": "x", "reason": "r", "normalise": {"values": [[]], "absent": "yes", "paths": ["**"]}}, 2, '"absent" must be'),
        ({"id": "x", "reason": "r", "normalise": {"values": [[]], "absentEquals": [], "paths": ["**"]}}, 2, "wants"),
        ({"id": "x", "reason": "r", "normalise": {"absentEquals": 1, "paths": ["**"]}}, 2, "absentEquals must be one of"),
    ],
)
def test_format_2_errors_name_the_entry_and_what_is_wrong(entry: dict[str, Any], version: int, needle: str) -> None:
    with pytest.raises(BaselineError) as e:
        parse_baseline(doc(entry, version=version), "b.json")
    assert needle in str(e.value) and "entries[0]" in str(e.value)


def test_format_1_files_still_read() -> None:
    b = parse_baseline(doc({"id": "l", "reason": "r", "normalise": {"absentEquals": [], "paths": ["turns"]}}, version=1))
    assert b.version == 1 and b.normalise({"turns": []}, {}) == {"turns": []}


def test_an_accepted_divergence_is_not_reported_again_on_later_steps() -> None:
    # `cleared` ignored leaves the target with a file the reference no longer has. The baseline
    # accepts it on `cleared`; before, INV-D01 fired as a divergence on every later step (the
    # accepted difference carried over), and those counted.
    target = _target(bt.clear_and_status_ignored)
    initial = {"status": "ready", "files": [F1]}
    s = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target,
                baseline=parse_baseline(doc(CLEAR_IS_NOOP)))
    assert [v.severity for v in s.step(CLEARED, 1_000).violations if v.invariant == "INV-D01"] == ["known"]
    assert [v for v in s.step(NOOP, 1_010).violations if v.severity != "known"] == []
    # what a later step does differently is still reported
    later = s.step(TO_ERROR, 1_020)
    d01 = next(v for v in later.violations if v.invariant == "INV-D01")
    assert d01.severity == "divergence" and "status" in d01.message and "files" not in d01.message


def test_the_documented_example_is_a_valid_baseline() -> None:
    text = (ROOT / "docs/baselines.md").read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    b = parse_baseline(json.loads(block), "docs/baselines.md")
    assert b.version == 2 and [e.id for e in b.entries][:1] == ["drops-empty-lists"]
    lists = b.entries[0]
    assert lists.matches_path("turns[].responseParts") and not lists.matches_path("chats[].workingDirectories")
    assert not lists.matches_path("workingDirectories")


T0 = "2026-01-01T00:00:00.000Z"
CHAT = {"resource": "ahp-chat:/c", "title": "t", "status": 1, "modifiedAt": T0, "turns": []}
TURN_STARTED = {"type": "chat/turnStarted", "turnId": "t1", "startedAt": T0, "message": {"text": "hi", "origin": {"kind": "user"}}}
TURN_COMPLETE = {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}


def test_what_fires_only_because_of_an_accepted_divergence_is_accepted_with_it() -> None:
    # A client that ignores chat/turnComplete: INV-D01 (accepted by the entry) and INV-016
    # ("the active turn is still present") fire on the step. The reference does not show
    # INV-016 there: it follows from the accepted difference. Before, it was a finding.
    ignores = Model(P, overrides={"chat/turnComplete": lambda state, action, ctx: state})
    target = ReferenceTarget(P, model=ignores)
    entry = {"id": "no-complete", "reason": "turns are completed by the server (client#3)",
             "known": {"invariant": "INV-D01", "actionType": "chat/turnComplete"}}

    def complete(baseline: Any) -> list[Any]:
        s = Stepper("chat", CHAT, Model(P), target.session("chat", CHAT), target, baseline=baseline)
        s.step(TURN_STARTED, 1_000)
        return s.step(TURN_COMPLETE, 1_010).violations

    plain = complete(None)
    assert {v.invariant for v in plain if v.severity != "known"} >= {"INV-D01", "INV-016"}
    judged = complete(parse_baseline(doc(entry)))
    assert [v for v in judged if v.severity != "known"] == [], judged
    inv016 = [v for v in judged if v.invariant == "INV-016"]
    assert inv016 and all("[baseline no-complete:" in v.message and "follows from" in v.message for v in inv016)
    # an entry for another action type accepts nothing here
    other = {**entry, "known": {"invariant": "INV-D01", "actionType": "chat/delta"}}
    assert {v.invariant for v in complete(parse_baseline(doc(other))) if v.severity != "known"} >= {"INV-D01", "INV-016"}


def test_a_known_entry_with_a_message_accepts_only_the_differences_it_matches() -> None:
    # The client never stores a changeset's `error` (accepted, by a message pattern naming
    # that path) and, on one action, also sets the wrong status (not accepted). INV-D01 lists
    # both paths in one message; before, the pattern matched that message and the whole
    # divergence — the wrong status with it — was accepted.
    def drops_error(wrong_status: bool) -> ReferenceTarget:
        def h(state: dict[str, Any], action: dict[str, Any], ctx: Any) -> dict[str, Any]:
            out = {k: v for k, v in state.items() if k != "error"}
            return {**out, "status": "ready" if wrong_status else action["status"]}
        return ReferenceTarget(P, model=Model(P, overrides={"changeset/statusChanged": h}))

    entry = {"id": "no-error", "reason": "the client does not keep error objects (client#5)",
             "known": {"invariant": "INV-D01", "actionType": "changeset/statusChanged", "message": r"^\S+: error: "}}

    def d01(wrong_status: bool) -> Any:
        target = drops_error(wrong_status)
        initial = {"status": "ready", "files": []}
        s = Stepper("changeset", initial, Model(P), target.session("changeset", initial), target,
                    baseline=parse_baseline(doc(entry)))
        return next(v for v in s.step(TO_ERROR, 1_000).violations if v.invariant == "INV-D01")

    only_error = d01(False)
    assert only_error.severity == "known" and "[baseline no-error:" in only_error.message
    both = d01(True)
    assert both.severity == "divergence", both
    assert both.message == 'changeset/statusChanged: status: reference="error" target="ready"'


def test_the_pytest_plugin_refuses_a_bad_baseline_as_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({**doc(CLEAR_IS_NOOP), "formatVersion": 9}))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--ahp-target", "reference",
                           "--ahp-baseline", str(bad), "test_x.py"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    # before: an INTERNALERROR traceback (and exit 3)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert "--ahp-baseline: " in proc.stderr and "format version 9" in proc.stderr
