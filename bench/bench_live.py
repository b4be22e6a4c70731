"""Live machine throughput and time-to-detect per embedded-host defect (a benchmark, not a test).

    .venv/bin/python bench/bench_live.py [--part speed|detect|all] [--seconds 8] [--rounds 3]
                                         [--seeds 3] [--detect-budget 60] [--write]

Part `speed` — steps per second (one step = one live op applied, settled and checked), the new
settings and the old ones measured in the same run, in `--rounds` alternating rounds of
`--seconds` each (new then old, old then new, …: the machine is shared, its load drifts), after
a short warm-up (Hypothesis builds its caches once per process):

* **machine**: `run_live_campaign` against `host:embedded` as `ahp-fuzz run --target
  host:embedded` runs it: four clients, Hypothesis drawing scenarios and state-aware actions,
  every live check, the host served on the campaign's own loop. *New*: `LiveConfig()` — the lean
  settling policy (`settle.LEAN`: barrier pings only the op's senders, real fresh snapshots
  where needed / sampled / full, folded views between), connections pooled across machine
  runs, four scenarios per Hypothesis rule call, the GC's first threshold at 20 000. *Old*:
  `LiveConfig(settle="thorough", reuse_connections=False, gc_threshold=None,
  scenarios_per_rule=1)` — every client pinged and every changed channel snapshotted in every
  profile after every op, fresh connections per machine run (the settings before issue 17);
* **wire + checks**: a fixed list of ops (title changes, cancels) through `LiveRun.apply` with
  four clients and no Hypothesis, lean vs thorough: the wire-and-checks ceiling.

`CPU ms/step` is this process's CPU time (user + system) per step, the host's work included
(it runs on the same loop); `steps per CPU-s` is its inverse — the rate one otherwise idle core
would sustain, the number to compare on a loaded machine. `frames/step` counts WebSocket frames
in both directions (the transcript); the settling columns come from `LiveRun.stats`.

Part `detect` — for every protocol defect of the embedded host, `--seeds` focused seeded runs
(`harness.live.focus.run_focused`, bounded by `--detect-budget`) with the new settings
and with the old (alternating, the load drifts): seconds until a finding of one of the defect's invariants was caught (before
shrinking).

Part `lanes` (issue 25) — the live fast lane (`LiveConfig(lane="fast")`, the default: pools that
Hypothesis fills, a seeded PRNG) against the Hypothesis live lane (`lane="hypothesis"`, the
baseline: every choice a Hypothesis draw), both on `host:embedded` with every live check, and the
in-process fast lane (`ahp-fuzz run --target reference` as the command line configures it) in the
same rounds, alternating: steps/s, CPU, frames per step and second, milliseconds per step per
phase (report.json `liveSpeed`), the cyclic garbage collector's time and the objects it found
per step (`gc.callbacks`: what reference counting did not free), and the live fast lane's rate
as a fraction of the in-process one. To compare two commits, run this script from each checkout
at the same time (the same load for both): `PYTHONPATH=CHECKOUT python CHECKOUT/bench/bench_live.py`.

Part `clean` — `--clean-seeds` clean runs of the live fast lane (`--clean-seconds` each) against
`host:embedded`: findings (there must be none) and steps.

Part `plain` — every protocol defect of the embedded host, `--seeds` *plain* runs each (default
scenario weights, preflight on, as `ahp-fuzz run --target 'host:embedded?defect=D'` runs them),
fast lane and Hypothesis lane alternating: seconds until the first finding of the defect.

`--write` appends the tables to bench/results/live.md (with the command and the load average).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engine.control import RunControl  # noqa: E402
from harness.engine.events import EventBus, RunFinished  # noqa: E402
from harness.live import LiveConfig, run_live_campaign  # noqa: E402
from harness.live.client import DEFAULT_CLIENTS  # noqa: E402
from harness.live.focus import FOCUS, run_focused  # noqa: E402
from harness.live.loop import EventLoopThread  # noqa: E402
from harness.live.run import LiveRun  # noqa: E402
from harness.live.settle import LEAN, THOROUGH, SettlePolicy  # noqa: E402
from harness.targets.live import parse_live_spec, serve_embedded_in_loop  # noqa: E402

NEW = {"settle": "lean", "reuse_connections": None, "lane": "hypothesis"}
OLD = {"settle": "thorough", "reuse_connections": False, "gc_threshold": None, "scenarios_per_rule": 1,
       "lane": "hypothesis"}
FAST = {"lane": "fast"}
HYPOTHESIS = {"lane": "hypothesis"}


@dataclass
class Measured:
    steps: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    stats: Counter[str] = field(default_factory=Counter)

    def add(self, steps: int, wall: float, cpu: float, stats: Counter[str] | None = None) -> None:
        self.steps += steps
        self.wall += wall
        self.cpu += cpu
        self.stats.update(stats or {})


class GcClock:
    """The cyclic garbage collector's passes while it is on (`gc.callbacks`): seconds and the
    objects they found, in all."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collected = 0
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._t0
            self.collected += int(info.get("collected", 0))

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def machine_speed(spec: str, seconds: float, seed: int, options: dict[str, Any]) -> tuple[int, float, Counter[str]]:
    events: list[Any] = []
    with GcClock() as clock:
        summary = run_live_campaign(
            LiveConfig(None, spec, seed=seed, budget_s=seconds, control=RunControl(seconds),
                       shrink_budget_s=1.0, max_findings=50, **options),
            EventBus(events.append),
        )
    assert not summary.findings, [(f.invariant, f.message) for f in summary.findings]
    done = [e for e in events if isinstance(e, RunFinished)]
    settling = done[0].extra.get("liveSettling", {}) if done else {}
    out = Counter({k: v for k, v in settling.items() if isinstance(v, int)})
    phases = done[0].extra.get("liveSpeed", {}).get("phaseSeconds", {}) if done else {}
    for k, v in phases.items():  # milliseconds, summed (Counter holds ints)
        out[f"phase:{k}"] += round(1000 * v)
    out["gc:ms"] += round(1000 * clock.seconds)
    out["gc:collected"] += clock.collected
    return summary.steps, summary.elapsed_s, out


def in_process_speed(seconds: float, seed: int) -> tuple[int, float, Counter[str]]:
    """`ahp-fuzz run --target reference` for `seconds`, as the command line configures it (the
    fast lane, probes every step, the spec checkout's schema)."""
    from harness.cli import _profiles
    from harness.engine.run import RunConfig, run_campaign
    from harness.reference import Profile
    from harness.spec.specdir import SpecDir
    from harness.targets.base import open_target

    profile = Profile.named("0.7.0")
    target = open_target("reference", profile=profile, timeout_s=5.0)
    try:
        config = RunConfig(target=target, target_spec="reference", target_is_model=True, profile=profile, seed=seed,
                           budget_s=seconds, control=RunControl(seconds), probe_every=1, lane="fast",
                           schema=_profiles.schema_of(SpecDir.from_env()))
        summary = run_campaign(config, EventBus(lambda e: None))
    finally:
        target.close()
    return summary.steps, summary.elapsed_s, Counter()


def wire_speed(spec: str, seconds: float, policy: SettlePolicy, *, clients: int = 4) -> tuple[int, float, Counter[str]]:
    loop = EventLoopThread()
    url, host_close = loop.run(serve_embedded_in_loop(parse_live_spec(spec)), 20.0)
    run = LiveRun(url, loop=loop, policy=policy)
    try:
        for i, c in enumerate(DEFAULT_CLIENTS[:clients]):
            run.apply(c.op(i))
        s = f"ahp-session:/fz-{run.token}-s1"
        run.apply({"op": "command", "client": 0, "method": "createSession",
                   "params": {"channel": s, "provider": run.provider(), "workingDirectories": ["file:///repo-a"]}})
        for i in range(clients):
            run.apply({"op": "subscribe", "client": i, "channel": s})
        chat = next(ch for ch, k in run.kinds.items() if k == "chat")
        n, t0 = 0, time.monotonic()
        frames0 = len(run.transcript.frames)
        while time.monotonic() - t0 < seconds:
            if n % 10 == 9:
                op: dict[str, Any] = {"op": "dispatch", "client": n % clients, "channel": chat, "action": {
                    "type": "chat/turnCancelled", "turnId": "none", "duration": 0}}
            else:
                op = {"op": "dispatch", "client": n % clients, "channel": s,
                      "action": {"type": "session/titleChanged", "title": f"t{n}"}}
            found = run.apply(op)
            assert not found, found
            n += 1
        stats = Counter(run.stats)
        stats["frames"] = len(run.transcript.frames) - frames0
        return n, time.monotonic() - t0, stats
    finally:
        run.close()
        loop.run(host_close(), 10.0)
        loop.close()


def alternate(rounds: int, new: Callable[[int], tuple[int, float, Counter[str]]],
              old: Callable[[int], tuple[int, float, Counter[str]]]) -> tuple[Measured, Measured]:
    """`rounds` rounds of both, alternating which goes first; sums of steps, wall and CPU time."""
    got = {"new": Measured(), "old": Measured()}
    for r in range(rounds):
        order = [("new", new), ("old", old)] if r % 2 == 0 else [("old", old), ("new", new)]
        for name, fn in order:
            c0 = time.process_time()
            steps, wall, stats = fn(r)
            got[name].add(steps, wall, time.process_time() - c0, stats)
            print(f"  round {r + 1} {name}: {steps} steps in {wall:.1f}s", flush=True)
    return got["new"], got["old"]


def speed_rows(what: str, new: Measured, old: Measured) -> list[str]:
    rows = []
    for name, m in (("new", new), ("old", old)):
        st = m.stats
        per = max(1, m.steps)
        rows.append(
            f"| {what} | {name} | {m.steps} | {m.wall:.1f} | {m.steps / m.wall:.0f} | {m.cpu * 1000 / per:.2f} | "
            f"**{m.steps / m.cpu:.0f}** | {st['frames'] / per:.1f} | {st['pings'] / per:.2f} | "
            f"{st['realSnapshots'] / per:.2f} | {st['foldedViews'] / per:.2f} |")
    rows.append(f"| {what} | **new / old** | | | **{(new.steps / new.wall) / (old.steps / old.wall):.2f}×** | "
                f"{(new.cpu / max(1, new.steps)) / (old.cpu / max(1, old.steps)):.2f}× | "
                f"**{(new.steps / new.cpu) / (old.steps / old.cpu):.2f}×** | | | | |")
    return rows


def settling_line(m: Measured) -> str:
    st = m.stats
    ops = sum(st[k] for k in ("opsFull", "opsSampled", "opsNeeded", "opsFolded", "opsTouched", "opsNoSnapshot")) or 1
    parts = [f"{k[3:].lower()} {100 * st[k] / ops:.0f}%" for k in
             ("opsNeeded", "opsSampled", "opsFull", "opsFolded", "opsTouched", "opsNoSnapshot") if st[k]]
    return (f"ops by fresh-snapshot reason: {', '.join(parts)}; pings skipped "
            f"{st['pingsSkipped']} of {st['pings'] + st['pingsSkipped']}; connections reused {st['connectionsReused']}")


def detect(seeds: int, budget: float) -> tuple[dict[str, list[float | None]], dict[str, list[float | None]]]:
    """Per defect and seed, a focused run with the new settings and one with the old, in
    alternating order (the load drifts): seconds to the first finding, None when none came."""
    out: dict[str, dict[str, list[float | None]]] = {"new": {}, "old": {}}
    for defect in sorted(FOCUS):
        for seed in range(seeds):
            order = [("new", NEW), ("old", OLD)] if seed % 2 == 0 else [("old", OLD), ("new", NEW)]
            for name, options in order:
                r = run_focused(defect, seed=seed, budget_s=budget, shrink_budget_s=0.5, **options)
                out[name].setdefault(defect, []).append(r.first_s)
        print(f"  {defect:30s} new {_times(out['new'][defect])}; old {_times(out['old'][defect])}", flush=True)
    return out["new"], out["old"]


def _times(ts: list[float | None]) -> str:
    return ", ".join("—" if t is None else f"{t:.2f}" for t in ts)


def detect_rows(new: dict[str, list[float | None]], old: dict[str, list[float | None]]) -> list[str]:
    lines = ["| defect | new: per seed | new: median | old: per seed | old: median |", "|---|---|---:|---|---:|"]
    meds: dict[str, list[float]] = {"new": [], "old": []}
    missed = {"new": 0, "old": 0}
    worst = {"new": 0.0, "old": 0.0}
    for defect in new:
        cells = []
        for name, found in (("new", new), ("old", old)):
            ts = found.get(defect, [])
            got = [t for t in ts if t is not None]
            missed[name] += len(ts) - len(got)
            med = statistics.median(got) if got else None
            if med is not None:
                meds[name].append(med)
            worst[name] = max([worst[name], *got])
            cells += [_times(ts), "—" if med is None else f"{med:.2f}"]
        lines.append(f"| {defect} | " + " | ".join(cells) + " |")
    lines.append("")
    for name in ("new", "old"):
        if meds[name]:
            lines.append(f"* {name}: median of the per-defect medians **{statistics.median(meds[name]):.2f} s**, "
                         f"slowest detection {worst[name]:.2f} s, runs that found nothing within the budget: "
                         f"**{missed[name]}**")
    return [*lines, ""]


def lane_rows(fast: Measured, hyp: Measured, inproc: Measured) -> list[str]:
    lines = ["| what | steps | seconds | steps/s | CPU ms/step | steps per CPU-s | frames/step | frames/s "
             "| draw ms/step | send ms/step | settle ms/step | checks ms/step | other ms/step "
             "| GC ms/step | GC objects/step |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, m in (("live fast lane (new default)", fast), ("live Hypothesis lane (baseline)", hyp)):
        per = max(1, m.steps)
        ph = [m.stats[f"phase:{k}"] / per for k in ("draw", "send", "settle", "checks", "other")]
        lines.append(f"| {name}, host:embedded | {m.steps} | {m.wall:.1f} | **{m.steps / m.wall:.0f}** | "
                     f"{m.cpu * 1000 / per:.2f} | {m.steps / m.cpu:.0f} | {m.stats['frames'] / per:.1f} | "
                     f"{m.stats['frames'] / m.wall:.0f} | " + " | ".join(f"{x:.3f}" for x in ph)
                     + f" | {m.stats['gc:ms'] / per:.3f} | {m.stats['gc:collected'] / per:.0f} |")
    lines.append(f"| in process, fast lane, reference | {inproc.steps} | {inproc.wall:.1f} | "
                 f"**{inproc.steps / inproc.wall:.0f}** | {inproc.cpu * 1000 / max(1, inproc.steps):.3f} | "
                 f"{inproc.steps / inproc.cpu:.0f} | | | | | | | | | |")
    f_rate, h_rate, i_rate = fast.steps / fast.wall, hyp.steps / hyp.wall, inproc.steps / inproc.wall
    return [*lines, "",
            f"* live fast ÷ live Hypothesis: **{f_rate / h_rate:.2f}×** steps/s, "
            f"{(fast.steps / fast.cpu) / (hyp.steps / hyp.cpu):.2f}× steps per CPU-s",
            f"* live fast ÷ in-process fast lane (same rounds): **{f_rate / i_rate:.3f}×** "
            f"(Hypothesis lane: {h_rate / i_rate:.3f}×; target ≥ 500 steps/s or ≥ 0.15×)", ""]


def clean_runs(seeds: int, seconds: float) -> list[str]:
    lines = ["| seed | steps | seconds | steps/s | findings |", "|---:|---:|---:|---:|---:|"]
    for seed in range(seeds):
        events: list[Any] = []
        summary = run_live_campaign(
            LiveConfig(None, "host:embedded", seed=100 + seed, budget_s=seconds, control=RunControl(seconds),
                       shrink_budget_s=2.0, max_findings=10, lane="fast"), EventBus(events.append))
        found = ", ".join(f"{f.invariant}: {f.message[:80]}" for f in summary.findings) or "0"
        lines.append(f"| {100 + seed} | {summary.steps} | {summary.elapsed_s:.1f} | "
                     f"{summary.steps / max(1e-9, summary.elapsed_s):.0f} | {found} |")
        print(lines[-1], flush=True)
    return [*lines, ""]


def plain_detect(seeds: int, budget: float) -> tuple[dict[str, list[float | None]], dict[str, list[float | None]]]:
    """Per defect and seed, a plain run (default weights, preflight on) with the fast lane and
    one with the Hypothesis lane, alternating: seconds to the first finding of the defect."""
    from harness.live.ops import DEFAULT_WEIGHTS

    out: dict[str, dict[str, list[float | None]]] = {"fast": {}, "hypothesis": {}}
    for defect in sorted(FOCUS):
        for seed in range(seeds):
            order = ["fast", "hypothesis"] if seed % 2 == 0 else ["hypothesis", "fast"]
            for lane in order:
                r = run_focused(defect, seed=seed, budget_s=budget, shrink_budget_s=0.5, weights=dict(DEFAULT_WEIGHTS),
                                chunk_examples=10, preflight=True, lane=lane)
                out[lane].setdefault(defect, []).append(r.first_s)
        print(f"  {defect:30s} fast {_times(out['fast'][defect])}; hypothesis {_times(out['hypothesis'][defect])}",
              flush=True)
    return out["fast"], out["hypothesis"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("speed", "detect", "all", "lanes", "clean", "plain", "issue25"), default="all")
    ap.add_argument("--clean-seeds", type=int, default=5)
    ap.add_argument("--clean-seconds", type=float, default=30.0)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--detect-budget", type=float, default=60.0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    lines: list[str] = []
    spec = "host:embedded"
    if args.part in ("speed", "all"):
        print("warm-up", flush=True)
        machine_speed(spec, 3.0, 99, NEW)
        lines += ["### Throughput", "",
                  f"{args.rounds} alternating rounds of {args.seconds:g} s per configuration (sums).", "",
                  "| what | settings | steps | seconds | steps/s | CPU ms/step | steps per CPU-s | frames/step "
                  "| pings/step | real snapshots/step | folded views/step |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        print("machine", flush=True)
        m_new, m_old = alternate(args.rounds, lambda r: machine_speed(spec, args.seconds, 1 + r, NEW),
                                 lambda r: machine_speed(spec, args.seconds, 1 + r, OLD))
        lines += speed_rows("machine, host:embedded", m_new, m_old)
        print("wire + checks", flush=True)
        w_new, w_old = alternate(args.rounds, lambda r: wire_speed(spec, args.seconds / 2, LEAN),
                                 lambda r: wire_speed(spec, args.seconds / 2, THOROUGH))
        lines += speed_rows("wire + checks, 4 clients", w_new, w_old)
        lines += ["", f"* machine, new: {settling_line(m_new)}", f"* machine, old: {settling_line(m_old)}", ""]
        print("\n".join(lines), flush=True)
    if args.part in ("lanes", "issue25"):
        print("warm-up", flush=True)
        machine_speed(spec, 3.0, 99, FAST)
        machine_speed(spec, 3.0, 99, HYPOTHESIS)
        in_process_speed(3.0, 99)
        got = {"fast": Measured(), "hypothesis": Measured(), "inproc": Measured()}
        for r in range(args.rounds):
            order = ["fast", "hypothesis", "inproc"] if r % 2 == 0 else ["inproc", "hypothesis", "fast"]
            for name in order:
                c0 = time.process_time()
                steps, wall, stats = (in_process_speed(args.seconds, 1 + r) if name == "inproc"
                                      else machine_speed(spec, args.seconds, 1 + r, FAST if name == "fast" else HYPOTHESIS))
                got[name].add(steps, wall, time.process_time() - c0, stats)
                print(f"  round {r + 1} {name}: {steps} steps in {wall:.1f}s ({steps / wall:.0f}/s)", flush=True)
        lines += ["### Live lanes and the in-process fast lane (issue 25)", "",
                  f"{args.rounds} alternating rounds of {args.seconds:g} s per configuration (sums; each run's "
                  "start-up — pools filled, schema compiled — inside its seconds).", ""]
        lines += lane_rows(got["fast"], got["hypothesis"], got["inproc"])
        print("\n".join(lines), flush=True)
    if args.part in ("clean", "issue25"):
        print("clean runs", flush=True)
        lines += ["### Clean runs of the live fast lane (host:embedded, every check)", "",
                  f"{args.clean_seeds} seeds, {args.clean_seconds:g} s each.", ""]
        lines += clean_runs(args.clean_seeds, args.clean_seconds)
    if args.part in ("plain", "issue25"):
        print("plain runs, time to detect (s) per seed:", flush=True)
        found_fast, found_hyp = plain_detect(args.seeds, args.detect_budget)
        lines += ["### Time to detect, plain runs (seconds until the first finding of the defect's invariants)", "",
                  f"{args.seeds} seeds per defect, budget {args.detect_budget:g}s each, default scenario weights, "
                  "preflight on; *new* = the live fast lane, *old* = the Hypothesis live lane, alternating per seed.", ""]
        lines += detect_rows(found_fast, found_hyp)
    if args.part in ("detect", "all"):
        print("time to detect (s) per seed:", flush=True)
        found_new, found_old = detect(args.seeds, args.detect_budget)
        lines += ["### Time to detect (seconds until the first finding of the defect's invariants was caught)", "",
                  f"{args.seeds} seeds per defect, budget {args.detect_budget:g}s each, focused scenario weights "
                  "(`harness/live/focus.py`), new settings and old in the same run, alternating per seed.", ""]
        lines += detect_rows(found_new, found_old)
    load_after = os.getloadavg()
    header = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} — new settings vs old, same run", "",
        "Command: `.venv/bin/python bench/bench_live.py " + " ".join(sys.argv[1:]) + "`", "",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores; load "
        f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after (the machine is shared: other "
        "engineers' test runs and benchmarks ran at the same time).", "",
    ]
    text = "\n".join(header + lines)
    print(text)
    if args.write:
        out = ROOT / "bench" / "results" / "live.md"
        with out.open("a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
        print(f"appended to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
