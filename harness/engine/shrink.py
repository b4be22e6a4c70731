"""Trace shrinking: minimise a failing trace by replaying candidate traces.

Hypothesis finds the failure (generation, coverage events, targeting); this module makes it
small. It works on the recorded JSON trace, so it behaves the same on every target and costs
only replays (no strategy construction), and it is bounded by a time budget and an attempt cap,
so a long run never stalls in a shrink. A candidate is kept when it still shows the finding
(engine/replay.py): its invariant fires as a failing violation — not `known`: a difference the
target's baseline accepts or a listed upstream issue never stands in for the finding — as a
witness of the finding's root cause (`Finding.cause`); no more steps are malformed than before,
and no valid-lane step is schema-invalid.

A hang (TARGET-TIMEOUT) is first tried as its last action alone: each reproducing replay of a
hang costs the whole timeout.

Passes, repeated until none makes progress:
1. drop everything after the failing step;
2. delete runs of steps (ddmin: halves, quarters, … single steps);
3. delete list items and optional keys of the initial state (required keys, and keys of
   objects whose shape is not listed in `harness.spec.shapes`, are kept, so the state stays
   loadable by typed decoders), then keys and list items of each action (largest first; the
   reference model rejecting a smaller action as malformed rejects the candidate).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from harness.corpus.baseline import Baseline
from harness.corpus.finding import Finding, TraceStep
from harness.engine.replay import ReplayResult, replay
from harness.engine.retired import ValueClasses
from harness.engine.stepper import TARGET_TIMEOUT
from harness.errors import RunStopped
from harness.reference import Model, Profile
from harness.spec.shapes import ACTIVE_TURN_REQUIRED, STATE_REQUIRED, TURN_REQUIRED
from harness.targets.base import Target


class TraceShrinker:
    def __init__(
        self,
        target: Target,
        *,
        target_is_model: bool,
        budget_s: float = 10.0,
        max_attempts: int = 2_000,
        should_stop: Callable[[], bool] | None = None,
        schema: Callable[[Any], str | None] | None = None,
        baseline: Baseline | None = None,
        retired: ValueClasses | None = None,
    ):
        self.retired = retired  # the run's: its probe checks skip what the run skips (engine/replay.py)
        self.schema = schema  # a candidate is replayed with the same payload checks as the run
        self._models: dict[str, Model] = {}
        self.baseline = baseline
        self.target = target
        self.target_is_model = target_is_model
        self.budget_s = budget_s
        self.max_attempts = max_attempts
        self.should_stop = should_stop
        self.attempts = 0
        self.reproduced = False  # the trace as found failed again at least once
        self.stopped: str | None = None  # why a RunStopped cut the shrink short, if one did
        #: The shrunk trace was itself replayed and reproduced last (a hang shrunk to its action):
        #: no confirming replay is needed.
        self.settled = False
        self._deadline = 0.0
        self._best: Finding | None = None  # the smallest reproducing trace so far

    def _out_of_budget(self) -> bool:
        if self.stopped is not None or (self.should_stop is not None and self.should_stop()):
            return True
        return self.attempts >= self.max_attempts or time.monotonic() >= self._deadline

    def _check(self, candidate: Finding, malformed_limit: int) -> ReplayResult | None:
        self.attempts += 1
        if self._schema_invalid(candidate):
            return None  # the valid lane stays schema-valid, before and after shrinking
        try:
            result = replay(
                candidate, self.target, target_is_model=self.target_is_model,
                schema=self.schema, baseline=self.baseline, retired=self.retired,
            )
        except (ValueError, KeyError, TypeError):
            return None
        if not result.reproduced or result.malformed > malformed_limit:
            return None
        return result

    def _schema_invalid(self, candidate: Finding) -> bool:
        """A valid-lane step of `candidate` whose payload the model (with the run's schema)
        refuses: the candidate is rejected without a replay."""
        model = self._models.get(candidate.profile)
        if model is None:
            model = self._models[candidate.profile] = Model(
                Profile.named(candidate.profile), check_payloads=True, schema=self.schema
            )
        return any(
            not s.probe and model.payload_problem(candidate.kind, s.action) is not None
            for s in candidate.steps
        )

    def shrink(self, finding: Finding) -> Finding:
        """The smallest trace found within the budget. The run ending meanwhile (`RunStopped`:
        budget spent, a signal) ends the shrink with the best trace so far, never loses it."""
        self._deadline = time.monotonic() + self.budget_s
        try:
            return self._shrink(finding)
        except RunStopped as e:
            self.stopped = e.reason
            return self._best if self._best is not None else finding

    def _shrink(self, finding: Finding) -> Finding:
        self._best = None
        if _hung(finding) and len(finding.steps) > 1:
            # Every replay that reproduces a hang costs the target's whole timeout: first the
            # action that hung alone, from the trace's initial state. When it hangs so, that one
            # replay is the shrink and the confirmation (`settled`), not the three or four
            # timeouts the passes below and a confirming replay would cost.
            alone = replace(finding, steps=[finding.steps[-1]])
            hung = self._check(alone, len(finding.steps))
            if hung is not None and hung.step is not None:
                self.reproduced = self.settled = True
                self._best = _cut(alone, hung)
                return self._best
        base = self._check(finding, len(finding.steps))
        if base is None or base.step is None:
            return finding  # does not reproduce: leave it as found (marked flaky by the caller)
        self.reproduced = True
        best = self._best = _cut(finding, base)
        limit = base.malformed
        progress = True
        while progress and not self._out_of_budget():
            progress = False
            for candidate in self._candidates(best):
                if self._out_of_budget():
                    break
                result = self._check(candidate, limit)
                if result is not None and result.step is not None:
                    best = self._best = _cut(candidate, result)
                    limit = min(limit, result.malformed)
                    progress = True
                    break
        return best

    def _candidates(self, f: Finding) -> Iterator[Finding]:
        yield from _step_deletions(f)
        for path, smaller in _smaller_values(f.initial, removable=_state_key_rule(f.kind)):
            yield replace(f, initial=smaller, extra={**f.extra, "_shrunk": path})
        for i, step in enumerate(f.steps):
            if not isinstance(step.action, dict):
                continue
            for _, smaller in _smaller_values(step.action):
                steps = list(f.steps)
                steps[i] = TraceStep(smaller, step.now_ms, step.probe, step.context)
                yield replace(f, steps=steps)


def _hung(f: Finding) -> bool:
    """The finding is a hang: TARGET-TIMEOUT itself, or a check whose call to the target hung
    (its cause is the hang's)."""
    key = f.cause.get("key") if isinstance(f.cause, dict) else None
    return f.invariant == TARGET_TIMEOUT or (isinstance(key, list) and key[:2] == ["failure", TARGET_TIMEOUT])


def _cut(f: Finding, result: ReplayResult) -> Finding:
    """Drop the steps after the one where the invariant fired; record expected/observed there."""
    assert result.step is not None
    extra = {k: v for k, v in f.extra.items() if k != "_shrunk"}
    return replace(
        f,
        steps=f.steps[: result.step + 1],
        failing_step=result.step,
        expected=result.expected,
        observed=result.observed,
        message=result.message or f.message,
        extra=extra,
    )


def _step_deletions(f: Finding) -> Iterator[Finding]:
    n = len(f.steps)
    size = n // 2
    while size >= 1:
        for start in range(0, n - size + 1, size):
            # never delete the failing (last) step itself
            if start + size >= n:
                continue
            yield replace(f, steps=f.steps[:start] + f.steps[start + size :])
        size //= 2


KeyRule = Callable[[str, str], bool]  # (path of the dict, key) -> may the key be deleted?


def _state_key_rule(kind: str) -> KeyRule:
    top = STATE_REQUIRED.get(kind, frozenset())

    def removable(path: str, key: str) -> bool:
        if path == "":
            return key not in top
        if path == ".activeTurn":
            return key not in ACTIVE_TURN_REQUIRED
        if _TURN_PATH.fullmatch(path):
            return key not in TURN_REQUIRED
        return False

    return removable


def _action_key_rule(path: str, key: str) -> bool:
    return not (path == "" and key == "type")


_TURN_PATH = re.compile(r"\.turns\[\d+\]")


def _smaller_values(value: Any, removable: KeyRule = _action_key_rule) -> Iterator[tuple[str, Any]]:
    """Copies of `value` each with one dict key or one list item removed, biggest first."""
    options: list[tuple[int, str, Callable[[], Any]]] = []

    def walk(v: Any, path: str, rebuild: Callable[[Any], Any]) -> None:
        if isinstance(v, dict):
            for k in v:
                if removable(path, k):
                    options.append(
                        (
                            len(repr(v[k])),
                            f"{path}.{k}",
                            lambda v=v, k=k, rebuild=rebuild: rebuild({x: y for x, y in v.items() if x != k}),
                        )
                    )
                walk(v[k], f"{path}.{k}", lambda new, v=v, k=k, rebuild=rebuild: rebuild({**v, k: new}))
        elif isinstance(v, list):
            for i, item in enumerate(v):
                size = len(repr(item))
                options.append(
                    (size, f"{path}[{i}]", lambda v=v, i=i, rebuild=rebuild: rebuild(v[:i] + v[i + 1 :]))
                )
                walk(item, f"{path}[{i}]", lambda new, v=v, i=i, rebuild=rebuild: rebuild([*v[:i], new, *v[i + 1 :]]))

    walk(value, "", lambda new: new)
    options.sort(key=lambda o: -o[0])
    for _, path, make in options:
        yield path, make()
