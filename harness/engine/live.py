"""The live machine and the live campaign: fuzz a running AHP host over the wire.

The Hypothesis machine stays synchronous: all connections of a run live on one asyncio event loop
(`EventLoopThread`) that every rule drives inline, in its own thread, with a bounded timeout
(`LiveRun.apply`); for `host:embedded` the campaign serves the host on that same loop. One machine run =
fresh client connections (`DEFAULT_CLIENTS`: two that negotiated collections with different
delivery latencies, one that did not, one that speaks only 0.6.0), two new sessions everyone
subscribes to, then steps drawn from the weighted scenarios of `live_ops`. After every op the
run settles (ping barrier on every connection, bounded wait for pending echoes, new chats
followed), fresh snapshots are taken, and every live check runs. A violation ends the machine
run; the campaign turns the run's ops and conversation into a live finding, shrinks it (ddmin
over ops, bounded), replays it once, and goes on with that invariant suppressed.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, event, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from harness.errors import RunStopped
from harness.invariants.base import Violation
from harness.invariants.registry import REGISTRY
from harness.targets.live import is_live_spec, parse_live_spec, serve_embedded_in_loop

from .campaign import RunConfig, RunSummary
from .control import RunControl
from .events import EventBus, FindingFound, KnownSeen, Progress, RunFinished, RunStarted, Shrinking
from .live_ops import DEFAULT_WEIGHTS, SCENARIOS, session_ops, setup_ops
from .live_replay import LIVE_KIND, REPLAY_ATTEMPTS, LiveShrinker, finding_from_run, replay_live
from .live_run import DEFAULT_CLIENTS, DEFAULT_SKIP, ClientSpec, EventLoopThread, LiveRun


@dataclass
class LiveConfig:
    #: The host to fuzz. None: the embedded host `target_spec` names, served on the campaign's
    #: own loop (what `host_in_loop` does for an embedded spelling in any case).
    url: str | None
    target_spec: str
    profile: str = "0.7.0"
    seed: int = 0
    budget_s: float | None = 60.0
    max_chunks: int | None = None
    chunk_examples: int = 10
    #: Steps (scenario draws) per machine run, after its setup (connect, two sessions).
    max_steps: int = 40
    sessions: int = 2
    clients: tuple[ClientSpec, ...] = DEFAULT_CLIENTS
    weights: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    snapshot_every: int = 1
    request_timeout_s: float = 5.0
    skip: frozenset[str] = DEFAULT_SKIP
    max_findings: int | None = None
    #: Stop as soon as a finding of one of these invariants is recorded (focused runs).
    stop_on: frozenset[str] = frozenset()
    shrink_budget_s: float = 10.0
    database: Path | None = None
    control: RunControl | None = None
    #: Run tokens (the `fz-<token>-` namespace of URIs and client ids) derive from the seed and this
    #: salt; None: a random salt per campaign, so that runs against a long-lived host never collide.
    #: A fixed salt against a fresh host makes a run repeatable (the embedded agent's answers are
    #: seeded by chat URI).
    token_salt: str | None = None
    #: Run the event loop on a background thread (the old mode, kept as the bench baseline);
    #: default: inline in the calling thread (`EventLoopThread`).
    threaded_loop: bool = False
    #: For `host:embedded…`: serve a host of the same spelling (defects, options) on the campaign's
    #: own event loop and fuzz that one (host and clients in one thread); False: fuzz `url`.
    host_in_loop: bool = True


class LiveFindingFailure(AssertionError):
    def __init__(self, violation: Violation, run: LiveRun) -> None:
        super().__init__(f"{violation.invariant} [{violation.severity}] {violation.message}")
        self.violation = violation
        self.run = run


@dataclass
class LiveRecorder:
    suppressed: set[str] = field(default_factory=set)
    on_known: Callable[[Violation], None] = lambda v: None
    examples: int = 0
    steps: int = 0
    scenarios: Counter[str] = field(default_factory=Counter)
    #: The first failure of the current chunk (Hypothesis may re-run the example; the first
    #: failing run's trace is the one kept).
    failure: LiveFindingFailure | None = None
    made: int = 0  # machine runs started (tokens are numbered by it)
    salt: str = field(default_factory=lambda: uuid.uuid4().hex)


def build_live_machine(cfg: LiveConfig, rec: LiveRecorder, loop: EventLoopThread,
                       control: RunControl) -> type[RuleBasedStateMachine]:
    names = [n for n in SCENARIOS if cfg.weights.get(n, 0) > 0]
    if not names:
        raise ValueError("every live scenario has weight 0")
    bag = [n for n in names for _ in range(cfg.weights[n])]
    scenario = st.sampled_from(bag)  # built once, not per step
    salt = cfg.token_salt if cfg.token_salt is not None else rec.salt

    class LiveMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            rec.made += 1
            token = hashlib.sha256(f"{salt}:{cfg.seed}:{rec.made}".encode()).hexdigest()[:8]
            self.run = LiveRun(cfg.url, loop=loop, token=token, request_timeout_s=cfg.request_timeout_s,
                               snapshot_every=cfg.snapshot_every, skip=cfg.skip)

        def _do(self, ops: list[dict[str, Any]]) -> None:
            for op in ops:
                control.check()
                found = self.run.apply(op)
                rec.steps += 1
                for v in found:
                    if v.severity == "known":
                        rec.on_known(v)
                    elif v.invariant not in rec.suppressed:
                        failure = LiveFindingFailure(v, self.run)
                        if rec.failure is None:
                            rec.failure = failure
                        raise failure

        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            rec.examples += 1
            self._do(setup_ops(cfg.clients))
            for i in range(cfg.sessions):
                self._do(session_ops(data, self.run, i + 1))

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            name = data.draw(scenario, label="scenario")
            ops = SCENARIOS[name](data, self.run)
            if ops:
                rec.scenarios[name] += 1
                event(f"scenario {name}")
            self._do(ops)

        def teardown(self) -> None:
            self.run.close()

    return LiveMachine


def live_config_from(config: RunConfig) -> LiveConfig:
    """The live campaign's settings for an `ahp-fuzz run` whose target is a live host."""
    return LiveConfig(
        # An embedded host is served on the campaign's own loop: the target's need not start.
        url=None if getattr(config.target, "embedded", False) else config.target.url,  # type: ignore[attr-defined]
        target_spec=config.target_spec, profile=config.profile.label, seed=config.seed,
        budget_s=config.budget_s, max_chunks=config.max_chunks,
        chunk_examples=min(config.chunk_examples, 10), max_steps=config.max_steps,
        max_findings=config.max_findings, shrink_budget_s=config.shrink_budget_s,
        database=config.database, control=config.control,
    )


def run_live(config: RunConfig, bus: EventBus) -> RunSummary:
    """`run_campaign`'s twin for live targets (`open_target` gave a `LiveTarget`)."""
    return run_live_campaign(live_config_from(config), bus)


def _chunk_seed(run_seed: int, chunk: int) -> int:
    return int.from_bytes(hashlib.sha256(f"ahp-fuzz-live:{run_seed}:{chunk}".encode()).digest()[:8], "big")


def run_live_campaign(cfg: LiveConfig, bus: EventBus) -> RunSummary:
    """Fuzz the host at `cfg.url` until the budget (or `max_chunks`) is spent."""
    control = cfg.control or RunControl(cfg.budget_s)
    summary = RunSummary(kinds=(LIVE_KIND,))
    seen_known: set[str] = set()

    def on_known(v: Violation) -> None:
        summary.known_counts[v.invariant] += 1
        if v.invariant not in seen_known:
            seen_known.add(v.invariant)
            inv = REGISTRY.get(v.invariant)
            bus.emit(KnownSeen(v.invariant, LIVE_KIND, v.message, inv.known_issue if inv else None, True))

    rec = LiveRecorder(on_known=on_known)
    loop = EventLoopThread(threaded=cfg.threaded_loop, shield=control.shielded)
    host_close = None
    spec = parse_live_spec(cfg.target_spec) if is_live_spec(cfg.target_spec) else None
    if spec is not None and spec.kind == "embedded" and (cfg.host_in_loop or cfg.url is None):
        url, host_close = loop.run(serve_embedded_in_loop(spec), 20.0)
        cfg = replace(cfg, url=url)
    elif cfg.url is None:
        raise ValueError(f"{cfg.target_spec!r}: a live campaign needs a host URL")
    database = DirectoryBasedExampleDatabase(str(cfg.database)) if cfg.database else None
    bus.emit(RunStarted(cfg.target_spec, cfg.profile, cfg.seed, cfg.budget_s, (LIVE_KIND,)))
    chunk = 0
    try:
        while True:
            if control.should_stop():
                summary.stopped_because = control.reason or "budget"
                break
            if cfg.max_chunks is not None and chunk >= cfg.max_chunks:
                summary.stopped_because = "chunks"
                break
            if cfg.max_findings is not None and len(summary.findings) >= cfg.max_findings:
                summary.stopped_because = "max findings"
                break
            if any(f.invariant in cfg.stop_on for f in summary.findings):
                summary.stopped_because = "wanted finding"
                break
            machine = build_live_machine(cfg, rec, loop, control)
            run_settings = settings(
                max_examples=cfg.chunk_examples, stateful_step_count=cfg.max_steps, deadline=None,
                database=database, derandomize=False, report_multiple_bugs=False,
                verbosity=Verbosity.quiet,
                phases=[Phase.reuse, Phase.generate] if database else [Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            rec.failure = None
            try:
                run_state_machine_as_test(seed(_chunk_seed(cfg.seed, chunk))(machine), settings=run_settings)
            except RunStopped:
                raise
            except BaseException:
                if rec.failure is None:
                    raise
            if rec.failure is not None:
                _record_finding(rec.failure, cfg, chunk, loop, control, bus, summary, rec)
            chunk += 1
            summary.chunks = chunk
            summary.examples, summary.steps = rec.examples, rec.steps
            bus.emit(Progress(control.elapsed(), rec.examples, rec.steps, len(summary.findings),
                              sum(summary.known_counts.values()), chunk))
    except RunStopped as e:
        summary.stopped_because = e.reason
        summary.status = "interrupted" if e.interrupted else "finished"
    finally:
        if host_close is not None:
            with contextlib.suppress(Exception):
                loop.run(host_close(), 10.0)
        loop.close()
    summary.elapsed_s = control.elapsed()
    summary.examples, summary.steps = rec.examples, rec.steps
    bus.emit(RunFinished(summary.elapsed_s, summary.examples, summary.steps, summary.findings,
                         dict(summary.known_counts), {f"scenario {k}": {"sent": n, "changed": 0}
                                                      for k, n in sorted(rec.scenarios.items())},
                         summary.stopped_because, {"chunks": summary.chunks, "seed": cfg.seed}))
    return summary


def _record_finding(failure: LiveFindingFailure, cfg: LiveConfig, chunk: int, loop: EventLoopThread,
                    control: RunControl, bus: EventBus, summary: RunSummary, rec: LiveRecorder) -> None:
    found = finding_from_run(failure.run, failure.violation, target=cfg.target_spec, profile=cfg.profile,
                             seed=cfg.seed, extra={"chunk": chunk})
    bus.emit(Shrinking(found.invariant, LIVE_KIND, len(found.steps)))
    left = control.time_left()
    budget = cfg.shrink_budget_s if left is None else max(0.0, min(cfg.shrink_budget_s, left - 1.0))
    shrinker = LiveShrinker(cfg.url, loop=loop, budget_s=budget, request_timeout_s=cfg.request_timeout_s)
    finding = shrinker.shrink(found) if budget > 0 else found
    finding.extra["shrink"] = {"stepsFound": len(found.steps), "stepsShrunk": len(finding.steps),
                               "replays": shrinker.attempts}
    # confirmed as `ahp-fuzz replay` confirms it (REPLAY_ATTEMPTS: a host's behaviour may depend on
    # its history, which the shrinker's replays moved on by as many as its time allowed), with the
    # run's request timeout (the 5 s default made a slow answer on a loaded machine "flaky")
    reproduced = replay_live(finding, cfg.url, loop=loop, request_timeout_s=cfg.request_timeout_s,
                             attempts=REPLAY_ATTEMPTS).reproduced
    if not reproduced:
        finding.extra["flaky"] = True
    rec.suppressed.add(finding.invariant)
    summary.findings.append(finding)
    with control.shielded():
        bus.emit(FindingFound(finding, reproduced))
