"""The run's budget and stop flag (harness/engine/control.py) driven by an injected clock.

A budget is tested here by the mechanism, never by how fast the machine is: the clock is a
counter that only moves when the test (or a simulated slow target) moves it, so the assertions
hold on an idle laptop and on a CI machine at load 9 alike.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine.control import RunControl, RunStopped
from harness.engine.events import EventBus
from harness.engine.run import RunConfig, run_campaign
from harness.reference import Profile
from harness.targets.reference import ReferenceSession, ReferenceTarget


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_budget_expires_on_the_injected_clock_only() -> None:
    clock = FakeClock()
    control = RunControl(10.0, clock=clock)
    assert control.elapsed() == 0.0 and control.time_left() == 10.0
    assert not control.should_stop()
    clock.advance(9.5)
    assert control.time_left() == pytest.approx(0.5) and not control.expired()
    control.check()  # nothing raised before the deadline
    clock.advance(0.5)
    assert control.expired() and control.time_left() == 0.0
    with pytest.raises(RunStopped, match="budget"):
        control.check()
    assert control.reason == "budget" and control.elapsed() == pytest.approx(10.0)


def test_no_budget_never_expires_and_a_signal_overrides_the_budget() -> None:
    clock = FakeClock()
    unlimited = RunControl(None, clock=clock)
    clock.advance(1e9)
    assert unlimited.time_left() is None and not unlimited.should_stop()
    control = RunControl(1.0, clock=clock)
    clock.advance(5)
    assert control.should_stop() and control.reason == "budget"
    with pytest.raises(RunStopped, match="SIGTERM"):
        control.request_stop("SIGTERM")  # the signal is why the run ends, not the budget
    assert control.reason == "SIGTERM"


def test_a_stop_inside_a_shielded_block_is_raised_when_it_ends() -> None:
    control = RunControl(None, clock=FakeClock())
    with pytest.raises(RunStopped, match="SIGINT"), control.shielded():
        control.request_stop("SIGINT")  # recorded, not raised here
        finished_the_block = True
    assert finished_the_block


class _SlowSession(ReferenceSession):
    def __init__(self, target: _SlowTarget, kind: str, state: Any) -> None:
        super().__init__(target, kind, state)
        self._slow = target

    def step(self, action: Any, now_ms: int) -> Any:
        self._slow.calls += 1
        self._slow.clock.advance(self._slow.latency_s)
        return super().step(action, now_ms)


class _SlowTarget(ReferenceTarget):
    """The reference model, each call costing `latency_s` on the fake clock (a slow adapter
    without the wait)."""

    def __init__(self, profile: Profile, clock: FakeClock, latency_s: float) -> None:
        super().__init__(profile)
        self.clock, self.latency_s, self.calls = clock, latency_s, 0

    def reduce(self, kind: str, state: Any, action: Any, now_ms: int) -> Any:
        self.calls += 1
        self.clock.advance(self.latency_s)
        return super().reduce(kind, state, action, now_ms)

    def session(self, kind: str, state: Any) -> _SlowSession:
        return _SlowSession(self, kind, state)


def test_a_slow_target_ends_the_run_on_the_budget_not_on_a_chunk() -> None:
    """50 ms per call and a 4 s budget: a chunk (25 sequences × 40 steps) would take ~50 s of
    the target's time. The run stops on the budget after at most 4 / 0.05 calls plus those of
    the step in flight (its probes: at most a few dozen), inside its first chunk — whatever the
    machine's real speed."""
    profile = Profile.named("0.7.0")
    clock = FakeClock()
    target = _SlowTarget(profile, clock, latency_s=0.05)
    control = RunControl(4.0, clock=clock)
    config = RunConfig(target=target, target_spec="slow", target_is_model=False, profile=profile, seed=1,
                       budget_s=4.0, kinds=("chat",), control=control, heartbeat_s=3600.0)
    summary = run_campaign(config, EventBus())
    assert summary.stopped_because == "budget" and summary.status == "finished"
    assert 0 < target.calls <= 4 / 0.05 + 40
    assert summary.chunks == 0 and summary.steps < config.chunk_examples * config.max_steps
    assert summary.elapsed_s >= 4.0  # measured on the run's clock
