"""The engine: stepping, the campaign loop, findings, replay — in process (fast tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.corpus.finding import Finding, TraceStep, load_finding
from harness.corpus.store import CorpusStore
from harness.engine.events import Event, EventBus, FindingFound, RunFinished
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.engine.stepper import TARGET_ERROR, Stepper
from harness.reference import Model, Profile
from harness.report.writers import FindingWriter, JsonReport
from harness.targets.reference import ReferenceTarget

from . import mutants

P = Profile.named("0.7.0")
T0 = "2026-01-01T00:00:00.000Z"


def _chat() -> dict:
    return {"resource": "ahp-chat:/c", "title": "t", "status": 1, "modifiedAt": T0, "turns": []}


def _turn_started(tid: str = "t1") -> dict:
    return {"type": "chat/turnStarted", "turnId": tid, "startedAt": T0,
            "message": {"text": "hi", "origin": {"kind": "user"}}}


def _stepper(target: ReferenceTarget, *, is_model: bool) -> Stepper:
    return Stepper("chat", _chat(), Model(P), target.session("chat", _chat()), target, target_is_model=is_model)


def test_stepper_against_the_model_itself_reports_nothing() -> None:
    s = _stepper(ReferenceTarget(P), is_model=True)
    r = s.step(_turn_started(), 5)
    # only known upstream issues (turnStarted stamps modifiedAt from the clock, §11 item 1)
    assert [v for v in r.violations if v.severity != "known"] == []
    assert {v.invariant for v in r.violations} <= {"INV-002.wallclock"}
    assert r.observed is not None and r.observed["activeTurn"]["id"] == "t1"


def test_stepper_reports_divergence_from_a_broken_target() -> None:
    broken = ReferenceTarget(P, model=mutants.turn_started_keeps_read(P))
    s = Stepper("chat", {**_chat(), "status": 33}, Model(P), broken.session("chat", {**_chat(), "status": 33}), broken)
    r = s.step(_turn_started(), 5)
    assert any(v.severity == "divergence" for v in r.violations), r.violations


def test_malformed_action_is_a_probe_that_moves_no_state() -> None:
    s = _stepper(ReferenceTarget(P), is_model=False)
    r = s.step({"type": "chat/turnStarted"}, 5)  # no turnId: schema-invalid
    assert r.malformed and r.violations == [] and s.state == _chat()


def test_the_model_as_target_answers_a_malformed_probe_and_may_not_crash_on_it() -> None:
    # issue 32, coverage: a run against the model skipped its answer to a malformed probe, so
    # the model's payload rules (a list item that must be an object, …) ran in no plain run.
    # The model answers like any target now: a refusal or a state, and no other exception.
    calls: list[object] = []

    class Watched(Model):
        def reduce(self, kind, state, action, now_ms):  # type: ignore[no-untyped-def]
            calls.append(action)
            return super().reduce(kind, state, action, now_ms)

    malformed = {"type": "chat/turnStarted", "turnId": "t1", "message": 7}
    s = Stepper("chat", _chat(), Watched(P, check_payloads=True), ReferenceTarget(P).session("chat", _chat()),
                ReferenceTarget(P), target_is_model=True)
    assert s.probe(malformed, 5).violations == []
    assert calls == [malformed]

    class Crashing(Model):
        def reduce(self, kind, state, action, now_ms):  # type: ignore[no-untyped-def]
            raise RuntimeError("a reference-model bug")

    s = Stepper("chat", _chat(), Crashing(P), ReferenceTarget(P).session("chat", _chat()), ReferenceTarget(P),
                target_is_model=True)
    with pytest.raises(RuntimeError, match="reference-model bug"):
        s.probe(malformed, 5)


def test_target_raising_on_unknown_type_is_a_finding() -> None:
    class Raising(ReferenceTarget):
        def reduce(self, kind, state, action, now_ms):  # type: ignore[no-untyped-def]
            from harness.targets.base import TargetError

            raise TargetError("boom")

    s = _stepper(Raising(P), is_model=False)
    r = s.probe({"type": "future/newAction"}, 5)
    assert [v.invariant for v in r.violations] == [TARGET_ERROR]
    # a probe whose payload the lane cannot judge (a mutated field, no schema for its version:
    # the Go client refused a boolean answer holding a string, read as a totality failure): an
    # error reply is acceptable
    assert s.probe({"type": "future/newAction"}, 5, judged=False).violations == []
    # a foreign action (a session's) whose value types only the spec folder's schema checks (this
    # lane's model has none: a lane of another version), seen against the Go client
    foreign = {"type": "session/customizationRemoved", "id": ["cz1"]}
    assert [v.invariant for v in s.probe(foreign, 5).violations] == [TARGET_ERROR]
    s.folder_schema = lambda a: "id: not a string" if not isinstance(a.get("id"), str) else None
    assert s.probe(foreign, 5).violations == []
    assert [v.invariant for v in s.probe({**foreign, "id": "cz1"}, 5).violations] == [TARGET_ERROR]


def _run(target: ReferenceTarget, *, is_model: bool, kinds: tuple[str, ...], chunks: int, seed: int = 7,
         max_findings: int | None = None) -> tuple[list[Event], list[Finding]]:
    events: list[Event] = []
    config = RunConfig(target=target, target_spec="reference" if is_model else "test:mutant",
                       target_is_model=is_model, profile=P, seed=seed, budget_s=None, max_chunks=chunks,
                       chunk_examples=10, max_steps=25, kinds=kinds, max_findings=max_findings)
    summary = run_campaign(config, EventBus(events.append))
    return events, summary.findings


@pytest.mark.fuzz
def test_reference_campaign_is_clean_and_deterministic() -> None:
    a, fa = _run(ReferenceTarget(P), is_model=True, kinds=("chat", "session", "changeset"), chunks=2)
    b, fb = _run(ReferenceTarget(P), is_model=True, kinds=("chat", "session", "changeset"), chunks=2)
    assert fa == [] and fb == []
    done_a = next(e for e in a if isinstance(e, RunFinished))
    done_b = next(e for e in b if isinstance(e, RunFinished))
    assert done_a.steps > 100
    assert (done_a.steps, done_a.coverage) == (done_b.steps, done_b.coverage)


@pytest.mark.fuzz
def test_campaign_finds_a_seeded_bug_shrinks_it_and_replays_it(tmp_path: Path) -> None:
    broken = ReferenceTarget(P, model=mutants.directory_set_duplicates(P))
    events, findings = _run(broken, is_model=False, kinds=("session",), chunks=20, max_findings=1)
    assert len(findings) == 1
    f = findings[0]
    found = next(e for e in events if isinstance(e, FindingFound))
    assert found.reproduced
    # Shrunk: the failing step is a directory Set, and the trace is short.
    assert f.steps[f.failing_step].action["type"] == "session/workingDirectorySet"
    assert len(f.steps) <= 4
    # The file round-trips and replays: still failing on the mutant, clean on the reference.
    path, written = CorpusStore(tmp_path).save(f)
    assert written and not CorpusStore(tmp_path).save(f)[1]  # de-duplicated by signature
    loaded = load_finding(path)
    assert replay(loaded, broken).reproduced
    assert not replay(loaded, ReferenceTarget(P), target_is_model=True).reproduced


def test_finding_file_is_written_at_once_and_report_lists_it(tmp_path: Path) -> None:
    f = Finding("INV-029", "violation", "dirs", "dup", "0.7.0", "reference", "session",
                {"provider": "p", "title": "t", "status": 1, "lifecycle": "ready", "activeClients": [], "chats": []},
                [TraceStep({"type": "session/workingDirectorySet", "directory": "file:///a"}, 1)], 0)
    writer = FindingWriter(tmp_path / "findings")
    report = JsonReport(tmp_path / "report.json", writer)
    bus = EventBus(writer, report)
    bus.emit(FindingFound(f, True))
    saved = list((tmp_path / "findings").glob("*.json"))
    assert [p.name for p in saved] == [f.file_name]
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["status"] == "running" and data["findings"][0]["signature"] == f.signature
    assert data["findings"][0]["replay"].startswith("ahp-fuzz replay ")


def test_foreign_action_probe_does_not_trigger_the_other_familys_checks() -> None:
    # Regression: a `session/workingDirectorySet` probe on a chat channel once tripped the
    # session directory-set check (INV-029), although the chat reducer ignores it (INV-005).
    s = _stepper(ReferenceTarget(P), is_model=True)
    s.step({"type": "chat/workingDirectorySet", "directory": "file:///repo-a"}, 1)
    assert s.probe({"type": "session/workingDirectorySet"}, 2).violations == []
    assert s.probe({"type": "session/workingDirectorySet", "directory": "file:///repo-a"}, 3).violations == []


def test_a_reference_run_exercises_every_profile_and_multi_channel_groups() -> None:
    # 0.8.0's replace exists only on the 0.8.0 lane; INV-031.reducer (a session step that
    # leaves a chat naming a removed directory, reported as known) needs a session and its
    # chats in one sequence.
    events: list[Event] = []
    config = RunConfig(target=ReferenceTarget(P), target_spec="reference", target_is_model=True, profile=P,
                       seed=5, budget_s=None, max_chunks=2, chunk_examples=10, max_steps=20,
                       kinds=("chat", "session"), heartbeat_s=0)
    summary = run_campaign(config, EventBus(events.append))
    done = next(e for e in events if isinstance(e, RunFinished))
    assert summary.findings == []
    assert done.coverage["session/workingDirectoryReplaced"]["changed"] > 0
    assert summary.known_counts["INV-031.reducer"] > 0


def test_bandit_weights_arms_by_new_coverage_and_starves_none() -> None:
    from collections import Counter

    from harness.engine.arms import Bandit

    arms = (("chat", 0), ("session", 0), ("terminal", 0))
    bandit = Bandit(arms)
    assert Counter(bandit.chunk_arms()) == Counter({a: 8 for a in arms})  # no evidence yet: even
    bandit.update(Counter({a: 5 for a in arms}), Counter({("chat", 0): 6, ("session", 0): 1}))
    weights = Counter(bandit.chunk_arms())
    assert weights[("chat", 0)] > weights[("session", 0)] > weights[("terminal", 0)] >= 1
    assert bandit.chunk_arms(allowed=[("terminal", 0)]) == (("terminal", 0),) * 8


def test_a_group_finding_is_the_failing_channels_trace_and_replays_alone() -> None:
    # A chat defect found while a session and its chats are stepped together: the finding is the
    # failing chat's own trace (it replays without the others) plus the interleaving in extra.
    from hypothesis import HealthCheck, Phase, seed, settings
    from hypothesis.stateful import run_state_machine_as_test

    from harness.engine.chunks import _finding_from
    from harness.engine.generation import pinned_constants
    from harness.engine.machine import FindingFailure, MachineConfig, Recorder, build_machine

    broken = ReferenceTarget(P, model=mutants.chat_directory_set_on_absent_is_noop(P))
    model = Model(P, check_payloads=True)
    machine = build_machine(MachineConfig(model=model, target=broken, target_is_model=False,
                                          kinds=("chat", "session"), recorder=Recorder(), arms=(("group", 0),)))
    failure = None
    for chunk in range(6):
        try:
            with pinned_constants():
                run_state_machine_as_test(seed(chunk)(machine), settings=settings(
                    max_examples=15, stateful_step_count=25, deadline=None, database=None,
                    phases=[Phase.generate], suppress_health_check=list(HealthCheck)))
        except FindingFailure as e:
            failure = e
            break
    assert failure is not None
    group = failure.trace.extra["group"]
    assert group["channels"][0]["kind"] == "session" and len(group["channels"]) >= 2
    assert group["channels"][group["failingChannel"]]["kind"] == failure.trace.kind == "chat"
    config = RunConfig(target=broken, target_spec="test:mutant", target_is_model=False, profile=P)
    finding = _finding_from(failure, config, 0)
    assert finding.extra["group"] == group
    assert replay(finding, broken).reproduced
    assert not replay(finding, ReferenceTarget(P), target_is_model=True).reproduced
