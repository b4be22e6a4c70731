"""Findings must be true (issue 9): the valid lane is schema-valid, malformed payloads are
probes, a known issue on a target is known only when the model shows it too."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.corpus.finding import Finding, TraceStep, load_finding
from harness.engine.events import EventBus
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.engine.stepper import TARGET_ERROR, Stepper
from harness.reference import MalformedAction, Model, Profile
from harness.reference.payloads import REQUIRED
from harness.spec.action_schema import ActionSchema, required_paths
from harness.spec.specdir import SpecDir
from harness.targets.adapter import AdapterTarget
from harness.targets.reference import ReferenceTarget
from tests.conftest import sibling_spec

P = Profile.named("0.7.0")

#: The schema-invalid steps the TypeScript traces held as ordinary steps (issue 9 (a)).
ISSUE_EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("session", {"type": "session/inputNeededSet", "request": {}}),
    ("chat", {"type": "chat/toolCallReady", "turnId": "t1"}),
    ("chat", {"type": "chat/turnStarted", "turnId": "t1", "startedAt": 1}),
    ("annotations", {"type": "annotations/set", "annotation": {}}),
    ("changeset", {"type": "changeset/fileSet", "file": {}}),
    ("chat", {"type": "chat/turnsLoaded", "turns": [{}]}),
    ("chat", {"type": "chat/error", "turnId": "t1", "duration": 1}),
]


def _state(kind: str) -> dict[str, Any]:
    from harness.spec.shapes import STATE_REQUIRED

    base: dict[str, Any] = {
        "root": {"agents": []},
        "session": {"provider": "p", "title": "", "status": 1, "lifecycle": "ready", "activeClients": [], "chats": []},
        "chat": {"resource": "ahp-chat:/c", "title": "", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z", "turns": [],
                 "activeTurn": {"id": "t1", "startedAt": 1, "message": {"text": "", "origin": {"kind": "user"}}, "responseParts": []}},
        "changeset": {"status": "ready", "files": []},
        "annotations": {"annotations": []},
    }[kind]
    assert STATE_REQUIRED[kind] <= set(base)
    return base


@pytest.mark.parametrize(("kind", "action"), ISSUE_EXAMPLES, ids=[a["type"] for _, a in ISSUE_EXAMPLES])
def test_model_refuses_nested_schema_invalid_payloads_without_a_spec_dir(kind: str, action: dict[str, Any]) -> None:
    strict = Model(P, check_payloads=True)
    assert strict.payload_problem(kind, action) is not None
    with pytest.raises(MalformedAction, match="schema-invalid payload"):
        strict.reduce(kind, _state(kind), action, 5)


@pytest.mark.parametrize(("kind", "action"), ISSUE_EXAMPLES, ids=[a["type"] for _, a in ISSUE_EXAMPLES])
def test_the_schema_refuses_the_same_payloads(spec_dir: SpecDir, kind: str, action: dict[str, Any]) -> None:
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    assert schema.problem(action) is not None
    with pytest.raises(MalformedAction):
        Model(P, schema=schema.problem).reduce(kind, _state(kind), action, 5)


def test_required_field_table_equals_what_the_schema_says(spec_dir: SpecDir) -> None:
    # The model's table states facts of the schema: derived afresh, they agree type by type
    # (0.8.0's workingDirectoryReplaced is not in the 0.7.0 schema).
    derived = required_paths(spec_dir.schemas["actions"])
    table = {t: frozenset(p) for t, p in REQUIRED.items() if t != "session/workingDirectoryReplaced"}
    assert {t: p for t, p in derived.items() if p} == table


def test_table_and_schema_agree_on_every_fixture_action(spec_dir: SpecDir) -> None:
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    model = Model(P, check_payloads=True)
    checked = 0
    for fx in spec_dir.reducer_fixtures():
        for action in fx.actions:
            if model.handler(fx.kind, action) is None:
                continue
            assert schema.problem(action) is None, (fx.name, action)
            assert model.payload_problem(fx.kind, action) is None, (fx.name, action)
            checked += 1
    assert checked > 300


def test_valid_lane_steps_are_schema_valid_in_a_run(spec_dir: SpecDir) -> None:
    # Every step the engine treats as valid-lane (the step hook sees only those) passes the
    # spec's action schema; schema-invalid draws became probes.
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    seen: list[Any] = []

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> None:
        seen.append(action)
        return None

    config = RunConfig(
        target=ReferenceTarget(P), target_spec="reference", target_is_model=True, profile=P,
        seed=3, budget_s=None, max_chunks=1, chunk_examples=10, max_steps=15,
        kinds=("chat", "session", "annotations", "changeset"), step_hook=hook, schema=schema.problem,
        # the folder's version only: a lane of another version (the model serves 1.0.0 too) is
        # judged by that version's payload rules, not by this folder's schema (`lane_schema`)
        profiles=(P,),
    )
    run_campaign(config, EventBus())
    assert len(seen) > 50
    bad = [(a.get("type"), schema.problem(a)) for a in seen if schema.problem(a) is not None]
    assert bad == []


def test_shrinker_keeps_the_valid_lane_schema_valid() -> None:
    # A candidate that drops a nested required key makes that step malformed on replay: the
    # replay counts it, and the shrinker (limit 0) rejects such candidates.
    f = Finding(
        invariant="INV-D01", severity="divergence", title="", message="", profile="0.7.0",
        target="reference", kind="chat", initial=_state("chat"),
        steps=[TraceStep({"type": "chat/error", "turnId": "t1", "duration": 1, "error": {}}, 10)],
        failing_step=0,
    )
    result = replay(f, ReferenceTarget(P), target_is_model=True)
    assert result.malformed == 1


ADAPTER = [sys.executable, "-c", """
import json, sys
print(json.dumps({"ahpAdapter": 1, "name": "picky", "forms": ["simple"]}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    a = req.get("action")
    if not isinstance(a, dict) or not isinstance(a.get("type"), str):
        out = {"id": req["id"], "error": {"message": "bad action", "code": "badRequest"}}
    else:
        out = {"id": req["id"], "state": req["state"]}
    print(json.dumps(out), flush=True)
"""]


@pytest.mark.parametrize("action", [{"type": 42}, ["chat/delta"], {"turnId": "t1"}])
def test_an_error_reply_to_an_untyped_payload_is_no_finding(action: Any) -> None:
    # Issue 9 (e): docs/adapters.md allows an error reply to a malformed payload.
    target = AdapterTarget(ADAPTER, profile=P)
    try:
        stepper = Stepper("chat", _state("chat"), Model(P, check_payloads=True), target.session("chat", _state("chat")), target)
        result = stepper.probe(action, 10)
    finally:
        target.close()
    assert result.malformed and result.violations == []


def test_an_error_reply_to_a_valid_step_is_a_finding() -> None:
    always = AdapterTarget([*ADAPTER[:2], ADAPTER[2].replace('not isinstance(a.get("type"), str)', "True")], profile=P)
    try:
        stepper = Stepper("chat", _state("chat"), Model(P, check_payloads=True), always.session("chat", _state("chat")), always)
        result = stepper.step({"type": "chat/delta", "turnId": "t1", "partId": "p", "content": "x"}, 12)
    finally:
        always.close()
    assert [v.invariant for v in result.violations] == [TARGET_ERROR]


def _confirmed_twice(profile: Profile, status: int) -> Model:
    """The reference reducers, but chat/toolCallConfirmed sets the chat status to `status`."""
    from harness.reference.dispatch import TABLES

    real = TABLES["chat"]["chat/toolCallConfirmed"]

    def h(state: Any, action: Any, ctx: Any) -> Any:
        after = real(state, action, ctx)
        return after if after is state else {**after, "status": status}

    return Model(profile, overrides={"chat/toolCallConfirmed": h})


def test_a_known_issue_on_a_target_is_known_only_when_the_model_shows_it() -> None:
    corpus = Path(__file__).resolve().parent.parent / "corpora" / "known"
    finding = load_finding(next(corpus.glob("inv-015.strict-*.json")))
    profile = Profile.named(finding.profile)
    # The model itself, served as a target (not target_is_model): the known issue stays known.
    same = replay(finding, ReferenceTarget(profile), target_is_model=False)
    assert same.reproduced
    assert {v.severity for i, v in same.violations if v.invariant == finding.invariant} == {"known"}
    # A target that breaks the same invariant its own way: a new finding.
    own = replay(finding, ReferenceTarget(profile, model=_confirmed_twice(profile, 8)), target_is_model=False)
    hits = [v for _, v in own.violations if v.invariant == finding.invariant]
    assert hits and all(v.severity == "violation" for v in hits)
    assert "its own way" in hits[0].message


def test_finding_files_of_a_mutant_run_hold_only_schema_valid_valid_lane_steps(spec_dir: SpecDir, tmp_path: Path) -> None:
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    target = AdapterTarget(
        [sys.executable, "-m", "harness.targets.reference_adapter", "--model",
         str(Path(__file__).parent / "mutants.py") + ":turn_started_keeps_read"],
        profile=P,
    )
    try:
        config = RunConfig(
            target=target, target_spec="adapter", target_is_model=False, profile=P, seed=1,
            budget_s=None, max_chunks=1, kinds=("chat",), probe_every=25, schema=schema.problem,
            shrink_budget_s=5,
        )
        summary = run_campaign(config, EventBus())
    finally:
        target.close()
    assert summary.findings
    for f in summary.findings:
        for s in f.steps:
            if not s.probe:
                assert schema.problem(s.action) is None, json.dumps(s.action)


def test_the_action_schema_is_read_with_the_item_11_corrections(spec_dir: SpecDir) -> None:
    """REDUCERS.md §11 item 11: the published schemas reject legitimate payloads. The valid lane
    reads them corrected, like the generators and INV-007: a combined SessionStatus (Idle|IsRead
    = 33) is a valid `session/chatUpdated`, and 0.6.0's turns without `usage` (its own fixture
    233) are a valid `chat/turnsLoaded`; a status beyond 2^32 stays invalid."""
    schema = ActionSchema.from_spec(spec_dir)
    assert schema is not None
    update = {"type": "session/chatUpdated", "chat": "ahp-chat:/a", "changes": {"status": 33}}
    assert schema.problem(update) is None
    assert schema.problem({**update, "changes": {"status": 2**32}}) is not None
    old_spec = sibling_spec("0.6.0")
    old = ActionSchema.from_spec(old_spec)
    assert old is not None
    (fx,) = [f for f in old_spec.reducer_fixtures() if f.name.startswith("233-chat-turnsloaded")]
    loaded = [a for a in fx.actions if a["type"] == "chat/turnsLoaded"]
    assert loaded and all("usage" not in t for a in loaded for t in a["turns"])
    assert [old.problem(a) for a in loaded] == [None] * len(loaded)
