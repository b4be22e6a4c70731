"""A host that is not conformant yet (issue 16): time to each imitation defect, restarts, and what
the new probes cost a clean run (a benchmark, not a test).

    .venv/bin/python bench/bench_live_wild.py [--part wild|cli|overhead|all] [--budget 60] [--write]

Part `wild` — `run_live_campaign` against `host-cmd:python -m harness.cli host --port 0` with every
imitation defect on at once (no-ping, dies-on-null, never-applies, echo-to-newest-socket,
version-not-offered, rebinds-on-reinitialize, serves-before-initialize): per defect, the findings
that name it and the seconds from the start until each was caught (before shrinking); the host's
deaths and restarts.

Part `cli` — the same as `ahp-fuzz run --budget 60s` in a subprocess: exit code, wall seconds,
report status (the issue's "exits 1 within 75 s with a finished report").

Part `overhead` — steps per second of a plain run of the clean `host:embedded`, side by side in
one run: with the issue-16 probes (preflight of every handshake probe and bare JSON value,
`handshake` weight 2, `garbage` weight 2) and without them (no preflight, `handshake` 0,
`garbage` 1: the weights before issue 16). Same seed, same budget.

`--write` appends the tables to bench/results/live.md with the command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engine.events import EventBus, FindingFound, RunFinished, Shrinking  # noqa: E402
from harness.live import LiveConfig, run_live_campaign  # noqa: E402
from harness.live.focus import caught_by  # noqa: E402
from harness.live.ops import DEFAULT_WEIGHTS  # noqa: E402
from harness.targets.live import LiveTarget  # noqa: E402

DEFECTS = ("no-ping", "dies-on-null", "never-applies", "echo-to-newest-socket", "version-not-offered",
           "rebinds-on-reinitialize", "serves-before-initialize")
HOST = f"{sys.executable} -m harness.cli host --port 0 " + " ".join(f"--defect {d}" for d in DEFECTS)


def part_wild(budget: float) -> list[str]:
    target = LiveTarget(f"host-cmd:{HOST}")
    caught: list[tuple[str, float]] = []
    found: list[Any] = []
    host: dict[str, Any] = {}
    start = time.monotonic()

    def sink(e: object) -> None:
        if isinstance(e, RunFinished):
            host.update(e.extra.get("host") or {})
        if isinstance(e, Shrinking):
            caught.append((e.invariant, time.monotonic() - start))
        if isinstance(e, FindingFound):
            found.append(e.finding)

    try:
        cfg = LiveConfig(url=target.url, target_spec=target.spec.text, seed=1, budget_s=budget, target=target)
        summary = run_live_campaign(cfg, EventBus(sink))
    finally:
        target.close()
    first = {inv: t for inv, t in reversed(caught)}
    lines = ["| defect | named by | caught after (s) |", "|---|---|---:|"]
    for d in DEFECTS:
        ids = sorted(i for i in caught_by(d) if i in first)
        times = ", ".join(f"{first[i]:.1f}" for i in ids)
        lines.append(f"| {d} | {', '.join(ids) or '**not found**'} | {times or '—'} |")
    lines += ["", f"{len(found)} findings ({', '.join(f.invariant for f in found)}) in {summary.elapsed_s:.1f} s, "
              f"{summary.steps} steps, {summary.examples} machine runs; stopped: {summary.stopped_because}; "
              f"host deaths {host.get('deaths', 0)}, restarts {host.get('restarts', 0)}"]
    return lines


def part_cli(budget: float) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "harness.cli", "run", "--target", f"host-cmd:{HOST}", "--budget",
               f"{budget:g}s", "--seed", "1", "--quiet", "--out", str(out)]
        t0 = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=budget + 120)
        wall = time.monotonic() - t0
        report = json.loads((out / "report.json").read_text())
    ids = [f["invariant"] for f in report["findings"]]
    host = report.get("host") or {}
    return ["| exit | wall s | status | findings | host deaths | host restarts |", "|---:|---:|---|---|---:|---:|",
            f"| {done.returncode} | {wall:.1f} | {report['status']} | {', '.join(ids)} | "
            f"{host.get('deaths', 0)} | {host.get('restarts', 0)} |"]


def part_overhead(seconds: float) -> list[str]:
    """Steps per second of the *other* ops (probe ops — handshake, garbage, the preflight — are
    cheaper than a fuzzing step and would flatter the new configuration), each configuration run
    twice, alternating."""
    from harness.live.ops import preflight_ops

    old = {**DEFAULT_WEIGHTS, "handshake": 0, "garbage": 1}
    configs = (("before (no preflight, handshake 0, garbage 1)", False, old),
               ("issue 16 (preflight, handshake 2, garbage 2)", True, dict(DEFAULT_WEIGHTS)))
    totals = {name: [0, 0, 0.0, 0] for name, _, _ in configs}
    for _ in range(2):
        for name, preflight, weights in configs:
            cov: dict[str, Any] = {}
            summary = run_live_campaign(
                LiveConfig(url=None, target_spec="host:embedded", seed=3, budget_s=seconds, token_salt="bench",
                           preflight=preflight, weights=weights),
                EventBus(lambda e, cov=cov: cov.update(e.coverage) if isinstance(e, RunFinished) else None))
            probes = sum(cov.get(f"scenario {k}", {}).get("sent", 0) for k in ("handshake", "garbage"))
            probes += len(preflight_ops()) if preflight else 0
            t = totals[name]
            t[0] += summary.steps
            t[1] += summary.steps - probes
            t[2] += summary.elapsed_s
            t[3] += len(summary.findings)
    base = totals[configs[0][0]][1] / totals[configs[0][0]][2]
    lines = ["| configuration (2 runs each, alternating) | steps | of which fuzzing ops | s | fuzzing ops/s | ratio | findings |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, (steps, other, el, n) in totals.items():
        lines.append(f"| {name} | {steps} | {other} | {el:.1f} | {other / el:.1f} | {other / el / base:.2f} | {n} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("wild", "cli", "overhead", "all"), default="all")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("AHP_SPEC_DIR", "/work/shared/ahp-spec/0.7.0")
    out: list[str] = []
    if args.part in ("wild", "all"):
        out += ["### Every imitation defect at once (programmatic, time to each)", "", *part_wild(args.budget), ""]
    if args.part in ("cli", "all"):
        out += ["### The same as `ahp-fuzz run` (subprocess)", "", *part_cli(args.budget), ""]
    if args.part in ("overhead", "all"):
        out += ["### What the probes cost a clean plain run (side by side)", "", *part_overhead(args.seconds), ""]
    text = "\n".join(out)
    print(text)
    if args.write:
        load = os.getloadavg()[0]
        head = (f"\n## A host that is not conformant yet (issue 16; {time.strftime('%H:%M UTC', time.gmtime())}, "
                f"load ≈ {load:.1f})\n\nCommand: `.venv/bin/python bench/bench_live_wild.py --part {args.part} "
                f"--budget {args.budget:g} --seconds {args.seconds:g} --write`\n\n")
        with (ROOT / "bench" / "results" / "live.md").open("a", encoding="utf-8") as f:
            f.write(head + text + "\n")


if __name__ == "__main__":
    main()
