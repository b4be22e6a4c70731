"""Defect detection proof: every protocol defect of the embedded host is reported by a seeded,
bounded live run, and its finding replays — it fails on the defective host and passes on the clean
one. Tiers `live` and `fuzz` (bounded: a focused scenario mix per defect, see focus.FOCUS)."""

from __future__ import annotations

import pytest

from harness.host.defects import DEFECTS
from harness.live.focus import FOCUS, caught_by, focused_spec, run_focused
from harness.live.replay import replay_live
from harness.targets.live import LiveTarget

pytestmark = [pytest.mark.live, pytest.mark.fuzz]

#: The file-surface defects (resource*) are command-level: the bridge's command fuzzing
#: (harness/bridge, CMD-CONFINEMENT and friends) reports them, not the action/state machine.
COMMAND_DEFECTS = sorted(d for d in DEFECTS if d.startswith("resource-"))


def test_every_protocol_defect_has_a_focus() -> None:
    assert set(FOCUS) == set(DEFECTS) - set(COMMAND_DEFECTS)


@pytest.mark.parametrize("defect", sorted(FOCUS))
def test_defect_is_reported_and_its_finding_replays(defect: str) -> None:
    # bounded by what is drawn (4 chunks of 3 machine runs; seed 0 finds each in the first), with
    # a wall-clock cap that only a badly overloaded machine would reach
    # the Hypothesis live lane: the fuzz tier's deterministic machine (the fast lane: test_live_fast.py)
    result = run_focused(defect, seed=0, budget_s=120.0, max_chunks=4, shrink_budget_s=2.0, lane="hypothesis",
                         request_timeout_s=60.0)  # a hang guard: a slow answer on a busy machine is no defect
    wanted = [f for f in result.findings if f.invariant in caught_by(defect)]
    assert wanted, (
        f"{defect}: not reported as one of {sorted(caught_by(defect))} in {result.steps} steps "
        f"(found: {[(f.invariant, f.message) for f in result.findings]})"
    )
    finding = wanted[0]
    bad = LiveTarget(focused_spec(defect, FOCUS[defect][1]))
    good = LiveTarget(focused_spec(None, FOCUS[defect][1]))
    try:
        # a host's behaviour may depend on its history (seq-repeat counts envelopes): 3 attempts
        # `death`: a host that dies (dies-on-null) is a TARGET-DIED finding only when its death is known
        assert replay_live(finding, bad.url, attempts=3, death=bad.death, request_timeout_s=60.0).reproduced, (
            f"{defect}: the finding does not replay on its host")
        assert not replay_live(finding, good.url, attempts=3, death=good.death, request_timeout_s=60.0).reproduced, (
            f"{defect}: it also fails on the clean host")
    finally:
        bad.close()
        good.close()
