"""Baselines that hold, measured (issue 15 item 3; not a test): findings a baseline should have
accepted, side by side with the harness of an earlier revision.

    .venv/bin/python bench/bench_baselines.py [--seeds 1,2,3,4] [--chunks 6] [--before REV] [--write]

Each scenario is an in-process campaign (seeded, a fixed number of chunks: deterministic) on a
reference model with one quirk a baseline accepts and, in some, one real defect it does not:

* `cleared+status` (changeset) — `changeset/cleared` ignored (accepted by a `known` INV-D01
  entry for that action type) and `changeset/statusChanged` ignored (real);
* `turnComplete`   (chat)      — `chat/turnComplete` ignored (accepted the same way); nothing real.

Columns, summed over the seeds: findings saved; *leaked* findings — ones a baseline accepts:
a message tagged `[baseline …]`, a failing step of the accepted action type, or an INV-D01
difference the accepted step left behind (its message names only `files`, in `cleared+status`),
or any finding at all in `turnComplete`; entries reported stale. With `--before REV` each
scenario also runs on the harness of revision REV (extracted with `git archive`).
`--write` appends the table, with this command, to `bench/results/baselines.md`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Runs in a subprocess whose PYTHONPATH is the harness under test; prints one JSON line.
DRIVER = r'''
import json, sys
from harness.corpus.baseline import parse_baseline
from harness.engine.run import RunConfig, run_campaign
from harness.engine.events import EventBus
from harness.reference import Model, Profile
from harness.targets.reference import ReferenceTarget

scenario, seeds, chunks = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
P = Profile.named("0.7.0")
ignore = lambda state, action, ctx: state
if scenario == "cleared+status":
    kind, accepted = "changeset", "changeset/cleared"
    overrides = {accepted: ignore, "changeset/statusChanged": ignore}
else:
    kind, accepted = "chat", "chat/turnComplete"
    overrides = {accepted: ignore}
entry = {"id": "accepted", "reason": "r", "known": {"invariant": "INV-D01", "actionType": accepted}}
found = leaked = stale = 0
for seed in seeds:
    baseline = parse_baseline({"format": "ahp-fuzz/baseline", "formatVersion": 1, "entries": [entry]})
    target = ReferenceTarget(P, model=Model(P, overrides=overrides))
    config = RunConfig(target=target, target_spec="bench", target_is_model=False, profile=P, seed=seed,
                       budget_s=None, max_chunks=chunks, chunk_examples=10, max_steps=25, kinds=(kind,),
                       baseline=baseline, heartbeat_s=0, profiles=(P,))
    for f in run_campaign(config, EventBus(lambda e: None)).findings:
        found += 1
        action = f.steps[f.failing_step].action
        leaked += (
            "[baseline" in f.message
            or (isinstance(action, dict) and action.get("type") == accepted)
            or scenario == "turnComplete"
            or (f.invariant == "INV-D01" and "files" in f.message and "status" not in f.message and "error" not in f.message)
        )
    stale += len(baseline.stale)
print(json.dumps({"found": found, "leaked": leaked, "stale": stale}))
'''

SCENARIOS = ("cleared+status", "turnComplete")


def measure(tree: Path, scenario: str, seeds: str, chunks: int) -> dict[str, int]:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, scenario, seeds, str(chunks)],
        capture_output=True, text=True, cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        timeout=1800,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{scenario} in {tree}: {proc.stderr[-2000:]}")
    result: dict[str, int] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def extract(rev: str) -> Path:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    where = Path(tempfile.mkdtemp(prefix="bench-baselines-"))
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    return where


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1,2,3,4")
    p.add_argument("--chunks", type=int, default=6)
    p.add_argument("--before", help="a git revision whose harness runs the 'before' rows")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    trees = [("this checkout", ROOT)]
    old = extract(args.before) if args.before else None
    if old is not None:
        trees.insert(0, (f"before ({args.before[:7]})", old))
    rows = ["| harness | scenario | findings | leaked (accepted only) | stale entries |", "|---|---|---|---|---|"]
    try:
        for label, tree in trees:
            for scenario in SCENARIOS:
                r = measure(tree, scenario, args.seeds, args.chunks)
                rows.append(f"| {label} | {scenario} | {r['found']} | {r['leaked']} | {r['stale']} |")
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    table = "\n".join(rows)
    print(table)
    if args.write:
        command = "python bench/bench_baselines.py " + " ".join(sys.argv[1:])
        with (ROOT / "bench/results/baselines.md").open("a", encoding="utf-8") as out:
            out.write(f"\n## {datetime.now():%Y-%m-%d %H:%M} — seeds {args.seeds}, {args.chunks} chunks\n\n"
                      f"`{command}`\n\n{table}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
