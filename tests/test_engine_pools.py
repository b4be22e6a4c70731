"""Pools filled while stepping (harness/engine/pools.py): an arm's adversarial pool is drawn when
a step first needs one of its actions, not before the arm's first step, and holds exactly what
an eager fill under the same seed draws."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st

from harness.engine import fast
from harness.engine.machine import Recorder
from harness.engine.pools import Deferred
from harness.engine.run import RunConfig
from harness.reference import Profile
from harness.targets.reference import ReferenceTarget

P = Profile.named("0.7.0")


def test_deferred_draws_once_on_first_use_only() -> None:
    calls: list[int] = []

    def make() -> list[Any]:
        calls.append(1)
        return [1, 2, 3]

    d = Deferred(make)
    assert not calls and not d.drawn
    assert len(d) == 3 and d[1] == 2 and list(d) == [1, 2, 3] and bool(d) and d[:2] == [1, 2]
    assert calls == [1] and d.drawn


def test_deferred_fill_draws_what_an_eager_fill_draws() -> None:
    strategy = st.lists(st.integers(), min_size=1)
    assert list(fast._deferred_fill(strategy, 5, 11)) == fast.fill(strategy, 5, 11)


def _lane_and_fast(adversarial: int = 10) -> tuple[Any, fast.FastLane]:
    target = ReferenceTarget(P)
    config = RunConfig(target=target, target_spec="reference", target_is_model=True, profile=P, seed=3,
                       budget_s=None, max_chunks=1, chunk_examples=4, kinds=("chat",), heartbeat_s=0,
                       lane="fast", profiles=(P,), adversarial_percent=adversarial)
    lane = fast.Lane(P, fast.Model(P, check_payloads=True), target)
    lane_runner = fast.FastLane(config=config, lanes=(lane,), recorder=Recorder(), on_failure=lambda f: None,
                                run_seed=3)
    return lane, lane_runner


def test_an_arms_first_fill_leaves_its_adversarial_pool_to_the_first_step_that_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, runner = _lane_and_fast()
    pool = fast.ArmPool()
    runner._fill(("chat", 0), pool)
    adversarial = pool.adversarial["chat"]
    assert isinstance(adversarial, Deferred) and not adversarial.drawn  # the first step is not kept waiting
    # An eager fill (as before) under the same run seed: the same actions, the PRNG where it was.
    monkeypatch.setattr(fast, "_deferred_fill", fast.fill)
    _, eager = _lane_and_fast()
    eager_pool = fast.ArmPool()
    eager._fill(("chat", 0), eager_pool)
    assert isinstance(eager_pool.adversarial["chat"], list)
    assert list(adversarial) == eager_pool.adversarial["chat"]
    assert runner.rng.getstate() == eager.rng.getstate()


def test_adversarial_actions_are_drawn_when_a_step_sends_one() -> None:
    _, runner = _lane_and_fast(adversarial=100)  # every step an adversarial action
    runner.run_arm(("chat", 0))
    pool = runner.pools[("chat", 0)]
    assert pool.adversarial["chat"].drawn  # type: ignore[attr-defined]
    assert runner.rec.examples == 1 and runner.rec.steps > 0


def test_without_adversarial_steps_the_pool_is_never_drawn() -> None:
    _, runner = _lane_and_fast(adversarial=0)
    runner.run_arm(("chat", 0))
    assert "chat" not in runner.pools[("chat", 0)].adversarial


def test_a_later_fill_draws_some_adversarial_actions_anew_once_they_were_used() -> None:
    # issue 32: an arm's adversarial actions were drawn once, 12 for the whole run, so a tactic
    # that did not come out in them (a list item of the wrong type) was never sent.
    _, runner = _lane_and_fast()
    pool = fast.ArmPool()
    runner._fill(("chat", 0), pool)
    first = pool.adversarial["chat"]
    runner._fill(("chat", 0), pool)
    assert pool.adversarial["chat"] is first  # never used: nothing to roll, nothing drawn
    before = list(first)
    runner._fill(("chat", 0), pool)
    rolled = pool.adversarial["chat"]
    assert isinstance(rolled, Deferred) and not rolled.drawn  # drawn when a step needs one
    after = list(rolled)
    assert len(after) == len(before) == fast.ADVERSARIAL_FILL
    kept = sum(a is b for a, b in zip(before, after, strict=True))
    assert kept >= fast.ADVERSARIAL_FILL - fast.ADVERSARIAL_ROLL  # the rest stay
    assert kept < fast.ADVERSARIAL_FILL  # new draws took their slots
