"""Live machine throughput and time-to-detect per embedded-host defect (a benchmark, not a test).

    .venv/bin/python bench/bench_live.py [--part speed|detect|all] [--seconds 15] [--seeds 3]
                                         [--detect-budget 60] [--write]

Part `speed` — steps per second (one step = one live op applied, settled and checked), each
configuration measured twice in the same run: as it is now and as it was before issue 7 (the
*baseline*: the client event loop on a background thread, handed every op with
`run_coroutine_threadsafe`, and `host:embedded` served on its own thread):

* **machine / embedded**: `run_live_campaign` against `host:embedded` as
  `ahp-fuzz run --target host:embedded` runs it: four clients, Hypothesis drawing scenarios and
  state-aware actions, a ping barrier per op, fresh snapshots of changed channels every op (all
  channels every 10), every live check. Now the host is served on the campaign's own loop, which
  runs inline in the Hypothesis thread;
* **machine / host-cmd**: the same against `host-cmd:python -m harness.cli host` (the host in a
  subprocess, so it runs on the other core);
* **wire / embedded**: a fixed list of ops (title changes, turns) through `LiveRun.apply` with the
  same settling and checks but no Hypothesis: the wire-and-checks ceiling;
* the lean wire loop: host-cmd, one client, fresh snapshots every 10 ops.

Part `detect` — for every protocol defect of the embedded host, `--seeds` focused seeded runs
(`harness.engine.live_focus.run_focused`, bounded by `--detect-budget`): seconds until a finding
of one of the defect's invariants was caught (before shrinking).

`--write` records the tables in bench/results/live.md (with the command and the load average).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engine.control import RunControl  # noqa: E402
from harness.engine.events import EventBus  # noqa: E402
from harness.engine.live import LiveConfig, run_live_campaign  # noqa: E402
from harness.engine.live_focus import FOCUS, run_focused  # noqa: E402
from harness.engine.live_run import DEFAULT_CLIENTS, EventLoopThread, LiveRun  # noqa: E402
from harness.targets.live import LiveTarget, parse_live_spec, serve_embedded_in_loop  # noqa: E402


def machine_speed(spec: str, seconds: float, seed: int = 1, *, baseline: bool = False) -> tuple[int, float]:
    target = LiveTarget(spec)
    try:
        summary = run_live_campaign(
            LiveConfig(target.url, spec, seed=seed, budget_s=seconds, control=RunControl(seconds),
                       shrink_budget_s=1.0, max_findings=50, threaded_loop=baseline, host_in_loop=not baseline),
            EventBus(),
        )
    finally:
        target.close()
    return summary.steps, summary.elapsed_s


def wire_speed(spec: str, seconds: float, *, clients: int = 4, snapshot_every: int = 1,
               baseline: bool = False) -> tuple[int, float]:
    loop = EventLoopThread(threaded=baseline)
    parsed = parse_live_spec(spec)
    target: LiveTarget | None = None
    host_close = None
    if parsed.kind == "embedded" and not baseline:
        url, host_close = loop.run(serve_embedded_in_loop(parsed), 20.0)
    else:
        target = LiveTarget(spec)
        url = target.url
    run = LiveRun(url, loop=loop, snapshot_every=snapshot_every)
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
        return n, time.monotonic() - t0
    finally:
        run.close()
        if host_close is not None:
            loop.run(host_close(), 10.0)
        loop.close()
        if target is not None:
            target.close()


def detect(seeds: int, budget: float) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    for defect in sorted(FOCUS):
        times: list[float | None] = []
        for seed in range(seeds):
            r = run_focused(defect, seed=seed, budget_s=budget, shrink_budget_s=0.5)
            times.append(r.first_s)
        out[defect] = times
        shown = ", ".join("—" if t is None else f"{t:.2f}" for t in times)
        print(f"  {defect:30s} {shown}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("speed", "detect", "all"), default="all")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--detect-budget", type=float, default=60.0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    lines: list[str] = []
    host_cmd = f"host-cmd:{sys.executable} -m harness.cli host"
    if args.part in ("speed", "all"):
        base = "baseline: loop thread + host thread"
        rows = [
            ("machine", "host:embedded — now: one loop, inline, host on it",
             lambda: machine_speed("host:embedded", args.seconds)),
            ("machine", f"host:embedded — {base}", lambda: machine_speed("host:embedded", args.seconds, baseline=True)),
            ("machine", "host-cmd — now: inline loop", lambda: machine_speed(host_cmd, args.seconds)),
            ("machine", "host-cmd — baseline: loop thread", lambda: machine_speed(host_cmd, args.seconds, baseline=True)),
            ("wire + checks", "host:embedded, 4 clients, snapshots every op — now",
             lambda: wire_speed("host:embedded", args.seconds)),
            ("wire + checks", f"host:embedded, 4 clients, snapshots every op — {base}",
             lambda: wire_speed("host:embedded", args.seconds, baseline=True)),
            ("wire + checks", "host-cmd, 1 client, snapshots every 10 ops — now",
             lambda: wire_speed(host_cmd, args.seconds, clients=1, snapshot_every=10)),
        ]
        lines += ["## Throughput", "",
                  "`CPU ms/step` is this process's CPU time (user + system) per step — for `host:embedded` "
                  "the host's work included, for `host-cmd` not (its subprocess runs on the other core); `steps per CPU-s` is its inverse, the rate "
                  "one otherwise idle core would sustain (the wall-clock rate depends on the machine's load).", "",
                  "| what | host | steps | seconds | steps/s | CPU ms/step | steps per CPU-s |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for what, host, fn in rows:
            c0 = time.process_time()
            steps, secs = fn()
            cpu = (time.process_time() - c0) / max(1, steps)
            row = (f"| {what} | {host} | {steps} | {secs:.1f} | {steps / secs:.0f} | {cpu * 1000:.2f} | "
                   f"{1 / cpu:.0f} |")
            print(row, flush=True)
            lines.append(row)
        lines.append("")
    if args.part in ("detect", "all"):
        print("time to detect (s) per seed:", flush=True)
        found = detect(args.seeds, args.detect_budget)
        lines += ["## Time to detect (seconds until the first finding of the defect's invariants was caught)", "",
                  f"{args.seeds} seeds per defect, budget {args.detect_budget:g}s each, focused scenario weights "
                  "(`harness/engine/live_focus.py`).", "",
                  "| defect | per seed | median | max |", "|---|---|---:|---:|"]
        medians: list[float] = []
        missed = 0
        for defect, times in found.items():
            got = [t for t in times if t is not None]
            missed += len(times) - len(got)
            med = statistics.median(got) if got else None
            if med is not None:
                medians.append(med)
            shown = ", ".join("—" if t is None else f"{t:.2f}" for t in times)
            lines.append(f"| {defect} | {shown} | {'—' if med is None else f'{med:.2f}'} | "
                         f"{'—' if not got else f'{max(got):.2f}'} |")
        lines += ["", f"Median of the per-defect medians: **{statistics.median(medians):.2f} s**; "
                  f"slowest detection {max(t for ts in found.values() for t in ts if t is not None):.2f} s; "
                  f"runs that found nothing within the budget: {missed}.", ""]
    load_after = os.getloadavg()
    header = [
        "# Live machine: throughput and time to detect", "",
        "Command: `.venv/bin/python bench/bench_live.py " + " ".join(sys.argv[1:]) + "`", "",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores; load "
        f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after (the machine is shared: other "
        "engineers' test runs and benchmarks ran at the same time).", "",
    ]
    text = "\n".join(header + lines)
    print(text)
    if args.write:
        out = ROOT / "bench" / "results" / "live.md"
        out.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
