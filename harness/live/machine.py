"""The live machine and the live campaign: fuzz a running AHP host over the wire.

The Hypothesis machine stays synchronous: all connections of a run live on one asyncio event loop
(`EventLoopThread`) that every rule drives inline, in its own thread, with a bounded timeout
(`LiveRun.apply`); for `host:embedded` the campaign serves the host on that same loop. One machine run =
fresh client connections (`DEFAULT_CLIENTS`: two that negotiated collections with different
delivery latencies, one that did not, one that speaks only 0.6.0), two new sessions everyone
subscribes to, then steps drawn from the weighted scenarios of `ops`. After every op the
run settles (ping barrier on every connection, bounded wait for pending echoes, new chats
followed), fresh snapshots are taken, and every live check runs. A violation ends the machine
run; the campaign turns the run's ops and conversation into a live finding, shrinks it (ddmin
over ops, bounded), replays it once, and goes on with that cause suppressed (one finding per
cause: `signing.sign` says what the host did, in harness/causes' vocabulary).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, event, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from harness.engine.chunks import exposure
from harness.engine.control import RunControl
from harness.engine.events import (
    EventBus,
    FindingFound,
    KnownSeen,
    Notice,
    Progress,
    RunFinished,
    RunStarted,
    Shrinking,
)
from harness.engine.run import RunConfig, RunSummary
from harness.errors import RunStopped
from harness.invariants.base import Violation
from harness.invariants.registry import REGISTRY
from harness.targets.live import embedded_for_profile, embedded_text, is_live_spec, parse_live_spec

from .config import LIVE_LANES, LiveConfig
from .coverage import headline, never_ran, turns_headline
from .draws import HypothesisDraws
from .example import HostDown, LiveExample, LiveFindingFailure, LiveRecorder
from .failure import LiveFailure
from .fast import LivePools, run_fast_chunk
from .keeper import MAX_DEATHS_IN_A_ROW, QUICK_DEATH_STEPS, HostGone, HostKeeper
from .loop import EventLoopThread
from .ops import SCENARIOS, weights_for
from .pool import ConnectionPool
from .replay import LIVE_KIND, REPLAY_ATTEMPTS, LiveShrinker, finding_from_run, replay_live
from .settle import SETTLE_POLICIES, SettlePolicy
from .signing import PROFILE
from .versions import Speaking, negotiate, offers_for

__all__ = ["HostDown", "LiveConfig", "LiveFindingFailure", "LiveRecorder", "build_live_machine",
           "live_config_from", "run_live", "run_live_campaign", "settling_report"]

def build_live_machine(cfg: LiveConfig, rec: LiveRecorder, loop: EventLoopThread,
                       control: RunControl, pool: ConnectionPool | None = None) -> type[RuleBasedStateMachine]:
    names = [n for n in SCENARIOS if cfg.weights.get(n, 0) > 0]
    if not names:
        raise ValueError("every live scenario has weight 0")
    bag = [n for n in names for _ in range(cfg.weights[n])]
    scenario = st.sampled_from(bag)  # built once, not per step
    salt = cfg.token_salt if cfg.token_salt is not None else rec.salt
    policy = settle_policy(cfg)
    per_rule = max(1, cfg.scenarios_per_rule)

    class LiveMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.example = LiveExample(cfg, rec, loop, control, pool, policy, salt)
            self.run = self.example.run

        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            self.example.start(HypothesisDraws(data))

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            draws = HypothesisDraws(data)
            for _ in range(per_rule):
                name = data.draw(scenario, label="scenario")
                before = rec.scenarios[name]
                self.example.step(draws, name)
                if rec.scenarios[name] != before:
                    event(f"scenario {name}")

        def teardown(self) -> None:
            self.example.teardown()

    return LiveMachine


def settle_policy(cfg: LiveConfig) -> SettlePolicy:
    try:
        policy = SETTLE_POLICIES[cfg.settle]
    except KeyError:
        raise ValueError(f"unknown settle policy {cfg.settle!r} (want {' or '.join(SETTLE_POLICIES)})") from None
    return policy if cfg.snapshot_every is None else replace(policy, every=cfg.snapshot_every)


def live_config_from(config: RunConfig) -> LiveConfig:
    """The live campaign's settings for an `ahp-fuzz run` whose target is a live host."""
    return LiveConfig(
        # An embedded host is served on the campaign's own loop: the target's need not start.
        url=None if getattr(config.target, "embedded", False) else config.target.url,  # type: ignore[attr-defined]
        target_spec=config.target_spec, profile=config.profile.label, seed=config.seed,
        budget_s=config.budget_s, max_chunks=config.max_chunks,
        chunk_examples=min(config.chunk_examples, 10), max_steps=config.max_steps,
        max_findings=config.max_findings, shrink_budget_s=config.shrink_budget_s,
        database=config.database, control=config.control, target=config.target,
        lane=config.lane, schema=config.schema, offer=config.offer,
    )


def run_live(config: RunConfig, bus: EventBus) -> RunSummary:
    """`run_campaign`'s twin for live targets (`open_target` gave a `LiveTarget`)."""
    return run_live_campaign(live_config_from(config), bus)


def _chunk_seed(run_seed: int, chunk: int) -> int:
    return int.from_bytes(hashlib.sha256(f"ahp-fuzz-live:{run_seed}:{chunk}".encode()).digest()[:8], "big")


def run_live_campaign(cfg: LiveConfig, bus: EventBus) -> RunSummary:
    """Fuzz the host at `cfg.url` until the budget (or `max_chunks`) is spent."""
    if cfg.lane not in LIVE_LANES:
        raise ValueError(f"unknown lane {cfg.lane!r} (want one of {', '.join(LIVE_LANES)})")
    control = cfg.control or RunControl(cfg.budget_s)
    summary = RunSummary(kinds=(LIVE_KIND,))
    seen_known: set[str] = set()

    def on_known(v: Violation) -> None:
        summary.known_counts[v.invariant] += 1
        if v.invariant not in seen_known:
            seen_known.add(v.invariant)
            inv = REGISTRY.get(v.invariant)
            # a stand-in note (issue 33) says itself what it is: no upstream issue
            why = inv.known_issue if inv else v.message if v.invariant.startswith(PROFILE) else None
            bus.emit(KnownSeen(v.invariant, LIVE_KIND, v.message, why, True))

    rec = LiveRecorder(on_known=on_known)
    loop = EventLoopThread(threaded=cfg.threaded_loop, shield=control.shielded)
    spec = parse_live_spec(cfg.target_spec) if is_live_spec(cfg.target_spec) else None
    if spec is not None and spec.kind == "embedded":
        spec = embedded_for_profile(spec, cfg.profile)  # a 1.0.0 run fuzzes the 1.0.0 host
        cfg = replace(cfg, target_spec=embedded_text(spec))
    cfg = replace(cfg, weights=weights_for(cfg.profile, cfg.weights))
    if spec is not None and spec.kind == "embedded" and (cfg.host_in_loop or cfg.url is None):
        keeper = HostKeeper(None, loop=loop, embedded=spec)  # served on this loop
    elif cfg.url is None:
        raise ValueError(f"{cfg.target_spec!r}: a live campaign needs a host URL")
    else:
        keeper = HostKeeper(cfg.url, target=cfg.target, loop=loop)
    cfg = replace(cfg, url=keeper.url)
    rec.keeper = keeper
    rec.hold_frames = not keeper.can_restart
    rec.can_restart = keeper.can_restart
    version = cfg.profile.split("-")[0].split("+")[0]
    cfg = replace(cfg, clients=offers_for(version, cfg.clients, cfg.offer))
    offer = list(dict.fromkeys(v for c in cfg.clients for v in c.offer))
    speaking = Speaking(tuple(offer))
    try:
        speaking = loop.run(negotiate(cfg.url, offer, cfg.request_timeout_s), cfg.request_timeout_s * 4 + 5)
    except LiveFailure:
        pass  # a host that does not answer initialize: the run reports it
    except BaseException:
        keeper.close()
        loop.close()
        raise
    if speaking.version is not None and speaking.version not in speaking.offered:
        rec.unoffered_answer = speaking.version
    rec.negotiation_problem = speaking.malformed
    if speaking.also_offer:  # the host refused the offer and speaks an older (or named) version
        cfg = replace(cfg, clients=offers_for(version, cfg.clients, (*cfg.offer, *speaking.also_offer)))
    reuse = cfg.reuse_connections if cfg.reuse_connections is not None else keeper.embedded is not None
    pool = ConnectionPool() if reuse else None
    pooled_for = keeper.restarts  # the host the pooled connections lead to (restarts: a new one)
    database = DirectoryBasedExampleDatabase(str(cfg.database)) if cfg.database else None
    bus.emit(RunStarted(cfg.target_spec, cfg.profile, cfg.seed, cfg.budget_s, (LIVE_KIND,), speaking=speaking.version))
    if speaking.note is not None:
        bus.emit(Notice(speaking.note, headline=True))
    policy = settle_policy(cfg)
    salt = cfg.token_salt if cfg.token_salt is not None else rec.salt
    pools = LivePools(cfg.seed, cfg.schema if cfg.schema is not None else _schema_check(),
                      cfg.weights) if cfg.lane == "fast" else None
    if pools is not None and database is not None:
        bus.emit(Notice("the fast lane does not use the Hypothesis example database (--lane hypothesis does)"))
    chunk = 0
    thresholds = gc.get_threshold()
    if cfg.gc_threshold is not None:
        gc.set_threshold(max(cfg.gc_threshold, thresholds[0]), *thresholds[1:])
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
            stop = _host_for_next_chunk(keeper, bus, rec.steps)
            if stop is not None:
                summary.stopped_because = stop
                break
            cfg = replace(cfg, url=keeper.url)
            if pool is not None and keeper.restarts != pooled_for:
                _drop_pool(pool, loop)  # connections to the host that died are never reused
                pooled_for = keeper.restarts
            rec.failure = None
            try:
                if pools is not None:
                    run_fast_chunk(cfg, rec, loop, control, pool, pools, policy, salt)
                else:
                    machine = build_live_machine(cfg, rec, loop, control, pool)
                    run_state_machine_as_test(seed(_chunk_seed(cfg.seed, chunk))(machine),
                                              settings=_chunk_settings(cfg, database))
            except RunStopped:
                raise
            except BaseException:
                if rec.failure is None and not keeper.dead:
                    raise
            keeper.after_chunk(rec.steps, pinned=rec.pinned)
            rec.pinned = False
            if rec.failure is not None:
                _record_finding(rec.failure, cfg, chunk, loop, control, bus, summary, rec)
            chunk += 1
            if cfg.collect_every and chunk % cfg.collect_every == 0:
                gc.collect()  # the net under what released runs leave to the collector (LiveConfig.collect_every)
            summary.chunks = chunk
            summary.examples, summary.steps = rec.examples, rec.steps
            bus.emit(Progress(control.elapsed(), rec.examples, rec.steps, len(summary.findings),
                              sum(summary.known_counts.values()), chunk))
    except RunStopped as e:
        summary.stopped_because = e.reason
        summary.status = "interrupted" if e.interrupted else "finished"
    except BaseException as e:  # a bug of the harness: still leave a finished report behind
        summary.status = "error"
        summary.elapsed_s = control.elapsed()
        summary.examples, summary.steps = rec.examples, rec.steps
        with contextlib.suppress(Exception):
            bus.emit(RunFinished(summary.elapsed_s, summary.examples, summary.steps, summary.findings,
                                 dict(summary.known_counts), {}, "error", {"chunks": summary.chunks, "seed": cfg.seed,
                                                                             **_host_extra(keeper)},
                                 status="error", error=f"{type(e).__name__}: {e}"))
        raise
    finally:
        if pool is not None:
            _drop_pool(pool, loop)
        keeper.close()
        loop.close()
        gc.set_threshold(*thresholds)
    summary.elapsed_s = control.elapsed()
    summary.examples, summary.steps = rec.examples, rec.steps
    unrun = never_ran(cfg, rec)
    for said in (turns_headline(unrun), headline(unrun)):
        if said is not None:
            bus.emit(Notice(said, headline=True))
    bus.emit(RunFinished(summary.elapsed_s, summary.examples, summary.steps, summary.findings,
                         dict(summary.known_counts), {f"scenario {k}": {"sent": n, "changed": 0}
                                                      for k, n in sorted(rec.scenarios.items())},
                         summary.stopped_because, {"chunks": summary.chunks, "seed": cfg.seed, "lane": cfg.lane,
                                                   "speaking": speaking.as_json(),
                                                   "liveNeverRan": unrun,
                                                   "liveSettling": settling_report(cfg, rec.settling),
                                                   "liveSpeed": speed_report(cfg, rec, summary.elapsed_s),
                                                   **({"livePools": pools.to_json()} if pools is not None else {}),
                                                   **_host_extra(keeper)}))
    return summary


def _chunk_settings(cfg: LiveConfig, database: DirectoryBasedExampleDatabase | None) -> settings:
    """The Hypothesis lane's settings for one chunk of `cfg.chunk_examples` machine runs."""
    return settings(
        max_examples=cfg.chunk_examples, stateful_step_count=-(-cfg.max_steps // max(1, cfg.scenarios_per_rule)),
        deadline=None, database=database, derandomize=False, report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=[Phase.reuse, Phase.generate] if database else [Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


def _schema_check() -> Callable[[Any], str | None] | None:
    """The actions-schema check of the spec checkout in use (None: no checkout, no check)."""
    from harness.spec.action_schema import ActionSchema
    from harness.spec.specdir import SpecDir, SpecDirError

    try:
        spec = SpecDir.from_env()
        return ActionSchema.from_spec(spec) if spec is not None and spec.has_schemas() else None
    except (SpecDirError, OSError, ValueError):
        return None


def settling_report(cfg: LiveConfig, stats: Counter[str]) -> dict[str, Any]:
    """What report.json says about how the live runs settled: the policy, how many ops took real
    fresh snapshots and why (needed, sampled, full) and how many were checked on folded views
    only, and the barrier's pings sent and skipped."""
    policy = settle_policy(cfg)
    return {"policy": cfg.settle, "barrier": policy.barrier, "snapshots": policy.snapshots,
            "sampleEvery": policy.every, "fullEvery": policy.full_every, **dict(sorted(stats.items()))}


def speed_report(cfg: LiveConfig, rec: LiveRecorder, elapsed_s: float) -> dict[str, Any]:
    """What report.json says about the campaign's pace: the lane, steps and WebSocket frames per
    second, frames per step, and the seconds spent per phase of a step — `draw` (scenario and
    ops chosen), `send` (the op on the wire), `settle` (barrier, echoes, followers, fresh
    snapshots), `checks` (the live checks) and `other` (the rest: setup, shrinking, replays,
    connection closes, Hypothesis' own work in its lane)."""
    frames = rec.settling.get("frames", 0)
    phases = {k: round(v, 3) for k, v in sorted(rec.phases.items())}
    phases["other"] = round(max(0.0, elapsed_s - sum(rec.phases.values())), 3)
    per = max(1, rec.steps)
    return {"lane": cfg.lane, "steps": rec.steps, "elapsedSeconds": round(elapsed_s, 3),
            "stepsPerSecond": round(rec.steps / elapsed_s, 1) if elapsed_s > 0 else 0.0,
            "frames": frames, "framesPerStep": round(frames / per, 2),
            "framesPerSecond": round(frames / elapsed_s, 1) if elapsed_s > 0 else 0.0,
            "phaseSeconds": phases,
            "phaseMsPerStep": {k: round(1000 * v / per, 3) for k, v in phases.items()}}


def _drop_pool(pool: ConnectionPool, loop: EventLoopThread) -> None:
    """Close every pooled connection (at the end, or after the host was restarted)."""
    with contextlib.suppress(Exception):
        loop.run(pool.aclose(), 10.0)


def _host_extra(keeper: HostKeeper) -> dict[str, Any]:
    return {"host": {"deaths": keeper.deaths, "restarts": keeper.restarts}} if keeper.deaths else {}


def _host_for_next_chunk(keeper: HostKeeper, bus: EventBus, steps: int) -> str | None:
    """Restart a dead host for the next chunk; why the campaign stops instead (None: go on)."""
    if not keeper.dead:
        return None
    if keeper.in_a_row >= MAX_DEATHS_IN_A_ROW:
        bus.emit(Notice(f"the host died {keeper.in_a_row} times in a row, each within {QUICK_DEATH_STEPS} ops "
                        f"of a restart ({keeper.restarts} restarts): dropped — {keeper.death()}"))
        return "host keeps dying"
    try:
        keeper.ensure_alive()
        keeper.steps_at_start = steps
    except HostGone as e:
        bus.emit(Notice(f"the host is gone and cannot be restarted: {e}"))
        return "host gone"
    except Exception as e:  # a restart that fails (the command no longer starts) ends the run
        bus.emit(Notice(f"the host died and could not be restarted: {e}"))
        return "host gone"
    return None


def _record_finding(failure: LiveFindingFailure, cfg: LiveConfig, chunk: int, loop: EventLoopThread,
                    control: RunControl, bus: EventBus, summary: RunSummary, rec: LiveRecorder) -> None:
    found = finding_from_run(failure.run, failure.violation, target=cfg.target_spec, profile=cfg.profile,
                             seed=cfg.seed, extra={"chunk": chunk, "exposure": exposure(control, rec.steps, chunk)},
                             cause=failure.cause)
    bus.emit(Shrinking(found.invariant, LIVE_KIND, len(found.steps)))
    left = control.time_left()
    budget = cfg.shrink_budget_s if left is None else max(0.0, min(cfg.shrink_budget_s, left - 1.0))
    keeper = rec.keeper
    can_replay = keeper is None or not keeper.dead or keeper.can_restart  # a gone ws:// host cannot
    shrinker = LiveShrinker(cfg.url, loop=loop, budget_s=budget, keeper=keeper, request_timeout_s=cfg.request_timeout_s)
    finding = shrinker.shrink(found) if budget > 0 and can_replay else found
    finding.extra["shrink"] = {"stepsFound": len(found.steps), "stepsShrunk": len(finding.steps),
                               "replays": shrinker.attempts}
    reproduced = False
    url: str | None = cfg.url
    if can_replay and keeper is not None:
        try:
            url = keeper.ensure_alive()
        except Exception:  # the host cannot be restarted: the finding stands unconfirmed
            can_replay = False
    if can_replay and url is not None:
        reproduced = replay_live(finding, url, loop=loop, attempts=REPLAY_ATTEMPTS,  # history-dependent hosts
                                 request_timeout_s=cfg.request_timeout_s,
                                 death=keeper.death if keeper is not None else None).reproduced
    if not reproduced:
        finding.extra["flaky"] = True
    if failure.cause is not None:
        rec.suppressed.add(failure.cause.id)
    summary.findings.append(finding)
    with control.shielded():
        bus.emit(FindingFound(finding, reproduced))
