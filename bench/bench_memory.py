"""Campaign memory and throughput over time (a benchmark, not a test).

    python bench/bench_memory.py trace --target reference --minutes 4 [--lane fast] [--top 25]
    python bench/bench_memory.py campaign --target reference --minutes 30 [--label now] [--write]

Part `trace` — what grows: the campaign's loop (`run_campaign`, or `run_live` for a live target)
in this process under `tracemalloc` (≈2× slower: the rates of this part are not throughput
figures), a snapshot after the first minute and one at the end; the `--top` allocation sites
(file:line, 8 frames of traceback) whose live size grew most between the two, and the process's
RSS per minute.

Part `campaign` — what a night costs: `ahp-fuzz campaign --workers 1 --minutes N --target T` as
a user runs it (a subprocess), the worker's RSS (`/proc/<pid>/status` VmRSS) sampled every
`--every` seconds, and the steps per minute from the campaign's `report.json` timeline. The
verdict lines: steps/s in the 30th minute ÷ the 5th, RSS after 30 minutes ÷ after 5 (for a
shorter run: the last minute ÷ the 5th). `--write` appends the per-minute table to
bench/results/campaign.md.
"""

from __future__ import annotations

import argparse
import json
import linecache
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_mb(pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# -- trace ------------------------------------------------------------------------------------


def trace(args: argparse.Namespace) -> int:
    from harness.engine.control import RunControl
    from harness.engine.events import EventBus, Progress
    from harness.engine.run import RunConfig, run_campaign
    from harness.live.machine import run_live
    from harness.reference import Profile
    from harness.targets.base import open_target

    profile = Profile.named("0.7.0")
    target = open_target(args.target, profile=profile, timeout_s=5.0)
    budget = args.minutes * 60.0
    control = RunControl(budget)
    is_model = args.target == "reference"
    from harness.campaign.outcomes import OutcomeMatrix

    config = RunConfig(
        target=target,
        target_spec=args.target,
        target_is_model=is_model,
        profile=profile,
        seed=args.seed,
        budget_s=budget,
        chunk_examples=25,
        max_steps=40,
        probe_every=1 if is_model else 25,
        control=control,
        lane=args.lane,
        step_hook=OutcomeMatrix(profile.version),
    )
    tracemalloc.start(8)
    state: dict[str, Any] = {"first": None, "minute": 1, "rows": []}
    t0 = time.monotonic()

    def sink(event: Any) -> None:
        if not isinstance(event, Progress):
            return
        el = time.monotonic() - t0
        if el >= 60 * state["minute"]:
            state["rows"].append(
                (state["minute"], event.steps, rss_mb(), tracemalloc.get_traced_memory()[0] / 2**20)
            )
            print(
                f"  minute {state['minute']}: {event.steps} steps, RSS {state['rows'][-1][2]:.1f} MB, "
                f"traced {state['rows'][-1][3]:.1f} MB",
                flush=True,
            )
            if state["first"] is None:
                state["first"] = tracemalloc.take_snapshot()
            state["minute"] += 1

    try:
        (run_live if getattr(target, "is_live", False) else run_campaign)(config, EventBus(sink))
    finally:
        target.close()
    last = tracemalloc.take_snapshot()
    first = state["first"]
    if first is None:
        print("the run ended before its first minute", file=sys.stderr)
        return 2
    keep = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    ]
    stats = last.filter_traces(keep).compare_to(first.filter_traces(keep), "traceback")
    print(f"\nlargest growth between minute 1 and the end ({args.target}, lane {args.lane}):")
    for s in stats[: args.top]:
        print(
            f"\n+{s.size_diff / 1024:.0f} KiB ({s.count_diff:+d} blocks), now {s.size / 1024:.0f} KiB"
        )
        for fr in s.traceback.format()[-16:]:
            print("   ", fr)
    linecache.clearcache()
    return 0


# -- campaign ---------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _worker_pid(parent: int) -> int | None:
    """The campaign's worker: the child process running `harness.campaign.worker`."""
    for c in _children(parent):
        try:
            cmd = Path(f"/proc/{c}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"harness.campaign.worker" in cmd:
            return c
    return None


def campaign(args: argparse.Namespace) -> int:
    out = Path(args.out or f"/tmp/bench_memory_{args.label}_{int(time.time())}")
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "campaign",
        "--minutes",
        f"{args.minutes:g}",
        "--workers",
        "1",
        "--target",
        args.target,
        "--seed",
        str(args.seed),
        "--out",
        str(out),
        "--quiet",
        *args.extra,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    load0 = os.getloadavg()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    samples: list[tuple[float, float]] = []  # (seconds, RSS MB of the worker)
    while proc.poll() is None:
        time.sleep(args.every)
        w = _worker_pid(proc.pid)
        r = rss_mb(w) if w is not None else None
        if r is not None:
            samples.append((time.monotonic() - t0, r))
            print(f"  {samples[-1][0]:6.0f}s  worker RSS {r:.1f} MB", flush=True)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    timeline = report.get("timeline") or []
    rows = _per_minute(samples, timeline, args.minutes)
    lines = [
        f"### {args.label}: `{' '.join(['ahp-fuzz', *cmd[3:]])}`",
        "",
        f"Exit {proc.returncode}; {report.get('steps', '?')} steps in {report.get('elapsed', '?')} s; "
        f"load average {load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after; {platform.platform()}, "
        f"Python {platform.python_version()}.",
        "",
        "| minute | steps (campaign) | steps/s in that minute | worker RSS MB |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {m} | {s if s is not None else '—'} | {r:.0f} | {mb:.1f} |"
        if r is not None and mb is not None
        else f"| {m} | {s if s is not None else '—'} | {'—' if r is None else f'{r:.0f}'} | "
        f"{'—' if mb is None else f'{mb:.1f}'} |"
        for m, s, r, mb in rows
    ]
    lines += ["", *_verdict(rows), ""]
    text = "\n".join(lines)
    print(text)
    if proc.returncode not in (0, 1):
        print(err[-2000:], file=sys.stderr)
    if args.write:
        with (ROOT / "bench" / "results" / "campaign.md").open("a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


def _timeline_steps(timeline: list[dict[str, Any]], at: float) -> int | None:
    best = None
    for p in timeline:
        t = p.get("t", p.get("elapsed"))
        if isinstance(t, int | float) and t <= at and isinstance(p.get("steps"), int):
            best = p["steps"]
    return best


def _per_minute(
    samples: list[tuple[float, float]], timeline: list[dict[str, Any]], minutes: float
) -> list[tuple[int, int | None, float | None, float | None]]:
    rows = []
    for m in range(1, int(minutes) + 1):
        s_now, s_before = (
            _timeline_steps(timeline, 60.0 * m),
            _timeline_steps(timeline, 60.0 * (m - 1)),
        )
        rate = (s_now - (s_before or 0)) / 60.0 if s_now is not None else None
        near = [r for t, r in samples if 60.0 * m - 45 <= t <= 60.0 * m + 15]
        rows.append((m, s_now, rate, near[-1] if near else None))
    return rows


def _verdict(rows: list[tuple[int, int | None, float | None, float | None]]) -> list[str]:
    if len(rows) < 6:
        return ["(shorter than 6 minutes: no 5th-minute comparison)"]
    fifth, last = rows[4], rows[-1]
    out = []
    if fifth[2] and last[2] is not None:
        out.append(
            f"* steps/s in minute {last[0]} ÷ minute 5: **{last[2] / fifth[2]:.2f}** (target ≥ 0.9)"
        )
    if fifth[3] and last[3] is not None:
        out.append(
            f"* worker RSS after minute {last[0]} ÷ after minute 5: **{last[3] / fifth[3]:.2f}** "
            f"({fifth[3]:.0f} → {last[3]:.0f} MB; target ≤ 1.2)"
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="part", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--target", default="reference")
    t.add_argument("--minutes", type=float, default=4.0)
    t.add_argument("--lane", default="fast")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--top", type=int, default=25)
    c = sub.add_parser("campaign")
    c.add_argument("--target", default="reference")
    c.add_argument("--minutes", type=float, default=30.0)
    c.add_argument("--seed", type=int, default=20261201)
    c.add_argument("--every", type=float, default=15.0)
    c.add_argument("--label", default="now")
    c.add_argument("--out", default=None)
    c.add_argument("--write", action="store_true")
    c.add_argument("extra", nargs="*", help="more campaign options (after --)")
    args = ap.parse_args()
    return trace(args) if args.part == "trace" else campaign(args)


if __name__ == "__main__":
    raise SystemExit(main())
