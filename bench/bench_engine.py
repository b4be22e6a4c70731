"""End-to-end engine throughput, side by side with its ceiling (a benchmark script, not a test).

    .venv/bin/python bench/bench_engine.py [--seconds 20] [--rounds 2] [--part speed|reach|mutants|all]
                                           [--mutant-budget 60] [--write]

Part `speed` — in one process, alternating, `--rounds` times each for `--seconds`:

* **run / reference**: `run_campaign` against the in-process reference model as `ahp-fuzz run
  --target reference` runs it (every kind, every profile the target supports, multi-channel
  groups, 10% adversarial probes, every per-step invariant, probe checks every step);
* **bare machine (ceiling)**: a Hypothesis stateful machine over the same model drawing the
  same way (arm, initial state, state-aware or adversarial action, delay) but with no stepper,
  no target, no checks and no bookkeeping: what generation plus reduction costs;
* **run / adapter (fast form)**: the same run through `adapter:python -m
  harness.targets.reference_adapter` (a subprocess; probe checks every 25 steps, the CLI default).

Part `reach` — the share of state-aware draws that changed the state in a reference run, per
action type (the run's own coverage counters).

Part `mutants` — every seeded defect of tests/mutants.py, as tests/test_mutation.py runs it (`ahp-fuzz
run --target adapter:… --max-findings 1 --seed 1`, fresh process): time to detect, or not found
within `--mutant-budget`.

`--write` records the tables in bench/results/engine.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engine import generation  # noqa: E402
from harness.engine.arms import GROUP, arms_for, lanes_for  # noqa: E402
from harness.engine.chunks import chunk_seed  # noqa: E402
from harness.engine.events import EventBus  # noqa: E402
from harness.engine.run import DEFAULT_KINDS, RunConfig, run_campaign  # noqa: E402
from harness.reference import MalformedAction, Profile  # noqa: E402
from harness.targets.base import open_target  # noqa: E402
from harness.targets.reference import ReferenceTarget  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "engine.md"
P = Profile.named("0.7.0")
ADAPTER = "adapter:" + shlex.join([sys.executable, "-m", "harness.targets.reference_adapter"])


Rate = tuple[float, float]  # (steps per wall-clock second, steps per CPU second)


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the adapter subprocess)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _drive(machine: Any, seconds: float, run_seed: int) -> tuple[float, float]:
    """Run `machine` in seeded chunks of 25 examples × 40 steps for `seconds`; (wall, CPU) s."""
    c0, t0 = _cpu(), time.perf_counter()
    chunk = 0
    with generation.pinned_constants():
        while time.perf_counter() - t0 < seconds:
            run_state_machine_as_test(
                seed(chunk_seed(run_seed, chunk))(machine),
                settings=settings(
                    max_examples=25, stateful_step_count=40, deadline=None, database=None,
                    phases=[Phase.generate], verbosity=Verbosity.quiet,
                    suppress_health_check=list(HealthCheck),
                ),
            )
            chunk += 1
    return time.perf_counter() - t0, _cpu() - c0


def _run(target: Any, spec: str, is_model: bool, seconds: float, run_seed: int, lane: str = "hypothesis") -> int:
    config = RunConfig(
        target=target, target_spec=spec, target_is_model=is_model, profile=P, seed=run_seed,
        budget_s=seconds, probe_every=1 if is_model else 25, heartbeat_s=0, lane=lane,
        schema=_SCHEMA,
    )
    return run_campaign(config, EventBus()).steps


def _schema() -> Any:
    """The spec folder's action-schema validator, as `ahp-fuzz run` uses it (None without one)."""
    from harness.spec.action_schema import ActionSchema
    from harness.spec.specdir import SpecDir, SpecDirError

    try:
        spec = SpecDir.from_env(None)
    except SpecDirError:
        return None
    schema = ActionSchema.from_spec(spec) if spec is not None else None
    return schema.problem if schema is not None else None


_SCHEMA = _schema()


def run_reference(seconds: float, run_seed: int, lane: str = "hypothesis") -> Rate:
    c0, t0 = _cpu(), time.perf_counter()
    steps = _run(ReferenceTarget(P), "reference", True, seconds, run_seed, lane)
    return steps / (time.perf_counter() - t0), steps / (_cpu() - c0)


def prebuilt_machine(seconds: float, run_seed: int) -> Rate:
    """The issue's ceiling: a bare Hypothesis stateful machine over the same model whose start
    states and actions are PRE-BUILT (drawn before the clock starts, per kind and profile) and
    only picked (`sampled_from`) and reduced during the run: no generation, no checks."""
    from harness.engine.fast import fill, seed_traces

    lanes = lanes_for(ReferenceTarget(P), target_is_model=True, profile=P)
    arms = [(k, i) for k, i in arms_for(DEFAULT_KINDS, lanes) if k != GROUP]
    built: dict[tuple[str, int], tuple[list[Any], list[Any]]] = {}
    for n, (kind, i) in enumerate(arms):
        entries = fill(seed_traces(kind, lanes[i], 20), 4, 1_000 + n)
        built[(kind, i)] = ([e.channels[0][1] for e in entries], [a for e in entries for _, a, _ in e.steps])
    steps = 0

    class PreBuilt(RuleBasedStateMachine):
        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            self.arm = data.draw(st.sampled_from(arms))
            self.model = lanes[self.arm[1]].model
            self.state = data.draw(st.sampled_from(built[self.arm][0]))
            self.now = 1_000

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            nonlocal steps
            action = data.draw(st.sampled_from(built[self.arm][1]))
            self.now += 1_000
            with contextlib.suppress(MalformedAction):
                self.state = self.model.reduce(self.arm[0], self.state, action, self.now)
            steps += 1

    wall, cpu = _drive(PreBuilt, seconds, run_seed)
    return steps / wall, steps / cpu


def measure_lanes(seconds: float, rounds: int) -> dict[str, list[Rate]]:
    """Old lane, new lane and the pre-built ceiling, alternating in one process."""
    out: dict[str, list[Rate]] = {
        "bare machine, pre-built actions (ceiling)": [],
        "run / reference, hypothesis lane": [],
        "run / reference, fast lane": [],
    }
    run_reference(min(seconds, 5.0), 99, "fast")  # warm-up: imports, strategy construction, caches
    for r in range(rounds):
        out["bare machine, pre-built actions (ceiling)"].append(prebuilt_machine(seconds, r))
        out["run / reference, hypothesis lane"].append(run_reference(seconds, r, "hypothesis"))
        out["run / reference, fast lane"].append(run_reference(seconds, r, "fast"))
        print(f"  round {r + 1}: " + ", ".join(f"{k} {v[-1][0]:.0f}/{v[-1][1]:.0f}" for k, v in out.items()), file=sys.stderr)
    return out


def measure_pairs(seconds: float, run_seed: int) -> dict[str, tuple[int, int, float]]:
    """(kind, type, outcome) pairs a reference run of each lane reached in `seconds`, with the
    campaign's outcome classifier: (pairs, steps, CPU seconds)."""
    from harness.campaign.outcomes import OutcomeMatrix

    out: dict[str, tuple[int, int, float]] = {}
    for lane in ("hypothesis", "fast"):
        matrix = OutcomeMatrix(P.version)
        config = RunConfig(
            target=ReferenceTarget(P), target_spec="reference", target_is_model=True, profile=P,
            seed=run_seed, budget_s=seconds, heartbeat_s=0, lane=lane, schema=_SCHEMA, step_hook=matrix,
        )
        c0 = _cpu()
        steps = run_campaign(config, EventBus()).steps
        out[lane] = (len(matrix.counts), steps, _cpu() - c0)
        print(f"  pairs {lane}: {out[lane]}", file=sys.stderr)
    return out


def run_adapter(seconds: float, run_seed: int) -> Rate:
    c0, t0 = _cpu(), time.perf_counter()
    target = open_target(ADAPTER, profile=P)
    try:
        steps = _run(target, ADAPTER, False, seconds, run_seed)
    finally:
        target.close()  # reaps the adapter: its CPU time counts from here
    return steps / (time.perf_counter() - t0), steps / (_cpu() - c0)


def bare_machine(seconds: float, run_seed: int) -> Rate:
    """The ceiling: the same draws and the same model, nothing else."""
    lanes = lanes_for(ReferenceTarget(P), target_is_model=True, profile=P)
    arms = arms_for(DEFAULT_KINDS, lanes)
    steps = 0

    class Bare(RuleBasedStateMachine):
        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            kind, lane = data.draw(st.sampled_from(arms))
            self.profile, self.model = lanes[lane].profile, lanes[lane].model
            if kind == GROUP:
                g = data.draw(generation.channel_groups(self.profile))
                self.states = [("session", g.session), *(("chat", c) for c in g.chats)]
            else:
                self.states = [(kind, data.draw(generation.initial_states(kind, self.profile)))]
            self.now = 1_000

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            nonlocal steps
            i = data.draw(st.integers(0, len(self.states) - 1)) if len(self.states) > 1 else 0
            kind, state = self.states[i]
            if data.draw(st.integers(0, 99)) < 10:
                data.draw(generation.adversarial_actions(kind, self.profile))
            else:
                action = data.draw(generation.state_aware_actions(kind, state, self.profile))
                self.now += data.draw(st.integers(0, 5_000))
                self.states[i] = (kind, self.model.reduce(kind, state, action, self.now))
            steps += 1

    wall, cpu = _drive(Bare, seconds, run_seed)
    return steps / wall, steps / cpu


def measure_speed(seconds: float, rounds: int) -> dict[str, list[Rate]]:
    out: dict[str, list[Rate]] = {"run / reference": [], "bare machine (ceiling)": [], "run / adapter (fast form)": []}
    run_reference(min(seconds, 5.0), 99)  # warm-up: imports, strategy construction, caches
    for r in range(rounds):
        out["bare machine (ceiling)"].append(bare_machine(seconds, r))
        out["run / reference"].append(run_reference(seconds, r))
        out["run / adapter (fast form)"].append(run_adapter(seconds, r))
        print(f"  round {r + 1}: " + ", ".join(f"{k} {v[-1][0]:.0f}/{v[-1][1]:.0f}" for k, v in out.items()), file=sys.stderr)
    return out


def measure_reach(seconds: float) -> dict[str, tuple[int, int]]:
    target = ReferenceTarget(P)
    config = RunConfig(
        target=target, target_spec="reference", target_is_model=True, profile=P, seed=1,
        budget_s=seconds, heartbeat_s=0,
    )
    rows: dict[str, tuple[int, int]] = {}

    class Coverage:
        def __call__(self, event: Any) -> None:
            cov = getattr(event, "coverage", None)
            if isinstance(cov, dict):
                for t, c in cov.items():
                    rows[t] = (c["sent"], c["changed"])

    run_campaign(config, EventBus(Coverage()))
    return rows


Detection = tuple[float, float, int] | None  # (wall s, CPU s of the run and its adapter, steps)


def measure_mutants(budget: float, lane: str = "hypothesis") -> dict[str, Detection]:
    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import MUTANTS  # type: ignore[import-not-found]

    out: dict[str, Detection] = {}
    for name in sorted(MUTANTS):
        kind, profile, _ = MUTANTS[name]
        spec = "adapter:" + shlex.join([
            sys.executable, "-m", "harness.targets.reference_adapter", "--model",
            f"{ROOT / 'tests' / 'mutants.py'}:{name}",
        ])
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                sys.executable, "-m", "harness.cli", "run", "--target", spec, "--profile", profile,
                "--kinds", kind, "--budget", f"{budget:g}s", "--max-findings", "1", "--seed", "1",
                "--probe-every", "25", "--out", tmp, "--quiet", "--lane", lane,
            ]
            c0, t0 = _cpu(), time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=budget + 180)
            dt, cpu = time.perf_counter() - t0, _cpu() - c0
            report = Path(tmp) / "report.json"
            steps = json.loads(report.read_text()).get("steps", 0) if report.is_file() else 0
        out[name] = (dt, cpu, steps) if proc.returncode == 1 else None
        shown = f"{dt:.1f}s wall, {cpu:.1f}s CPU, {steps} steps" if out[name] else "not found"
        print(f"  {lane} {name}: {shown}", file=sys.stderr)
    return out


def _throughput_rows(speed: dict[str, list[Rate]], ceiling: str) -> list[str]:
    """One table row per configuration: median steps/s (wall, CPU) and the ratio to `ceiling`."""
    wall0 = statistics.median(w for w, _ in speed[ceiling])
    cpu0 = statistics.median(c for _, c in speed[ceiling])
    rows = []
    for name, vals in speed.items():
        w = statistics.median(v[0] for v in vals)
        c = statistics.median(v[1] for v in vals)
        rows.append(f"| {name} | {w:,.0f} | {c:,.0f} | {w / wall0:.2f} / {c / cpu0:.2f} |")
    return rows


def render(speed: dict[str, list[Rate]] | None, reach: dict[str, tuple[int, int]] | None,
           mutants: dict[str, Detection] | None, args: argparse.Namespace) -> str:
    lines = [
        f"Machine: {platform.machine()}, CPython {platform.python_version()}, Hypothesis "
        f"{hypothesis.__version__}; 2 cores shared with other work (absolute numbers are noisy, "
        "ratios measured in one run hold).",
        "",
    ]
    if speed:
        lines += [
            f"## Throughput (`--seconds {args.seconds:g} --rounds {args.rounds}`, median of rounds)",
            "",
            "Steps per wall-clock second depend on what else the machine runs; steps per CPU second "
            "(this process and the adapter subprocess) much less.",
            "",
            "| configuration | steps/s (wall) | steps per CPU-s | ratio to the bare machine (wall / CPU) |",
            "|---|---:|---:|---:|",
            *_throughput_rows(speed, "bare machine (ceiling)"),
            "",
        ]
    if reach:
        lines += [
            "## Reach: state-aware draws that changed the state (reference run, every profile)",
            "",
            "| action type | sent | changed | share |",
            "|---|---:|---:|---:|",
        ]
        for t, (sent, changed) in sorted(reach.items()):
            if t.startswith("<"):
                continue
            lines.append(f"| `{t}` | {sent} | {changed} | {changed / sent:.0%} |")
        lines.append("")
    if mutants:
        found = [v for v in mutants.values() if v is not None]
        lines += [
            f"## Seeded defects (tests/mutants.py): time to detect, wall budget {args.mutant_budget:g} s",
            "",
            "Each as tests/test_mutation.py runs it: `ahp-fuzz run --target adapter:… --max-findings 1 "
            "--seed 1` in a fresh process. Wall clock and CPU seconds cover the whole process and its "
            "adapter (start-up, search, shrinking, confirming replay); steps are the fuzzing steps "
            "before the finding. On a shared machine the wall clock follows the load; CPU seconds "
            "and steps do not.",
            "",
            "| mutant | wall | CPU | steps |",
            "|---|---:|---:|---:|",
        ]
        for n, v in mutants.items():
            lines.append(f"| `{n}` | {v[0]:.1f} s | {v[1]:.1f} s | {v[2]} |" if v else f"| `{n}` | not found | | |")
        if found:
            lines += ["", f"Found {len(found)}/{len(mutants)}; median {statistics.median(v[0] for v in found):.1f} s "
                      f"wall, {statistics.median(v[1] for v in found):.1f} s CPU, "
                      f"{statistics.median(v[2] for v in found):.0f} steps."]
        lines.append("")
    return "\n".join(lines)


def render_lanes(speed: dict[str, list[Rate]] | None, pairs: dict[str, tuple[int, int, float]] | None,
                 mutants: dict[str, dict[str, Detection]] | None, args: argparse.Namespace) -> str:
    """The old lane and the new lane in the same tables."""
    lines = [
        f"Machine: {platform.machine()}, CPython {platform.python_version()}, Hypothesis "
        f"{hypothesis.__version__}; schema checks {'on' if _SCHEMA else 'off (AHP_SPEC_DIR unset)'}; "
        f"load average at the end {os.getloadavg()[0]:.1f}.",
        "",
    ]
    if speed:
        lines += [
            f"### Throughput (`--seconds {args.seconds:g} --rounds {args.rounds}`, median of rounds, alternating)",
            "",
            "| configuration | steps/s (wall) | steps per CPU-s | ratio to the pre-built ceiling (wall / CPU) |",
            "|---|---:|---:|---:|",
            *_throughput_rows(speed, "bare machine, pre-built actions (ceiling)"),
            "",
        ]
    if pairs:
        lines += [
            f"### (kind, type, outcome) pairs reached in {args.pairs_seconds:g} s (reference, seed 1, outcome classifier on)",
            "",
            "| lane | pairs | steps | CPU s | pairs per CPU-minute of the run |",
            "|---|---:|---:|---:|---:|",
        ]
        for lane, (n, steps, cpu) in pairs.items():
            lines.append(f"| {lane} | {n} | {steps:,} | {cpu:.1f} | {n / cpu * 60:.0f} |")
        lines.append("")
    if mutants:
        names = sorted({n for m in mutants.values() for n in m})
        lanes = list(mutants)
        lines += [
            f"### Seeded defects (tests/mutants.py), `ahp-fuzz run --target adapter:… --lane L --max-findings 1 "
            f"--seed 1`, budget {args.mutant_budget:g} s: wall / CPU (run + adapter) / steps",
            "",
            "| mutant | " + " | ".join(f"{lane} lane" for lane in lanes) + " |",
            "|---|" + "---:|" * len(lanes),
        ]
        for n in names:
            cells = []
            for lane in lanes:
                v = mutants[lane].get(n)
                cells.append(f"{v[0]:.1f} s / {v[1]:.1f} s / {v[2]}" if v else "not found")
            lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
        summary = []
        for lane in lanes:
            found = [v for v in mutants[lane].values() if v is not None]
            if found:
                summary.append(
                    f"| {lane} | {len(found)}/{len(mutants[lane])} | {statistics.median(v[0] for v in found):.1f} s | "
                    f"{statistics.median(v[1] for v in found):.1f} s | {max(v[1] for v in found):.1f} s | "
                    f"{statistics.median(v[2] for v in found):.0f} |")
        lines += ["", "| lane | found | median wall | median CPU | slowest CPU | median steps |",
                  "|---|---:|---:|---:|---:|---:|", *summary, ""]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--part", choices=("speed", "reach", "mutants", "all", "lanes"), default="speed")
    p.add_argument("--mutant-budget", type=float, default=60.0)
    p.add_argument("--pairs-seconds", type=float, default=60.0)
    p.add_argument("--skip", default="", help="lanes part: comma-separated sections to skip (speed,pairs,mutants)")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    if args.part == "lanes":
        skip = set(args.skip.split(","))
        speed_l = measure_lanes(args.seconds, args.rounds) if "speed" not in skip else None
        pairs = measure_pairs(args.pairs_seconds, 1) if "pairs" not in skip else None
        muts = ({lane: measure_mutants(args.mutant_budget, lane) for lane in ("hypothesis", "fast")}
                if "mutants" not in skip else None)
        text = render_lanes(speed_l, pairs, muts, args)
        print(text)
        if args.write:
            cmd = "    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_engine.py " + " ".join(sys.argv[1:])
            stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            with RESULTS.open("a", encoding="utf-8") as f:
                f.write(f"\n## Lanes: the Hypothesis lane and the fast lane side by side ({stamp})\n\n{cmd}\n\n{text}\n")
        return 0
    speed = measure_speed(args.seconds, args.rounds) if args.part in ("speed", "all") else None
    reach = measure_reach(args.seconds) if args.part in ("reach", "all") else None
    mutants = measure_mutants(args.mutant_budget) if args.part in ("mutants", "all") else None
    text = render(speed, reach, mutants, args)
    print(text)
    if args.write:
        cmd = "    .venv/bin/python bench/bench_engine.py " + " ".join(sys.argv[1:])
        previous = RESULTS.read_text() if RESULTS.is_file() else ""
        header = "# Engine benchmark (bench/bench_engine.py)\n\n"
        body = previous[len(header):] if previous.startswith(header) else previous
        RESULTS.write_text(header + f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n{cmd}\n\n" + text + "\n" + body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
