"""Live findings: building them from a failing run, replaying them against a host, shrinking them.

A live finding is an ordinary `Finding` with `kind == "live"`: its steps are the run's ops
(`TraceStep(action=op)`, see `live/run.py`), and `extra["live"]` holds the recorded
conversation (`LIVE_TRACE_FORMAT`, versioned): the run token, the clients, and every frame in
both directions in the order this process saw them. Replay needs only the ops: it re-runs them
against a host with a fresh token (URIs and client ids are rewritten) and judges every op with the
same live checks. The shrinker is ddmin over ops (the reducer-trace shrinker's step deletion),
bounded in time; a candidate is kept when the same invariant still fires with the same cause
(what the host did, `signing.sign`), and so is a replay's reproduction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from harness.causes.live import UNAPPLIED_ANY, live_witnesses
from harness.causes.transformation import Cause, cause_json
from harness.corpus.finding import Finding, TraceStep
from harness.invariants.base import Violation
from harness.invariants.registry import REGISTRY

from .loop import EventLoopThread
from .run import LiveRun
from .signing import sign

LIVE_KIND = "live"
LIVE_TRACE_FORMAT = "ahp-fuzz/live-trace"
LIVE_TRACE_VERSION = 1
#: How often `ahp-fuzz replay` re-runs a live finding before calling it not reproduced.
REPLAY_ATTEMPTS = 3
#: Frames kept in a finding (the tail of the conversation when it was longer).
MAX_FRAMES = 2_000


def is_live_finding(f: Finding) -> bool:
    return f.kind == LIVE_KIND


def finding_from_run(run: LiveRun, violation: Violation, *, target: str, profile: str,
                     seed: int | None = None, extra: dict[str, Any] | None = None,
                     cause: Cause | None = None) -> Finding:
    """A live finding of `run`'s ops and conversation; `cause` (what the host did, `signing.sign`)
    is its identity: the same in every run, seed and shrink."""
    inv = REGISTRY.get(violation.invariant)
    frames = run.transcript.frames
    return Finding(
        invariant=violation.invariant,
        severity=violation.severity,
        title=inv.title if inv else violation.invariant.replace("-", " ").lower(),
        message=violation.message,
        profile=profile,
        target=target,
        kind=LIVE_KIND,
        initial={},
        steps=[TraceStep(dict(op), 0) for op in run.ops],
        failing_step=len(run.ops) - 1,
        expected=None,
        observed=violation.message,
        known_issue=inv.known_issue if inv else None,
        seed=seed,
        cause=cause_json(cause, live_witnesses(violation.invariant)) if cause is not None else None,
        extra={
            **(extra or {}),
            "live": {
                "format": LIVE_TRACE_FORMAT,
                "version": LIVE_TRACE_VERSION,
                "token": run.token,
                "clients": [
                    {"index": c.view.index, "clientId": c.view.client_id, "offer": c.view.offered,
                     "version": c.view.version, "collections": c.view.collections,
                     "deliveryMs": c.view.delivery_ms}
                    for _, c in sorted(run.clients.items())
                ],
                "framesTotal": len(frames),
                "frames": frames[-MAX_FRAMES:],
            },
        },
    )


def _retoken(ops: list[Any], old: str | None, new: str) -> list[Any]:
    if not old:
        return ops
    text = json.dumps(ops)
    return list(json.loads(text.replace(f"fz-{old}-", f"fz-{new}-")))


@dataclass
class LiveReplayResult:
    reproduced: bool
    step: int | None = None  # index of the op after which the invariant fired
    message: str = ""
    violations: list[Violation] | None = None
    run: LiveRun | None = None


def replay_live(finding: Finding, url: str, *, loop: EventLoopThread | None = None,
                request_timeout_s: float = 5.0, keep_run: bool = False, attempts: int = 1,
                death: Callable[[bool], str | None] | None = None) -> LiveReplayResult:
    """Re-run a live finding's ops against the host at `url`; reproduced when its invariant fires.

    A host's behaviour may depend on its history (a counter, a buffer): `attempts` > 1 re-runs the
    ops up to that many times, each on fresh connections and sessions, and reports the first
    reproduction. `death` tells when the host died (a `TARGET-DIED` finding replays by it)."""
    result = _replay_once(finding, url, loop, request_timeout_s, keep_run, death)
    for _ in range(attempts - 1):
        if result.reproduced:
            break
        result = _replay_once(finding, url, loop, request_timeout_s, keep_run, death)
    return result


def _replay_once(finding: Finding, url: str, loop: EventLoopThread | None, request_timeout_s: float,
                 keep_run: bool, death: Callable[[bool], str | None] | None = None) -> LiveReplayResult:
    run = LiveRun(url, loop=loop, request_timeout_s=request_timeout_s, death=death)
    old = (finding.extra.get("live") or {}).get("token")
    ops = _retoken([s.action for s in finding.steps], old, run.token)
    seen: list[Violation] = []
    try:
        for i, op in enumerate(ops):
            found = run.apply(op)
            seen.extend(found)
            hit = [v for v in found if v.invariant == finding.invariant and _same_cause(finding, v, run)]
            if hit:
                return LiveReplayResult(True, i, hit[0].message, seen, run if keep_run else None)
        return LiveReplayResult(False, None, "", seen, run if keep_run else None)
    finally:
        if not keep_run:
            run.close()


def _same_cause(finding: Finding, v: Violation, run: LiveRun) -> bool:
    """`v` (seen on `run`'s last op) witnesses the finding's cause, signed as the campaign signs
    (issue 33: a shrink that keeps only the invariant can trade the behaviour for another one of
    the same check — the ahpx mock's INV-042 at `.activeSessions` shrunk into one at `.createdAt`,
    under the first one's id). A finding without a cause: any violation of its invariant."""
    cause = finding.cause
    if not isinstance(cause, dict) or not isinstance(cause.get("id"), str):
        return True
    applied_seen = cause.get("key") != list(UNAPPLIED_ANY.key)
    return sign(v, run.trigger, run.closed, run.obs.misattributed, applied_seen).id == cause["id"]


class LiveShrinker:
    """ddmin over a live finding's ops (each candidate is a replay against the host), bounded."""

    def __init__(self, url: str, *, loop: EventLoopThread | None = None, budget_s: float = 10.0,
                 max_attempts: int = 200, keeper: Any = None, request_timeout_s: float = 5.0) -> None:
        self.url = url
        self.request_timeout_s = request_timeout_s  # the run's: a slow answer is not "does not reproduce"
        #: The host's keeper (`keeper.HostKeeper`): each candidate runs against a living host
        #: (one the previous candidate killed is restarted first), so a death finding shrinks.
        self.keeper = keeper
        self.loop = loop
        self.budget_s = budget_s
        self.max_attempts = max_attempts
        self.attempts = 0
        self._deadline = 0.0

    def _out(self) -> bool:
        return self.attempts >= self.max_attempts or time.monotonic() >= self._deadline

    def _check(self, f: Finding) -> LiveReplayResult | None:
        self.attempts += 1
        if self.keeper is not None:
            try:
                self.url = self.keeper.ensure_alive()
            except Exception:  # gone for good (a ws:// host) or cannot be restarted: stop shrinking
                self._deadline = 0.0
                return None
        result = replay_live(f, self.url, loop=self.loop, request_timeout_s=self.request_timeout_s,
                             death=self.keeper.death if self.keeper is not None else None)
        return result if result.reproduced else None

    def shrink(self, finding: Finding) -> Finding:
        self._deadline = time.monotonic() + self.budget_s
        base = self._check(finding)
        if base is None or base.step is None:
            return finding
        best = _cut(finding, base)
        progress = True
        while progress and not self._out():
            progress = False
            for cand in _deletions(best):
                if self._out():
                    break
                r = self._check(cand)
                if r is not None and r.step is not None:
                    best = _cut(cand, r)
                    progress = True
                    break
        return best


def _cut(f: Finding, r: LiveReplayResult) -> Finding:
    assert r.step is not None
    return replace(f, steps=f.steps[: r.step + 1], failing_step=r.step,
                   message=r.message or f.message, observed=r.message or f.observed)


def _deletions(f: Finding) -> Iterator[Finding]:
    """Delete runs of ops (halves, quarters, … single ops), never the failing (last) one."""
    n = len(f.steps)
    size = n // 2
    while size >= 1:
        for start in range(0, n - size, size):
            if start + size >= n:
                continue
            yield replace(f, steps=f.steps[:start] + f.steps[start + size:])
        size //= 2


def replay_on_target(finding: Finding, target: Any, *, request_timeout_s: float = 5.0) -> LiveReplayResult:
    """Replay against a live target (`harness.targets.live.LiveTarget`): its host is started
    when the spelling says so (host:embedded, host-cmd:)."""
    death = getattr(target, "death", None)
    return replay_live(finding, target.url, request_timeout_s=request_timeout_s, attempts=REPLAY_ATTEMPTS,
                       death=death)


def result_lines(result: LiveReplayResult, finding: Finding, target: str) -> list[str]:
    """What `ahp-fuzz replay` prints for a live finding."""
    lines = [
        f"{finding.invariant} [{finding.severity}] on a live host, {len(finding.steps)} ops, target {target}",
        f"  {finding.message}",
    ]
    if result.reproduced:
        lines.append(f"reproduced after op {result.step}: {result.message}")
    else:
        lines.append("does not reproduce: every op passed the live checks for this invariant")
    also = dict.fromkeys(f"  also: {v.invariant} [{v.severity}] {v.message}" for v in (result.violations or [])
                         if v.invariant != finding.invariant)  # a check re-fires every op: once each
    lines += list(also)[:10]
    return lines
