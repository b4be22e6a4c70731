"""The live fast lane (harness/live/fast.py): pooled choices, the valid-lane truth rule, the lanes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine.events import EventBus, RunFinished
from harness.live import fast as live_fast
from harness.live.fast import LivePools, PoolDraws
from harness.live.ops import DEFAULT_WEIGHTS
from harness.reference import Model, Profile
from harness.spec.action_schema import ActionSchema
from harness.spec.specdir import SpecDir
from strategies.actions import ActionContext

PROFILE = Profile.named("0.7.0")
SESSION = {"provider": "p", "title": "t", "status": 1, "createdAt": "2026-01-01T00:00:00.000Z",
           "modifiedAt": "2026-01-01T00:00:00.000Z", "workingDirectories": ["file:///repo-a"], "chats": []}
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


def test_a_mutant_off_the_schema_is_never_dispatched_on_the_valid_lane(monkeypatch: pytest.MonkeyPatch) -> None:
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
        return [(draws.pools.scenario(), draws.choice(["a", "b", "c"], "x"), draws.integer(0, 9, "n"),
                 draws.action("session", SESSION, TITLE, ctx, "action")) for _ in range(6)]

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
    summary = run_live_campaign(LiveConfig(None, "host:embedded", seed=2, budget_s=120, control=RunControl(120),
                                           max_chunks=1, chunk_examples=1, max_steps=8, token_salt="lanes",
                                           request_timeout_s=60.0, lane=lane), EventBus(events.append))
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
        run_live_campaign(LiveConfig(None, "host:embedded", max_chunks=1, lane="slow"), EventBus(lambda e: None))
