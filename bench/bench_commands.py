"""Time to detect each command-level defect with `ahp-fuzz commands`, beside the clean host.

For every command defect of the embedded host: a run over *all* the spec's commands (the way a
user runs it) and a run over the one command the defect lives in, both stopping at the first
finding of the expected check; the seconds to that finding, the calls made, and whether the
saved trace reproduced on a fresh host. The baseline is the clean host over the same budget,
once per seed of `--seeds` (its findings, by severity: the reference host must have none).
Seeds are fixed; the machine's load changes the seconds, not which examples are tried.

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_commands.py --budget 60 --seeds 1,2,3 --write
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.bridge.fuzz import CommandRunConfig, run_commands
from harness.spec.specdir import SpecDir

#: defect → (the command it lives in, the check that must catch it)
DEFECTS: dict[str, tuple[str, str]] = {
    "resource-read-traversal": ("resourceRead", "CMD-CONFINEMENT"),
    "resource-encoded-traversal": ("resourceList", "CMD-CONFINEMENT"),
    "resource-symlink-write": ("resourceWrite", "CMD-CONFINEMENT"),
    "resource-prefix-confusion": ("resourceResolve", "CMD-CONFINEMENT"),
    "resource-read-dir-crash": ("resourceRead", "ST-SERVER-ERROR"),
    "resource-createonly-clobber": ("resourceWrite", "CMD-PARTIAL-STATE"),
    "subset-unchecked": ("createChat", "CMD-CHAT-SUBSET"),
}


def detect(spec: SpecDir, defect: str, methods: tuple[str, ...] | None, check: str, method: str,
           budget: float, seed: int) -> tuple[float | None, int, bool]:
    cfg = CommandRunConfig(
        target=f"host:embedded?defect={defect}", spec=spec, seed=seed, budget_s=budget, methods=methods,
        stop_when=lambda f: f.invariant == check and f.steps[f.failing_step].method == method,
    )
    r = run_commands(cfg)
    hit = next((f for f in r.findings if f.invariant == check and f.steps[f.failing_step].method == method), None)
    if hit is None:
        return None, r.calls, False
    return float(hit.extra["foundAfterSeconds"]), r.calls, bool(hit.extra.get("reproduced"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1, help="the seed of the defect runs")
    ap.add_argument("--seeds", help="comma-separated seeds of the clean-host baseline (default: --seed)")
    ap.add_argument("--only", help="comma-separated defects")
    ap.add_argument("--write", action="store_true", help="write bench/results/commands.md")
    args = ap.parse_args()
    spec = SpecDir.from_env()
    if spec is None:
        print("set AHP_SPEC_DIR", file=sys.stderr)
        return 2
    chosen = args.only.split(",") if args.only else list(DEFECTS)
    rows = []
    for defect in chosen:
        method, check = DEFECTS[defect]
        for scope, methods in (("all commands", None), (method, (method,))):
            t, calls, rep = detect(spec, defect, methods, check, method, args.budget, args.seed)
            rows.append((defect, check, scope, t, calls, rep))
            print(f"{defect:30s} {check:18s} {scope:16s} "
                  f"{'not found' if t is None else f'{t:6.1f}s'} calls={calls} reproduced={rep}", flush=True)
    # The embedded host checks command params against the spec folder's schema, read from the
    # environment as every process of `ahp-fuzz commands` does.
    os.environ["AHP_SPEC_DIR"] = str(spec.path)
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else [args.seed]
    clean_lines = []
    for seed in seeds:
        start = time.monotonic()
        clean = run_commands(CommandRunConfig(target="host:embedded", spec=spec, seed=seed, budget_s=args.budget))
        sev = Counter(f.severity for f in clean.findings)
        seen = ", ".join(sorted({f.invariant + " on " + f.steps[f.failing_step].method for f in clean.findings}))
        clean_lines.append(f"clean host, all commands, seed {seed}, {args.budget:g}s: {clean.calls} calls in "
                           f"{time.monotonic() - start:.1f}s, {clean.rounds} round(s); findings by severity: "
                           f"{dict(sev) or 'none'} ({seen or '-'})")
        print(clean_lines[-1], flush=True)
    if args.write:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        lines = [
            "# Command fuzzing: time to detect each command-level defect",
            "",
            "Produced by:",
            "",
            "```",
            f"AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_commands.py --budget {args.budget:g} "
            f"--seed {args.seed}" + (f" --seeds {args.seeds}" if args.seeds else "") + " --write",
            "```",
            "",
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the end of the run "
            "(the checkout is shared with other engineers' runs: seconds are noisy, the seeds fix which examples "
            "are tried). Each run stops at the first finding of the expected check on the defect's command; "
            "`reproduced` = the saved trace (setup + the failing command) failed the same way on a fresh host "
            "and a fresh tree.",
            "",
            "| defect | check | commands fuzzed | time to detect | calls | reproduced |",
            "|---|---|---|---|---|---|",
        ]
        for defect, check, scope, t, calls, rep in rows:
            lines.append(f"| `{defect}` | {check} | {scope} | {'not found' if t is None else f'{t:.1f} s'} "
                         f"| {calls} | {'yes' if rep else 'no'} |")
        lines += ["", f"Baseline, the same budget, seed{'s' if len(seeds) > 1 else ''} "
                  f"{', '.join(map(str, seeds))}:", "", *[f"- {line}" for line in clean_lines], ""]
        Path(__file__).resolve().parent.joinpath("results", "commands.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
