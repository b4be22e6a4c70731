"""One campaign worker: `run_campaign` in its own process, reporting to the parent as JSON lines.

    python -m harness.campaign.worker   (reads one JSON line: a `WorkerSpec`)

The worker saves each confirmed finding itself (`findings.save_once`) *before* telling the
parent, so a worker killed a moment later loses nothing. Its stdout carries only the JSON-lines
wire (everything else printed goes to stderr, which the parent logs). Messages, one per line:

* `{"event": "started", "pid", "seed"}`
* `{"event": "progress", "elapsed", "examples", "steps", "known", "chunk", "outcomes"?, "branches"?}`
  (`outcomes`: the worker's whole matrix, at most every `report_every_s`; `branches`: a coverage
  summary from a measuring worker)
* `{"event": "finding", "signature", "file", "written", "invariant", "severity", "title", "kind",
  "message", "steps", "reproduced", "replay"}`
* `{"event": "known", "invariant", "kind", "knownIssue", "message"}`
* `{"event": "finished", "reason", "elapsed", "examples", "steps", "known", "outcomes", "sent"}`

SIGTERM (and SIGINT) stop the worker cleanly: it stops, saves its coverage data and still sends
`finished`.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from harness.engine.control import RunControl
from harness.engine.events import Event, EventBus, FindingFound, KnownSeen, Progress, RunFinished
from harness.engine.run import DEFAULT_KINDS, DEFAULT_LANE, LANES, RunConfig, run_campaign
from harness.errors import RunStopped
from harness.reference import Profile

from .branches import BranchSampler
from .findings import save_once
from .outcomes import OutcomeMatrix


@dataclass
class WorkerSpec:
    index: int
    generation: int  # 0 for the first process of this slot, +1 per restart
    run_seed: int
    target: str
    profile: str
    budget_s: float
    findings_dir: str
    database: str | None
    kinds: tuple[str, ...] = DEFAULT_KINDS
    max_steps: int = 40
    chunk_examples: int = 25
    adversarial_percent: int = 10
    probe_every: int | None = None
    timeout_s: float = 5.0
    shrink_budget_s: float = 10.0
    coverage_file: str | None = None  # measure reference-model branches into this data file
    coverage_every: int = 1  # measure one chunk in every N
    coverage_mode: str = "replay"  # replay recorded Model.reduce calls | trace everything
    report_every_s: float = 2.0
    steer: bool = True  # outcome hook + Hypothesis target phase
    lane: str = DEFAULT_LANE  # "fast" | "hypothesis" (RunConfig.lane)
    program: str = "ahp-fuzz"  # how ahp-fuzz was invoked, for the replay commands it writes
    #: The campaign's deadline, a `time.monotonic()` value (the clock is the machine's, shared
    #: by its processes): the worker's budget is the time left until it, measured when the
    #: worker starts, so its own start-up counts as the campaign's (None: `budget_s` from now).
    deadline: float | None = None

    def budget_left(self, now: float) -> float:
        """The worker's budget at `now`: the time left until the campaign's deadline."""
        if self.deadline is None:
            return self.budget_s
        return max(0.0, self.deadline - now)

    @property
    def seed(self) -> int:
        """This worker's seed stream: run seed + worker index (+ restart generation)."""
        return worker_seed(self.run_seed, self.index, self.generation)


#: Seconds between coverage summaries sent to the parent (a summary costs ~0.1 s).
BRANCH_REPORT_EVERY_S = 5.0


def worker_seed(run_seed: int, index: int, generation: int = 0) -> int:
    digest = hashlib.sha256(f"ahp-fuzz-worker:{run_seed}:{index}:{generation}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


class Wire:
    """JSON lines to the parent, on a private copy of the original stdout."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.stream.write(json.dumps(message, separators=(",", ":")) + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            pass  # the parent went away; the findings are on disk already


class WorkerSink:
    """The worker's event consumer: saves findings, forwards progress to the parent."""

    def __init__(self, spec: WorkerSpec, wire: Wire, matrix: OutcomeMatrix | None,
                 sampler: BranchSampler | None) -> None:
        self.spec = spec
        self.wire = wire
        self.matrix = matrix
        self.sampler = sampler
        self.last_report = 0.0
        self.last_branches = 0.0
        self.last = {"elapsed": 0.0, "examples": 0, "steps": 0, "known": 0, "chunk": 0}
        self.sent: dict[str, dict[str, int]] = {}
        self.reason = "interrupted"
        self.deadline = spec.deadline if spec.deadline is not None else time.monotonic() + spec.budget_s
        self.signalled: str | None = None

    def stop_reason(self) -> str | None:
        if self.signalled is not None:
            return self.signalled
        return "budget" if time.monotonic() >= self.deadline else None

    def __call__(self, event: Event) -> None:
        if isinstance(event, Progress):
            self.last = {"elapsed": round(event.elapsed_s, 3), "examples": event.examples,
                         "steps": event.steps, "known": event.known, "chunk": event.chunk}
            msg: dict[str, Any] = {"event": "progress", **self.last}
            if threading.current_thread() is not threading.main_thread():
                self.wire.send(msg)  # a heartbeat: counters only
                return
            now = time.monotonic()
            if now - self.last_report >= self.spec.report_every_s:
                self.last_report = now
                if self.matrix is not None:
                    msg["outcomes"] = self.matrix.to_json()
            if self.sampler is not None:
                self.sampler.flush()
                if now - self.last_branches >= BRANCH_REPORT_EVERY_S:
                    self.last_branches = now
                    msg["branches"] = self.sampler.summary()
                # Measure the next chunk when it is one of every `coverage_every`.
                if event.chunk % max(1, self.spec.coverage_every) == 0:
                    self.sampler.start()
                else:
                    self.sampler.stop()
            self.wire.send(msg)
            if self.stop_reason() is not None:
                # Stop between chunks (never inside a Hypothesis run), with everything reported.
                raise RunStopped(self.stop_reason() or "budget")
        elif isinstance(event, FindingFound):
            f = event.finding
            path, written = save_once(Path(self.spec.findings_dir), f, self.spec.program)
            self.wire.send({
                "event": "finding", "signature": f.signature, "file": str(path), "written": written,
                "invariant": f.invariant, "severity": f.severity, "title": f.title, "kind": f.kind,
                "message": f.message, "steps": f.failing_step + 1, "reproduced": event.reproduced,
                "replay": f.replay_command(path, self.spec.program),
                **({"cause": f.cause} if f.cause is not None else {}),
            })
        elif isinstance(event, KnownSeen):
            self.wire.send({"event": "known", "invariant": event.invariant, "kind": event.kind,
                            "knownIssue": event.known_issue, "message": event.message})
        elif isinstance(event, RunFinished):
            self.reason = event.stopped_because
            self.last.update(elapsed=round(event.elapsed_s, 3), examples=event.examples, steps=event.steps)
            self.sent = event.coverage


StepHook = Callable[[str, Any, Any, Any, bool], str | None]


def _step_hook(matrix: OutcomeMatrix | None, sampler: BranchSampler | None) -> StepHook | None:
    """The engine's step hook: the outcome matrix, and — after each valid step, outside every
    reducer call — the coverage sampler's bounded batch (`BranchSampler.flush_when_full`). Without
    a matrix (`steer` off) there is no hook (a hook turns the engine's outcome feedback on), and
    the sampler replays at the chunk's end only."""
    if matrix is None or sampler is None:
        return matrix

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> str | None:
        outcome = matrix(kind, before, action, after, malformed)
        sampler.flush_when_full()
        return outcome

    return hook


def run_worker(spec: WorkerSpec, wire: Wire) -> int:
    from harness.targets.base import open_target

    # The engine's control holds the hard deadline (checked before every step): the campaign's,
    # counted on the machine's monotonic clock, so this process's start-up is inside it. A first
    # signal asks the worker to stop after the current chunk, a second one stops it at once.
    now = time.monotonic()
    budget_s = spec.budget_left(now)
    control = RunControl(budget_s, started=now)
    profile = Profile.named(spec.profile)
    target = open_target(spec.target, profile=profile, timeout_s=spec.timeout_s)
    is_model = spec.target.strip() == "reference"
    matrix = OutcomeMatrix(profile.version) if spec.steer else None
    sampler = BranchSampler(Path(spec.coverage_file), mode=spec.coverage_mode) if spec.coverage_file else None
    sink = WorkerSink(spec, wire, matrix, sampler)

    def stop(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if sink.signalled is None:
            sink.signalled = name  # first signal: stop after this chunk
        else:
            control.request_stop(name)  # second: now (never cuts a finding in half)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    wire.send({"event": "started", "pid": os.getpid(), "seed": spec.seed})
    config = RunConfig(
        target=target,
        target_spec=spec.target,
        target_is_model=is_model,
        profile=profile,
        seed=spec.seed,
        budget_s=budget_s,
        chunk_examples=spec.chunk_examples,
        max_steps=spec.max_steps,
        kinds=spec.kinds,
        adversarial_percent=spec.adversarial_percent,
        probe_every=spec.probe_every if spec.probe_every is not None else (1 if is_model else 25),
        database=Path(spec.database) if spec.database else None,
        shrink_budget_s=spec.shrink_budget_s,
        step_hook=_step_hook(matrix, sampler),
        control=control,
        lane=spec.lane,
    )
    rc = 0
    try:
        if sampler is not None:
            sampler.start()
        if getattr(target, "is_live", False):  # a live host: the live campaign (harness/live)
            from harness.live.machine import run_live

            run_live(config, EventBus(sink))
        else:
            run_campaign(config, EventBus(sink))
    except (KeyboardInterrupt, RunStopped):
        sink.reason = "interrupted"
    except Exception:  # a harness bug: log it, report what was done, exit non-zero (restart)
        traceback.print_exc()
        sink.reason = "error"
        rc = 3
    finally:
        if sampler is not None:
            sampler.stop()
        try:
            target.close()
        except Exception as e:  # a target that fails to close must not lose the report
            print(f"worker {spec.index}: closing the target failed: {e}", file=sys.stderr)
    final: dict[str, Any] = {"event": "finished", "reason": sink.reason, **sink.last, "sent": sink.sent}
    if matrix is not None:
        final["outcomes"] = matrix.to_json()
    if sampler is not None:
        sampler.save()
        final["branches"] = sampler.summary()
    wire.send(final)
    return rc


def main() -> int:
    # The wire is a private copy of stdout; fd 1 then points at stderr, so nothing printed by
    # a library can corrupt the JSON lines.
    wire = Wire(os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1))
    os.dup2(2, 1)
    line = sys.stdin.readline()
    try:
        data = json.loads(line)
        data["kinds"] = tuple(data.get("kinds") or DEFAULT_KINDS)
        spec = WorkerSpec(**data)
        if spec.lane not in LANES:
            raise TypeError(f"lane {spec.lane!r} is not one of {', '.join(LANES)}")
    except (json.JSONDecodeError, TypeError) as e:
        print(f"worker: bad spec line: {e}", file=sys.stderr)
        return 2
    return run_worker(spec, wire)


def spec_line(spec: WorkerSpec) -> str:
    data = asdict(spec)
    data["kinds"] = list(spec.kinds)
    return json.dumps(data) + "\n"


if __name__ == "__main__":
    sys.exit(main())
