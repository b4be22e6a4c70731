"""A live campaign's memory: a chunk's dead examples are freed as they end.

A finished example's run is released (`LiveRun.release`): the references between the run, its
clients and their connections are cut, so reference counting frees its objects when the
example ends. Before, they were reference cycles that only the garbage collector freed, and
CPython's own schedule — with the campaign's raised `gc_threshold` — let hundreds of MB of them
pile up between two full collections (bench/results/campaign.md, "Issue 25, memory");
`LiveConfig.collect_every` (a full collection between chunks) is the net under what is left.
The collector's automatic schedule is switched off here, so that only what the campaign frees
counts (no test of how much memory a process holds).
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
def test_a_chunks_dead_examples_are_freed_as_they_end() -> None:
    counts = _runs_tracked_after_each_chunk(collect_every=None)
    assert len(counts) == CHUNKS
    # what is left: at most the runs whose clients wait in the connection pool
    assert max(counts) < EXAMPLES, counts


@pytest.mark.live
@pytest.mark.usefixtures("no_automatic_collections")
def test_without_release_every_dead_example_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: runs not released are reference cycles — without a collection every example
    of the campaign is still in memory at the end."""
    monkeypatch.setattr(LiveRun, "release", lambda self: None)
    counts = _runs_tracked_after_each_chunk(collect_every=None)
    assert counts[-1] >= CHUNKS * EXAMPLES, counts


@pytest.mark.live
@pytest.mark.usefixtures("no_automatic_collections")
def test_the_full_collection_between_chunks_frees_what_release_did_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The net (`collect_every`): with runs left as cycles, a full collection after every chunk
    frees the chunk's dead examples before the next."""
    monkeypatch.setattr(LiveRun, "release", lambda self: None)
    counts = _runs_tracked_after_each_chunk(collect_every=1)
    assert max(counts) < EXAMPLES, counts
