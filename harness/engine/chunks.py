"""The bookkeeping both lanes share around a chunk (engine/run.py's Hypothesis loop and
engine/fast.py's fast lane).

* **Seeds per chunk**: `chunk_seed` derives a chunk's seed from the run's seed and the chunk
  number, so a run is reproducible given its seed and the number of chunks it completed.
* **When a run ends**: `run_ends` is asked before every chunk (the chunk limit, the finding
  limit, no kind left to fuzz); `end_chunk` closes a chunk (the bandit learns what its arms
  found, progress is emitted).
* **Confirming and reporting a failure**: `report_failure` turns a failure into a `Finding`
  (`_finding_from`, with the schema switches its verdict depends on, `_switches`), shrinks it,
  confirms it by one replay and emits it (`_confirm`), counted against its root cause.
* **Dropping a kind or a target**: the machines see the target through `_GuardedTarget`, so a
  kind on which the target cannot open a session fails at once (`_SessionFailed`) and is
  dropped (`drop_kind`), as is a kind the target hung on; a target that cannot be restarted
  ends the run (`target_unusable`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.causes import Witnesses, cause_json
from harness.corpus.finding import Finding
from harness.engine.replay import replay
from harness.errors import RunStopped
from harness.invariants.registry import REGISTRY
from harness.reference import Profile
from harness.spec.specdir import SpecDir, SpecDirError
from harness.spec.verdict import KEY as VERDICT_KEY
from harness.spec.verdict import VerdictSwitches, spec_version
from harness.targets.base import Target, TargetError, TargetSession, TargetSetupError

from .arms import Bandit, judged_by_folder, lane_schema
from .control import RunControl
from .events import Event, FindingFound, Notice, Progress, Shrinking
from .machine import FindingFailure, Recorder
from .retired import ENVELOPE_TEST, HOPELESS
from .shrink import TraceShrinker

if TYPE_CHECKING:
    from .config import RunConfig, RunSummary


def chunk_seed(run_seed: int, chunk: int) -> int:
    digest = hashlib.sha256(f"ahp-fuzz:{run_seed}:{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def run_ends(config: RunConfig, summary: RunSummary, active: list[str]) -> bool:
    """Whether the run ends before its next chunk (and why, in `summary.stopped_because`):
    either lane's loop asks this first."""
    if config.max_chunks is not None and summary.chunks >= config.max_chunks:
        summary.stopped_because = "chunks"
    elif config.max_findings is not None and len(summary.findings) >= config.max_findings:
        summary.stopped_because = "max findings"
    elif not active:
        summary.stopped_because = "no kind left to fuzz"
    else:
        return False
    return True


def end_chunk(bandit: Bandit, recorder: Recorder, ran: Counter[Any], new_pairs: Counter[Any],
              summary: RunSummary, control: RunControl, emit: Callable[[Event], None]) -> None:
    """A chunk's end in either lane: the bandit learns what its arms found, progress is emitted."""
    bandit.update(recorder.arm_examples - ran, recorder.arm_new_pairs - new_pairs)
    summary.chunks += 1
    summary.examples, summary.steps = recorder.examples, recorder.steps
    emit(Progress(control.elapsed(), recorder.examples, recorder.steps, len(summary.findings),
                  sum(summary.known_counts.values()), summary.chunks))


class _SessionFailed(Exception):
    def __init__(self, kind: str, error: TargetError, lane: str | None = None) -> None:
        super().__init__(f"{kind}: {error}")
        self.kind = kind
        self.error = error
        #: The profile of a lane other than the run's own (a version the target also announces):
        #: only that lane stops fuzzing the kind.
        self.lane = lane


class _GuardedTarget:
    """The target as the machines see it: a kind on which the target cannot open a session
    fails at once the next time (no second wait), so the campaign can drop that kind."""

    def __init__(self, target: Target, lane: str | None = None) -> None:
        self._target = target
        self.description = target.description
        self._failed: dict[str, TargetError] = {}
        self._lane = lane

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        return self._target.reduce(kind, state, action, now_ms)

    def session(self, kind: str, state: dict[str, Any]) -> TargetSession:
        if kind in self._failed:
            raise _SessionFailed(kind, self._failed[kind], self._lane)
        try:
            return self._target.session(kind, state)
        except TargetError as e:
            self._failed[kind] = e
            raise _SessionFailed(kind, e, self._lane) from e

    def refuses(self, kind: str) -> bool:
        """A session of `kind` could not be opened on this target (its lane skips the kind)."""
        return kind in self._failed

    def close(self) -> None:
        self._target.close()

    def for_profile(self, profile: Any) -> _GuardedTarget | None:
        """The target's lane for another profile, guarded the same way (a lane's session that
        cannot open fails as the first lane's does, never as an error of ours)."""
        maker = getattr(self._target, "for_profile", None)
        other = maker(profile) if callable(maker) else None
        return _GuardedTarget(other, lane=profile.label) if other is not None else None

    def __getattr__(self, name: str) -> Any:  # kinds, profiles, … of the target
        return getattr(self._target, name)


def drop_kind(e: _SessionFailed, active: list[str], emit: Callable[[Event], None]) -> None:
    """A kind on which the target cannot open a session is not fuzzed further in this run — in
    that lane only, when the lane is another version the target announces (`lane_arms`)."""
    if e.lane is not None:
        emit(Notice(f"the target's {e.lane} lane cannot open a {e.kind} session ({e.error}): "
                    f"not fuzzing {e.kind} in that lane further in this run"))
        return
    if e.kind in active:
        active.remove(e.kind)
    emit(Notice(f"the target cannot open a {e.kind} session ({e.error}): "
                f"not fuzzing {e.kind} further in this run"))


def lane_arms(arms: tuple[Any, ...], lanes: tuple[Any, ...]) -> tuple[Any, ...]:
    """`arms` but those of a lane whose target refused a session of the arm's kind (a group arm:
    of session or chat)."""
    def refused(arm: Any) -> bool:
        refuses = getattr(lanes[arm[1]].target, "refuses", None)
        if refuses is None:
            return False
        kinds = ("session", "chat") if arm[0] == "group" else (arm[0],)
        return any(refuses(k) for k in kinds)

    return tuple(a for a in arms if not refused(a))


def target_unusable(e: TargetSetupError, summary: RunSummary, emit: Callable[[Event], None]) -> None:
    summary.target_unusable = str(e)
    summary.stopped_because = "target unusable"
    emit(Notice(f"the target could not be restarted: {e}"))


def report_failure(
    failure: FindingFailure,
    config: RunConfig,
    control: RunControl,
    recorder: Recorder,
    summary: RunSummary,
    active: list[str],
    emit: Callable[[Event], None],
    reported: dict[str, Finding],
) -> None:
    """A failure of either lane: shrunk, confirmed and reported (`_confirm`), counted against its
    root cause (one finding per cause, not per invariant); a kind the target hung on is dropped."""
    finding = _confirm(failure, config, control, summary.chunks, emit, recorder)
    if failure.cause is not None:
        recorder.causes[failure.cause.id] += 1
        reported.setdefault(failure.cause.id, finding)
    summary.findings.append(finding)


def drop_hopeless(recorder: Recorder, active: list[str], emit: Callable[[Event], None]) -> None:
    """A kind the target hung on several times in a row, on different actions, with no answer
    between (it stopped answering): not fuzzed further (every step would wait out its timeout)."""
    for kind in recorder.retired.hopeless():
        if kind in active:
            active.remove(kind)
            emit(Notice(f"the target hung on {kind} {HOPELESS} times in a row on different actions, answering "
                        f"nothing between: not fuzzing {kind} further in this run"))


def retirement_notices(recorder: Recorder, emit: Callable[[Event], None]) -> None:
    """A target that hangs on an action: that action's value class — its type at its size and
    above — is not sent again in this run (engine/retired.py, retired where a step is judged);
    its kind goes on being fuzzed (a per-input timeout, as AFL and libFuzzer keep, never a
    retired kind). Each class retired is said once."""
    recorder.retired.on_retire = lambda kind, atype, size: emit(Notice(
        f"the target hung on {kind} ({atype}, {size} bytes of JSON): {atype} actions of {size} bytes "
        f"or more are not sent to {kind} again in this run; {kind} goes on being fuzzed"))
    recorder.retired.on_size = lambda size, classes: emit(Notice(
        f"the target hung on actions of {classes} types: taking size for the cause, no action of "
        f"{size} bytes of JSON or more is sent again in this run, whatever its type"))
    recorder.retired.on_envelope = lambda size, held: emit(Notice(
        f"the target hung on an action larger than any it answered: until a test says otherwise, no "
        f"action of {size} bytes of JSON or more is sent, whatever its type (one is tried every "
        f"{ENVELOPE_TEST} answered steps)" if held else
        f"the target answered or hung against its size: size is not the cause, the envelope of "
        f"{size} bytes is lifted for the rest of the run"))


def _confirm(
    failure: FindingFailure,
    config: RunConfig,
    control: RunControl,
    chunk: int,
    emit: Callable[[Event], None],
    recorder: Recorder | None = None,
) -> Finding:
    """Shrink, confirm by one replay, and emit the finding. A stop meanwhile (budget, signal)
    keeps the trace as far as it was shrunk and skips the confirming replay; the finding is
    emitted all the same, and the stop is raised after that. The shrinker and the confirming
    replay judge a candidate by the finding's invariant *and* its cause (engine/replay.py), so
    the shrunk trace shows the very cause that was reported."""
    found = _finding_from(failure, config, chunk, recorder)
    found.extra["exposure"] = exposure(control, recorder.steps if recorder is not None else None, chunk)
    emit(Shrinking(found.invariant, found.kind, len(found.steps)))
    time_left = control.time_left()
    lane_target = failure.trace.target or config.target  # the profile lane that found it
    schema = lane_schema(config.schema, Profile.named(found.profile), config.profile)
    retired = recorder.retired if recorder is not None else None  # the run's classes (engine/replay.py)
    shrinker = TraceShrinker(
        lane_target,
        target_is_model=config.target_is_model,
        budget_s=config.shrink_budget_s if time_left is None else min(config.shrink_budget_s, time_left),
        should_stop=control.should_stop,
        schema=schema,
        baseline=config.baseline,
        retired=retired,
    )
    finding = shrinker.shrink(found)  # the candidates keep found.cause (engine/replay.py)
    finding.extra["shrink"] = {
        "stepsFound": len(found.steps), "stepsShrunk": len(finding.steps), "replays": shrinker.attempts,
    }
    if shrinker.stopped is not None:
        finding.extra["shrink"]["cutShort"] = shrinker.stopped
    reproduced = shrinker.reproduced
    if shrinker.settled:
        pass  # the shrink's last replay was of this very trace, and it reproduced (a hang)
    elif control.should_stop():
        finding.extra["confirmed"] = False  # no time left for the confirming replay
    else:
        try:
            confirmed = replay(
                finding, lane_target, target_is_model=config.target_is_model,
                schema=schema, baseline=config.baseline,
                retired=retired,
            )
            reproduced = confirmed.reproduced
            if confirmed.cause is not None and finding.cause is not None:
                finding.cause = {**finding.cause, "summary": confirmed.cause.summary}  # the shrunk step's words
        except RunStopped:
            finding.extra["confirmed"] = False
    if not reproduced:
        finding.extra["flaky"] = True
    if recorder is not None and failure.cause is not None and finding.cause is not None:
        w = recorder.witnesses.get(failure.cause.id)
        if w is not None:
            finding.cause = {**finding.cause, "witnesses": w.to_json()}
    emit(FindingFound(finding, reproduced))
    return finding


def exposure(control: RunControl, steps: int | None, chunk: int) -> dict[str, Any]:
    """When a finding was first witnessed (Magma's time to exposure): the run's clock and its
    step count at the failing step, before any shrinking or replay — `report.json` and the
    finding file carry it (`bench/recall/` reads it)."""
    return {"seconds": round(control.elapsed(), 3), "steps": steps, "chunk": chunk}


def _finding_from(failure: FindingFailure, config: RunConfig, chunk: int, recorder: Recorder | None = None) -> Finding:
    v = failure.violation
    trace = failure.trace
    inv = REGISTRY.get(v.invariant)
    cause = None
    if failure.cause is not None:
        w = recorder.witnesses.get(failure.cause.id) if recorder is not None else None
        cause = cause_json(failure.cause, w or Witnesses())
        n = recorder.causes[failure.cause.id] + 1 if recorder is not None else 1
        if n > 1:
            cause["instance"] = n
    lane = Profile.named(trace.profile) if trace.profile else None
    return Finding(
        invariant=v.invariant,
        severity=v.severity,
        title=inv.title if inv else v.invariant.replace("-", " ").lower(),
        message=v.message,
        profile=trace.profile or config.profile.label,
        target=config.target_spec,
        kind=trace.kind,
        initial=trace.initial,
        steps=list(trace.steps),
        failing_step=len(trace.steps) - 1,
        expected=failure.result.expected,
        observed=failure.result.observed if failure.result.observed is not None else failure.result.error,
        known_issue=inv.known_issue if inv else None,
        seed=config.seed,
        extra={"chunk": chunk, "lane": config.lane, **trace.extra, VERDICT_KEY: _switches(config, lane).to_json(),
               **({"baseline": config.baseline.provenance()} if config.baseline is not None else {})},
        cause=cause,
    )


def _switches(config: RunConfig, lane: Profile | None = None) -> VerdictSwitches:
    """What a finding's verdict depends on besides its trace (replay uses exactly this). A
    finding of a lane of another version than the run's was judged without the folder's
    action schema (`arms.lane_schema`): its payload switch is off."""
    if config.verdict is not None:  # the command line's switches: those of the run's own profile
        if lane is not None and not judged_by_folder(lane, config.profile):
            return VerdictSwitches(None, config.verdict.published_schema)
        return config.verdict
    try:
        spec = SpecDir.from_env()
    except SpecDirError:
        spec = None
    published = spec_version(spec) if spec is not None and spec.schema_path("state").is_file() else None
    # A payload schema of unknown version is recorded as off: every valid-lane step of the trace
    # passed it, so a replay without it classifies the steps the same way.
    payload = published if lane_schema(config.schema, lane or config.profile, config.profile) is not None else None
    return VerdictSwitches(payload, published)
