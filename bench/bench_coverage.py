"""Coverage per budget: our state-aware strategies vs a schema-only baseline (a benchmark, not a test).

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_coverage.py \
        [--budget 60] [--mutant-budget 10] [--campaign-seconds 30] [--seed 1] [--parts all] [--write]

Part 1 — one run per generator, same budget, same seed, same initial states (the engine's
`initial_states` strategy, drawn the same way), the same engine (`run_campaign`), branch coverage
of `harness/reference` traced for the whole run in both:
  * **state-aware** — the harness as shipped: `actions_for(kind, state)`, 10 % adversarial probes,
    outcome steering (`event()`/`target()` on new (type, outcome) pairs);
  * **schema-only** — actions from the spec's JSON schema alone (schemathesis' generator through
    `strategies/schema.py`, one action type drawn per step), no adversarial share, no steering.
Reported: branch coverage (all of harness/reference, and the reducer modules), distinct
(type, outcome) pairs and outcomes, steps and steps/s.

Part 2 — seeded defects (tests/mutants.py): each mutant served in process, each generator gets
`--mutant-budget` seconds on the mutant's state kind; found = a non-known finding.

Part 3 — campaign throughput: `ahp-fuzz campaign` for `--campaign-seconds` with 1 worker
(coverage measured, and not), and with 2 workers; steps/s from report.json.

Part 4 — what measuring costs: the same state-aware run (a fixed number of chunks) untraced,
with the campaign's record-and-replay measurement, and under coverage.py's tracer.

Part 1 measures coverage by record-and-replay (harness/campaign/branches.py): every
`Model.reduce` call of the run is replayed under coverage at the end, which gives the reducers'
branch coverage exactly at a fraction of the tracer's cost; both generators are measured the same way.

`--write` records the tables in bench/results/coverage.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import strategies as st

import harness.engine.generation as generation
from harness.campaign.branches import BranchSampler
from harness.campaign.outcomes import OutcomeMatrix
from harness.engine.control import RunControl
from harness.engine.events import EventBus, FindingFound, Progress
from harness.engine.run import DEFAULT_KINDS, RunConfig, run_campaign
from harness.errors import RunStopped
from harness.reference import Profile
from harness.spec.versions import action_types
from harness.targets.reference import ReferenceTarget
from strategies.schema import SchemaSet, schema_set_from_env

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT))

#: Not reducers: the wire codec, the profile plumbing and its detection rules, the payload shape
#: check (the stepper calls it before reducing) and the collection-attachment draft (opt-in profile).
NOT_REDUCERS = {"codec.py", "profile.py", "profile_rule.py", "payloads.py", "collections.py", "__init__.py"}


def schema_only(schemas: SchemaSet) -> Callable[..., st.SearchStrategy[Any]]:
    cache: dict[str, st.SearchStrategy[Any]] = {}

    def actions(kind: str, state: Any, profile: Profile, *_: Any) -> st.SearchStrategy[Any]:
        s = cache.get(kind)
        if s is None:
            types = [t for t in action_types(profile.version, kind) if _has_def(schemas, t)]
            s = cache[kind] = st.sampled_from(types).flatmap(schemas.action_strategy)
        return s

    return actions


def _has_def(schemas: SchemaSet, t: str) -> bool:
    try:
        schemas.action_definition(t)
    except KeyError:
        return False
    return True


def one_run(name: str, budget: float, seed: int, schemas: SchemaSet | None, *, target: Any = None,
            kinds: tuple[str, ...] = DEFAULT_KINDS, trace: bool = True, profile: str = "0.7.0",
            mode: str = "replay", chunks: int | None = None) -> dict[str, Any]:
    prof = Profile.named(profile)
    original = generation.state_aware_actions
    if name == "schema-only":
        assert schemas is not None
        generation.state_aware_actions = schema_only(schemas)  # type: ignore[assignment]
    matrix = OutcomeMatrix(prof.version)
    sampler = BranchSampler(mode=mode) if trace else None
    found: list[str] = []

    deadline = time.monotonic() + budget

    def sink(ev: Any) -> None:
        if isinstance(ev, FindingFound) and ev.finding.severity != "known":
            found.append(ev.finding.invariant)
        if isinstance(ev, Progress) and threading.current_thread() is threading.main_thread():
            if sampler is not None:
                sampler.flush()  # replay this chunk's reducer calls now, as campaign workers do
            # Stop between chunks, as campaign workers do (never inside a Hypothesis run).
            if chunks is None and time.monotonic() >= deadline:
                raise RunStopped("budget")

    config = RunConfig(
        target=target or ReferenceTarget(prof), target_spec="reference", target_is_model=target is None,
        profile=prof, seed=seed, budget_s=budget if chunks is None else None, max_chunks=chunks, kinds=kinds,
        adversarial_percent=0 if name == "schema-only" else 10,
        step_hook=matrix if name == "state-aware" else None, shrink_budget_s=2.0,
        max_findings=1 if target is not None else None, control=RunControl(budget + 600),
    )
    if name == "schema-only":
        config.step_hook = None
    counter = matrix  # both generators are classified; only state-aware is steered by it
    t0 = time.monotonic()
    try:
        if sampler:
            sampler.start()
        if name != "state-aware":  # classified too, but not steered (no target phase)
            _classify_only(config, counter)
        summary = run_campaign(config, EventBus(sink))
    finally:
        if sampler:
            sampler.stop()
        generation.state_aware_actions = original  # type: ignore[assignment]
        _unclassify()
    elapsed = time.monotonic() - t0
    out: dict[str, Any] = {
        "generator": name, "steps": summary.steps, "elapsed": round(elapsed, 1),
        "stepsPerSecond": round(summary.steps / elapsed, 1) if elapsed else 0,
        "pairs": len({(t, o) for (_, t, o) in counter.counts}),
        "outcomes": len({o for (_, _, o) in counter.counts}),
        "types": len({t for (_, t, _) in counter.counts}),
        "appliedTypes": len({t for (_, t, o) in counter.counts if o == "applied"}),
        "guardPairs": len({(t, o) for (_, t, o) in counter.counts if o.startswith("no-op")}),
        "rejectedSteps": sum(n for (_, _, o), n in counter.counts.items() if o == "rejected"),
        "classifiedSteps": sum(counter.counts.values()),
        "found": found,
    }
    if sampler:
        cov = sampler.summary(with_files=True)
        files = cov["files"]
        red = [f for n, f in files.items() if Path(n).name not in NOT_REDUCERS]
        nb = sum(f["numBranches"] for f in red)
        cb = sum(f["coveredBranches"] for f in red)
        out.update(
            branchPercent=cov["percentBranches"], reducerBranchPercent=round(100 * cb / nb, 2) if nb else 100.0,
            reducerBranches=f"{cb}/{nb}",
            files={n: f["percentBranches"] for n, f in files.items()},
            missing={n: f["missingBranches"] for n, f in files.items() if f["missingBranches"]},
        )
    return out


# The schema-only and unsteered runs are classified too (same matrix), but without feedback: a
# counting hook that returns no outcome is installed on the Recorder by wrapping build_machine,
# so the bandit sees only changed/same/malformed and `event()` gets no outcome labels.
_saved_build: Any = None


def _classify_only(config: RunConfig, matrix: OutcomeMatrix) -> None:
    import harness.engine.run as campaign_mod

    global _saved_build
    _saved_build = campaign_mod.build_machine

    def count_only(*args: Any) -> None:
        matrix(*args)  # counted for the table, but the machine sees no outcome: no feedback
        return None

    def build(cfg: Any) -> Any:
        cfg.recorder.on_step = count_only
        return _saved_build(cfg)

    campaign_mod.build_machine = build  # type: ignore[assignment]


def _unclassify() -> None:
    import harness.engine.run as campaign_mod

    global _saved_build
    if _saved_build is not None:
        campaign_mod.build_machine = _saved_build  # type: ignore[assignment]
        _saved_build = None


def part_coverage(budget: float, seed: int, schemas: SchemaSet) -> list[dict[str, Any]]:
    return [one_run(g, budget, seed, schemas) for g in ("state-aware", "schema-only")]


def part_steer(budget: float, seed: int) -> list[dict[str, Any]]:
    """Does the outcome feedback pay? State-aware with and without it, same budget and seed."""
    return [one_run(g, budget, seed, None) for g in ("state-aware", "state-aware, unsteered")]


def part_overhead(chunks: int, seed: int) -> list[dict[str, Any]]:
    """The cost of measuring: the same state-aware run (a fixed number of chunks, so the same
    steps) untraced, with record-and-replay, and under the tracer; twice each, interleaved."""
    rows = []
    for label, trace, mode in (("off", False, "replay"), ("record + replay (campaign default)", True, "replay"),
                               ("coverage.py tracing the whole run", True, "trace")) * 2:
        r = one_run("state-aware", 0.0, seed, None, trace=trace, mode=mode, chunks=chunks)
        rows.append({"measure": label, "steps": r["steps"], "elapsed": r["elapsed"],
                     "stepsPerSecond": r["stepsPerSecond"], "branchPercent": r.get("branchPercent")})
        print(f"  overhead {rows[-1]}", file=sys.stderr)
    return rows


def part_mutants(budget: float, seed: int, schemas: SchemaSet) -> list[dict[str, Any]]:
    from tests import mutants

    rows = []
    for name, (kind, profile, what) in mutants.MUTANTS.items():
        prof = Profile.named(profile)
        row: dict[str, Any] = {"mutant": name, "kind": kind, "defect": what}
        for g in ("state-aware", "schema-only"):
            target = ReferenceTarget(prof, model=getattr(mutants, name)(prof))
            t0 = time.monotonic()
            r = one_run(g, budget, seed, schemas, target=target, kinds=(kind,), trace=False, profile=profile)
            row[g] = {"found": bool(r["found"]), "seconds": round(time.monotonic() - t0, 1),
                      "invariant": r["found"][0] if r["found"] else None}
        rows.append(row)
        print(f"  {name}: state-aware {row['state-aware']['found']}, schema-only {row['schema-only']['found']}",
              file=sys.stderr)
    return rows


def part_campaign(seconds: float, seed: int) -> list[dict[str, Any]]:
    rows = []
    for workers, cov_every in ((1, 0), (1, 1), (2, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            cmd = [sys.executable, "-m", "harness.cli", "campaign", "--minutes", str(seconds / 60),
                   "--workers", str(workers), "--seed", str(seed), "--out", str(out), "--quiet",
                   "--coverage-every", str(cov_every)]
            subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True, timeout=seconds + 120)
            rep = json.loads((out / "report.json").read_text())
            rows.append({"workers": workers, "coverage": "measured (record + replay, every worker)" if cov_every else "off",
                         "steps": rep["steps"], "elapsed": rep["elapsedSeconds"],
                         "stepsPerSecond": rep["stepsPerSecond"],
                         "branchPercent": (rep.get("branchCoverage") or {}).get("percentBranches")})
        print(f"  campaign {rows[-1]}", file=sys.stderr)
    return rows


def render(args: argparse.Namespace, cov: list[dict[str, Any]] | None, mut: list[dict[str, Any]] | None,
           camp: list[dict[str, Any]] | None, ovh: list[dict[str, Any]] | None = None,
           steer: list[dict[str, Any]] | None = None) -> str:
    lines = [
        "# Coverage benchmark (generated by bench/bench_coverage.py --write)",
        "",
        f"Command: `AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_coverage.py "
        f"--budget {args.budget:g} --overhead-chunks {args.overhead_chunks} --mutant-budget {args.mutant_budget:g} --campaign-seconds {args.campaign_seconds:g} "
        f"--seed {args.seed} --write`",
        "",
        f"Machine: {platform.machine()}, CPython {platform.python_version()}, Hypothesis {hypothesis.__version__}; "
        "2 cores shared with other work (absolute rates are noisy, ratios hold).",
        "",
    ]
    if cov:
        lines += [
            f"## 1. Same budget ({args.budget:g} s), same seed, same initial states",
            "",
            "| generator | steps | steps/s | branch coverage, harness/reference | reducer modules | (type, outcome) pairs | distinct outcomes | action types hit | types that changed state | (type, no-op guard) pairs | valid steps rejected as malformed |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in cov:
            rej = f"{r['rejectedSteps']}/{r['classifiedSteps']}" if "rejectedSteps" in r else "–"
            lines.append(
                f"| {r['generator']} | {r['steps']:,} | {r['stepsPerSecond']:,.0f} | {r['branchPercent']:.1f}% | "
                f"{r['reducerBranchPercent']:.1f}% ({r['reducerBranches']}) | {r['pairs']} | {r['outcomes']} | {r['types']} | "
                f"{r.get('appliedTypes', '–')} | {r.get('guardPairs', '–')} | {rej} |"
            )
        names = sorted(set(cov[0]["files"]) | set(cov[1]["files"]))
        lines += ["", "Per module (branch coverage):", "", "| module | state-aware | schema-only |", "|---|---:|---:|"]
        for n in names:
            lines.append(f"| `{n}` | {cov[0]['files'].get(n, 0):.0f}% | {cov[1]['files'].get(n, 0):.0f}% |")
        lines += ["", "Branches the state-aware run did not take (line→line; a negative target is a function exit):", ""]
        for n, miss in sorted(cov[0]["missing"].items()):
            lines.append(f"- `{n}`: " + ", ".join(f"{a}→{b}" for a, b in miss))
        lines.append("")
    if mut:
        sa = sum(r["state-aware"]["found"] for r in mut)
        so = sum(r["schema-only"]["found"] for r in mut)
        lines += [
            f"## 2. Seeded defects (tests/mutants.py), {args.mutant_budget:g} s each, on the mutant's state kind",
            "",
            "| mutant | kind | defect | state-aware | schema-only |",
            "|---|---|---|---|---|",
        ]
        for r in mut:
            def cell(x: dict[str, Any]) -> str:
                return f"found ({x['invariant']}, {x['seconds']:.0f} s)" if x["found"] else "not found"
            lines.append(f"| `{r['mutant']}` | {r['kind']} | {r['defect']} | {cell(r['state-aware'])} | {cell(r['schema-only'])} |")
        lines += ["", f"**Found: state-aware {sa}/{len(mut)}, schema-only {so}/{len(mut)}.**", ""]
    if steer:
        lines += [
            f"## 5. Outcome feedback on and off (state-aware, {args.budget:g} s each, same seed)",
            "",
            "| run | steps | reducer modules | (type, outcome) pairs | types that changed state | (type, no-op guard) pairs |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for r in steer:
            label = ("steered: outcome labels to event() and the bandit (campaign default)"
                     if r["generator"] == "state-aware" else "unsteered: the bandit sees changed/same/malformed only")
            lines.append(f"| {label} | {r['steps']:,} | {r['reducerBranchPercent']:.1f}% ({r['reducerBranches']}) | "
                         f"{r['pairs']} | {r.get('appliedTypes', '–')} | {r.get('guardPairs', '–')} |")
        lines.append("")
    if ovh:
        lines += [
            f"## 4. What measuring costs (state-aware, the same {args.overhead_chunks} chunks each, one process, "
            "each setting run twice, interleaved)",
            "",
            "| branch coverage measured by | steps | seconds | steps/s | branch coverage |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in ovh:
            bp = f"{r['branchPercent']:.1f}%" if r["branchPercent"] is not None else "–"
            lines.append(f"| {r['measure']} | {r['steps']:,} | {r['elapsed']:.1f} | {r['stepsPerSecond']:,.0f} | {bp} |")
        lines.append("")
    if camp:
        lines += [
            f"## 3. Campaign throughput (`ahp-fuzz campaign`, {args.campaign_seconds:g} s, reference target)",
            "",
            "| workers | branch coverage | steps | elapsed (s) | steps/s | branch coverage reached |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for r in camp:
            bp = f"{r['branchPercent']:.1f}%" if r["branchPercent"] is not None else "–"
            lines.append(f"| {r['workers']} | {r['coverage']} | {r['steps']:,} | {r['elapsed']:.0f} | "
                         f"{r['stepsPerSecond']:,.0f} | {bp} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--mutant-budget", type=float, default=10.0)
    ap.add_argument("--campaign-seconds", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--overhead-chunks", type=int, default=3, help="chunks per run in part 4 (default 3)")
    ap.add_argument("--parts", default="all", help="comma list of coverage,mutants,campaign,overhead,steer (default all)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    parts = {"coverage", "mutants", "campaign", "overhead", "steer"} if args.parts == "all" else set(args.parts.split(","))
    schemas = schema_set_from_env()
    if schemas is None:
        print("bench_coverage: set AHP_SPEC_DIR (the schema-only baseline needs the schemas)", file=sys.stderr)
        return 2
    schemas.prepare()
    cov = part_coverage(args.budget, args.seed, schemas) if "coverage" in parts else None
    if cov:
        for r in cov:
            print({k: v for k, v in r.items() if k not in ("files", "missing")}, file=sys.stderr)
    mut = part_mutants(args.mutant_budget, args.seed, schemas) if "mutants" in parts else None
    camp = part_campaign(args.campaign_seconds, args.seed) if "campaign" in parts else None
    ovh = part_overhead(args.overhead_chunks, args.seed) if "overhead" in parts else None
    steer = part_steer(args.budget, args.seed) if "steer" in parts else None
    raw = ROOT / "reports" / "bench_coverage.json"
    raw.parent.mkdir(exist_ok=True)
    # Parts measured in separate invocations are combined in one table file (raw numbers kept).
    old = json.loads(raw.read_text()) if raw.exists() else {}
    cov, mut, camp, ovh = (cov or old.get("coverage"), mut or old.get("mutants"), camp or old.get("campaign"),
                           ovh or old.get("overhead"))
    steer = steer or old.get("steer")
    text = render(args, cov, mut, camp, ovh, steer)
    raw.write_text(json.dumps({"coverage": cov, "mutants": mut, "campaign": camp, "overhead": ovh, "steer": steer},
                              indent=1))
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "coverage.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
