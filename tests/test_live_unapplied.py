"""A host that applies none of the client actions it accepts is one cause (issue 33): INV-H07's
findings are signed per action type only once some fresh snapshot of the campaign has shown an
accepted client action applied (`LiveObservation.applied_seen`); before that, every action never
applied is the host applying none — one finding, one id, whichever types a seed sends (the ahpx
mock: 4–5 INV-H07 findings per 90 s run, a different set per seed). Runs bounded by chunks."""

from __future__ import annotations

from typing import Any

import pytest

from harness.causes.live import UNAPPLIED_ANY, live_cause
from harness.engine.events import EventBus, FindingFound
from harness.invariants.base import Violation
from harness.live.config import LiveConfig
from harness.live.example import LiveExample
from harness.live.machine import run_live_campaign
from harness.live.signing import sign

pytestmark = [pytest.mark.live]

MSG = ("client 0: accepted but never applied: serverSeq 7 (session/titleChanged, client fz-0a1b2c3d-0's clientSeq 1) "
       "on ahp-session:/fz-0a1b2c3d-s1 was echoed as accepted and changes the state by the reference model, but the "
       "host's snapshot at serverSeq 7 does not show it")


def test_an_unapplied_type_is_its_own_cause_only_once_the_host_applied_some() -> None:
    v = Violation("INV-H07", "violation", MSG)
    assert sign(v, "a dispatch of session/titleChanged", {}, None, True) == live_cause("INV-H07", MSG, "x")
    assert sign(v, "a dispatch of session/titleChanged", {}, None, False) == UNAPPLIED_ANY


def _findings(spec: str, seed: int) -> list[Any]:
    found: list[Any] = []

    def sink(event: object) -> None:
        if isinstance(event, FindingFound):
            found.append(event.finding)

    cfg = LiveConfig(url=None, target_spec=spec, seed=seed, budget_s=600.0, max_chunks=6, chunk_examples=3,
                     shrink_budget_s=0.5, token_salt="unapplied", request_timeout_s=60.0,
                     weights={"action": 10, "server-only": 2})
    run_live_campaign(cfg, EventBus(sink))
    return found


@pytest.mark.parametrize("seed", [1, 2])
def test_a_host_that_applies_nothing_is_one_finding(seed: int) -> None:
    h07 = [f for f in _findings("host:embedded?defect=never-applies", seed) if f.invariant == "INV-H07"]
    assert len(h07) == 1, [f.message for f in h07]
    assert h07[0].cause["id"] == UNAPPLIED_ANY.id



def test_a_host_that_applies_is_seen_applying(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the clean embedded host a fresh snapshot shows an accepted action applied, so an action
    type a host does not apply stays a cause of its own there."""
    seen: list[bool] = []
    real = LiveExample.teardown

    def teardown(self: LiveExample) -> None:
        real(self)
        seen.append(self.rec.applied_seen)

    monkeypatch.setattr(LiveExample, "teardown", teardown)
    assert [f for f in _findings("host:embedded", 1) if f.invariant == "INV-H07"] == []
    assert seen and seen[-1] is True
    seen.clear()
    _findings("host:embedded?defect=never-applies", 1)
    assert seen and not any(seen)
