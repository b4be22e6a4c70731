"""Measuring branch coverage of the reference model inside a campaign worker, cheaply.

Tracing a whole fuzz run with coverage.py roughly halves its step rate (the tracer sees every
call of Hypothesis, the strategies and the checks). The reducers are pure, so there is a cheaper
way to the same answer: record every `Model.reduce` call of the run (a reference to its inputs,
no copy) — and the other questions the engine asks the model, and the models it builds
(`RECORDED`) — and, between chunks, replay the batch under coverage. The same inputs take the
same branches, so the replayed coverage of the reducer modules is exactly the run's; only code
of `harness/reference` reached *outside* the `Model` (a profile's label, module import) is not
counted. `BranchSampler(mode="trace")` traces everything instead (the bench compares both).

The data file is combined with the other workers' by the parent at the end
(harness/report/coverage.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from harness.reference import payloads
from harness.reference.dispatch import Model
from harness.report.coverage import new_coverage, summary_of

_Call = tuple[str, Any, tuple[Any, ...], dict[str, Any]]

#: The `Model` methods a run calls: `reduce` for every step, and what the engine asks the model
#: besides — is this action one every implementation must accept (`wire_problem`, with its
#: `payload_problem` and `value_problem`), whose reducer owns it (`owner`). Their branches are
#: the model's judgement of malformed and out-of-profile actions: a replay of `reduce` alone left
#: them out.
RECORDED: Final = ("reduce", "wire_problem", "payload_problem", "value_problem", "owner", "__init__")

#: Memoized helpers the model calls (a table per protocol version): the run took their branches
#: once, before the first replay; the first replay in a process clears them so it takes them too.
MEMOS: Final[tuple[Any, ...]] = (payloads._required_for,)

#: Recorded calls a worker lets the recorder hold before it replays them (`flush_when_full`,
#: between steps): a batch holds the states and actions it names, which would otherwise die with
#: their examples — a reference worker's chunk recorded ≈ 6,000 calls holding 12–38 MB, whose
#: peaks pymalloc's arenas kept (bench/results/campaign.md "Issue 25, memory").
MAX_BATCH = 1_000


def clear_memos() -> None:
    for memo in MEMOS:
        memo.cache_clear()


class ReduceRecorder:
    """Records the `Model` calls of `RECORDED` process-wide while installed (class-level
    wrappers). A call made inside another recorded call (`wire_problem` asking
    `payload_problem`) is not recorded again: replaying the outer one makes it."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self._originals: dict[str, Callable[..., Any]] = {}
        self._depth = 0  # recorded calls in progress (0: the next one is an outermost call)
        self._replayed = False  # MEMOS are cleared before this process's first replay

    def install(self) -> None:
        if self._originals:
            return
        for name in RECORDED:
            original = self._originals[name] = getattr(Model, name)
            setattr(Model, name, self._wrapper(name, original))

    def _wrapper(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        calls = self.calls

        def recording(model: Any, *args: Any, **kwargs: Any) -> Any:
            if self._depth == 0:
                calls.append((name, model, args, kwargs))
            self._depth += 1
            try:
                return original(model, *args, **kwargs)
            finally:
                self._depth -= 1

        recording.__name__ = f"recording_{name}"
        return recording

    def uninstall(self) -> None:
        for name, original in self._originals.items():
            setattr(Model, name, original)
        self._originals = {}

    def replay(self) -> int:
        """Run the recorded calls again (under whatever tracer is active); returns how many."""
        originals = self._originals or {name: getattr(Model, name) for name in RECORDED}
        seen: set[tuple[Any, ...]] = set()
        batch, self.calls[:] = list(self.calls), []
        n = 0
        if not self._replayed:
            self._replayed = True
            clear_memos()
        self._depth += 1  # what the replayed calls call is not recorded again
        try:
            for name, model, args, kwargs in batch:
                if name == "__init__":  # a model built by the run: build one again
                    model = Model.__new__(Model)
                else:
                    key = (name, id(model), *(id(a) if isinstance(a, dict | list) else a for a in args))
                    if key in seen:
                        continue  # the probe checks call the reducer again with the very same inputs
                    seen.add(key)
                n += 1
                # MalformedAction and friends raise again: the same branches as in the run.
                with contextlib.suppress(Exception):
                    originals[name](model, *args, **kwargs)
        finally:
            self._depth -= 1
        return n


class BranchSampler:
    """Branch coverage of the reference model in this process.

    `mode="replay"` (default): record `Model.reduce` calls, replay them under coverage at each
    `flush()`. `mode="trace"`: trace everything between `start()` and `stop()`.
    """

    def __init__(self, data_file: Path | None = None, *, mode: str = "replay") -> None:
        if mode not in ("replay", "trace"):
            raise ValueError(f"unknown coverage mode {mode!r}")
        self.mode = mode
        self.cov = new_coverage(data_file)
        self.recorder = ReduceRecorder() if mode == "replay" else None
        self.running = False
        self.replayed = 0

    def start(self) -> None:
        if self.running:
            return
        self.running = True
        if self.recorder is not None:
            self.recorder.install()
        else:
            clear_memos()  # as a replay does: their branches are taken once more, traced
            self.cov.start()

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        if self.recorder is not None:
            self.recorder.uninstall()
            self.flush()
        else:
            self.cov.stop()

    def flush(self) -> None:
        """Replay what was recorded so far under coverage (replay mode; no-op when tracing)."""
        if self.recorder is None or not self.recorder.calls:
            return
        self.cov.start()
        try:
            self.replayed += self.recorder.replay()
        finally:
            self.cov.stop()

    def flush_when_full(self) -> None:
        """`flush()` once `MAX_BATCH` calls are recorded. Only between steps: a replay inside a
        `Model.reduce` call would be seen by whatever watches that call (the clock probe counts
        the reads of the reducers it runs: INV-002.clock)."""
        if self.recorder is not None and len(self.recorder.calls) >= MAX_BATCH:
            self.flush()

    def summary(self, *, with_files: bool = False) -> dict[str, Any]:
        self.flush()
        return summary_of(self.cov, with_files=with_files)

    def save(self) -> None:
        self.flush()
        self.cov.save()
