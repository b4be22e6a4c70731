"""A fuzz run: chunks of Hypothesis state-machine runs until the budget is spent.

Each chunk runs `chunk_examples` machine runs under a seed derived from the run's seed and the
chunk number, so a run is reproducible given its seed and the number of chunks it completed
(and in a fixed-size run such as the pytest tier, fully deterministic). When a chunk finds a
failure, the campaign turns the trace into a `Finding`, minimises it with the trace shrinker
(bounded by `shrink_budget_s`), replays it once to confirm, hands it to the event stream (the
corpus writer saves it at once), suppresses that invariant for that state kind, and goes on.
The bookkeeping around a chunk that the fast lane (engine/fast.py) shares — seeds per chunk,
when the run ends, confirming and reporting a failure, dropping a kind or the target — lives in
engine/chunks.py.

Time and stopping (docs/howto.md, "Time limits and stopping"):

* the budget is a hard wall-clock limit (`RunControl`): the machine checks it before every step,
  the shrinker before every replay, and an adapter never waits past it (its per-step timeout is
  cut to the time left); a finding caught at the end is saved unshrunk rather than late;
* a heartbeat thread emits `Progress` every `heartbeat_s` whatever the target does;
* a signal (`RunControl.request_stop`) ends the run within a step: the finding being shrunk is
  kept as far as it got, and `RunFinished` says `status="interrupted"`;
* a kind whose target hung (`TARGET-TIMEOUT`), or on which the target cannot even open a
  session, is not fuzzed further in this run (a `Notice` says so): otherwise every later step of
  that kind would wait out its own timeout. A target that crashes is restarted on next use;
* a target that announces the kinds it implements (`kinds` in the adapter announcement) is
  fuzzed on those only.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from harness.causes import NOTE_ISSUES, Cause, Witnesses
from harness.corpus.finding import Finding
from harness.errors import RunStopped
from harness.invariants.base import Violation
from harness.invariants.registry import REGISTRY
from harness.reference import NO_STATE_EFFECT, Model, Profile
from harness.spec.versions import KINDS, kinds_of
from harness.targets.base import Target, TargetSetupError

from .arms import Bandit, arms_for, lane_profiles, lane_schema, lanes_for
from .chunks import (
    _GuardedTarget,
    _SessionFailed,
    chunk_seed,
    drop_hopeless,
    drop_kind,
    end_chunk,
    lane_arms,
    report_failure,
    retirement_notices,
    run_ends,
    target_unusable,
)
from .config import DEFAULT_KINDS, DEFAULT_LANE, LANES, RunConfig, RunSummary
from .control import RunControl
from .events import (
    CauseSeen,
    Event,
    EventBus,
    KnownSeen,
    Notice,
    Progress,
    RunFinished,
    RunStarted,
)
from .fast import run_fast
from .generation import pinned_constants
from .machine import FindingFailure, MachineConfig, Recorder, build_machine
from .probes import ProbeRations

__all__ = [
    "DEFAULT_KINDS", "DEFAULT_LANE", "LANES", "RunConfig", "RunSummary", "run_campaign",
]

def run_campaign(config: RunConfig, bus: EventBus) -> RunSummary:
    if config.lane not in LANES:
        raise ValueError(f"unknown lane {config.lane!r} (want one of {', '.join(LANES)})")
    for k in config.kinds:
        if k not in KINDS:
            raise ValueError(f"unknown state kind {k!r} (want one of {', '.join(KINDS)})")
    control = config.control or RunControl(config.budget_s)
    model = Model(config.profile, check_payloads=True, schema=config.schema)
    summary = RunSummary()
    seen_known: set[tuple[str, str]] = set()

    def emit(event: Event) -> None:
        with control.shielded():  # a signal never cuts a finding or a report in half
            bus.emit(event)

    newest = max(lane_profiles(config.target, target_is_model=config.target_is_model, profile=config.profile,
                               profiles=config.profiles), key=lambda p: p.version)
    kinds, skipped = _announced_kinds(_profile_kinds(config.kinds, newest), config.target)
    if not kinds:
        raise ValueError(
            f"the target implements none of the kinds asked for ({', '.join(config.kinds)}); "
            f"it announces: {', '.join(skipped) or 'none'}"
        )
    summary.kinds = kinds

    def on_known(v: Violation, kind: str) -> None:
        summary.known_counts[v.invariant] += 1
        key = (v.invariant, kind)
        first = key not in seen_known
        seen_known.add(key)
        if first:
            inv = REGISTRY.get(v.invariant)
            accepted = config.baseline.entry_for(v.message) if config.baseline is not None else None
            issue = (f"accepted by baseline entry {accepted.id}" if accepted is not None
                     else inv.known_issue if inv else NOTE_ISSUES.get(v.invariant))
            emit(KnownSeen(v.invariant, kind, v.message, issue, True))

    reported: dict[str, Finding] = {}  # cause id -> the finding reported for it (the first)

    def on_cause_seen(cause: Cause, witnesses: Witnesses, new: bool) -> None:
        finding = reported.get(cause.id)
        if finding is None or finding.cause is None:
            return
        finding.cause = {**finding.cause, "witnesses": witnesses.to_json()}
        if new:
            emit(CauseSeen(finding.signature, finding.cause))

    recorder = Recorder(on_known=on_known, on_step=config.step_hook, cause_cap=config.cause_cap,
                        on_cause_seen=on_cause_seen)
    recorder.retired.ramp = not config.target_is_model  # small actions first where a hang can cost
    retirement_notices(recorder, emit)
    guarded = _GuardedTarget(config.target)

    def progress() -> Progress:
        return Progress(
            control.elapsed(), recorder.examples, recorder.steps, len(summary.findings),
            sum(list(summary.known_counts.values())), summary.chunks,
        )

    emit(RunStarted(config.target_spec, config.profile.label, config.seed, config.budget_s, kinds))
    for line in config.notices:
        emit(Notice(line))
    if skipped:
        emit(Notice(f"the target announces kinds {', '.join(skipped)}: fuzzing {', '.join(kinds)} only"))
    heartbeat = _Heartbeat(config.heartbeat_s, lambda: bus.emit(progress()))
    database = DirectoryBasedExampleDatabase(str(config.database)) if config.database else None
    limited = hasattr(config.target, "run_limit")
    if limited:
        config.target.run_limit = control  # an adapter never waits past the deadline
    try:
        heartbeat.start()
        loop = run_fast if config.lane == "fast" else _campaign_loop
        loop(config, control, recorder, guarded, summary, kinds, model, database, emit, reported)
    except RunStopped as e:
        summary.stopped_because = e.reason
        summary.status = "interrupted" if e.interrupted else "finished"
    except BaseException as e:  # a bug of the harness: still leave a finished report behind
        control.hold()
        heartbeat.stop()
        summary.status = "error"
        _finish(config, control, recorder, summary, emit, error=f"{type(e).__name__}: {e}")
        raise
    finally:
        control.hold()  # a signal from here on is noted, not raised: the report is being finished
        heartbeat.stop()
        if limited:
            config.target.run_limit = None  # the target outlives the run (replays, next runs)
    _finish(config, control, recorder, summary, emit)
    return summary


def _campaign_loop(
    config: RunConfig,
    control: RunControl,
    recorder: Recorder,
    guarded: _GuardedTarget,
    summary: RunSummary,
    kinds: tuple[str, ...],
    model: Model,
    database: DirectoryBasedExampleDatabase | None,
    emit: Callable[[Event], None],
    reported: dict[str, Finding],
) -> None:
    active = list(kinds)
    lanes = lanes_for(
        guarded, target_is_model=config.target_is_model, profile=config.profile,
        profiles=config.profiles,
        make_model=lambda p: model if p == model.profile else Model(
            p, check_payloads=True, schema=lane_schema(config.schema, p, config.profile)),
    )
    bandit = Bandit(arms_for(kinds, lanes))  # time goes where new coverage still comes from
    # Rationed probes (a target other than the model): each check earns one run per
    # `probe_every` steps of the run, spent where it applies (engine/probes.py).
    rations = ProbeRations(config.probe_every) if config.probe_every > 1 else None
    while True:
        if control.should_stop():
            assert control.reason is not None
            raise RunStopped(control.reason)
        if run_ends(config, summary, active):
            return
        machine = build_machine(
            MachineConfig(
                model=model,
                target=guarded,
                target_is_model=config.target_is_model,
                kinds=tuple(active),
                recorder=recorder,
                adversarial_percent=config.adversarial_percent,
                probe_every=config.probe_every,
                control=control,
                baseline=config.baseline,
                lanes=lanes,
                arms=bandit.chunk_arms(lane_arms(arms_for(active, lanes), lanes)),
                rations=rations,
                schema=config.schema,
            )
        )
        ran, new_pairs = Counter(recorder.arm_examples), Counter(recorder.arm_new_pairs)
        run_settings = settings(
            max_examples=config.chunk_examples,
            stateful_step_count=config.max_steps,
            deadline=None,
            database=database,
            derandomize=False,
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            # Hypothesis finds; the trace shrinker (engine/shrink.py) minimises, bounded in time.
            phases=[Phase.reuse, Phase.generate] if database else [Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        recorder.failure = None
        try:
            with pinned_constants():  # the same seed draws the same steps in any process
                run_state_machine_as_test(
                    seed(chunk_seed(config.seed, summary.chunks))(machine), settings=run_settings
                )
        except (FindingFailure, Flaky) as raised:
            # The first failure, not what Hypothesis re-raises after replaying the example once
            # more: a target that hung or crashed need not fail the same way twice (Flaky).
            failure = getattr(recorder, "failure", None) or raised
            if not isinstance(failure, FindingFailure):
                raise
            report_failure(failure, config, control, recorder, summary, active, emit, reported)
        except _SessionFailed as e:
            drop_kind(e, active, emit)
        except TargetSetupError as e:
            target_unusable(e, summary, emit)
            return
        drop_hopeless(recorder, active, emit)
        end_chunk(bandit, recorder, ran, new_pairs, summary, control, emit)


def _finish(
    config: RunConfig,
    control: RunControl,
    recorder: Recorder,
    summary: RunSummary,
    emit: Callable[[Event], None],
    error: str | None = None,
) -> None:
    summary.elapsed_s = control.elapsed()
    summary.examples, summary.steps = recorder.examples, recorder.steps
    coverage = {t: {"sent": n, "changed": recorder.changed[t]} for t, n in sorted(recorder.sent.items())}
    extra: dict[str, Any] = {"chunks": summary.chunks, "seed": config.seed, "kindsFuzzed": list(summary.kinds),
                             "lane": config.lane, **summary.extra}
    if summary.target_unusable:
        extra["targetUnusable"] = summary.target_unusable
    # types the spec gives no state effect: "changed 0" is their right answer, not unreached
    extra["noStateEffect"] = sorted(NO_STATE_EFFECT & coverage.keys())
    finished = RunFinished(
        summary.elapsed_s, summary.examples, summary.steps, list(summary.findings),
        dict(summary.known_counts), coverage, summary.stopped_because, extra,
        status=summary.status, error=error,
    )
    with contextlib.suppress(RunStopped):  # a second signal while the report is written
        emit(finished)


def _profile_kinds(asked: tuple[str, ...], profile: Profile) -> tuple[str, ...]:
    """The default kinds are every channel kind the profile's version has (0.9.0 adds the
    automation channels, 1.0.0 the canvas) — the run passes its newest lane's profile, and each
    lane fuzzes the kinds its own version has (`arms_for`); kinds asked for by name are kept as asked."""
    if asked != DEFAULT_KINDS:
        return asked
    return asked + tuple(k for k in kinds_of(profile.version) if k not in asked)


def _announced_kinds(asked: tuple[str, ...], target: Target) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kinds to fuzz, kinds the target announces) — all asked when it announces none."""
    announced = getattr(target, "kinds", None)
    if not isinstance(announced, tuple):
        return asked, ()
    return tuple(k for k in asked if k in announced), announced


class _Heartbeat:
    """Calls `beat` every `every_s` seconds from a daemon thread until stopped."""

    def __init__(self, every_s: float, beat: Callable[[], None]) -> None:
        self._every = every_s
        self._beat = beat
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ahp-fuzz heartbeat", daemon=True)

    def start(self) -> None:
        if self._every > 0:
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self._beat()
            except Exception:  # a consumer failing must not kill the run from this thread
                continue

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5.0)


