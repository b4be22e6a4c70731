"""`ahp-fuzz run`: fuzz a target against the reference model and the invariant catalogue."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from harness.errors import UsageError

from ._common import open_target_or_usage, parse_duration, profile_or_usage


def run_command(args: argparse.Namespace) -> int:
    from harness.engine.campaign import DEFAULT_KINDS, RunConfig, run_campaign
    from harness.engine.events import EventBus
    from harness.report.console import ConsoleReporter
    from harness.report.writers import FindingWriter, JsonReport, JunitReport

    try:
        budget = parse_duration(args.budget)
    except ValueError as e:
        raise UsageError(str(e)) from e
    kinds = tuple(k.strip() for k in args.kinds.split(",")) if args.kinds else DEFAULT_KINDS
    profile = profile_or_usage(args.profile)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    out = Path(args.out) if args.out else Path("reports") / f"run-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    target = open_target_or_usage(args.target, profile, args.timeout)
    is_model = args.target.strip() == "reference"
    findings = FindingWriter(out / "findings")
    report = JsonReport(out / "report.json", findings, ["ahp-fuzz", *sys.argv[1:]])
    bus = EventBus(ConsoleReporter(quiet=args.quiet), findings, report, JunitReport(out / "junit.xml"))
    config = RunConfig(
        target=target,
        target_spec=args.target,
        target_is_model=is_model,
        profile=profile,
        seed=seed,
        budget_s=budget,
        max_steps=args.max_steps,
        chunk_examples=args.chunk,
        kinds=kinds,
        adversarial_percent=args.adversarial,
        probe_every=args.probe_every if args.probe_every is not None else (1 if is_model else 25),
        max_findings=args.max_findings,
        database=Path(args.database) if args.database else None,
    )
    try:
        summary = run_campaign(config, bus)
    except ValueError as e:
        raise UsageError(str(e)) from e
    finally:
        target.close()
    print(f"report: {out / 'report.json'}", file=sys.stderr)
    for f in summary.findings:
        path = findings.paths.get(f.signature)
        print(f"replay: {f.replay_command(path)}", file=sys.stderr)
    return 1 if summary.findings else 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="fuzz a target against the reference model and the invariant catalogue",
        description="Fuzz a target: generated action sequences go through the target and the "
        "reference model together; every step is checked; failures are shrunk and saved as "
        "replayable findings. Exit 0 clean (known upstream issues do not count), 1 findings, "
        "2 usage/setup error.",
    )
    p.add_argument("--target", default="reference",
                   help="reference | adapter:<command line> | ts:<AHP checkout> | js:<module> (default: reference)")
    p.add_argument("--budget", default="60s", help="wall-clock budget, e.g. 30s, 5m, 1h (default: 60s)")
    p.add_argument("--seed", type=int, help="run seed (default: derived from the clock; printed)")
    p.add_argument("--profile", default="0.7.0",
                   help="protocol version or named profile (0.6.0, 0.7.0, 0.7.0-main, 0.8.0, …; default 0.7.0)")
    p.add_argument("--kinds", help="comma-separated state kinds to fuzz (default: all seven)")
    p.add_argument("--max-steps", type=int, default=40, help="max actions per generated sequence (default 40)")
    p.add_argument("--chunk", type=int, default=25, help="sequences per seed chunk (default 25)")
    p.add_argument("--adversarial", type=int, default=10, metavar="PCT",
                   help="percentage of adversarial actions (default 10)")
    p.add_argument("--probe-every", type=int, metavar="N",
                   help="run probe checks (purity, determinism, …) every N steps; 0 = never "
                   "(default: 1 for the reference model, 25 for other targets, whose probes cost a "
                   "full-state round trip)")
    p.add_argument("--max-findings", type=int, help="stop after this many findings")
    p.add_argument("--timeout", type=float, default=5.0, help="per-step target timeout in seconds (default 5)")
    p.add_argument("--out", help="output folder (default: reports/run-<time>-seed<seed>)")
    p.add_argument("--database", help="a Hypothesis example database folder shared across runs (accelerator)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run_command)
