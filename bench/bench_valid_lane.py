"""Schema-invalid valid-lane steps: drawn actions, shrink candidates, and saved findings.

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 python bench/bench_valid_lane.py draws [--examples 200]
    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 python bench/bench_valid_lane.py findings RUN_FOLDER...

`draws` walks fixed-seed state-aware valid-lane sequences under the 0.6.0 and 0.7.0 profiles
(never reading the spec to generate) and validates against that version's item-11-corrected
action schema (the spec folder is only the judge):

* every drawn action the spec-free model accepts (a valid-lane step);
* every one-key/one-item deletion of a valid drawn action that the spec-free model still
  accepts — what the trace shrinker keeps. Side by side in one run: the model's first-level
  required-field table alone (the knowledge before issue 15) and the full check
  (`harness.spec.payload_shapes`, every depth and the union variants).

`findings` validates every valid-lane (non-probe) step of the findings saved in run folders
(`RUN/findings/*.json`) against the folder's schema and prints the count per folder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from harness.engine import generation
from harness.engine.shrink import _smaller_values
from harness.reference import MalformedAction, Model, Profile, payloads
from harness.spec.action_schema import ActionSchema
from harness.spec.specdir import SpecDir
from harness.spec.versions import KINDS


def draws(spec_root: Path, examples: int, steps: int) -> list[str]:
    lines = ["| version | drawn valid-lane actions | schema-invalid | shrink candidates kept, first level only | schema-invalid | kept, every depth | schema-invalid |",
             "|---|---|---|---|---|---|---|"]
    for version in ("0.6.0", "0.7.0"):
        n = _walk(spec_root / version, version, examples, steps)
        lines.append(f"| {version} | {n['drawn']} | {n['drawn-bad']} | {n['old']} | {n['old-bad']} | {n['new']} | {n['new-bad']} |")
    return lines


def _walk(folder: Path, version: str, examples: int, steps: int) -> Counter[str]:
    schema = ActionSchema.from_spec(SpecDir(folder))
    assert schema is not None
    profile = Profile.named(version)
    model = Model(profile, check_payloads=True)
    n: Counter[str] = Counter()

    @seed(15)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def walk(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(KINDS))
        state = data.draw(generation.initial_states(kind, profile))
        for i in range(steps):
            action = data.draw(generation.state_aware_actions(kind, state, profile))
            if model.payload_problem(kind, action) is None:
                n["drawn"] += 1
                n["drawn-bad"] += schema.problem(action) is not None
            if schema.problem(action) is None and model.handler(kind, action) is not None:
                for _, smaller in _smaller_values(action):
                    bad = schema.problem(smaller) is not None
                    if payloads._first_level(smaller) is None:
                        n["old"] += 1
                        n["old-bad"] += bad
                    if model.payload_problem(kind, smaller) is None:
                        n["new"] += 1
                        n["new-bad"] += bad
            with contextlib.suppress(MalformedAction):
                state = model.reduce(kind, state, action, 1_000 + i)

    walk()
    return n


def findings(spec: SpecDir, folders: list[Path]) -> list[str]:
    schema = ActionSchema.from_spec(spec)
    assert schema is not None
    lines = ["| run folder | findings | valid-lane steps | schema-invalid | examples |", "|---|---|---|---|---|"]
    for folder in folders:
        files = sorted((folder / "findings").glob("*.json"))
        steps = bad = 0
        shown: list[str] = []
        for f in files:
            for s in json.loads(f.read_text(encoding="utf-8"))["steps"]:
                if s.get("probe"):
                    continue
                steps += 1
                problem = schema.problem(s["action"])
                if problem:
                    bad += 1
                    if len(shown) < 2:
                        shown.append(problem[:90])
        lines.append(f"| {folder.name} | {len(files)} | {steps} | {bad} | {'; '.join(shown)} |")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("draws")
    d.add_argument("--examples", type=int, default=200)
    d.add_argument("--steps", type=int, default=10)
    f = sub.add_parser("findings")
    f.add_argument("folders", nargs="+", type=Path)
    args = p.parse_args()
    spec = SpecDir.from_env()
    if spec is None:
        print("set AHP_SPEC_DIR to the 0.7.0 spec folder (0.6.0 is found beside it)", file=sys.stderr)
        return 2
    out = draws(spec.path.parent, args.examples, args.steps) if args.what == "draws" else findings(spec, args.folders)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
