"""The fast lane (harness/engine/fast.py): deterministic given the seed, mutated actions that
are not valid-lane become probes, a seeded defect is found, and its finding replays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from harness.engine import fast, mutation
from harness.engine.events import EventBus
from harness.engine.replay import replay
from harness.engine.run import DEFAULT_LANE, LANES, RunConfig, run_campaign
from harness.invariants._json import fresh, fresh_copies
from harness.reference import Profile
from harness.targets.reference import ReferenceTarget

from . import mutants

P = Profile.named("0.7.0")


def _run(seed: int, *, kinds: tuple[str, ...] = ("chat", "session"), target: Any = None,
         schema: Any = None, hook: Any = None, chunks: int = 2, profiles: Any = (P,), **kw: Any) -> Any:
    config = RunConfig(
        target=target or ReferenceTarget(P), target_spec="reference", target_is_model=target is None,
        profile=P, seed=seed, budget_s=None, max_chunks=chunks, chunk_examples=6, kinds=kinds,
        heartbeat_s=0, lane="fast", schema=schema, step_hook=hook, profiles=profiles, **kw,
    )
    return run_campaign(config, EventBus())


def _recording() -> tuple[list[str], Any]:
    seen: list[str] = []

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> None:
        seen.append(json.dumps([kind, action, after], sort_keys=True))

    return seen, hook


def test_same_seed_same_steps_other_seed_other_steps() -> None:
    a, hook_a = _recording()
    b, hook_b = _recording()
    c, hook_c = _recording()
    first = _run(5, hook=hook_a)
    second = _run(5, hook=hook_b)
    _run(6, hook=hook_c)
    assert first.steps == second.steps > 50
    assert a == b
    assert a != c


def test_fill_is_deterministic_given_its_seed() -> None:
    strategy = st.lists(st.integers(), min_size=1)
    assert fast.fill(strategy, 5, 11) == fast.fill(strategy, 5, 11)
    assert fast.fill(strategy, 5, 11) != fast.fill(strategy, 5, 12)


def _schema() -> Any:
    spec_dir = os.environ.get("AHP_SPEC_DIR")
    if not spec_dir:
        pytest.skip("AHP_SPEC_DIR is not set: the schema decides which mutated actions are valid")
    from harness.spec.action_schema import ActionSchema
    from harness.spec.specdir import SpecDir

    schema = ActionSchema.from_spec(SpecDir.from_env(None))
    assert schema is not None
    return schema.problem


def test_mutated_actions_the_schema_rejects_are_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _schema()
    monkeypatch.setattr(fast, "FIELD_MUTATION", 1.0)  # every step of a mutated trace: one field changed
    valid: list[Any] = []
    mutated: list[Any] = []
    real_mutate = mutation.Mutator.mutate

    def mutate(self: Any, action: Any, state: Any) -> Any:
        # every other mutation repeats a list's first entry (an id twice in one collection)
        out = _repeat_first_entry(action) if len(mutated) % 2 else real_mutate(self, action, state)
        if out[1] is not None:
            mutated.append(out[0])
        return out

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> None:
        valid.append(action)

    monkeypatch.setattr(mutation.Mutator, "mutate", mutate)
    summary = _run(3, hook=hook, schema=problem, chunks=6)  # enough mutations whatever the draws
    stats = summary.extra["fastLane"]
    assert stats["mutatedTraces"] > 0 and sum(stats["fieldMutations"].values()) > 50
    assert stats["mutatedActionsProbed"] > 0  # some mutations broke the schema: sent as probes
    assert valid, "no valid-lane step at all"
    assert [a for a in valid if problem(a) is not None] == []  # none reached the valid lane
    # a mutation that repeats an id in its payload is a probe (the strategies' own draws may
    # repeat a string the schema lets repeat: `requiredScopes: ["read", "read"]`)
    repeating = {id(a) for a in mutated if mutation.repeats_an_id(a)}
    assert len(repeating) > 10
    assert [a for a in valid if id(a) in repeating] == []


def _repeat_first_entry(action: Any) -> tuple[Any, str | None]:
    """`action` with the first entry of its first non-empty list of ids or objects repeated."""
    for path, value in mutation._leaves(action):
        if isinstance(value, list) and value and isinstance(value[0], str | dict):
            return mutation._set(action, path, [value[0], *value]), "repeated entry"
    return action, None


def test_without_a_schema_mutated_actions_are_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    # With no schema validator the model cannot tell a mutated field of the wrong type or
    # range: only the pooled actions (valid by construction) may be valid-lane steps.
    monkeypatch.setattr(fast, "FIELD_MUTATION", 1.0)
    monkeypatch.setattr(fast, "RETARGET", 0.0)
    judged: list[Any] = []
    mutated: list[Any] = []
    real_valid, real_mutate = fast.FastLane._valid, mutation.Mutator.mutate

    def valid(self: Any, model: Any, kind: str, action: Any) -> bool:
        judged.append(action)
        return real_valid(self, model, kind, action)

    def mutate(self: Any, action: Any, state: Any) -> Any:
        out = real_mutate(self, action, state)
        if out[1] is not None:  # a field was changed
            mutated.append(out[0])
        return out

    monkeypatch.setattr(fast.FastLane, "_valid", valid)
    monkeypatch.setattr(mutation.Mutator, "mutate", mutate)
    summary = _run(4, chunks=3)
    assert summary.extra["fastLane"]["mutatedActionsProbed"] > 0
    changed = {id(a) for a in mutated}
    assert judged and changed
    assert [a for a in judged if id(a) in changed] == []


def test_repeated_ids_and_emptied_containers_are_seen() -> None:
    assert mutation.repeats_an_id({"entries": [{"id": "e1"}, {"id": "e1"}]})
    assert mutation.repeats_an_id({"dirs": ["file:///a", "file:///a"]})
    assert not mutation.repeats_an_id({"entries": [{"id": "e1"}, {"id": "e2"}], "dirs": ["a", "b"]})
    assert mutation._empty({}) and mutation._empty([]) and mutation._empty({"q": None})
    assert not mutation._empty({"q": 1})


def test_removing_the_last_answer_is_an_emptied_container() -> None:
    import random

    stats = fast.FastStats()
    m = mutation.Mutator(random.Random(0), stats)
    action = {"type": "chat/inputRequested", "request": {"id": "r1", "answers": {"q1": {"state": "draft"}}}}
    ops = set()
    for _ in range(200):
        out, op = m.mutate(action, {})
        if isinstance(out.get("request"), dict) and out["request"].get("answers") in ({}, {"q1": None}):
            ops.add(op)
    assert ops == {mutation.EMPTY_CONTAINER}


SESSION = {"provider": "p", "title": "", "status": 1, "lifecycle": "ready", "activeClients": [], "chats": []}


def test_a_spliced_action_that_names_an_id_the_state_holds_elsewhere_is_a_probe() -> None:
    # Found by a 90 s run against the three-cause adapter: a pooled `customizationUpdated` whose
    # child is named like a top-level customization of the state it was spliced into. Removing
    # that id once then differs from removing it twice (INV-028), on the reference model too: a
    # false finding from a state no host makes (ids are unique, INV-027).
    from harness.reference import Model

    model = Model(P, check_payloads=True)
    top = {"uri": "file:///repo-a/.mcp.json", "type": "mcpServer", "name": "fs", "id": "cust-3",
           "enabled": True, "state": {"kind": "stopped"}}
    state = model.reduce("session", SESSION, {"type": "session/customizationUpdated", "customization": top}, 1)
    child = {"uri": "file:///repo-a/.github/agent.md", "name": "agent", "id": "cust-3", "type": "agent"}
    clash = {"type": "session/customizationUpdated", "customization": {
        "name": "plugin", "type": "plugin", "uri": "file:///plugins/p", "enabled": False, "id": "cust-2",
        "children": [child]}}
    assert fast.FastLane._collides(model, "session", state, clash, 2)
    fine = {**clash, "customization": {**clash["customization"], "children": [{**child, "id": "cust-9"}]}}
    assert not fast.FastLane._collides(model, "session", state, fine, 2)
    assert mutation.id_repeats({"customizations": [top, {"id": "x", "children": [child]}]}) == 1


def test_ids_by_key_names_ids_as_actions_do() -> None:
    state = {"activeTurn": {"id": "t1", "responseParts": [{"toolCall": {"toolCallId": "tc1"}}]},
             "queuedMessages": [{"id": "m1"}]}
    ids = mutation.ids_by_key(state)
    assert ids["turnId"] == ["t1"] and ids["toolCallId"] == ["tc1"] and ids["queuedMessageId"] == ["m1"]


def test_fast_lane_finds_a_seeded_defect_and_the_finding_replays() -> None:
    name = "directory_set_duplicates"
    kind, profile_name, _ = mutants.MUTANTS[name]
    profile = Profile.named(profile_name)
    broken = ReferenceTarget(profile, model=getattr(mutants, name)(profile))
    summary = _run(1, kinds=(kind,), target=broken, chunks=10, max_findings=1)
    assert len(summary.findings) == 1, summary.stopped_because
    finding = summary.findings[0]
    assert finding.extra["lane"] == "fast" and "shrink" in finding.extra
    # time to exposure: the step that first witnessed it, before shrinking (issue 32)
    exposed = finding.extra["exposure"]
    assert 1 <= exposed["steps"] <= summary.steps and exposed["chunk"] < summary.chunks
    assert 0 <= exposed["seconds"] <= summary.elapsed_s
    assert replay(finding, broken).reproduced
    assert not replay(finding, ReferenceTarget(profile), target_is_model=True).reproduced


def test_probe_copies_are_cached_by_identity_within_a_step() -> None:
    state = {"a": [{"b": 1}], "c": {"d": [2, 3]}}
    with fresh_copies():
        one, two = fresh(state), fresh(state)
        one["a"][0]["b"] = 99  # a reducer that mutates its copy
        three = fresh(state)
    assert one is not two and two == state and three == state and three["a"] is not two["a"]
    assert fresh(state) == state and fresh(state) is not state


def test_lane_options(tmp_path: Path) -> None:
    assert set(LANES) == {"fast", "hypothesis"} and DEFAULT_LANE in LANES
    with pytest.raises(ValueError, match="unknown lane"):
        run_campaign(RunConfig(target=ReferenceTarget(P), target_spec="reference", target_is_model=True,
                               profile=P, budget_s=None, max_chunks=1, lane="quick"), EventBus())
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--target", "reference", "--lane", "quick",
         "--out", str(tmp_path / "x")], capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "--lane" in proc.stderr
    from harness.cli import build_parser

    for command in ("run", "campaign"):
        args = build_parser().parse_args([command, "--minutes", "1"] if command == "campaign" else [command])
        assert args.lane == DEFAULT_LANE


def test_a_bug_in_the_fast_lane_exits_3_with_a_finished_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    def broken(self: Any, arm: Any) -> None:
        raise RuntimeError("boom: a bug in the fast lane")

    monkeypatch.setattr(fast.FastLane, "run_arm", broken)
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--budget", "600s", "--chunks", "1", "--kinds", "terminal"]) == 3
    assert "boom: a bug in the fast lane" in capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "error" and report["lane"] == "fast"


def test_a_fill_stops_at_the_deadline() -> None:
    lane = fast.Lane(P, fast.Model(P, check_payloads=True), ReferenceTarget(P))
    calls = {"n": 0}

    def stop_after_three() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    entries = fast.fill(fast.seed_traces("chat", lane, 20, stop_after_three), 1, 7)
    assert [len(e.steps) for e in entries] in ([3], [0])  # the fill's first trace, or a later one
    assert calls["n"] <= 3 + 3  # three steps, then each trace the fill drew asked once and stopped


_DIGEST = """
import hashlib, json
from harness.engine.run import RunConfig, run_campaign
from harness.engine.events import EventBus
from harness.reference import Profile
from harness.targets.reference import ReferenceTarget
P = Profile.named("0.7.0")
h = hashlib.sha256()
def hook(kind, before, action, after, malformed):
    h.update(json.dumps([kind, action], sort_keys=True).encode())
from harness.engine.stepper import Stepper
real_probe = Stepper.probe
def probe(self, action, now_ms, **kw):  # probes (adversarial and mutated actions) count too
    h.update(json.dumps(["probe", self.kind, action], sort_keys=True, default=repr).encode())
    return real_probe(self, action, now_ms, **kw)
Stepper.probe = probe
run_campaign(RunConfig(target=ReferenceTarget(P), target_spec="reference", target_is_model=True, profile=P,
                       seed=9, budget_s=None, max_chunks=2, chunk_examples=8, kinds=("session", "chat"),
                       heartbeat_s=0, lane="fast", step_hook=hook, profiles=(P,)), EventBus())
print(h.hexdigest())
"""


def test_same_seed_same_steps_in_processes_with_other_string_hashing() -> None:
    # Group arms (a session and its chats) included: nothing may depend on a set's order.
    root = Path(__file__).resolve().parent.parent
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", _DIGEST], cwd=root, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        digests.add(proc.stdout.strip())
    assert len(digests) == 1


# -- edges (issue 32: boundary values) ----------------------------------------------------------


def test_a_bitset_gets_a_high_bit_or_a_flag_flipped_and_keeps_its_activity() -> None:
    import random

    m = mutation.Mutator(random.Random(3), fast.FastStats())
    session = {**SESSION, "status": 33, "chats": [{"resource": "ahp-chat:/c1", "status": 8}]}
    high: set[int] = set()
    flipped: set[int] = set()
    for i in range(200):
        out = m.edge_state(session, flag=i % 2 == 1)
        changed = [(out["status"], 33), (out["chats"][0]["status"], 8)]
        moved = [(new, old) for new, old in changed if new != old]
        assert len(moved) == 1  # one bitset per mutation, the other untouched
        new, old = moved[0]
        assert new & 31 == old & 31  # the activity is kept: a valid state stays valid
        if i % 2:
            assert new ^ old in mutation.FLAG_BITS
            flipped.add(new ^ old)
        else:
            assert new & 0xFF == old and new - old in mutation.HIGH_BITS
            high.add(new - old)
    assert high == set(mutation.HIGH_BITS) and flipped == set(mutation.FLAG_BITS)
    assert session["status"] == 33 and session["chats"][0]["status"] == 8  # never in place
    assert m.edge_state({"provider": "p"}) == {"provider": "p"}  # no bitset: the state itself


def test_a_status_field_of_an_action_is_mutated_by_bits_other_numbers_to_edges() -> None:
    import random

    m = mutation.Mutator(random.Random(5), fast.FastStats())
    action = {"type": "session/chatUpdated", "chat": "ahp-chat:/c1", "changes": {"status": 9}}
    counts = {"high bit": 0, "boundary number": 0}
    for _ in range(400):
        out, op = m.mutate(action, {})
        if op == "high bit":
            assert out["changes"]["status"] - 9 in mutation.HIGH_BITS
            counts["high bit"] += 1
        elif op == "boundary number":
            counts["boundary number"] += 1  # only `status` is a number here: bits, never edges
    assert counts == {"high bit": counts["high bit"], "boundary number": 0} and counts["high bit"] > 20
    resize = {"type": "terminal/resized", "cols": 80, "rows": 24}
    edges = {out["cols"] for out, op in (m.mutate(resize, {}) for _ in range(400)) if op == "boundary number"}
    assert {2**31, -(2**31), 2**32 - 1, 2**53 - 1} <= edges


def test_mutated_traces_start_from_high_bit_states_often_and_flipped_flags_besides() -> None:
    # the rate the TS reducers' bit-31 wrap needs (issue 32: every seed within 5 chunks); the flag
    # flips come on top of it (taking half of that share lost the wrap in one seed of five)
    import random

    lane = fast.FastLane.__new__(fast.FastLane)
    lane.rng = random.Random(1)
    lane.stats = fast.FastStats()
    lane.mutator = mutation.Mutator(lane.rng, lane.stats)
    lane.config = type("C", (), {"max_steps": 50})()
    chat = {"status": 1, "turns": []}
    pool = fast.ArmPool(corpus=[fast.Entry((("chat", chat),), [(0, {"type": "chat/draftChanged"}, False)])])
    statuses = [lane._next_trace(pool)[0].channels[0][1]["status"] for _ in range(1_000)]
    high = sum(s & ~0xFF != 0 for s in statuses)
    flipped = sum(s & 0xFF != 1 for s in statuses)
    assert 0.15 * 1_000 < high < 0.35 * 1_000 and 0.08 * 1_000 < flipped < 0.22 * 1_000


# -- nothing retired for good (issue 32) ----------------------------------------------------------


class _HangsOnLarge:
    """Hangs (a timeout) on any chat action over 300 bytes of JSON; ignores chat/draftChanged."""

    description = "hangs-on-large"

    def __init__(self) -> None:
        from harness.reference import Model

        self.model = Model(P)
        self.hangs = 0

    def reduce(self, kind: str, state: Any, action: Any, now_ms: int) -> Any:
        from harness.targets.base import TargetTimeout

        if kind == "chat" and len(json.dumps(action)) > 300:
            self.hangs += 1
            raise TargetTimeout("no reply within 5 s", timeout_s=5.0)
        if isinstance(action, dict) and action.get("type") == "chat/draftChanged":
            return state
        try:
            return self.model.reduce(kind, state, action, now_ms)
        except Exception as e:  # an error reply, as an adapter's would be
            from harness.targets.base import TargetError

            raise TargetError(f"{type(e).__name__}: {e}") from e

    def session(self, kind: str, state: Any) -> Any:
        from harness.targets.base import ReduceSession

        return ReduceSession(self, kind, state)

    def close(self) -> None:
        return None


def test_a_hang_is_shrunk_to_the_action_that_hung_by_one_replay() -> None:
    # every replay that reproduces a hang costs the adapter's whole timeout (5 s): before, the
    # base replay, the deletions that kept the hang and the confirming replay were 3–4 of them
    # per hang finding (bench/recall: ~15 s of `draft-ignored-behind-a-hang`'s exposure)
    from harness.corpus.finding import Finding, TraceStep
    from harness.engine.shrink import TraceShrinker

    chat = {"resource": "ahp-chat:/c1", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": []}
    small = {"type": "chat/titleChanged", "title": "t"}
    large = {"type": "chat/titleChanged", "title": "x" * 400}
    finding = Finding(
        invariant="TARGET-TIMEOUT", severity="violation", title="hang", message="no reply", profile=P.label,
        target="crafted", kind="chat", initial=chat,
        steps=[TraceStep(a, 1_000 + i) for i, a in enumerate([small, small, small, large])], failing_step=3,
    )
    target = _HangsOnLarge()
    shrinker = TraceShrinker(target, target_is_model=False)  # type: ignore[arg-type]
    shrunk = shrinker.shrink(finding)
    assert [s.action for s in shrunk.steps] == [large]
    assert target.hangs == 1 and shrinker.attempts == 1 and shrinker.settled and shrinker.reproduced
    # a trace that no longer hangs is left as it was found (the caller marks it flaky)
    target.hangs = 0
    quiet = TraceStep({"type": "chat/titleChanged", "title": "y"}, 1_003)
    needs = Finding(**{**finding.__dict__, "steps": [*finding.steps[:3], quiet]})
    assert TraceShrinker(target, target_is_model=False).shrink(needs) is needs  # type: ignore[arg-type]
    assert target.hangs == 0


def test_a_hang_retires_its_value_class_and_the_kind_goes_on() -> None:
    from harness.engine.retired import ValueClasses, action_size

    target = _HangsOnLarge()
    notices: list[str] = []
    bus = EventBus()
    bus.subscribe(lambda e: notices.append(e.message) if type(e).__name__ == "Notice" else None)
    config = RunConfig(
        target=target, target_spec="crafted", target_is_model=False, profile=P, seed=2, budget_s=None,
        max_chunks=40, chunk_examples=6, kinds=("chat",), heartbeat_s=0, lane="fast", profiles=(P,),
    )
    summary = run_campaign(config, bus)
    keys = sorted(tuple(f.cause["key"][:2]) for f in summary.findings if f.cause)
    # the hang once, and the bug of the kind a hang used to retire for the rest of the run
    assert keys == [("failure", "TARGET-TIMEOUT"), ("unapplied", "chat/draftChanged")]
    assert summary.stopped_because == "chunks"
    assert any("goes on being fuzzed" in n for n in notices)
    # a retired class is not sent again, nor called by the probe checks: a few dozen timeouts
    # in 40 chunks (each a 5 s wait on a real adapter), where every probe hung before (~800)
    assert target.hangs < 100
    classes = ValueClasses()
    classes.retire("chat", {"type": "chat/delta", "content": "x" * 400})
    small, large = {"type": "chat/delta", "content": "x"}, {"type": "chat/delta", "content": "x" * 500}
    assert not classes("chat", small) and classes("chat", large)
    assert not classes("session", large) and action_size(small) < action_size(large)
    assert not classes("chat", {"type": "chat/usage", "content": "x" * 500})  # another type
    # a step's outcome, in either lane: hangs in a row make a kind hopeless; an answer between does not
    hung = [{"type": t, "content": "x" * 500} for t in ("chat/delta", "chat/usage", "chat/draftChanged")]
    streak, broken = ValueClasses(), ValueClasses()
    for i, action in enumerate(hung):
        streak.saw("chat", action, hung=True)
        broken.saw("chat", action, hung=True)
        if i == 1:
            broken.saw("chat", small, hung=False)
    assert streak.hopeless() == ["chat"] and broken.hopeless() == [] and broken("chat", hung[2])


def test_a_type_that_never_changed_a_state_is_drawn_more_where_it_applies() -> None:
    from collections import Counter

    offers = [("chat/delta", 1.0, None), ("chat/usage", 1.0, None), ("chat/truncated", 0.08, None)]
    fresh = fast.reach_weights(offers, Counter())
    assert fresh[0] == fresh[1] == 1.0 + fast.RARE_BOOST and fresh[2] == 0.08  # a no-op stays rare
    worn = fast.reach_weights(offers, Counter({"chat/usage": 400}))
    assert worn[0] > 5 * worn[1] and worn[1] < 1.05


def test_a_chunk_bounded_run_reports_the_same_causes_on_a_slow_machine() -> None:
    # issue 32: "same seed, same verdict, any load". A slow machine is a clock that runs 50×
    # faster per call (every step, fill and shrink sees much more time pass); the budget is
    # generous, so chunks end both runs
    from itertools import count

    from harness.engine.control import RunControl

    name = "directory_set_duplicates"
    kind, profile_name, _ = mutants.MUTANTS[name]
    profile = Profile.named(profile_name)

    def run(clock: Any) -> tuple[list[Any], int, str]:
        broken = ReferenceTarget(profile, model=getattr(mutants, name)(profile))
        config = RunConfig(
            target=broken, target_spec="mutant", target_is_model=False, profile=profile, seed=4,
            budget_s=None, max_chunks=6, chunk_examples=6, kinds=(kind,), heartbeat_s=0, lane="fast",
            profiles=(profile,), control=RunControl(10_000.0, clock=clock),
        )
        summary = run_campaign(config, EventBus())
        return sorted(f.cause["id"] for f in summary.findings if f.cause), summary.steps, summary.stopped_because

    quick, slow = count(0, 0.001), count(0, 0.05)
    a, b = run(lambda: next(quick)), run(lambda: next(slow))
    assert a[2] == b[2] == "chunks"
    assert a == b and a[0]  # the same causes, the same steps: nothing decided by time


def test_a_lane_whose_session_cannot_open_is_a_dropped_kind_not_an_internal_error() -> None:
    # a target announcing two versions, whose second lane cannot decode a state (the Go client
    # refusing a status it cannot hold): before, the TargetError of that lane's session escaped
    # the run as an internal error (exit 3)
    from harness.targets.base import TargetError

    newer = Profile.named("0.8.0")

    class Refuses(ReferenceTarget):
        def session(self, kind: str, state: Any) -> Any:
            raise TargetError("decoding the state: cannot unmarshal number into SessionStatus")

    class TwoVersions(ReferenceTarget):
        profiles = ("0.7.0", "0.8.0")

        def for_profile(self, profile: Profile) -> Any:
            return Refuses(profile)

    config = RunConfig(
        target=TwoVersions(P), target_spec="two-versions", target_is_model=False, profile=P, seed=1,
        budget_s=None, max_chunks=4, chunk_examples=6, kinds=("chat",), heartbeat_s=0, lane="fast",
        profiles=None,  # every profile the target announces: a lane each
    )
    summary = run_campaign(config, EventBus())
    assert summary.steps > 0 and summary.status == "finished"
    assert newer.label == "0.8.0"


def test_hangs_that_size_explains_retire_every_large_action_whatever_its_type() -> None:
    # a quadratic parser hangs on bytes, not on a type: two types that hung large and answered
    # small retire every action from the second-smallest bound, in any kind (class 6)
    from harness.engine.retired import ValueClasses, action_size

    classes = ValueClasses()
    told: list[tuple[int, int]] = []
    classes.on_size = lambda size, n: told.append((size, n))
    big = {"type": "chat/delta", "content": "x" * 900}
    other = {"type": "session/titleChanged", "title": "y" * 700}
    classes.saw("chat", big, hung=True)
    classes.saw("session", other, hung=True)
    lone = {"type": "terminal/data", "data": "z" * 2000}
    assert not classes("terminal", lone)  # two hangs are not yet evidence of size
    classes.saw("chat", {"type": "chat/delta", "content": "x"}, hung=False)
    classes.saw("session", {"type": "session/titleChanged", "title": "y"}, hung=False)
    bound = classes.any_type
    assert bound is not None and told == [(bound, 2)]
    assert classes("terminal", lone) and not classes("terminal", {"type": "terminal/data", "data": "z"})
    assert {"kind": "*", "type": "*", "fromBytes": bound} in classes.to_json()
    # size taken for the cause, a third class that hangs smaller and answers small lowers the
    # bound to its own at once (no longer to the second-smallest: one timeout more each time)
    third = {"type": "root/agentsChanged", "agents": "w" * 300}
    assert not classes("root", third)
    classes.saw("root", third, hung=True)
    classes.saw("root", {"type": "root/agentsChanged", "agents": []}, hung=False)
    assert classes.any_type == action_size(third) < bound and told[-1] == (action_size(third), 3)
    # the band between the largest action answered and the smallest that hung is where it hangs:
    # once it is narrow (a factor 2), all of it is retired at the next bound, not one timeout at a time
    answered = {"type": "chat/usage", "content": "v" * 250}
    classes.saw("chat", answered, hung=False)
    fourth = {"type": "terminal/data", "data": "u" * 300}
    classes.saw("terminal", fourth, hung=True)
    classes.saw("terminal", {"type": "terminal/data", "data": "u"}, hung=False)
    assert classes.answered_max == action_size(answered) and classes.any_type == action_size(answered) + 1
    assert not classes("chat", answered) and classes("chat", {**answered, "content": "v" * 260})
    # the control: types that hang at every size (a deadlocked handler) are no evidence for size;
    # what the envelope held from a hang above the largest answered action goes with its test
    from harness.engine.retired import ENVELOPE_TEST

    stuck = ValueClasses()
    for t in ("chat/delta", "chat/usage", "chat/reasoning"):
        stuck.saw("chat", {"type": t, "content": "x"}, hung=True)
        stuck.saw("chat", {"type": "chat/draftChanged", "text": "ok"}, hung=False)
    assert stuck.any_type is None
    huge = {"type": "chat/error", "content": "x" * 5000}
    for _ in range(ENVELOPE_TEST):
        stuck.saw("chat", {"type": "chat/draftChanged", "text": "ok"}, hung=False)
    assert not stuck("chat", huge)  # the test goes
    stuck.saw("chat", huge, hung=False)  # and is answered: size is not the cause
    assert not stuck.envelope and not stuck("chat", {**huge, "content": "y" * 6000})


def test_a_hang_above_every_answered_action_holds_an_envelope_until_a_test_says_otherwise() -> None:
    # recall, draft-ignored-behind-a-hang: 32 s to exposure, five 5 s timeouts (one per type that
    # met a large action before two classes had shown size to be the cause). A first hang larger
    # than everything answered holds the envelope at once: nothing larger goes but one test
    # every ENVELOPE_TEST answered steps.
    from harness.engine.retired import ENVELOPE_TEST, ValueClasses, action_size

    classes = ValueClasses()
    told: list[tuple[int, bool]] = []
    classes.on_envelope = lambda size, held: told.append((size, held))
    answered = {"type": "chat/delta", "content": "a" * 400}
    classes.saw("chat", answered, hung=False)
    classes.saw("chat", {"type": "chat/titleChanged", "title": "b" * 900}, hung=True)
    edge = action_size(answered)
    assert classes.envelope and told == [(edge + 1, True)]
    above = {"type": "session/titleChanged", "title": "c" * 420}  # another type, another kind
    assert classes("session", above) and not classes("session", {**above, "title": "c"})
    assert {"kind": "*", "type": "*", "fromBytes": edge + 1, "envelope": True} in classes.to_json()
    for _ in range(ENVELOPE_TEST - 1):
        classes.saw("chat", {"type": "chat/delta", "content": "d"}, hung=False)
    assert classes("session", above)  # not yet a test
    classes.saw("chat", {"type": "chat/delta", "content": "d"}, hung=False)
    assert not classes("session", above) and not classes("session", above)  # the test, asked twice
    assert classes("terminal", {"type": "terminal/data", "data": "e" * 430})  # one test at a time
    classes.saw("session", above, hung=False)  # answered: the envelope widens to it
    assert classes.envelope and classes.answered_max == action_size(above)
    # a hang clearly below an answered action says size is not the cause: lifted for good
    classes.saw("chat", {"type": "chat/delta", "content": "f" * 100}, hung=True)
    assert not classes.envelope and told[-1] == (action_size(above) + 1, False)
    classes.saw("chat", {"type": "chat/usage", "content": "g" * 2000}, hung=True)
    assert not classes.envelope  # not held again
    # no answer yet: a first hang holds nothing (the largest answered action says nothing)
    fresh = ValueClasses()
    fresh.saw("chat", {"type": "chat/titleChanged", "title": "b" * 900}, hung=True)
    assert not fresh.envelope and not fresh("session", above)


def test_a_target_that_stops_answering_a_kind_loses_the_kind_after_a_few_hangs() -> None:
    # the control of the value-class rule: hangs in a row on different actions, nothing answered
    # between, are the kind's (each later step would wait out its timeout)
    from harness.engine.retired import HOPELESS, ValueClasses

    classes = ValueClasses()
    for n in range(HOPELESS - 1):
        classes.retire("chat", {"type": f"chat/t{n}"})
    assert classes.hopeless() == []
    classes.answered("chat")  # an answer between: the hangs were of their classes
    for n in range(HOPELESS - 1):
        classes.retire("chat", {"type": f"chat/u{n}"})
    assert classes.hopeless() == []
    classes.retire("chat", {"type": "chat/v"})
    assert classes.hopeless() == ["chat"]


def test_a_type_common_in_one_lane_is_still_rare_in_another() -> None:
    # issue 32 item 7 (seen on the Go client): its 0.7.0-main lane, fed toggles by the fixtures,
    # made `session/customizationToggled` common run-wide, so its 0.8.0 lane — the `{id,
    # enablement[]}` rule, other reducer code — sent 8 toggles in 25,000 steps and never the
    # one the client decodes as `enabled: false`. Reach is counted per lane.
    import random
    from collections import Counter
    from types import SimpleNamespace

    from harness.engine import generation

    main, later = Profile.named("0.7.0-main"), Profile.named("0.8.0")
    queued = [{"id": "m1", "message": {"text": "a"}}, {"id": "m2", "message": {"text": "b"}}]
    chat = {"resource": "ahp-chat:/c1", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": [], "queuedMessages": queued}
    applying = [t for t, w, _ in generation.type_offers("chat", chat, later, None) if w >= fast.APPLIES]
    worn = Counter({t: fast.RARE_FRESH for t in applying})  # every type common in the main lane
    lane = fast.FastLane.__new__(fast.FastLane)
    lane.rng, lane.stats = random.Random(1), fast.FastStats()
    lane.mutator = mutation.Mutator(lane.rng, lane.stats)
    lane.rec, lane.offered, lane._last_offers = SimpleNamespace(changed=worn), {}, None
    lane.changed_in, lane.fresh_in = {main.label: worn}, {}
    channels = [(SimpleNamespace(kind="chat", reference=chat), None)]
    assert lane._hunt(SimpleNamespace(profile=main), channels, 0) is None  # type: ignore[arg-type]
    hunted = lane._hunt(SimpleNamespace(profile=later), channels, 0)  # type: ignore[arg-type]
    assert hunted is not None and hunted["type"] in applying
    assert lane.fresh_in == {later.label: Counter({hunted["type"]: 1})}


def test_a_rare_type_is_sent_where_it_applies_until_it_is_no_longer_rare(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 32, reach: a state that enables a rare type (two queued messages: a reorder) is used
    # when a step meets it — the type drawn for that very state — until the type has changed a
    # state RARE_FRESH times, or was drawn RARE_FRESH_CAP times without that (a no-op type)
    import random
    from collections import Counter
    from types import SimpleNamespace

    from harness.engine import generation

    profile = Profile.named("0.7.0")
    queued = [{"id": "m1", "message": {"text": "a"}}, {"id": "m2", "message": {"text": "b"}}]
    chat = {"resource": "ahp-chat:/c1", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": [], "queuedMessages": queued}
    applying = [t for t, w, _ in generation.type_offers("chat", chat, profile, None) if w >= fast.APPLIES]
    assert "chat/queuedMessagesReordered" in applying
    worn = Counter({t: fast.RARE_FRESH for t in applying if t != "chat/queuedMessagesReordered"})
    lane = fast.FastLane.__new__(fast.FastLane)
    lane.rng, lane.stats = random.Random(1), fast.FastStats()
    lane.mutator = mutation.Mutator(lane.rng, lane.stats)
    lane.rec, lane.offered, lane._last_offers = SimpleNamespace(changed=Counter()), {}, None
    lane.changed_in, lane.fresh_in = {profile.label: worn}, {}  # reach is counted per lane
    channels = [(SimpleNamespace(kind="chat", reference=chat), None)]
    here = SimpleNamespace(profile=profile)
    hunted = lane._hunt(here, channels, 0)  # type: ignore[arg-type]
    assert hunted is not None and hunted["type"] == "chat/queuedMessagesReordered"
    worn["chat/queuedMessagesReordered"] = fast.RARE_FRESH  # effective often enough now
    assert lane._hunt(here, channels, 0) is None  # type: ignore[arg-type]
    worn["chat/queuedMessagesReordered"] = 0  # never effective: drawn at most RARE_FRESH_CAP times
    lane.fresh_in[profile.label] = Counter({"chat/queuedMessagesReordered": fast.RARE_FRESH_CAP})
    assert lane._hunt(here, channels, 0) is None  # type: ignore[arg-type]
    # once no type of the kind is rare, a hunt does not even ask which apply (a quarter of all steps)
    for t in lane.offered[("chat", profile.label)]:
        worn[t] = fast.RARE_FRESH
    asked: list[str] = []
    real = generation.type_offers
    monkeypatch.setattr(generation, "type_offers", lambda *a, **k: asked.append("asked") or real(*a, **k))
    channels = [(SimpleNamespace(kind="chat", reference=dict(chat)), None)]  # a state no answer is kept for
    assert lane._hunt(here, channels, 0) is None and asked == []  # type: ignore[arg-type]
    worn["chat/turnsLoaded"] = 0  # one rare again: asked
    lane._hunt(here, channels, 0)  # type: ignore[arg-type]
    assert asked == ["asked"]
    lane._offers(here, channels, 0)  # type: ignore[arg-type]
    assert asked == ["asked"]  # the same state, asked again within the step: the kept answer
    lane._offers(here, [(SimpleNamespace(kind="chat", reference=dict(chat)), None)], 0)  # type: ignore[arg-type]
    assert asked == ["asked", "asked"]  # another state: asked


def test_types_with_no_state_effect_are_named_and_never_hunted() -> None:
    # the spec gives a request to the host (automation/createRequested) or a side effect
    # (terminal/input) no state effect: "changed 0" is right for them; reach leaves them alone
    from collections import Counter

    from harness.reference import NO_STATE_EFFECT, Model

    assert {"terminal/input", "automation/createRequested", "resourceWatch/changed"} <= NO_STATE_EFFECT
    model = Model(Profile.named("1.0.0"))
    terminal = {"title": "t", "content": [], "claim": {"kind": "client", "clientId": "c1"}}
    assert model.reduce("terminal", terminal, {"type": "terminal/input", "data": "ls\r"}, 5) == terminal
    assert "terminal/resized" not in NO_STATE_EFFECT  # one that writes the state is not listed
    offers = [("terminal/input", 1.0, None), ("terminal/resized", 1.0, None)]
    assert fast.reach_weights(offers, Counter()) == [1.0, 1.0 + fast.RARE_BOOST]


def test_a_run_report_names_the_types_with_no_state_effect(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--target", "reference", "--kinds", "terminal",
                           "--chunks", "6", "--seed", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert "terminal/input" in report["coverage"] and report["noStateEffect"] == ["terminal/input"]
    assert report["coverage"]["terminal/input"]["changed"] == 0


def test_a_lane_of_another_version_is_not_judged_by_the_folders_schema() -> None:
    # The spec folder's action schema describes the run's profile (0.7.0 here); a 0.8.0 lane's
    # `customizationToggled {id, enablement[]}` lacks 0.7.0's required `enabled`. Judged by that
    # schema every one was a probe and never compared with the model (issue 32: a mutant of the
    # 0.8.0 enablement rule survived every plain run with a 0.7.0 folder).
    problem = _schema()
    p08 = Profile.named("0.8.0")
    judged: list[Any] = []

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> None:
        if not malformed and action.get("type") == "session/customizationToggled" and "enablement" in action:
            judged.append(action)

    _run(2, kinds=("session",), schema=problem, hook=hook, chunks=40, profiles=(P, p08))
    assert judged, "no 0.8.0 customizationToggled reached the valid lane"
    assert problem(judged[0]) is not None  # the 0.7.0 schema would have made it a probe


def test_lane_schema_keeps_the_folder_schema_for_the_runs_version_only() -> None:
    from harness.engine.arms import lane_schema

    def problem(action: Any) -> str | None:
        return None

    p08, main = Profile.named("0.8.0"), Profile.named("0.7.0-main")
    assert lane_schema(problem, P, P) is problem and lane_schema(problem, main, P) is problem
    assert lane_schema(problem, p08, P) is None and lane_schema(problem, P, p08) is None
    assert lane_schema(None, P, P) is None


def test_a_type_a_strategy_weighs_down_is_effect_hunted_for_a_new_effect_only() -> None:
    # recall, turn_end_no_duration_clamp (4 of 5, 8 of 10): the turn ends weigh HOT/4 so that
    # turns live long, below `APPLIES`, so they were never hunted: 11 effective turn ends in 26,620
    # steps, and a negative duration (the clamp) never sent. The effect hunt takes them for an
    # effect never seen (the clamp, `path≠`), not up to `EFFECT_RARE` times each (that cost the
    # tool-call bugs seeds and steps), and the reach boost never does.
    import random
    from collections import Counter
    from types import SimpleNamespace

    from harness.engine import generation
    from harness.engine.effects import effect
    from harness.reference import Model

    profile = Profile.named("0.7.0")
    model = Model(profile)
    chat = {"resource": "ahp-chat:/c1", "title": "", "status": 8, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": [], "activeTurn": {"id": "t1", "startedAt": "1970-01-01T00:00:00.000Z",
                                        "message": {"text": "", "origin": {"kind": "user"}}, "responseParts": []}}
    offers = generation.type_offers("chat", chat, profile, None)
    weights = {t: w for t, w, _ in offers}
    t = "chat/turnCancelled"
    assert fast.HUNTS_FROM <= weights[t] < fast.APPLIES
    boosted = dict(zip([u for u, _, _ in offers], fast.reach_weights(offers, Counter()), strict=True))
    assert boosted[t] == weights[t]  # never boosted
    ended = {"type": t, "turnId": "t1", "duration": 5}
    plain = (t, effect(chat, model.reduce("chat", chat, ended, 5), ended))
    clamped = {**ended, "duration": -1}
    clamp = (t, effect(chat, model.reduce("chat", chat, clamped, 5), clamped))
    assert plain != clamp

    def hunt(seen: Counter[Any]) -> list[Any]:
        lane = fast.FastLane.__new__(fast.FastLane)
        lane.rng, lane.stats = random.Random(2), fast.FastStats()
        lane.mutator = mutation.Mutator(lane.rng, lane.stats)
        lane.valid_cache, lane.effects, lane._last_offers = {}, seen, None
        lane._offers = lambda *a: [(t, weights[t], None)]  # type: ignore[method-assign]
        pool = fast.ArmPool(by_type={t: [(0, dict(ended)) for _ in range(8)]})
        here = SimpleNamespace(profile=profile, model=model)
        channels = [(SimpleNamespace(kind="chat", reference=chat), None)]
        return [lane._effect_hunt(pool, here, channels, 0, 5) for _ in range(40)]  # type: ignore[arg-type]

    sent = hunt(Counter({plain: 1}))  # a turn's end seen once: not sent again for that effect
    assert any(a is not None for a in sent)
    assert all(a is None or a["duration"] < 0 for a in sent)  # the clamp: an effect never seen
    assert all(a is None for a in hunt(Counter({plain: 1, clamp: 1})))  # seen once: enough


def test_a_guard_probe_is_effect_hunted_for_a_no_op_never_seen_only() -> None:
    # issue 32, coverage: the types a state turns away (`COLD`: a resume of a turn that did not
    # fail) were never hunted, so which guard turned them away was a branch no run took. The
    # hunt looks at one of them now and then and sends it only for a no-op signature never seen.
    import random
    from collections import Counter
    from types import SimpleNamespace

    from harness.engine import generation
    from harness.engine.effects import effect, near_miss
    from harness.engine.mutation import ids_by_key
    from harness.reference import Model

    profile = Profile.named("0.9.0")
    model = Model(profile)
    done = {"id": "t1", "state": "complete", "message": {"text": "", "origin": {"kind": "user"}},
            "responseParts": [], "startedAt": "1970-01-01T00:00:00.000Z"}
    chat = {"resource": "ahp-chat:/c1", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": [done], "activeTurn": None}
    weights = {t: w for t, w, _ in generation.type_offers("chat", chat, profile, None)}
    hot, cold = "chat/draftChanged", "chat/turnResume"
    assert weights[cold] < fast.HUNTS_FROM <= weights[hot]
    resume = {"type": cold, "turnId": "t1"}
    assert model.reduce("chat", chat, resume, 5) is chat  # turned away: the turn did not fail
    draft = {"type": hot, "draft": {"text": "x"}}
    drafted = (hot, effect(chat, model.reduce("chat", chat, draft, 5), draft))
    refused = (cold, near_miss(resume, ids_by_key(chat)))

    def hunt(seen: Counter[Any]) -> list[Any]:
        lane = fast.FastLane.__new__(fast.FastLane)
        lane.rng, lane.stats = random.Random(4), fast.FastStats()
        lane.mutator = mutation.Mutator(lane.rng, lane.stats)
        lane.valid_cache, lane.effects, lane._last_offers = {}, seen, None
        lane._offers = lambda *a: [(hot, weights[hot], None), (cold, weights[cold], None)]  # type: ignore[method-assign]
        pool = fast.ArmPool(by_type={hot: [(0, dict(draft))], cold: [(0, dict(resume))]})
        here = SimpleNamespace(profile=profile, model=model)
        channels = [(SimpleNamespace(kind="chat", reference=chat), None)]
        return [lane._effect_hunt(pool, here, channels, 0, 5) for _ in range(60)]  # type: ignore[arg-type]

    common = Counter({drafted: fast.EFFECT_RARE})  # the hot type's effect: seen enough
    sent = hunt(common)
    assert any(a is not None and a["type"] == cold for a in sent)  # the guard's no-op, hunted
    assert all(a is None or a["type"] == cold for a in sent)
    assert all(a is None for a in hunt(common + Counter({refused: 1})))  # seen once: enough


def test_small_actions_come_first_where_a_hang_can_cost() -> None:
    # recall, draft-ignored-behind-a-hang: a bug small actions show waited out the first large
    # action's timeout and its confirming replay (and the draft finding's shrink, whose probe
    # checks called the target with actions the run skipped: five timeouts). With the size ramp
    # (libFuzzer's -len_control) the small bug is found, shrunk and confirmed before any hang.
    from harness.engine.events import FindingFound
    from harness.engine.retired import RAMP_EVERY, RAMP_FROM, ValueClasses

    ramp = ValueClasses()
    ramp.ramp = True
    small = {"type": "chat/delta", "content": "x" * (RAMP_FROM // 2)}
    mid = {"type": "chat/delta", "content": "x" * RAMP_FROM}
    assert not ramp("chat", small) and ramp("chat", mid)
    for _ in range(RAMP_EVERY):
        ramp.saw("chat", small, hung=False)
    assert not ramp("chat", mid) and ramp("chat", {"type": "chat/delta", "content": "x" * (2 * RAMP_FROM)})
    off = ValueClasses()
    assert not off("chat", {"type": "chat/delta", "content": "x" * 100_000})  # the model's runs

    target = _HangsOnLarge()
    hangs_when: dict[str, int] = {}

    def seen(e: Any) -> None:
        if isinstance(e, FindingFound) and e.finding.cause:
            hangs_when.setdefault(e.finding.cause["key"][1], target.hangs)

    bus = EventBus()
    bus.subscribe(seen)
    config = RunConfig(
        target=target, target_spec="crafted", target_is_model=False, profile=P, seed=2, budget_s=None,
        max_chunks=40, chunk_examples=6, kinds=("chat",), heartbeat_s=0, lane="fast", profiles=(P,),
    )
    summary = run_campaign(config, bus)
    exposed = {f.cause["key"][1]: f.extra["exposure"]["steps"] for f in summary.findings if f.cause}
    assert exposed["chat/draftChanged"] < exposed["TARGET-TIMEOUT"]
    assert hangs_when["chat/draftChanged"] == 0  # found, shrunk and confirmed without one timeout


def test_the_hypothesis_lane_asks_the_classes_without_what_moves_each_step() -> None:
    # the ramp's cap and the envelope's tests move with every answered step; Hypothesis runs an
    # example again and must get the same answers (a step skipped once and sent the next time:
    # "inconsistent data generation", an internal error of a `--lane hypothesis` run against an
    # adapter — tests/test_mutation.py's chat_removed_keeps_default showed it)
    from harness.engine.retired import RAMP_FROM, ValueClasses

    classes = ValueClasses()
    classes.ramp = True
    steady = classes.steady()
    large = {"type": "chat/delta", "content": "x" * (4 * RAMP_FROM)}
    assert classes("chat", large) and not steady("chat", large)  # the ramp: the fast lane only
    classes.saw("chat", {"type": "chat/delta", "content": "y"}, hung=False)
    steady.retire("chat", {"type": "chat/titleChanged", "title": "z" * 900})  # a hang: retired for both
    assert classes.envelope and not steady("session", large)  # the envelope: the fast lane only
    assert steady("chat", {"type": "chat/titleChanged", "title": "z" * 901})  # the class itself
