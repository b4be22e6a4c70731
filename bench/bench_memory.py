"""Campaign memory and throughput over time (a benchmark, not a test).

    python bench/bench_memory.py trace --target reference --minutes 4 [--lane fast] [--top 25]
    python bench/bench_memory.py campaign --target reference --minutes 30 [--label now] [--write]

Part `trace` — what grows: the campaign worker's own code (`harness.campaign.worker.run_worker`:
the engine or the live campaign, its coverage sampler and outcome matrix) in this process under
`tracemalloc` (slower: the rates of this part are not throughput figures), a snapshot after the
first sample and one at the end; the `--top` allocation sites whose live size grew most between
the two, and the process's RSS and traced size per sample. `--no-trace`: RSS only, full speed;
`--no-coverage`: without the coverage sampler (to tell its share); `--malloc`: per sample,
glibc's `mallinfo2` (brk heap, mmapped chunks, in use, free), pymalloc's arenas and the bytes
of its live blocks (`sys._debugmallocstats`), the RSS of `[heap]` and of anonymous mappings;
`--collect`: a full `gc.collect()` per sample — what it found, by type, and the figures after
it (garbage that was waiting for the collector); `--census`: objects by type, growth.

Part `campaign` — what a night costs: `ahp-fuzz campaign --workers 1 --minutes N --target T` as
a user runs it (a subprocess), the worker's RSS (`/proc/<pid>/status` VmRSS) sampled every
`--every` seconds, and the steps per minute from the campaign's `report.json` timeline. The
verdict lines: steps/s in the 30th minute ÷ the 5th, RSS after 30 minutes ÷ after 5 (for a
shorter run: the last minute ÷ the 5th). `--write` appends the per-minute table to
bench/results/campaign.md.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import linecache
import os
import platform
import re
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def census() -> Counter[str]:
    """Live objects the collector tracks, by type (and containers by length bucket)."""
    import gc

    out: Counter[str] = Counter()
    for o in gc.get_objects():
        out[type(o).__qualname__] += 1
    return out


def _malloc_trim() -> None:
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_figures() -> dict[str, float]:
    """Where this process's memory is, in MB: glibc malloc (`mallinfo2`: `sbrk` = the main
    arena's brk heap, `mmap` = chunks it mapped on their own, `in use` / `free` in its arenas),
    CPython's small-object allocator (`pymalloc`: its arenas, 1 MiB each, and the bytes of live
    blocks in them — `sys._debugmallocstats`), and the RSS of the `[heap]` mapping and of the
    anonymous mappings (`/proc/self/smaps`: pymalloc arenas and glibc's mmapped chunks)."""
    out: dict[str, float] = {}
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        mi = libc.mallinfo2()
        mb = 2**20
        out |= {
            "sbrk": mi.arena / mb,
            "mmap": mi.hblkhd / mb,
            "in use": mi.uordblks / mb,
            "free": mi.fordblks / mb,
        }
    text = _debugmallocstats()
    for key, pattern in (
        ("pymalloc", r"(\d+) arenas \* \d+ bytes/arena"),
        ("py blocks", r"# bytes in allocated blocks\s*=\s*([\d,]+)"),
    ):
        m = re.search(pattern, text)
        if m:
            n = int(m.group(1).replace(",", ""))
            out[key] = n if key == "pymalloc" else n / 2**20
    heap = anon = 0
    name = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/smaps").read_text().splitlines():
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split()
                name = parts[5] if len(parts) > 5 else ""
            elif line.startswith("Rss:"):
                kb = int(line.split()[1])
                if name == "[heap]":
                    heap += kb
                elif name == "":
                    anon += kb
    out["[heap]"], out["anon"] = heap / 1024, anon / 1024
    return out


def _debugmallocstats() -> str:
    """`sys._debugmallocstats()`'s report (it writes to the C stderr: fd 2, caught in a file)."""
    import tempfile

    with tempfile.TemporaryFile("w+") as f:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(f.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        return f.read()


def rss_mb(pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# -- trace ------------------------------------------------------------------------------------


class _Wire:
    """The worker's wire to the parent, here: progress lines counted, the memory sampled."""

    def __init__(self, minutes_every: float, snap: bool) -> None:
        self.t0 = time.monotonic()
        self.every = minutes_every * 60.0
        self.next = self.every
        self.first: tracemalloc.Snapshot | None = None
        self.snap = snap
        self.rows: list[tuple[float, int, float | None, float]] = []
        self.steps = 0
        self.malloc_rows = []

    trim: bool = False
    malloc: bool = False
    collect: bool = False
    top: int = 12
    malloc_rows: list[tuple[float, dict[str, float]]]
    census: bool | None = None
    census_first: Counter[str] | None = None

    def send(self, message: dict[str, Any]) -> None:
        if self.trim:
            _malloc_trim()
        if isinstance(message.get("steps"), int):
            self.steps = message["steps"]
        el = time.monotonic() - self.t0
        if el < self.next:
            return
        self.next += self.every
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if tracemalloc.is_tracing() else 0.0
        self.rows.append((el, self.steps, rss_mb(), traced))
        print(
            f"  {el:6.0f}s: {self.steps} steps, RSS {self.rows[-1][2]:.1f} MB, traced {traced:.1f} MB",
            flush=True,
        )
        if self.malloc:
            figures = malloc_figures()
            self.malloc_rows.append((el, figures))
            print("          " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()), flush=True)
        if self.collect:
            import gc

            gc.set_debug(gc.DEBUG_SAVEALL)  # the unreachable objects kept, to be counted
            t = time.perf_counter()
            found = gc.collect()
            ms = 1000 * (time.perf_counter() - t)
            gc.set_debug(0)
            kinds = Counter(type(o).__qualname__ for o in gc.garbage)
            gc.garbage.clear()
            gc.collect()
            after = malloc_figures() if self.malloc else {}
            print(
                f"          gc.collect(): {found} unreachable objects in {ms:.0f} ms, "
                f"{len(gc.get_objects())} tracked left"
                + (
                    "; after: " + ", ".join(f"{k} {v:.1f}" for k, v in after.items())
                    if after
                    else ""
                ),
                flush=True,
            )
            print(
                "          unreachable by type: "
                + ", ".join(f"{k} {n}" for k, n in kinds.most_common(self.top)),
                flush=True,
            )
        if self.census and self.census_first is None:
            import gc

            gc.collect()
            self.census_first = census()
        if self.snap and self.first is None and len(self.rows) >= 1:
            self.first = tracemalloc.take_snapshot()


def trace(args: argparse.Namespace) -> int:
    """The campaign worker's own code (`run_worker`, coverage sampler and outcome matrix
    included) in this process, under tracemalloc unless `--no-trace`."""
    import tempfile

    from harness.campaign.worker import WorkerSpec, run_worker

    out = Path(tempfile.mkdtemp(prefix="bench_memory_trace_"))
    spec = WorkerSpec(
        index=0,
        generation=0,
        run_seed=args.seed,
        target=args.target,
        profile="0.7.0",
        budget_s=args.minutes * 60.0,
        findings_dir=str(out / "findings"),
        database=None,
        coverage_file=None if args.no_coverage else str(out / "coverage.w0"),
        lane=args.lane,
    )
    if not args.no_trace:
        tracemalloc.start(args.frames)
    wire = _Wire(args.sample_minutes, snap=not args.no_trace)
    wire.trim = args.trim
    wire.malloc = args.malloc
    wire.collect = args.collect
    wire.top = args.top
    wire.census = True if args.census else None
    run_worker(spec, wire)  # type: ignore[arg-type]
    rows = wire.rows
    if wire.census_first is not None:
        import gc

        gc.collect()
        diff = census()
        diff.subtract(wire.census_first)
        print("\nobjects by type, growth between the first sample and the end:")
        for name, n in diff.most_common(25):
            print(f"  {name:40s} {n:+d}")
    print("\n| seconds | steps | RSS MB | traced MB |\n|---:|---:|---:|---:|")
    for el, steps, r, t in rows:
        print(f"| {el:.0f} | {steps} | {r or 0:.1f} | {t:.1f} |")
    if args.no_trace or wire.first is None:
        return 0
    last = tracemalloc.take_snapshot()
    keep = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    ]
    stats = last.filter_traces(keep).compare_to(wire.first.filter_traces(keep), args.group)
    print(
        f"\nlargest growth between the first sample and the end ({args.target}, lane {args.lane}):"
    )
    for s in stats[: args.top]:
        print(
            f"\n+{s.size_diff / 1024:.0f} KiB ({s.count_diff:+d} blocks), now {s.size / 1024:.0f} KiB"
        )
        for fr in s.traceback.format()[-2 * args.frames :]:
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
    t.add_argument("--frames", type=int, default=6)
    t.add_argument("--group", default="traceback", choices=("traceback", "lineno", "filename"))
    t.add_argument("--sample-minutes", type=float, default=1.0)
    t.add_argument("--no-trace", action="store_true", help="RSS only (the worker at full speed)")
    t.add_argument(
        "--no-coverage", action="store_true", help="without the worker's coverage sampler"
    )
    t.add_argument(
        "--census", action="store_true", help="objects by type at the first sample and the end"
    )
    t.add_argument("--trim", action="store_true", help="malloc_trim(0) at every progress message")
    t.add_argument(
        "--malloc",
        action="store_true",
        help="per sample: glibc malloc's and pymalloc's figures, [heap] and anonymous RSS",
    )
    t.add_argument(
        "--collect",
        action="store_true",
        help="per sample: a full gc.collect() and what it found (garbage awaiting the collector)",
    )
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
