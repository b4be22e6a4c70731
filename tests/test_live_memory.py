"""A live campaign's memory: the dead examples of a chunk are freed before the next chunk.

An example's objects (its `LiveRun`, clients, views, transcript, closed connections) are
reference cycles, so only the garbage collector frees them, and CPython's own schedule — with
the campaign's raised `gc_threshold` — let hundreds of MB of them pile up between two full
collections (bench/results/campaign.md, "Issue 25, memory"). `LiveConfig.collect_every` runs a
full collection between chunks. The collector's automatic schedule is switched off here, so
that only the campaign's own collections count (no test of how much memory a process holds).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from harness.engine.control import RunControl
from harness.engine.events import EventBus, Progress
from harness.live import LiveConfig, run_live_campaign
from harness.live.run import LiveRun

CHUNKS, EXAMPLES = 3, 2


@pytest.fixture
def no_automatic_collections() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def _runs_tracked_after_each_chunk(collect_every: int | None) -> list[int]:
    """How many more `LiveRun`s the collector tracks (alive or dead, not yet freed) at each
    chunk's `Progress` than before the campaign (earlier tests may keep runs of their own)."""
    counts: list[int] = []

    def tracked() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is LiveRun)

    before = tracked()

    def on(e: Any) -> None:
        if isinstance(e, Progress):
            counts.append(tracked() - before)

    summary = run_live_campaign(
        LiveConfig(
            None,
            "host:embedded",
            seed=3,
            budget_s=120,
            control=RunControl(120),
            max_chunks=CHUNKS,
            chunk_examples=EXAMPLES,
            max_steps=3,
            token_salt="memory",
            request_timeout_s=60.0,  # a hang guard, not a speed claim
            collect_every=collect_every,
        ),
        EventBus(on),
    )
    assert summary.findings == [] and summary.examples == CHUNKS * EXAMPLES
    return counts


@pytest.mark.live
@pytest.mark.usefixtures("no_automatic_collections")
def test_a_chunks_dead_examples_are_freed_before_the_next_chunk() -> None:
    counts = _runs_tracked_after_each_chunk(collect_every=1)
    assert len(counts) == CHUNKS
    # what is left: at most the runs whose clients wait in the connection pool
    assert max(counts) < EXAMPLES, counts


@pytest.mark.live
@pytest.mark.usefixtures("no_automatic_collections")
def test_without_the_collection_every_dead_example_stays() -> None:
    """The control: without `collect_every` (and no automatic collection) every example of the
    campaign is still in memory at the end — its objects are reference cycles. Should this fail,
    the examples no longer make cycles and `collect_every` may no longer be needed."""
    counts = _runs_tracked_after_each_chunk(collect_every=None)
    assert counts[-1] >= CHUNKS * EXAMPLES, counts
