"""The campaign parent: starts worker processes, restarts the ones that die, gathers their
messages, stops on time (or on Ctrl-C) and hands back everything the report needs.

Workers are subprocesses (`python -m harness.campaign.worker`), one per core by default, each with
its own seed stream, all sharing one Hypothesis example database folder and one findings folder.
A worker that exits before the deadline (crash, SIGKILL, OOM) is started again with the next
generation of its seed stream; what it had saved stays saved. The parent never writes findings:
the workers do, atomically, before reporting them.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from harness.corpus.load import FindingFormatError, load_finding
from harness.engine.run import DEFAULT_LANE

from .outcomes import OutcomeMatrix, matrix_report
from .worker import WorkerSpec, spec_line

#: Seconds after the deadline a worker may take to send its last report. Every worker has the
#: campaign's deadline itself (its engine checks it before every step and every shrinking
#: replay, as `run`'s does), so a healthy worker has stopped by then; one that has not gets
#: SIGTERM, a second SIGTERM half-way through TERM_WAIT_S, then SIGKILL.
GRACE_S = 2.0
#: Seconds between SIGTERM and SIGKILL when stopping.
TERM_WAIT_S = 6.0


@dataclass
class CampaignSpec:
    targets: list[str]
    budget_s: float
    workers: int
    seed: int
    out: Path
    database: Path
    profile: str = "0.7.0"
    kinds: tuple[str, ...] | None = None
    max_steps: int = 40
    chunk_examples: int = 25
    adversarial_percent: int = 10
    probe_every: int | None = None
    timeout_s: float = 5.0
    coverage: bool = True
    coverage_every: int = 1
    #: "replay" (every worker records its reducer calls, replayed under coverage between chunks)
    #: or "trace" (worker 0 runs under the coverage tracer).
    coverage_mode: str = "replay"
    steer: bool = True
    lane: str = DEFAULT_LANE  # how workers draw steps (engine/run.py LANES, docs/lanes.md)
    program: str = "ahp-fuzz"  # how ahp-fuzz was invoked, for the replay commands the run writes
    shard: tuple[int, int] | None = None  # (i, N), 1-based i
    max_restarts: int = 20
    shrink_budget_s: float = 10.0
    sample_every_s: float = 5.0


@dataclass
class Slot:
    """One worker position; its process is replaced when it dies."""

    index: int
    target: str
    generation: int = -1
    proc: subprocess.Popen[str] | None = None
    done: bool = False
    restarts: int = 0
    crashes: list[dict[str, Any]] = field(default_factory=list)
    finished_msg: bool = False
    last: dict[str, Any] = field(default_factory=dict)  # the current generation's counters
    banked: dict[str, float] = field(default_factory=lambda: {"examples": 0, "steps": 0, "known": 0})
    outcomes: list[list[Any]] = field(default_factory=list)  # current generation's matrix
    banked_outcomes: OutcomeMatrix = field(default_factory=OutcomeMatrix)
    sent: dict[str, dict[str, int]] = field(default_factory=dict)
    coverage_files: list[Path] = field(default_factory=list)
    branches: dict[str, Any] | None = None
    log: IO[str] | None = None

    def total(self, key: str) -> float:
        return self.banked[key] + float(self.last.get(key, 0))

    def bank(self) -> None:
        for k in self.banked:
            self.banked[k] += float(self.last.get(k, 0))
        self.last = {}
        self.banked_outcomes.merge_json(self.outcomes)
        self.outcomes = []


@dataclass
class CampaignState:
    """What the parent knows, updated from worker messages; the live display reads it."""

    spec: CampaignSpec
    started: float = field(default_factory=time.monotonic)
    started_wall: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    slots: list[Slot] = field(default_factory=list)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)  # signature -> entry
    known: dict[str, dict[str, Any]] = field(default_factory=dict)
    branches: dict[str, Any] | None = None
    timeline: list[dict[str, Any]] = field(default_factory=list)
    status: str = "running"
    stopped_because: str = "budget"
    restarts: int = 0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def steps(self) -> int:
        return int(sum(s.total("steps") for s in self.slots))

    @property
    def examples(self) -> int:
        return int(sum(s.total("examples") for s in self.slots))

    def matrix(self) -> OutcomeMatrix:
        m = OutcomeMatrix()
        for s in self.slots:
            m.counts.update(s.banked_outcomes.counts)
            m.merge_json(s.outcomes)
        return m

    def sample(self) -> None:
        m = self.matrix()
        self.timeline.append({
            "t": round(self.elapsed, 1),
            "steps": self.steps,
            "findings": len(self.findings),
            "branchPercent": self.branches["percentBranches"] if self.branches else None,
            "outcomePairs": len({(t, o) for (_, t, o) in m.counts}),
        })


def _reader(slot: int, generation: int, stream: IO[str], inbox: queue.Queue[tuple[int, int, Any]]) -> None:
    for line in stream:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            msg = {"event": "garbled", "line": line[:200]}
        inbox.put((slot, generation, msg))
    inbox.put((slot, generation, None))  # end of stream


class Supervisor:
    def __init__(self, spec: CampaignSpec, on_update: Callable[[CampaignState], None] | None = None,
                 on_checkpoint: Callable[[CampaignState], None] | None = None, *,
                 started: float | None = None) -> None:
        """`started`: the `time.monotonic()` the budget counts from (the command's start;
        default now)."""
        self.spec = spec
        self.state = CampaignState(spec) if started is None else CampaignState(spec, started=started)
        self.on_update = on_update or (lambda s: None)
        self.on_checkpoint = on_checkpoint or (lambda s: None)
        self.inbox: queue.Queue[tuple[int, int, Any]] = queue.Queue()
        self.deadline = self.state.started + spec.budget_s
        self.stopping = False
        self._second_term = False
        #: The signal that stopped the campaign ("SIGINT", "SIGTERM"), once one did.
        self.signalled: str | None = None
        (spec.out / "workers").mkdir(parents=True, exist_ok=True)
        (spec.out / "findings").mkdir(parents=True, exist_ok=True)
        spec.database.mkdir(parents=True, exist_ok=True)
        self.state.slots = [
            Slot(i, spec.targets[i % len(spec.targets)]) for i in range(spec.workers)
        ]

    # -- processes ----------------------------------------------------------------------------

    def _start(self, slot: Slot) -> None:
        slot.generation += 1
        slot.finished_msg = False
        remaining = max(1.0, self.deadline - time.monotonic())
        cov_file = None
        if self.spec.coverage and (self.spec.coverage_mode == "replay" or slot.index == 0):
            cov_path = self.spec.out / "coverage" / f"w{slot.index}-g{slot.generation}.coverage"
            cov_path.parent.mkdir(parents=True, exist_ok=True)
            slot.coverage_files.append(cov_path)
            cov_file = str(cov_path)
        run_seed = self.spec.seed
        if self.spec.shard is not None:
            run_seed = shard_seed(self.spec.seed, *self.spec.shard)
        wspec = WorkerSpec(
            index=slot.index, generation=slot.generation, run_seed=run_seed, target=slot.target,
            profile=self.spec.profile, budget_s=remaining, deadline=self.deadline,
            findings_dir=str(self.spec.out / "findings"), database=str(self.spec.database),
            kinds=self.spec.kinds or WorkerSpec.kinds, max_steps=self.spec.max_steps,
            chunk_examples=self.spec.chunk_examples, adversarial_percent=self.spec.adversarial_percent,
            probe_every=self.spec.probe_every, timeout_s=self.spec.timeout_s,
            coverage_file=cov_file, coverage_every=self.spec.coverage_every, steer=self.spec.steer,
            lane=self.spec.lane, program=self.spec.program, shrink_budget_s=self.spec.shrink_budget_s, coverage_mode=self.spec.coverage_mode,
        )
        if slot.log is None:
            slot.log = open(self.spec.out / "workers" / f"w{slot.index}.log", "a", encoding="utf-8")  # noqa: SIM115
        slot.log.write(f"--- generation {slot.generation} seed {wspec.seed} target {slot.target}\n")
        slot.log.flush()
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.campaign.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slot.log, text=True,
            start_new_session=True,  # Ctrl-C reaches the parent only; it stops the workers itself
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(spec_line(wspec))
        proc.stdin.close()
        slot.proc = proc
        threading.Thread(target=_reader, args=(slot.index, slot.generation, proc.stdout, self.inbox),
                         daemon=True).start()

    def stop(self) -> None:
        """Stop early (thread-safe): workers get SIGTERM, finish their chunk and report."""
        self.state.stopped_because = "stopped"
        self.deadline = min(self.deadline, time.monotonic())

    def _signal_all(self, sig: int) -> None:
        for s in self.state.slots:
            if s.proc is not None and s.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    s.proc.send_signal(sig)

    # -- messages -----------------------------------------------------------------------------

    def _handle(self, slot: Slot, generation: int, msg: dict[str, Any] | None) -> None:
        st = self.state
        if generation != slot.generation:
            return  # a late line from a replaced process
        if msg is None:
            self._ended(slot)
            return
        ev = msg.get("event")
        if ev in ("progress", "finished"):
            slot.last = {k: msg.get(k, 0) for k in ("elapsed", "examples", "steps", "known", "chunk")}
            if "outcomes" in msg:
                slot.outcomes = msg["outcomes"]
            if "branches" in msg:
                slot.branches = msg["branches"]
                # Live figure: the best worker's (the final report combines all workers' data).
                st.branches = max((s.branches for s in st.slots if s.branches),
                                  key=lambda b: b.get("percentBranches", 0.0))
            if ev == "finished":
                slot.finished_msg = True
                for t, c in (msg.get("sent") or {}).items():
                    agg = slot.sent.setdefault(t, {"sent": 0, "changed": 0})
                    agg["sent"] += int(c.get("sent", 0))
                    agg["changed"] += int(c.get("changed", 0))
        elif ev == "finding":
            sig = msg["signature"]
            if sig not in st.findings:
                st.findings[sig] = {**{k: v for k, v in msg.items() if k != "event"},
                                    "worker": slot.index, "foundAfterSeconds": round(st.elapsed, 1)}
                self.on_checkpoint(st)
        elif ev == "known":
            entry = st.known.setdefault(msg["invariant"], {"knownIssue": msg.get("knownIssue"), "kinds": [],
                                                           "example": msg.get("message")})
            if msg["kind"] not in entry["kinds"]:
                entry["kinds"].append(msg["kind"])

    def _ended(self, slot: Slot) -> None:
        proc = slot.proc
        assert proc is not None
        try:
            rc = proc.wait(timeout=TERM_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        clean = rc == 0 and slot.finished_msg
        slot.bank()
        if not clean:
            how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
            slot.crashes.append({"generation": slot.generation, "how": how, "atSeconds": round(self.state.elapsed, 1)})
        remaining = self.deadline - time.monotonic()
        if not clean and not self.stopping and remaining > 2.0 and slot.restarts < self.spec.max_restarts:
            slot.restarts += 1
            self.state.restarts += 1
            self._start(slot)
        else:
            slot.done = True
            slot.proc = None

    # -- the loop -----------------------------------------------------------------------------

    def run(self) -> CampaignState:
        with _stop_signals(self):
            return self._run()

    def _run(self) -> CampaignState:
        st = self.state
        next_sample = time.monotonic()
        term_sent_at: float | None = None
        try:
            for slot in st.slots:  # (a signal meanwhile stops those already started)
                self._start(slot)
            while not all(s.done for s in st.slots):
                try:
                    idx, gen, msg = self.inbox.get(timeout=0.25)
                    self._handle(st.slots[idx], gen, msg)
                except queue.Empty:
                    pass
                now = time.monotonic()
                if now >= next_sample:
                    next_sample = now + self.spec.sample_every_s
                    st.sample()
                    self.on_checkpoint(st)
                self.on_update(st)
                if now > self.deadline + (GRACE_S if st.stopped_because == "budget" else 0.0) \
                        and term_sent_at is None:
                    self.stopping = True
                    term_sent_at = now
                    self._signal_all(signal.SIGTERM)
                if term_sent_at is not None:
                    self._escalate(now - term_sent_at)
        except KeyboardInterrupt:
            st.status, st.stopped_because = "interrupted", self.signalled or "SIGINT"
            for s in st.slots:
                if s.proc is None:  # never started (a signal during start-up): nothing to wait for
                    s.done = True
            self.stopping = True
            self._drain_after_stop()
        finally:
            for s in st.slots:
                if s.log is not None:
                    s.log.close()
                    s.log = None
        if st.status == "running":
            st.status = "finished"
        self._collect_from_disk()
        st.sample()
        return st

    def _escalate(self, since_term: float) -> None:
        """A second SIGTERM (stop now) half-way, SIGKILL for stragglers at the end."""
        if since_term > TERM_WAIT_S:
            self._signal_all(signal.SIGKILL)
        elif since_term > TERM_WAIT_S / 2 and not self._second_term:
            self._second_term = True
            self._signal_all(signal.SIGTERM)

    def _drain_after_stop(self) -> None:
        """After Ctrl-C: SIGTERM every worker, read what they still send, SIGKILL stragglers."""
        self._signal_all(signal.SIGTERM)
        sent_at = time.monotonic()
        while not all(s.done for s in self.state.slots):
            self._escalate(time.monotonic() - sent_at)
            try:
                idx, gen, msg = self.inbox.get(timeout=0.25)
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                self._signal_all(signal.SIGKILL)
                continue
            self._handle(self.state.slots[idx], gen, msg)

    def _collect_from_disk(self) -> None:
        """Findings a worker saved but could not report (killed in between) are still findings."""
        for path in sorted((self.spec.out / "findings").glob("*.json")):
            try:
                f = load_finding(path)
            except FindingFormatError:
                continue
            if f.signature in self.state.findings:
                continue
            self.state.findings[f.signature] = {
                "signature": f.signature, "file": str(path), "written": True, "invariant": f.invariant,
                "severity": f.severity, "title": f.title, "kind": f.kind, "message": f.message,
                "steps": f.failing_step + 1, "reproduced": not f.extra.get("flaky", False),
                "replay": f.replay_command(path, self.spec.program), "worker": None, "foundAfterSeconds": None,
                "fromDisk": True,
                **({"cause": f.cause} if getattr(f, "cause", None) is not None else {}),
            }


def shard_seed(seed: int, index: int, count: int) -> int:
    """Shard `index` of `count` (1-based) runs its own seed stream, disjoint from the others'."""
    return seed * count + (index - 1)


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i_text, n_text = text.split("/")
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard wants i/N (e.g. 2/8), got {text!r}") from None
    if n < 1 or not 1 <= i <= n:
        raise ValueError(f"--shard {text}: want 1 <= i <= N")
    return i, n


def outcomes_section(state: CampaignState, version: Any = None) -> dict[str, Any]:
    return matrix_report(state.matrix().counts, version)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


@contextlib.contextmanager
def _stop_signals(sup: Supervisor) -> Iterator[None]:
    """SIGINT and SIGTERM stop the campaign cleanly (workers drained, report written), however
    it was started: handlers are installed explicitly, since a process started with `&` from a
    non-interactive shell inherits SIGINT ignored and Python then installs no handler of its
    own. A second signal while draining kills the workers (`_drain_after_stop`). Off the main
    thread (a test driving the supervisor) signals cannot be caught and nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if sup.signalled is None:
            sup.signalled = signal.Signals(signum).name
        raise KeyboardInterrupt

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
