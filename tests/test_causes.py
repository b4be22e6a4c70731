"""One finding per root cause, none lost, every one replays (issue 15, items 1, 2, 8, 9)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.causes import StepView, check_cause, message_shape, violation_cause
from harness.corpus.finding import Finding, TraceStep
from harness.corpus.load import load_finding
from harness.corpus.store import CorpusStore
from harness.engine.events import CauseSeen, EventBus, FindingFound, RunFinished
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.invariants.base import Violation
from harness.reference import Profile
from harness.report.writers import FindingWriter, JsonReport, JunitReport
from harness.targets.adapter import AdapterTarget

P = Profile.named("0.7.0")
ROOT = Path(__file__).resolve().parent.parent
ADAPTER = [sys.executable, str(ROOT / "tests" / "three_cause_adapter.py")]
WRAP = 1 << 31


def _view(before: dict[str, Any], expected: dict[str, Any], observed: dict[str, Any],
          atype: str = "chat/delta", target_before: dict[str, Any] | None = None) -> StepView:
    return StepView("chat", {"type": atype}, before, before if target_before is None else target_before,
                    expected, observed)


# -- the signature ------------------------------------------------------------------------------


def test_two_causes_under_one_invariant_stay_two() -> None:
    d01 = Violation("INV-D01", "divergence", "chat/delta: states differ")
    wrap = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)})
    ignored = _view({"status": 8, "draft": "a"}, {"status": 8, "draft": "b"}, {"status": 8, "draft": "a"},
                    atype="chat/draftChanged")
    a, b = violation_cause(wrap, d01), violation_cause(ignored, d01)
    assert a is not None and b is not None
    assert a.id != b.id
    assert a.key == ("int-wrap", "32")  # the transformation, not the place
    assert b.key == ("unapplied", "chat/draftChanged")
    assert "not applied" in b.summary


def test_one_cause_under_five_invariants_and_many_action_types_is_one() -> None:
    # the same int32 wrap, on chat and session, after different actions, seen by five checks
    ids = set()
    for atype, before, after in [("chat/delta", 8, WRAP + 8), ("chat/turnStarted", 1, WRAP + 1),
                                 ("session/titleChanged", WRAP + 2, WRAP + 2)]:
        view = _view({"status": before, "title": "x"}, {"status": after, "title": "y"},
                     {"status": after - (1 << 32), "title": "y"}, atype=atype)
        for inv in ("INV-D01", "INV-011", "INV-015.strict", "INV-021", "INV-033"):
            cause = violation_cause(view, Violation(inv, "violation", f"{inv} says something about {atype}"))
            assert cause is not None
            ids.add(cause.id)
    assert len(ids) == 1


def test_an_encoder_that_drops_empties_is_one_cause_wherever_it_shows() -> None:
    state = _view({"turns": []}, {"turns": []}, {}, atype="chat/usage", target_before={"turns": []})
    nested = _view({}, {"activeTurn": {"responseParts": []}}, {"activeTurn": {}}, atype="chat/turnStarted")
    # a removal the encoder could not send (the target keeps the empty value the model removed)
    kept = _view({"operations": []}, {}, {"operations": []}, atype="changeset/operationsChanged",
                 target_before={"operations": []})
    probe = check_cause("INV-002", "re-running the step gave a different state: turns: step=[] rerun=<absent>")
    clock = check_cause("INV-003", "x depends on the clock: agents: now=1=[] now=9=<absent>")
    ids = {v.causes[0].id for v in (state, nested, kept)} | {probe.id, clock.id}
    assert len(ids) == 1


def test_differences_inherited_from_an_earlier_step_have_no_cause_of_their_own() -> None:
    # the target wrapped the status two steps ago; this step changes the status again
    view = _view({"status": WRAP + 8}, {"status": WRAP + 24, "x": 1}, {"status": 24 - WRAP, "x": 1},
                 target_before={"status": 8 - WRAP})
    assert view.inherited_only
    assert violation_cause(view, Violation("INV-011", "violation", "negative status")) is None


def test_a_probe_check_without_a_presence_difference_is_signed_by_its_message() -> None:
    a = check_cause("INV-002", 'chat/delta for turn "t4" is not deterministic: 3')
    b = check_cause("INV-002", 'chat/usage for turn "x" is not deterministic: 7')
    assert a.id == b.id != check_cause("INV-003", 'chat/delta for turn "t4" is not deterministic: 3').id
    assert message_shape('chat/delta for turn "t4" changed activeTurn.responseParts[0].content: 3') == \
        message_shape('chat/usage for turn "x" changed turns[1].id: 7')


# -- no finding lost ----------------------------------------------------------------------------


def _finding(observed: dict[str, Any], expected: dict[str, Any], cause: dict[str, Any] | None) -> Finding:
    return Finding("INV-D01", "divergence", "agrees", "m", "0.7.0", "reference", "chat", {"status": 8},
                   [TraceStep({"type": "chat/delta"}, 1)], 0, expected, observed, cause=cause)


def _cause(view: StepView) -> dict[str, Any]:
    c = view.causes[0]
    return {"id": c.id, "summary": c.summary, "witnesses": {"invariants": ["INV-D01"], "actionTypes": ["chat/delta"],
                                                            "kinds": ["chat"], "count": 1}}


def test_two_causes_that_collided_get_two_files_each_holding_its_finding(tmp_path: Path) -> None:
    # same invariant, kind and action types: one signature and one file before causes
    v1 = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)})
    v2 = _view({"status": 8}, {"status": 8, "turns": []}, {"status": 8})
    old1, old2 = _finding(v1.observed, v1.expected, None), _finding(v2.observed, v2.expected, None)
    assert old1.signature == old2.signature and old1.file_name == old2.file_name  # the collision
    f1, f2 = _finding(v1.observed, v1.expected, _cause(v1)), _finding(v2.observed, v2.expected, _cause(v2))
    assert f1.signature != f2.signature and f1.file_name != f2.file_name
    writer = FindingWriter(tmp_path / "findings")
    report = JsonReport(tmp_path / "report.json", writer)
    bus = EventBus(writer, report)
    for f in (f1, f2):
        bus.emit(FindingFound(f, True))
    entries = json.loads((tmp_path / "report.json").read_text())["findings"]
    assert len({e["file"] for e in entries}) == 2
    for e in entries:
        held = load_finding(e["file"])
        assert held.signature == e["signature"] and held.observed == load_finding(e["file"]).observed
        assert e["cause"]["id"] == held.cause["id"]  # type: ignore[index]


def test_an_existing_cause_in_an_appended_folder_is_pointed_at_not_renamed(tmp_path: Path) -> None:
    v = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)})
    first = _finding(v.observed, v.expected, _cause(v))
    store = CorpusStore(tmp_path)
    path, written = store.save(first)
    again = _finding(v.observed, v.expected, _cause(v))
    again.invariant = "INV-011"  # the same cause, told by another invariant: another file name
    later, written2 = CorpusStore(tmp_path).save(again)
    assert written and not written2 and later == path and path.is_file()


def test_witnesses_grow_in_the_report_and_the_file(tmp_path: Path) -> None:
    v = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)})
    f = _finding(v.observed, v.expected, _cause(v))
    writer = FindingWriter(tmp_path / "findings")
    report = JsonReport(tmp_path / "report.json", writer, save_every_s=0.0)
    junit = JunitReport(tmp_path / "junit.xml", writer)
    bus = EventBus(writer, report, junit)
    bus.emit(FindingFound(f, True))
    assert f.cause is not None
    f.cause = {**f.cause, "witnesses": {"invariants": ["INV-011", "INV-D01"], "actionTypes": ["chat/delta"],
                                        "kinds": ["chat", "session"], "count": 9}}
    bus.emit(CauseSeen(f.signature, f.cause))
    entry = json.loads((tmp_path / "report.json").read_text())["findings"][0]
    assert entry["cause"]["witnesses"]["count"] == 9
    bus.emit(RunFinished(1.0, 1, 1, [f], {"INV-050": 3}))
    saved = load_finding(writer.paths[f.signature])
    assert saved.cause is not None and saved.cause["witnesses"]["kinds"] == ["chat", "session"]
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["progress"]["known"] == sum(k["count"] for k in data["known"].values()) == 3
    assert f.cause["summary"] in (tmp_path / "junit.xml").read_text()


def test_a_finding_file_with_a_malformed_cause_is_refused(tmp_path: Path) -> None:
    from harness.corpus.finding import FindingFormatError

    v = _view({"status": 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)})
    data = _finding(v.observed, v.expected, _cause(v)).to_json()
    data["cause"]["id"] = "nope"
    p = tmp_path / "f.json"
    p.write_text(json.dumps(data))
    with pytest.raises(FindingFormatError, match="cause"):
        load_finding(p)


# -- replay judges the cause --------------------------------------------------------------------


def _trace_adapter(causes: str) -> AdapterTarget:
    return AdapterTarget([*ADAPTER, f"--causes={causes}"], profile=P, timeout_s=30.0)


CHAT = {"resource": "ahp-chat:/c", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
        "turns": [], "workingDirectories": ["file:///w"]}


def test_replay_hits_the_step_of_the_findings_cause_not_an_earlier_one_of_the_same_invariant() -> None:
    # step 0: draftChanged ignored (INV-D01, cause "unapplied"); step 1: the int32 wrap (INV-D01)
    target = _trace_adapter("wrap,ignore")
    try:
        steps = [TraceStep({"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}}}, 2),
                 TraceStep({"type": "chat/isReadChanged", "isRead": True}, 3)]
        initial = {**CHAT, "status": WRAP + 1}
        f = Finding("INV-D01", "divergence", "t", "m", "0.7.0", "x", "chat", initial, steps, 1)
        plain = replay(f, target)
        assert plain.reproduced and plain.step == 0  # without a cause: the first INV-D01
        view = StepView("chat", steps[0].action, initial, initial, {**initial, "draft": {"text": "x"}}, initial)
        unapplied = violation_cause(view, Violation("INV-D01", "divergence", ""))
        assert unapplied is not None
        f.cause = {"id": unapplied.id, "summary": "", "witnesses": {"invariants": [], "actionTypes": [],
                                                                    "kinds": [], "count": 0}}
        hit = replay(f, target)
        assert hit.reproduced and hit.step == 0 and hit.cause is not None and hit.cause.id == unapplied.id
        f.cause = {**f.cause, "id": "0" * 12}
        miss = replay(f, target)
        assert not miss.reproduced and "another cause" in miss.summary(f)
    finally:
        target.close()


def test_the_cross_channel_context_of_the_failing_step_round_trips_and_reaches_the_checks() -> None:
    # INV-031.reducer on a session step needs the session's chats: a group finding replayed
    # as the session channel alone did not reproduce before the context was recorded
    from harness.targets.reference import ReferenceTarget

    session = {"provider": "p", "title": "", "status": 1, "lifecycle": "ready", "activeClients": [], "chats": [],
               "workingDirectories": ["file:///a", "file:///b"]}
    chat = {**CHAT, "workingDirectories": ["file:///a"]}
    action = {"type": "session/workingDirectoryRemoved", "directory": "file:///a"}
    bare = Finding("INV-031.reducer", "known", "t", "m", "0.7.0", "reference", "session", session,
                   [TraceStep(action, 5)], 0)
    with_context = Finding.from_json(json.loads(json.dumps(
        {**bare.to_json(), "steps": [TraceStep(action, 5, False, {"chats": [chat]}).to_json()]})))
    assert with_context.steps[0].cross_channel() == {"chats": (chat,)}
    target = ReferenceTarget(P)
    assert not replay(bare, target, target_is_model=True).reproduced
    assert replay(with_context, target, target_is_model=True).reproduced


# -- the three-cause adapter, end to end ----------------------------------------------------------


def test_three_seeded_causes_give_one_finding_each_every_one_in_its_file_and_replaying(tmp_path: Path) -> None:
    target = _trace_adapter("wrap,ignore,empty")
    writer = FindingWriter(tmp_path / "findings")
    report = JsonReport(tmp_path / "report.json", writer)
    try:
        # a fixed number of seeded chunks (no clock): the same steps on every machine
        config = RunConfig(target=target, target_spec="three-cause", target_is_model=False, profile=P, seed=3,
                           budget_s=None, max_chunks=5, chunk_examples=8, max_steps=10,
                           kinds=("chat",), probe_every=25, profiles=(P,), heartbeat_s=0)
        summary = run_campaign(config, EventBus(writer, report))
        keys = [tuple(f.cause["key"][:2]) for f in summary.findings if f.cause]  # type: ignore[index]
        assert len(keys) == len(summary.findings) == len(set(keys))  # one finding per cause
        assert ("int-wrap", "32") in keys
        assert ("unapplied", "chat/draftChanged") in keys
        assert ("dropped-empty",) in keys  # empty lists and objects alike: one encoder rule
        assert len(keys) == 3, keys  # nothing else: wrap, the ignored type, empty values
        # the encoder loss is one finding although many checks, types and kinds saw it
        lists = next(f for f in summary.findings if f.cause and f.cause["key"] == ["dropped-empty"])
        assert lists.cause is not None
        assert len(lists.cause["witnesses"]["invariants"]) >= 3 and lists.cause["witnesses"]["count"] > 10
        entry = next(e for e in json.loads((tmp_path / "report.json").read_text())["findings"]
                     if e["signature"] == lists.signature)
        assert entry["cause"]["witnesses"] == lists.cause["witnesses"]  # the report caught up
        entries = json.loads((tmp_path / "report.json").read_text())["findings"]
        assert len({e["file"] for e in entries}) == len(entries) == len(summary.findings)
        for e in entries:
            f = load_finding(e["file"])
            assert f.signature == e["signature"]
            assert e["reproduced"] and replay(f, target).reproduced, e
    finally:
        target.close()


# -- the corpus circle ----------------------------------------------------------------------------


def test_finding_and_command_finding_do_not_import_each_other() -> None:
    src = (ROOT / "harness" / "corpus" / "finding.py").read_text()
    names = {n.module for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any("command_finding" in n or n == "load" for n in names)


def test_one_loader_reads_both_formats(tmp_path: Path) -> None:
    from harness.corpus.command_finding import CommandFinding, CommandStep

    cmd = CommandFinding("CMD-1", "violation", "t", "m", "0.7.0", "host:embedded",
                         [CommandStep("listSessions", {})], 0)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cmd.to_json()))
    assert isinstance(load_finding(p), CommandFinding)


# -- messages name causes (item 8) ----------------------------------------------------------------


def test_a_probe_that_fails_on_a_key_the_target_dropped_is_that_drops_cause() -> None:
    view = StepView("chat", {"type": "chat/inputRequested"}, {"activeTurn": {"responseParts": []}, "status": 1},
                    {"activeTurn": {}, "status": 1}, {"activeTurn": {"responseParts": [{"kind": "x"}]}, "status": 1},
                    {"activeTurn": {"responseParts": [{"kind": "x"}]}, "status": 1})
    v = Violation("INV-002", "violation", "the reducer raised during the probe: TargetError: MalformedAction: "
                  "chat/inputRequested: payload or state not of the schema shape (KeyError: 'responseParts')")
    cause = violation_cause(view, v)
    assert cause is not None and cause.key == ("dropped-empty",)


def test_inv017_names_what_changed_in_an_absorbing_tool_call() -> None:
    from harness.invariants.registry import check_step
    from tests.invariant_cases import chat, step, tool_part, turn, with_after

    before = chat(status=8, activeTurn=turn("t1", tool_part("tc1", "cancelled", _meta={})))
    s = with_after(step("chat", before, {"type": "chat/delta", "turnId": "t1", "partId": "p9", "content": "x"}),
                   lambda a: a["activeTurn"]["responseParts"][0]["toolCall"].pop("_meta"))
    messages = [v.message for v in check_step(s, probes=False) if v.invariant == "INV-017"]
    assert messages and "_meta: before={} after=<absent>" in messages[0], messages


def test_inv053_says_should_as_its_catalogue_severity_does() -> None:
    from types import SimpleNamespace

    from harness.invariants.live.wire import must_reject

    echo = SimpleNamespace(rejected=False, seq=7)
    dispatch = SimpleNamespace(must_reject="INV-053", echoes=[echo], type="chat/toolCallReady", channel="c", reason="")
    client = SimpleNamespace(index=0)
    obs = SimpleNamespace(clients=[client], new_dispatches=lambda c: [dispatch])
    (message,) = must_reject(obs, "INV-053")  # type: ignore[arg-type]
    assert "SHOULD be rejected" in message and "MUST" not in message
    dispatch.must_reject = "INV-031"
    (strict,) = must_reject(obs, "INV-031")  # type: ignore[arg-type]
    assert "MUST be rejected" in strict


def test_a_round_trip_type_change_names_its_path() -> None:
    from harness.conformance import run_round_trip_fixture
    from harness.spec.specdir import RoundTripFixture

    fx = RoundTripFixture("f", "", "T", "A", {"min": 1}, {"min": 1}, None, Path("f.json"))
    result = run_round_trip_fixture(fx, lambda t, wire: json.dumps({"min": 1.0}))
    assert any(p.startswith("$.min: a value changed JSON type (integer became float)") for p in result.problems), \
        result.problems


def test_a_merge_lists_causes_first_and_adds_up_their_witnesses(tmp_path: Path) -> None:
    from harness.report.merge import merge_runs

    def cause(cid: str, summary: str, inv: str, n: int) -> dict[str, Any]:
        return {"id": cid, "summary": summary, "witnesses": {"invariants": [inv], "actionTypes": ["chat/delta"],
                                                            "kinds": ["chat"], "count": n}}

    def run(name: str, entries: list[dict[str, Any]]) -> Path:
        d = tmp_path / name
        d.mkdir()
        (d / "report.json").write_text(json.dumps({"format": "ahp-fuzz/report", "formatVersion": 1,
                                                   "status": "finished", "findings": entries}))
        return d

    legacy = {"invariant": "INV-001", "severity": "violation", "kind": "chat", "signature": "aaaaaaaaaaaa"}
    wrap = {"invariant": "INV-011", "severity": "violation", "kind": "chat", "signature": "b" * 12,
            "cause": cause("b" * 12, "`status` x → x − 2^32", "INV-011", 3)}
    again = {**wrap, "invariant": "INV-D01", "cause": cause("b" * 12, "`status` x → x − 2^32", "INV-D01", 4)}
    report = merge_runs([run("a", [legacy, wrap]), run("b", [again])], tmp_path / "out")
    first, second = report["findings"]
    assert first["signature"] == "b" * 12 and second["signature"] == "a" * 12  # causes first
    assert first["cause"]["witnesses"]["invariants"] == ["INV-011", "INV-D01"]
    assert first["cause"]["witnesses"]["count"] == 7
    assert "cause" not in second
    assert "`status` x → x − 2^32 (INV-011 chat bbbbbbbbbbbb)" in (tmp_path / "out" / "junit.xml").read_text()


def test_the_console_closes_a_run_of_command_findings_which_have_no_cause() -> None:
    import io

    from harness.corpus.command_finding import CommandFinding, CommandStep
    from harness.report.console import ConsoleReporter, make_console

    cmd = CommandFinding("CMD-1", "violation", "t", "m", "0.7.0", "host:embedded", [CommandStep("x", {})], 0)
    out = make_console(stderr=False)
    out.file = io.StringIO()
    ConsoleReporter(out=out)(RunFinished(1.0, 1, 1, [cmd], {}))  # type: ignore[list-item]
    assert "CMD-1 [violation] on x (commands)" in out.file.getvalue()  # the command that failed, then the kind


def test_a_key_the_targets_representation_drops_is_not_an_unapplied_action() -> None:
    # through a changes-only protocol both look alike: the target's value did not move
    before = {"status": 1, "workingDirectories": ["file:///a"], "draft": None}
    after = {"status": 1, "workingDirectories": ["file:///a", "file:///b"]}
    stale = dict(before)

    def view(echo: dict[str, Any]) -> StepView:
        v = StepView("chat", {"type": "chat/workingDirectorySet"}, before, before, after, stale)
        v.echo = lambda: echo
        return v

    keeps = view(after).causes[0]  # the target can hold the list: it did not apply the action
    assert keeps.key == ("unapplied", "chat/workingDirectorySet") and keeps.summary
    drops = view({"status": 1}).causes[0]  # its echo of the model's state has no such key
    assert drops.key == ("dropped", "workingDirectories")
    assert drops.id == check_cause("INV-002", "re-running: workingDirectories: step=[\"x\"] rerun=<absent>").id


# -- a cause seen through a probe's words, and an accepted quirk behind another cause -------------


def test_a_wrap_a_probe_reports_in_words_is_the_wrap_cause() -> None:
    # A 90 s run with the encoder baseline filed the status wrap twice: once from the state
    # difference, once from a probe that only says "changed status X → Y" (a `check` cause).
    from harness.causes import classify

    wrap = classify(("status",), 2147483714, 2147483714 - (1 << 32), "chat/delta")
    probe = check_cause("INV-015.strict-probe", 'probe: a late chat/toolCallComplete for turn "t" changed '
                        "status 2147483714 → -2147483582 (the target breaks it its own way)")
    assert probe.key == wrap.key and probe.transformation == "int-wrap"
    # the probe's action also cleared a bit before the wrap (2147483714 → 2147483713 → wrapped)
    flipped = check_cause("INV-015.strict-probe", "probe: changed status 2147483714 → -2147483583 (…)")
    assert flipped.key == wrap.key
    assert check_cause("INV-015.strict-probe", "probe: changed status 40 → 33").transformation == "check"
    # bit 32 set: int32 code loses it and the value comes back positive (the TS reducers, issue 32)
    lost = check_cause("INV-015.strict-probe", "probe: a late chat/toolCallComplete for turn \"t\" changed "
                       "status 4294967297 → 1 (the target breaks it its own way)")
    assert lost.key == wrap.key
    # the control: a value below 2^32 that comes back smaller and positive lost no high bit
    assert check_cause("INV-015.strict-probe", "probe: changed status 2147483649 → 1").transformation == "check"


def test_an_accepted_encoder_loss_behind_an_ignored_action_trips_no_probe() -> None:
    # The target ignores chat/draftChanged (a real cause: INV-D01) and drops empty objects and
    # lists (accepted by the baseline). The model clears the draft, so the step's and the probes'
    # answers were normalised against a model with no draft at all: the dropped `_meta: {}` and
    # `annotationIds: []` inside the kept draft tripped INV-002, INV-003 and INV-028.
    from harness.corpus.baseline import load_baseline
    from harness.engine.stepper import Stepper
    from harness.reference import Model

    baseline = load_baseline(ROOT / "bench" / "three_cause_encoder.baseline.json")
    att = {"displayKind": "element", "resource": "ahp-session:/s/annotations", "_meta": {}, "type": "annotations",
           "label": "fix", "annotationIds": [], "range": {"start": {"line": 1, "character": 1},
                                                           "end": {"line": 2, "character": 1}}}
    chat = {"resource": "ahp-chat:/c", "title": "", "modifiedAt": "1970-01-01T00:00:02.698Z", "turns": [],
            "status": 40, "draft": {"text": "x", "origin": {"kind": "user"}, "attachments": [att]}}
    target = _trace_adapter("ignore,empty")
    try:
        for action in ({"type": "chat/draftChanged"},  # the model clears the draft
                       {"type": "chat/draftChanged", "draft": {"text": "y", "origin": {"kind": "user"}}}):
            s = Stepper("chat", chat, Model(P, check_payloads=True), target.session("chat", chat), target,
                        baseline=baseline)
            fired = {v.invariant for v in s.step(action, 54_733).violations if v.severity != "known"}
            assert fired == {"INV-D01"}, (action, fired)
    finally:
        target.close()


def test_a_wrap_of_bits_31_and_32_together_is_the_int32_wrap() -> None:
    # a status with bits 31 and 32 set, its activity recomputed by int32 code: every bit beyond
    # 32 is lost, not one turn of 2^32 (issue 32: two findings for the one TS bug before)
    model = (1 << 32) + WRAP + 24
    target = model - (1 << 33)  # the low 32 bits, read as signed
    assert target == -(1 << 31) + 24
    view = _view({"status": (1 << 32) + WRAP + 1}, {"status": model}, {"status": target},
                 atype="session/inputNeededSet")
    cause = violation_cause(view, Violation("INV-D01", "divergence", "differs"))
    assert cause is not None and cause.key == ("int-wrap", "32")
    # the control: a value that is not the wrapped one is no wrap
    other = _view({"status": 1}, {"status": model}, {"status": target + 1})
    c2 = violation_cause(other, Violation("INV-D01", "divergence", "differs"))
    assert c2 is not None and c2.transformation != "int-wrap"


# -- no bug behind another (issue 32) -----------------------------------------------------------


def _session_view(before: dict[str, Any], expected: dict[str, Any], observed: dict[str, Any], atype: str) -> StepView:
    return StepView("session", {"type": atype}, before, before, expected, observed)


def test_a_field_the_action_writes_itself_is_not_derived_behind_an_encoder_loss() -> None:
    # isReadChanged writes `status` itself; the target ignores it, and its encoder drops the
    # empty `activeClients` on the same step: two causes, not one
    before = {"status": 1, "activeClients": [], "title": "t"}
    view = _session_view(before, {**before, "status": 33}, {"status": 1, "title": "t"}, "session/isReadChanged")
    keys = {c.key for c in view.causes}
    assert keys == {("unapplied", "session/isReadChanged"), ("dropped-empty",)}
    # the control: the same ignored action alone is the one cause
    alone = _session_view(before, {**before, "status": 33}, before, "session/isReadChanged")
    assert [c.key for c in alone.causes] == [("unapplied", "session/isReadChanged")]


def test_a_derived_value_beside_an_encoder_loss_is_its_own_cause() -> None:
    # turnStarted keeps IsRead (status 8|32 where the model has 8); the encoder drops the new
    # turn's empty `responseParts`: the encoder cannot have made the status wrong
    before = {"status": 33, "turns": []}
    expected = {"status": 8, "turns": [], "activeTurn": {"id": "t1", "responseParts": []}}
    observed = {"status": 40, "activeTurn": {"id": "t1"}}
    view = _view(before, expected, observed, atype="chat/turnStarted")
    assert {c.key for c in view.causes} == {("dropped-empty",), ("unapplied", "chat/turnStarted")}
    # the same bug on a chat already in progress and read: the target leaves the status as it
    # was (40) where the model clears IsRead — the same cause, not a second one
    kept = _view({"status": 40, "turns": []}, {**expected, "status": 8}, {"status": 40, "turns": [],
                 "activeTurn": {"id": "t1", "responseParts": []}}, atype="chat/turnStarted")
    assert [c.key for c in kept.causes] == [("unapplied", "chat/turnStarted")]
    # the control: an activity computed otherwise (8 where the model has 24) is the derived
    # field's cause, whatever the action, beside the encoder loss or alone
    other = _view({"status": 1, "turns": []}, {**expected, "status": 24}, {**observed, "status": 8},
                  atype="chat/turnStarted")
    assert {c.key for c in other.causes} == {("dropped-empty",), ("stale", "status")}
    # the control: beside a difference of what the reducer computes from (a tool call's status
    # the target got wrong), the status follows from it and is no cause of its own
    part = {"kind": "toolCall", "toolCall": {"toolCallId": "c1", "status": "pending-confirmation"}}
    ran = {"kind": "toolCall", "toolCall": {"toolCallId": "c1", "status": "running"}}
    b2 = {"status": 24, "activeTurn": {"id": "t1", "responseParts": [part]}}
    follows = _view(b2, {"status": 8, "activeTurn": {"id": "t1", "responseParts": [ran]}},
                    {"status": 24, "activeTurn": {"id": "t1", "responseParts": [{**ran, "toolCall": {**ran["toolCall"], "status": "cancelled"}}]}},
                    atype="chat/toolCallConfirmed")
    assert len(follows.causes) == 1 and follows.causes[0].transformation != "stale"


def test_a_stamp_the_target_never_writes_is_its_own_cause_beside_another() -> None:
    before = {"status": 1, "modifiedAt": "2026-01-01T00:00:00.000Z", "draft": "a", "turns": []}
    expected = {**before, "draft": "b", "modifiedAt": "2026-01-01T00:00:05.000Z"}
    observed = {"status": 1, "modifiedAt": "2026-01-01T00:00:00.000Z", "draft": "b"}  # turns: [] lost too
    view = _view(before, expected, observed, atype="chat/draftChanged")
    assert {c.key for c in view.causes} == {("stale", "modifiedAt"), ("dropped-empty",)}
    # the control: a target that ignored the action changed nothing; the stamp is that cause's
    ignored = _view(before, expected, before, atype="chat/draftChanged")
    assert [c.key for c in ignored.causes] == [("unapplied", "chat/draftChanged")]


def test_a_probe_check_whose_call_hung_is_the_hang_cause() -> None:
    from harness.causes import failure_cause

    step = failure_cause("TARGET-TIMEOUT", "target hung: adapter:x: no reply to 'reduce' within 5 s; adapter killed")
    view = _view({"status": 1}, {"status": 1}, {"status": 1})
    probe = Violation("INV-022.probe", "violation",
                      "the reducer raised during the probe: TargetTimeout: adapter:x: no reply to 'reduce' within 5 s; "
                      "adapter killed (the reference model, which reproduces the known upstream issue, does not show "
                      "this on the same step: the target breaks it its own way)")
    assert violation_cause(view, probe) == step
    # the control: a probe check whose call raised an error reply stays a check of its own
    other = Violation("INV-022.probe", "violation", "the reducer raised during the probe: TargetError: bad state")
    c = violation_cause(view, other)
    assert c is not None and c.transformation == "check"


def test_every_change_a_target_makes_on_a_step_the_model_ignores_is_one_cause() -> None:
    # truncated with an unknown turnId is a no-op; a target that clears the history changes
    # three fields (as one mutant did: three cause ids before)
    before = {"status": 8, "turns": [{"id": "t1"}], "activeTurn": {"id": "t2"}, "turnsNextCursor": "c",
              "modifiedAt": "2026-01-01T00:00:00.000Z"}
    observed = {"status": 8, "turns": [{"id": "t1"}], "modifiedAt": "2026-01-01T00:00:09.000Z"}
    view = _view(before, before, observed, atype="chat/truncated")
    assert [c.key for c in view.causes] == [("not-a-no-op", "chat/truncated")]
    # the control: a wrap on such a step is still the wrap, wherever it shows
    wrapped = _view({"status": WRAP + 8}, {"status": WRAP + 8}, {"status": WRAP + 8 - (1 << 32)},
                    atype="chat/truncated")
    assert [c.key for c in wrapped.causes] == [("int-wrap", "32")]


def test_a_tool_calls_own_status_in_the_payload_does_not_make_the_chats_status_written() -> None:
    # chat/responsePart carries part.toolCall.status; the chat's status is still recomputed from
    # the rest: a target that does not recompute it is the derived field's cause (the Go client's)
    part = {"kind": "toolCall", "toolCall": {"toolCallId": "c9", "status": "pending-confirmation"}}
    action = {"type": "chat/responsePart", "turnId": "t1", "part": part}
    before = {"status": 8, "activeTurn": {"id": "t1", "responseParts": []}}
    model = {"status": 24, "activeTurn": {"id": "t1", "responseParts": [part]}}
    target = {"status": 8, "activeTurn": {"id": "t1", "responseParts": [part]}}
    view = StepView("chat", action, before, before, model, target)
    assert [c.key for c in view.causes] == [("stale", "status")]
    # the control: a chatUpdated carries `changes.status`: that status is the action's to write
    session = {"chats": [{"resource": "ahp-chat:/c1", "status": 1}]}
    upd = {"type": "session/chatUpdated", "chat": "ahp-chat:/c1", "changes": {"status": 9}}
    sv = StepView("session", upd, session, session, {"chats": [{"resource": "ahp-chat:/c1", "status": 9}]}, session)
    assert [c.key for c in sv.causes] == [("unapplied", "session/chatUpdated")]


def test_an_item_moved_with_a_difference_it_already_had_is_that_difference_not_unapplied() -> None:
    # issue 32's DUP (crafted objects_as_strings, seeds 1, 4, 5): a target that writes `_meta`
    # objects as JSON text reorders its queue; m1 moves from index 0 to 1 carrying its string,
    # which the move-aware "left as it was" read as the reorder undone (`unapplied`)
    from harness.reference import Model

    m1 = {"id": "m1", "message": {"text": "", "_meta": {"source": "ok"}}}
    m4 = {"id": "m4", "message": {"text": ""}}
    as_text = {"id": "m1", "message": {"text": "", "_meta": json.dumps({"source": "ok"})}}
    before = {"queuedMessages": [m1, m4]}
    target_before = {"queuedMessages": [as_text, m4]}
    action = {"type": "chat/queuedMessagesReordered", "order": ["m4", "m1"]}
    expected = Model(Profile.named("0.7.0")).reduce("chat", before, action, 0)
    assert [q["id"] for q in expected["queuedMessages"]] == ["m4", "m1"]
    view = StepView("chat", action, before, target_before, expected, {"queuedMessages": [m4, as_text]})
    assert [c.key for c in view.causes] == [("type", "object", "string")]
    # the control: an item that moved as the model's own value and stayed so is left as it was
    # (a turn's end moves activeTurn into turns; a tool call it leaves open is the action's)
    call = {"toolCallId": "tc1", "status": "running"}
    turn = {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": call}]}
    ended = {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": {**call, "status": "cancelled"}}]}
    stays = StepView("chat", {"type": "chat/turnCancelled", "turnId": "t1"}, {"activeTurn": turn, "turns": []},
                     {"activeTurn": turn, "turns": []}, {"turns": [ended]}, {"turns": [turn]})
    assert ("unapplied", "chat/turnCancelled") in [c.key for c in stays.causes]


def test_what_a_turn_end_drops_from_a_call_it_moves_is_the_action_left_undone() -> None:
    # issue 32's DUP (mutant turn_end_keeps_open_tool_calls, seed 4): the model cancels the
    # streaming call it moves into `turns` and drops its `partialInput`; a target that keeps the
    # call as it was showed `unapplied chat/turnComplete` and, beside it, `added partialInput`
    # (the model's value before was read at the new path, where there was none)
    from harness.reference import Model

    call = {"toolCallId": "tc1", "toolName": "bash", "status": "streaming", "partialInput": '"ls"}',
            "invocationMessage": ""}
    turn = {"id": "t1", "message": {"text": "hi"}, "startedAt": "1970-01-01T00:00:00.000Z",
            "responseParts": [{"kind": "toolCall", "toolCall": call}]}
    before = {"resource": "ahp-chat:/c1", "title": "t", "status": 8, "modifiedAt": "1970-01-01T00:00:00.000Z",
              "turns": [], "activeTurn": turn}
    action = {"type": "chat/turnComplete", "turnId": "t1", "duration": 5}
    expected = Model(Profile.named("0.7.0")).reduce("chat", before, action, 5)
    done = expected["turns"][-1]["responseParts"][0]["toolCall"]
    assert done["status"] == "cancelled" and "partialInput" not in done
    kept = {**expected, "turns": [{**expected["turns"][-1], "responseParts": turn["responseParts"]}]}
    view = StepView("chat", action, before, before, expected, kept)
    assert [c.key for c in view.causes] == [("unapplied", "chat/turnComplete")]


def test_an_empty_value_the_encoder_drops_after_a_no_op_that_emptied_a_null_is_the_encoder() -> None:
    # the 40-chunk recall run of cfaae50 (three-causes and the Go client, seed 4): metaChanged
    # `{_meta: {}}` on `_meta: {"traceId": null}` — a no-op where null is absent — and an encoder
    # that drops empty objects: `_meta` gone is the encoder's `dropped-empty`, not the action's
    before = {"title": "", "_meta": {"traceId": None}}
    action = {"type": "session/metaChanged", "_meta": {}}
    expected = {"title": "", "_meta": {}}
    observed = {"title": ""}
    view = StepView("session", action, before, before, expected, observed, echo_on=lambda s: s)
    assert [c.key for c in view.causes] == [("dropped-empty",)]
    # the control: the target held that very `{}` and keeps it when it echoes itself; losing it
    # on a no-op is what the action did
    kept = {"title": "", "_meta": {}}
    lost = StepView("session", action, kept, kept, kept, observed, echo_on=lambda s: s)
    assert [c.key for c in lost.causes] == [("not-a-no-op", "session/metaChanged")]


def test_an_empty_value_a_target_copied_from_the_action_on_a_model_no_op_is_the_action() -> None:
    # recall r23, confirm_from_any_status seed 1: a denied confirm of a streaming call (a no-op)
    # carrying `_meta: {}`; the mutant cancels the call and copies the action's `_meta` into it.
    # The `{}` was booked as an encoder's `added-empty` (a finding of its own, FALSE): the target
    # wrote the action's own value, which is applying the action.
    call = {"status": "streaming", "toolCallId": "tc4", "toolName": "bash"}
    before = {"status": 8, "activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": call}]}}
    action = {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "tc4", "approved": False,
              "reason": "skipped", "_meta": {}}
    cancelled = {**call, "status": "cancelled", "reason": "skipped", "_meta": {}}
    observed = {**before, "activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": cancelled}]}}
    view = StepView("chat", action, before, before, before, observed)
    assert [c.key for c in view.causes] == [("not-a-no-op", "chat/toolCallConfirmed")]
    # the control: an encoder that adds `{}` the action never carried is still the encoder
    added = {**before, "activeTurn": {"id": "t1", "responseParts": [{"kind": "toolCall", "toolCall": {**call, "content": {}}}]}}
    encoder = StepView("chat", action, before, before, before, added)
    assert [c.key for c in encoder.causes] == [("added-empty",)]
