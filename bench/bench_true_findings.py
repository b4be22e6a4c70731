"""True findings, measured (issue 9; not a test): what runs report, side by side.

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_true_findings.py \\
        [--budget 300] [--seed 1] [--before REV] [--only typed,typed+base] [--write]

Scenarios, each an `ahp-fuzz run` subprocess on the chat kind with the same seed and budget:

* `typed`        — the reference model served through the adapter with a seeded systemic
  "typed client" defect (drops empty lists on encode) and two behavioural defects (chat/delta
  ignores turnId; chat/turnStarted keeps IsRead): `tests/mutants.py:typed_client_with_two_bugs`;
* `typed+base`   — the same with a baseline entry accepting absent ≡ [] everywhere;
* `reference`    — the in-process reference model (all kinds);
* `ref-adapter`  — the reference model served through the adapter (all kinds);
* with `--before REV`: `typed` once more with the harness of revision REV (the adapter served
  from this checkout), the behaviour before issue 9 — one finding per (invariant, kind).

Columns: findings; which seeded defect was reported and after how many seconds (file time of
its first finding); findings that are presence-only (`[]` vs `<absent>`, the systemic quirk);
valid-lane steps in the saved findings that the spec's action schema rejects (must be 0).
`--write` appends the table, with this command, to `bench/results/true-findings.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
ADAPTER = f"adapter:/usr/bin/env PYTHONPATH={ROOT} {PY} -m harness.targets.reference_adapter"
TYPED = f"{ADAPTER} --model {ROOT}/tests/mutants.py:typed_client_with_two_bugs"
BASELINE = {
    "format": "ahp-fuzz/baseline", "formatVersion": 1,
    "entries": [{"id": "drops-empty-lists", "reason": "omitempty encoder",
                 "normalise": {"absentEquals": [], "paths": ["**"]}}],
}


def _defects(messages: list[tuple[str, float]]) -> dict[str, float | None]:
    def first(pred: Any) -> float | None:
        times = [t for m, t in messages if pred(m)]
        return min(times) if times else None

    return {
        "empty lists dropped": first(lambda m: "[]" in m and "<absent>" in m),
        "delta ignores turnId": first(lambda m: "chat/delta" in m),
        "turnStarted keeps IsRead": first(lambda m: "chat/turnStarted" in m and "status" in m),
    }


def run(name: str, target: str, budget: int, seed: int, kinds: str, extra: list[str], pythonpath: Path) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix=f"true-{name}-"))
    cmd = [PY, "-m", "harness.cli", "run", "--target", target, "--budget", f"{budget}s", "--seed", str(seed),
           "--out", str(out / "run"), "--quiet", *(["--kinds", kinds] if kinds else []), *extra]
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=budget * 3 + 120)
    files = sorted((out / "run" / "findings").glob("*.json"))
    found = [json.loads(f.read_text()) for f in files]
    messages = [(d.get("message", ""), round(f.stat().st_mtime - t0, 1)) for d, f in zip(found, files, strict=True)]
    invalid = 0
    spec = os.environ.get("AHP_SPEC_DIR")
    if spec:
        from harness.spec.action_schema import ActionSchema
        from harness.spec.specdir import SpecDir

        schema = ActionSchema.from_spec(SpecDir(spec))
        assert schema is not None
        invalid = sum(
            1 for d in found for s in d["steps"] if not s.get("probe") and schema.problem(s["action"]) is not None
        )
    return {
        "name": name, "exit": proc.returncode, "findings": len(found), "defects": _defects(messages),
        "presence": sum(1 for m, _ in messages if "[]" in m and "<absent>" in m),
        "invalid": invalid, "stderr": proc.stderr[-400:] if proc.returncode not in (0, 1) else "",
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--budget", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--before", help="a git revision whose harness runs the 'before' column")
    p.add_argument("--only", help="comma-separated scenario names to run (default: all)")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    base = Path(tempfile.mkdtemp()) / "typed.baseline.json"
    base.write_text(json.dumps(BASELINE))
    scenarios = {
        "typed": (TYPED, "chat", []),
        "typed+base": (TYPED, "chat", ["--baseline", str(base)]),
        "reference": ("reference", "", []),
        "ref-adapter": (ADAPTER, "", []),
    }
    only = set(args.only.split(",")) if args.only else set(scenarios)
    rows = [run(n, t, args.budget, args.seed, k, x, ROOT) for n, (t, k, x) in scenarios.items() if n in only]
    if args.before:
        old = Path(tempfile.mkdtemp()) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), args.before], check=True)
        try:
            rows.append(run(f"typed (before, {args.before[:7]})", TYPED, args.budget, args.seed, "chat", [], old))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)
    if not rows:
        return 2
    names = list(rows[0]["defects"])
    head = "| run | exit | findings | " + " | ".join(names) + " | presence-only findings | schema-invalid valid-lane steps |"
    lines = [head, "|" + "---|" * (6 + len(names) - 1)]
    for r in rows:
        cells = [f"{r['defects'][n]} s" if r["defects"][n] is not None else "—" for n in names]
        lines.append(f"| {r['name']} | {r['exit']} | {r['findings']} | " + " | ".join(cells) + f" | {r['presence']} | {r['invalid']} |")
    table = "\n".join(lines)
    print(table)
    for r in rows:
        if r["stderr"]:
            print(f"{r['name']}: {r['stderr']}", file=sys.stderr)
    if args.write:
        cmd = "AHP_SPEC_DIR=" + os.environ.get("AHP_SPEC_DIR", "") + " .venv/bin/python bench/bench_true_findings.py " + " ".join(sys.argv[1:])
        res = ROOT / "bench" / "results" / "true-findings.md"
        text = res.read_text() if res.exists() else "# True findings (bench/bench_true_findings.py)\n"
        text += (f"\n## {datetime.now().strftime('%Y-%m-%d %H:%M')} — budget {args.budget} s per run, seed {args.seed}, "
                 f"{os.cpu_count()} cores (shared, loaded)\n\n`{cmd}`\n\n{table}\n")
        res.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
