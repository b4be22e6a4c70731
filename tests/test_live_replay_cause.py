"""A live finding reproduces — in the shrinker's candidates and in the confirming replay — only
when its invariant fires with the same cause (issue 33: a shrink that kept only the invariant
traded the ahpx mock's INV-042 at `.activeSessions` for one at `.createdAt`, a behaviour of its
own, under the first one's id). Runs bounded by chunks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness.engine.events import EventBus, FindingFound
from harness.live.config import LiveConfig
from harness.live.machine import run_live_campaign
from harness.live.replay import replay_live
from harness.targets.live import LiveTarget

pytestmark = [pytest.mark.live]


def test_a_replay_whose_check_fires_with_another_cause_does_not_reproduce() -> None:
    found: list[Any] = []

    def sink(event: object) -> None:
        if isinstance(event, FindingFound):
            found.append(event.finding)

    cfg = LiveConfig(url=None, target_spec="host:embedded?defect=no-ping", seed=1, budget_s=600.0, max_chunks=1,
                     chunk_examples=2, shrink_budget_s=0.5, token_salt="replay-cause", request_timeout_s=60.0,
                     weights={"action": 5})
    run_live_campaign(cfg, EventBus(sink))
    finding = next(f for f in found if f.invariant == "INV-H01")
    other = replace(finding, cause={**finding.cause, "id": "0" * 12, "key": ["check", "INV-H01", "something else"]})
    host = LiveTarget("host:embedded?defect=no-ping")
    try:
        assert replay_live(finding, host.url, request_timeout_s=60.0).reproduced
        assert not replay_live(other, host.url, request_timeout_s=60.0).reproduced
        legacy = replace(finding, cause=None)  # a file written before causes: by its invariant
        assert replay_live(legacy, host.url, request_timeout_s=60.0).reproduced
    finally:
        host.close()
