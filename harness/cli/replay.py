"""`ahp-fuzz replay`: re-run a saved finding exactly and print what happens."""

from __future__ import annotations

import argparse
from typing import Any

from harness.errors import UsageError

from ._common import open_target_or_usage, profile_or_usage


def replay_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from harness.corpus.finding import FindingFormatError, load_finding
    from harness.engine.replay import replay

    try:
        finding = load_finding(args.file)
    except FindingFormatError as e:
        raise UsageError(str(e)) from e
    spec = args.target or finding.target
    profile = profile_or_usage(finding.profile)
    target = open_target_or_usage(spec, profile, args.timeout)
    try:
        result = replay(finding, target, target_is_model=spec.strip() == "reference")
    finally:
        target.close()
    c = Console(highlight=False)
    c.print(f"{args.file}: {finding.invariant} [{finding.severity}] on {finding.kind}, "
            f"{len(finding.steps)} steps, profile {finding.profile}, target {spec}", markup=False)
    c.print(f"  {finding.message}", markup=False)
    c.print(result.summary(finding), markup=False)
    for i, v in result.violations:
        c.print(f"  step {i}: {v.invariant} [{v.severity}] {v.message}", markup=False)
    if result.diff:
        c.print("  expected (reference) vs observed (target):", markup=False)
        for line in result.diff:
            c.print(f"    {line}", markup=False)
    return 1 if result.reproduced else 0


def register(sub: Any) -> None:
    r = sub.add_parser(
        "replay",
        help="re-run a saved finding exactly and print what happens",
        description="Replay a finding file: exit 1 if it still reproduces, 0 if it no longer does.",
    )
    r.add_argument("file", help="a finding JSON file")
    r.add_argument("--target", help="target to replay against (default: the one recorded in the finding)")
    r.add_argument("--timeout", type=float, default=5.0, help="per-step target timeout in seconds")
    r.set_defaults(func=replay_command)
