"""One machine run of the live campaign (an *example*): its clients, its sessions, its steps.

Both live lanes run the same examples: the Hypothesis lane's `RuleBasedStateMachine`
(`machine.build_live_machine`) and the fast lane's loop (`fast.run_fast_chunk`) each make a
`LiveExample` per run and hand it their `Draws` (`draws.py`). An example connects the clients
(pooled connections when the campaign keeps them), sends the campaign's preflight probes once,
creates the sessions everyone subscribes to, then applies the ops of the scenarios drawn; the
first violation ends it (`LiveFindingFailure`), a host dead again ends it quietly (`HostDown`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.causes.transformation import Cause
from harness.engine.control import RunControl
from harness.invariants.base import Violation
from harness.spec.versions import is_newer_than
from harness.targets.live import ConnectionLost, RpcError

from .config import LiveConfig
from .draws import Draws
from .keeper import HostKeeper
from .loop import EventLoopThread
from .ops import (
    FRAME_CLASSES,
    SCENARIOS,
    op_class,
    preflight_ops,
    session_ops,
    setup_ops,
    why_empty,
    why_no_chat,
)
from .pool import ConnectionPool
from .run import LiveRun
from .settle import SettlePolicy
from .signing import profile_note, sign, stand_in
from .wild import TARGET_DIED


class LiveFindingFailure(AssertionError):
    def __init__(self, violation: Violation, run: LiveRun, cause: Cause | None = None) -> None:
        super().__init__(f"{violation.invariant} [{violation.severity}] {violation.message}")
        self.violation = violation
        self.run = run
        #: What the host did (`signing.sign`): the finding's cause, the run's suppression key.
        self.cause = cause


class HostDown(Exception):
    """The host died again (its death is already a finding): the example ends here."""


@dataclass
class LiveRecorder:
    #: Cause ids already reported in this campaign (one finding per cause, issue 33).
    suppressed: set[str] = field(default_factory=set)
    on_known: Callable[[Violation], None] = lambda v: None
    examples: int = 0
    steps: int = 0
    scenarios: Counter[str] = field(default_factory=Counter)
    #: The first failure of the current chunk (Hypothesis may re-run the example; the first
    #: failing run's trace is the one kept).
    failure: LiveFindingFailure | None = None
    #: What the runs' settling did (`LiveRun.stats`, summed): snapshot reasons, pings, views.
    settling: Counter[str] = field(default_factory=Counter)
    #: Seconds spent per phase of a step, summed over the campaign: `draw` (choosing the
    #: scenario and its ops), and `LiveRun.phase_s`: `send` (the op on the wire), `settle`
    #: (barrier, pending echoes, followers, fresh snapshots), `checks` (the live checks).
    phases: dict[str, float] = field(default_factory=dict)
    made: int = 0  # machine runs started (tokens are numbered by it)
    salt: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: The host's keeper (death hook, restarts); None in a machine built without a campaign.
    keeper: HostKeeper | None = None
    #: Preflight ops already sent in this campaign (each once).
    preflown: set[str] = field(default_factory=set)
    #: What killed the host, by frame class or probe (`ops.op_class`) -> how often: never sent
    #: again in this campaign, and a death pinned on one does not count as "keeps dying".
    fatal: Counter[str] = field(default_factory=Counter)
    #: The latest death was pinned on a frame class (`keeper.after_chunk`).
    pinned: bool = False
    #: The host cannot be restarted (a `ws://` host nobody here started): malformed frames, which
    #: may kill it, wait for the last part of the budget (`HOLD_FRAMES_UNTIL`).
    hold_frames: bool = False
    #: The version the host negotiated before the run without its being offered (`versions`).
    unoffered_answer: str | None = None
    #: What was malformed in the host's answers to that negotiation (`Speaking.malformed`).
    negotiation_problem: str | None = None
    #: Dispatches not sent because their type is newer than their client's version -> how often.
    newer: Counter[str] = field(default_factory=Counter)
    #: Frame classes and probes sent (`ops.op_class`) -> how often (report.json `liveNeverRan`).
    sent_classes: Counter[str] = field(default_factory=Counter)
    #: Scenarios drawn that had no op to give for the run's state -> how often.
    empty: Counter[str] = field(default_factory=Counter)
    #: …and the precondition each lacked (`ops.why_empty`) -> how often.
    empty_why: dict[str, Counter[str]] = field(default_factory=dict)
    #: The host can be restarted after a death (else a class that killed it is retired at once).
    can_restart: bool = True
    #: A snapshot of some run showed an accepted client action (`LiveObservation.applied_seen`).
    applied_seen: bool = False
    #: Why a machine run had no chat channel to start a turn on (`ops.why_no_chat`) -> how many runs.
    no_chat: Counter[str] = field(default_factory=Counter)


#: Deaths on one frame class (or probe) before it is retired: it is retried once after the restart
#: its first death asked for (issue 33: a host that died on it by chance is not spared it for good).
RETIRE_AFTER = 2


def avoided(rec: LiveRecorder, cfg: LiveConfig, control: RunControl) -> frozenset[str]:
    """What the next ops must not send: what killed the host `RETIRE_AFTER` times, and — for a
    host that cannot be restarted, before the last part of the budget — every malformed frame class."""
    held = rec.hold_frames and cfg.budget_s is not None and control.elapsed() < cfg.hold_frames_until * cfg.budget_s
    retired = frozenset(cls for cls, n in rec.fatal.items() if n >= RETIRE_AFTER or not rec.can_restart)
    return retired | (FRAME_CLASSES if held else frozenset())


class LiveExample:
    """One machine run against the host (`cfg.url`), its ops applied as they are drawn."""

    def __init__(
        self,
        cfg: LiveConfig,
        rec: LiveRecorder,
        loop: EventLoopThread,
        control: RunControl,
        pool: ConnectionPool | None,
        policy: SettlePolicy,
        salt: str,
    ) -> None:
        rec.made += 1
        token = hashlib.sha256(f"{salt}:{cfg.seed}:{rec.made}".encode()).hexdigest()[:8]
        self.cfg, self.rec, self.control = cfg, rec, control
        self.run = LiveRun(
            cfg.url,
            loop=loop,
            token=token,
            request_timeout_s=cfg.request_timeout_s,
            skip=cfg.skip,
            policy=policy,
            pool=pool,
            death=rec.keeper.death if rec.keeper is not None else None,
        )
        self.run.avoid = avoided(rec, cfg, control)
        self.run.obs.unoffered_answer = rec.unoffered_answer
        self.run.obs.negotiation_problem = rec.negotiation_problem
        self.run.obs.applied_seen = rec.applied_seen
        self.failed = False

    def do(self, ops: list[dict[str, Any]]) -> None:
        rec = self.rec
        for op in ops:
            self.control.check()
            cls = op_class(op)
            if cls is not None and cls in self.run.avoid:
                continue  # it killed the host before (or may, and the host cannot be restarted)
            op = self._within_version(op)
            if op is None:
                continue
            alive = self.run.host_dead is None
            if cls is not None:
                rec.sent_classes[cls] += 1
            found = self.run.apply(op)
            rec.steps += 1
            if alive and self.run.host_dead is not None:  # the op in which the host died
                rec.pinned = cls is not None  # …of a frame class it is sent no more
                if cls is not None:
                    rec.fatal[cls] += 1
                    self.run.avoid = avoided(rec, self.cfg, self.control)
            if self.run.host_dead is not None and not any(v.invariant == TARGET_DIED for v in found):
                raise HostDown(self.run.host_dead)  # dead before this op: end the example, no finding
            for v in found:
                if v.severity == "known":
                    rec.on_known(v)
                    continue
                older = stand_in(v, {i: c.view.version for i, c in self.run.clients.items()})
                if older is not None:  # what the host's own version documents: a note (issue 33)
                    rec.on_known(profile_note(*older))
                    continue
                cause = sign(v, self.run.trigger, self.run.closed, self.run.obs.misattributed,
                             self.run.obs.applied_seen)
                if cause.id in rec.suppressed:
                    if v.invariant == TARGET_DIED:  # dead again of a known cause: end the example
                        raise HostDown(self.run.host_dead or "")
                    continue
                failure = LiveFindingFailure(v, self.run, cause)
                self.failed = True
                if rec.failure is None:
                    rec.failure = failure
                raise failure

    def _within_version(self, op: dict[str, Any]) -> dict[str, Any] | None:
        """`op` without the dispatches of action types newer than their client's version (issue 33:
        never send a host a type newer than the version it speaks; `rec.newer` counts them); None
        when nothing is left of it."""
        if op.get("op") == "race":
            subs = [s for s in op.get("ops") or [] if self._within_version(s) is not None]
            return None if not subs else op if len(subs) == len(op.get("ops") or []) else {**op, "ops": subs}
        if op.get("op") != "dispatch":
            return op
        c = self.run.clients.get(int(op.get("client", 0)))
        action = op.get("action")
        t = action.get("type") if isinstance(action, dict) else None
        if c is None or not isinstance(t, str) or not is_newer_than(t, c.speaks):
            return op
        self.rec.newer[f"{t} (client speaks {c.speaks})"] += 1
        return None

    def start(self, draws: Draws) -> None:
        """Connect the clients, send the campaign's preflight ops not sent yet, make the sessions."""
        cfg, rec = self.cfg, self.rec
        rec.examples += 1
        self.do(setup_ops(cfg.clients))
        # not in Hypothesis's re-run of a failing example (its findings are not recorded)
        for op in preflight_ops() if cfg.preflight and rec.failure is None else []:
            key = json.dumps(op, sort_keys=True)
            if key not in rec.preflown and op_class(op) not in self.run.avoid:  # held back: later
                rec.preflown.add(key)  # before it runs: a finding ends the example
                self.do([op])
        for i in range(cfg.sessions):
            self.do(session_ops(draws, self.run, i + 1))

    def step(self, draws: Draws, name: str) -> None:
        """Draw the ops of scenario `name` for the run's current state and apply them."""
        t0 = time.perf_counter()
        ops = SCENARIOS[name](draws, self.run)
        phases = self.rec.phases
        phases["draw"] = phases.get("draw", 0.0) + time.perf_counter() - t0
        if ops:
            self.rec.scenarios[name] += 1
        else:
            self.rec.empty[name] += 1
            why = why_empty(name, self.run)
            if why is not None:
                self.rec.empty_why.setdefault(name, Counter())[why] += 1
        self.do(ops)

    def teardown(self) -> None:
        rec, run = self.rec, self.run
        if not self.failed and run.host_dead is None:  # a failing run's conversation ends at its finding
            with contextlib.suppress(Exception):
                run.loop.run(dispose(run), run.op_timeout_s)
        rec.no_chat.update(why_no_chat(run))
        rec.applied_seen = rec.applied_seen or run.obs.applied_seen
        rec.settling.update(run.stats)
        rec.settling["frames"] += len(run.transcript.frames)
        for k, v in run.phase_s.items():
            rec.phases[k] = rec.phases.get(k, 0.0) + v
        run.close(reuse=not self.failed)  # a failing run's connections are not handed on
        if not self.failed:  # a failing run is read again: its finding is recorded from it
            run.release()


async def dispose(run: LiveRun) -> None:
    """Dispose of what the example created on the host — its sessions (their chats with them)
    and terminals, in this run's namespace — so that a night's campaign leaves the host as it
    found it: a host keeps every session it was asked to create, and the embedded host, served in
    the campaign's own process, grew by every example's channels (bench/results/campaign.md).
    Not an op: nothing is checked; a host that refuses (or does not know the command) keeps them."""
    conn = next((c.conn for c in run.ready_clients() if c.conn is not None and not c.conn.closed.is_set()), None)
    if conn is None:
        return
    ours = f"fz-{run.token}-"
    for uri, kind in sorted(run.kinds.items()):
        if kind in ("session", "terminal") and ours in uri:
            method = "disposeSession" if kind == "session" else "disposeTerminal"
            with contextlib.suppress(RpcError, ConnectionLost, TimeoutError):
                await conn.request(method, {"channel": uri}, run.request_timeout_s)
            run.stats["disposed"] += 1
