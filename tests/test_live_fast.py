"""The live fast lane (harness/live/fast.py): pooled choices, the valid-lane truth rule, the lanes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine.events import EventBus, RunFinished
from harness.live import fast as live_fast
from harness.live.fast import LivePools, PoolDraws
from harness.live.focus import FOCUS
from harness.live.ops import DEFAULT_WEIGHTS
from harness.reference import Model, Profile
from harness.spec.action_schema import ActionSchema
from harness.spec.specdir import SpecDir
from strategies.actions import ActionContext

PROFILE = Profile.named("0.7.0")
SESSION = {
    "provider": "p",
    "title": "t",
    "status": 1,
    "createdAt": "2026-01-01T00:00:00.000Z",
    "modifiedAt": "2026-01-01T00:00:00.000Z",
    "workingDirectories": ["file:///repo-a"],
    "chats": [],
}
TITLE = ["session/titleChanged"]


def _schema() -> ActionSchema:
    spec = SpecDir.from_env()
    if spec is None or not spec.has_schemas():
        pytest.skip("no spec checkout with schemas (AHP_SPEC_DIR)")
    schema = ActionSchema.from_spec(spec)
    assert schema is not None
    return schema


def _pools(seed: int = 1) -> LivePools:
    return LivePools(seed, _schema(), DEFAULT_WEIGHTS)


def _mutating(monkeypatch: pytest.MonkeyPatch, pools: LivePools, mutant: dict[str, Any]) -> None:
    """Every pooled action gets one field mutation, and that mutation gives `mutant`."""
    monkeypatch.setattr(live_fast, "FIELD_MUTATION", 1.0)
    monkeypatch.setattr(live_fast, "TYPE_REFRESH", 0.0)
    monkeypatch.setattr(pools.mutator, "mutate", lambda action, state: (mutant, "boundary number"))


def test_a_mutant_off_the_schema_is_never_dispatched_on_the_valid_lane(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pools = _pools()
    draws = PoolDraws(pools)
    ctx = ActionContext(profile=PROFILE)
    first = draws.action("session", SESSION, TITLE, ctx, "action")  # fills the type's pool
    bad = {"type": "session/titleChanged", "title": 2**60}  # not a string, beyond 2^53
    model = Model(PROFILE, check_payloads=True, schema=pools.schema)
    assert model.wire_problem("session", bad) is not None
    _mutating(monkeypatch, pools, bad)
    sent = [draws.action("session", SESSION, TITLE, ctx, "action") for _ in range(5)]
    assert all(a != bad for a in sent)
    assert all(model.wire_problem("session", a) is None for a in [first, *sent])
    assert pools.counts["mutantsOffLane"] == 5 and pools.counts["mutantsSent"] == 0


def test_a_mutant_the_schema_allows_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the test above: the same path sends a mutant that stays valid."""
    pools = _pools()
    draws = PoolDraws(pools)
    ctx = ActionContext(profile=PROFILE)
    draws.action("session", SESSION, TITLE, ctx, "action")
    good = {"type": "session/titleChanged", "title": "a boundary title"}
    _mutating(monkeypatch, pools, good)
    assert draws.action("session", SESSION, TITLE, ctx, "action") == good
    assert pools.counts["mutantsSent"] == 1 and pools.counts["mutantsOffLane"] == 0


def test_without_a_schema_no_mutant_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a schema check a mutated field may have the wrong type: only retargeted actions go."""
    pools = LivePools(1, None, DEFAULT_WEIGHTS)
    draws = PoolDraws(pools)
    ctx = ActionContext(profile=PROFILE)
    draws.action("session", SESSION, TITLE, ctx, "action")
    _mutating(monkeypatch, pools, {"type": "session/titleChanged", "title": "looks fine"})
    draws.action("session", SESSION, TITLE, ctx, "action")
    assert pools.counts["mutantsSent"] == 0 and pools.counts["mutantsOffLane"] == 1


def test_pooled_draws_are_deterministic_given_the_seed() -> None:
    def run(seed: int) -> list[Any]:
        draws = PoolDraws(LivePools(seed, None, DEFAULT_WEIGHTS))
        ctx = ActionContext(profile=PROFILE)
        return [
            (
                draws.pools.scenario(),
                draws.choice(["a", "b", "c"], "x"),
                draws.integer(0, 9, "n"),
                draws.action("session", SESSION, TITLE, ctx, "action"),
            )
            for _ in range(6)
        ]

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_pools_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_fast, "SLOT_MAX", 4)
    monkeypatch.setattr(live_fast, "TYPE_REFRESH", 1.0)  # a fill on every draw
    pools = LivePools(2, None, DEFAULT_WEIGHTS)
    draws = PoolDraws(pools)
    ctx = ActionContext(profile=PROFILE)
    for _ in range(4):
        draws.action("session", SESSION, TITLE, ctx, "action")
    assert [len(v) for v in pools.actions.values()] == [4]


@pytest.mark.live
@pytest.mark.parametrize("lane", ["fast", "hypothesis"])
def test_both_live_lanes_run_and_report_their_pace(lane: str) -> None:
    from harness.engine.control import RunControl
    from harness.live import LiveConfig, run_live_campaign

    events: list[Any] = []
    summary = run_live_campaign(
        LiveConfig(
            None,
            "host:embedded",
            seed=2,
            budget_s=120,
            control=RunControl(120),
            max_chunks=1,
            chunk_examples=1,
            max_steps=8,
            token_salt="lanes",
            request_timeout_s=60.0,
            lane=lane,
        ),
        EventBus(events.append),
    )
    assert summary.steps > 8 and summary.findings == []
    done = next(e for e in events if isinstance(e, RunFinished))
    speed = done.extra["liveSpeed"]
    assert speed["lane"] == lane == done.extra["lane"]
    assert speed["steps"] == summary.steps and speed["frames"] > summary.steps
    assert {"draw", "send", "settle", "checks", "other"} <= set(speed["phaseSeconds"])
    assert ("livePools" in done.extra) == (lane == "fast")


def test_an_unknown_live_lane_is_refused() -> None:
    from harness.live import LiveConfig, run_live_campaign

    with pytest.raises(ValueError, match="unknown lane"):
        run_live_campaign(
            LiveConfig(None, "host:embedded", max_chunks=1, lane="slow"), EventBus(lambda e: None)
        )


@pytest.mark.live
@pytest.mark.parametrize("defect", sorted(FOCUS))
def test_the_fast_lane_finds_every_protocol_defect_of_the_embedded_host(defect: str) -> None:
    """The default lane against the defect suite (the Hypothesis lane: test_live_defects.py, which
    also replays each finding on its host and on the clean one)."""
    from harness.live.focus import caught_by, run_focused

    result = run_focused(
        defect,
        seed=0,
        budget_s=120.0,
        max_chunks=4,
        shrink_budget_s=0.0,
        lane="fast",
        request_timeout_s=60.0,
    )  # a hang guard, not a speed claim
    assert any(f.invariant in caught_by(defect) for f in result.findings), (
        f"{defect}: not reported as one of {sorted(caught_by(defect))} in {result.steps} steps "
        f"(found: {[(f.invariant, f.message) for f in result.findings]})"
    )


def _draw_after(sent: list[dict[str, Any]], pooled: dict[str, Any], state: dict[str, Any]) -> tuple[Any, LivePools]:
    """The fast lane's session action after a run that dispatched `sent`, `pooled` the only
    action of its type's pool."""
    from types import SimpleNamespace

    t = pooled["type"]
    pools = LivePools(5, None, DEFAULT_WEIGHTS)
    pools.actions[("session", PROFILE.label, t)] = [pooled]
    draws = PoolDraws(pools)
    view = SimpleNamespace(dispatches=[SimpleNamespace(action=a) for a in sent])
    draws.run = SimpleNamespace(clients={0: SimpleNamespace(view=view)})  # type: ignore[assignment]
    return draws.action("session", state, [t], ActionContext(profile=PROFILE), "action"), pools


def test_a_pooled_action_repeating_an_id_the_run_sent_gets_a_fresh_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen in a 30-minute campaign: a pooled chat/turnStarted retargeted to the turn id the run had
    just started (two turns `fz-t21`) — a false INV-039. An action of a type the run sent already,
    naming the same id, is never sent again as it is: when the repeated id names nothing in the
    state its copy gets a fresh id (what a draw with another id would send, without the draw's
    cost); the control — a run that sent no such action — gets the pooled one."""
    monkeypatch.setattr(live_fast, "FIELD_MUTATION", 0.0)
    monkeypatch.setattr(live_fast, "TYPE_REFRESH", 0.0)
    t = "session/customizationToggled"
    pooled = {"type": t, "id": "cz3", "enabled": True}
    same, pools = _draw_after([{"type": "session/titleChanged", "title": "x"}], pooled, SESSION)
    assert same is pooled and pools.counts["retargetsOffLane"] == 0
    other, pools = _draw_after([pooled], pooled, SESSION)
    assert pools.counts["retargetsOffLane"] == 1 and pools.counts["idsRenamed"] == 1
    assert pools.counts["fresh"] == 0 and other["type"] == t and other["id"] != "cz3"
    assert {k: v for k, v in other.items() if k != "id"} == {k: v for k, v in pooled.items() if k != "id"}
    again, _ = _draw_after([pooled, other], pooled, SESSION)
    assert again["id"] not in ("cz3", other["id"])


def test_a_repeated_uri_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated directory URI is not renamed (a chat's directory must be one of its session's:
    a made-up one would turn a step into a rejection): the lane draws one for the state."""
    from harness.engine import mutation

    monkeypatch.setattr(mutation, "URI_RETARGET", 0.0)  # not named after one of the state's URIs instead
    monkeypatch.setattr(live_fast, "FIELD_MUTATION", 0.0)
    monkeypatch.setattr(live_fast, "TYPE_REFRESH", 0.0)
    pooled = {"type": "session/workingDirectorySet", "directory": "file:///repo-b"}
    other, pools = _draw_after([pooled], pooled, SESSION)
    assert pools.counts["retargetsOffLane"] == 1 and pools.counts["fresh"] == 1
    assert pools.counts["idsRenamed"] == 0 and other is not pooled


def test_a_repeated_id_that_names_something_in_the_state_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated id the state holds is a reference (or a collision): renaming it would change
    what the action means, so the lane draws one for this very state (Hypothesis), as before."""
    monkeypatch.setattr(live_fast, "FIELD_MUTATION", 0.0)
    monkeypatch.setattr(live_fast, "TYPE_REFRESH", 0.0)
    pooled = {"type": "session/customizationToggled", "id": "cz3", "enabled": True}
    state = {**SESSION, "customizations": [{"id": "cz3", "name": "c", "enabled": False}]}
    other, pools = _draw_after([pooled], pooled, state)
    assert pools.counts["retargetsOffLane"] == 1 and pools.counts["fresh"] == 1
    assert pools.counts["idsRenamed"] == 0 and other is not pooled
