"""Strategy quality and schema-derived generation speed (a benchmark script, not a test).

    .venv/bin/python bench/bench_strategies.py --spec ../shared/ahp-spec/0.7.0 \
        [--part changes|rates|all] [--states 40] [--per-state 5] [--examples 20] [--budget 8] \
        [--hjs-python /tmp/hjs-venv/bin/python ...] [--write]

Part 1 — *does the action change the state?* For every 0.7.0 action type, over the same set of
reachable states of its kind (half valid initial states, half the end states of state-aware
sequences of 5–25 steps), the share of generated actions that change the state in the
reference model, for three generators: state-aware (`actions_for(kind, state, types=[t])`),
state-free with small id pools (`action_of_type(t)`), and schema-only (the spec's schema for
that action through schemathesis). The share is also given over the *targeted* states only —
those that hold what the action's guard needs (an active turn, a markdown part, a tool call in
the right status, an existing id…), where a state-changing action of that type exists.
Schema-only actions the model rejects with `MalformedAction` are counted separately (the
schema allowed them, so each is either a schema gap or a model bug).

Part 2 — *how fast can each engine generate each definition?* For every definition of the
merged 0.7.0 `$defs` (lint-repaired, INV-007-patched), up to `--examples` values or `--budget`
seconds: time to the first example (strategy compilation included), steady examples/s after
it, and how many outputs fail validation. Engines: schemathesis' generator in process (the one
the harness uses) and hypothesis-jsonschema in each `--hjs-python` interpreter (a throwaway
venv; it is not a project dependency). Each engine gets the definition's reachable `$defs`
closure only.

`--write` records the tables in `bench/results/strategies.md`; the raw numbers go to
`reports/bench_strategies.json` (git-ignored), which also lets parts measured in separate runs
be combined in one table file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness.reference import MalformedAction, reduce
from harness.spec.specdir import SpecDir
from harness.spec.versions import KINDS, action_types
from strategies.actions import BUILDERS, COLD, ActionContext, action_of_type, actions_for
from strategies.actions.chat import WRONG_CALL
from strategies.schema import SchemaSet
from strategies.sequences import action_sequences, fold
from strategies.states import states as initial_states

RESULTS = Path(__file__).parent / "results"
RAW = Path(__file__).parent.parent / "reports" / "bench_strategies.json"
_ALL_CHECKS = list(HealthCheck)


def _settings(n: int) -> settings:
    # Generation only: no shrinking, which would run after the budget's TimeoutError.
    return settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=_ALL_CHECKS,
        phases=[Phase.generate],
    )


def _collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @_settings(n)
    @given(strategy)
    def draw(x: Any) -> None:
        out.append(x)

    draw()
    return out


# --- part 1 ----------------------------------------------------------------------------------


def reachable_states(kind: str, n: int) -> list[dict[str, Any]]:
    """`n` states: half valid initial states, half end states of state-aware sequences (up to
    10 steps). Hypothesis' first examples of a run are deliberately small, so 4x as many are
    drawn and `n` picked with a fixed seed (the pool stays reproducible)."""
    rng = random.Random(0)
    initial = rng.sample(_collect(initial_states(kind), 4 * (n // 2)), n // 2)
    sequences = rng.sample(
        _collect(action_sequences(kind, min_size=5, max_size=25), 4 * (n - n // 2)), n - n // 2
    )
    pool = initial + [fold(kind, s.initial, s.actions) for s in sequences]
    rng.shuffle(pool)
    return pool


def _count_changes(
    kind: str,
    pool: list[dict[str, Any]],
    targeted: list[bool],
    gens: dict[str, Callable[[dict[str, Any]], st.SearchStrategy[Any]]],
    counts: dict[str, list[int]],
    per_state: int,
) -> None:
    """counts[g] = [changed, total, malformed, changed on targeted states, targeted total].

    Every state of the pool gets the same number of draws (one short Hypothesis run per
    state): drawing the state index inside one run would concentrate on a few states."""
    for state, hit in zip(pool, targeted, strict=True):
        _draw_on(kind, state, hit, gens, counts, per_state)


def _draw_on(
    kind: str,
    state: dict[str, Any],
    hit: bool,
    gens: dict[str, Callable[[dict[str, Any]], st.SearchStrategy[Any]]],
    counts: dict[str, list[int]],
    n: int,
) -> None:
    @_settings(n)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        for g, make in gens.items():
            action = data.draw(make(state))
            c = counts[g]
            c[1] += 1
            c[4] += hit
            try:
                changed = reduce(kind, state, action, now_ms=9999) != state
            except MalformedAction:
                c[2] += 1
                continue
            c[0] += changed
            c[3] += changed and hit

    run()


def measure_changes(
    schemas: SchemaSet,
    n_states: int,
    per_state: int,
    generators: tuple[str, ...] = ("aware", "pools", "schema"),
    kinds: tuple[str, ...] | None = None,
) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for kind in kinds or KINDS:
        t0 = time.perf_counter()
        pool = reachable_states(kind, n_states)
        for t in action_types("0.7.0", kind):
            # A state is "targeted" when it holds what the action's guard needs (an active turn,
            # a part, a tool call in the right status, an existing id, …), as the state-aware
            # builder sees it; on such states a changing action exists.
            # (For chat, weights above WRONG_CALL: a tool-call type on a turn whose calls are all
            # in other statuses is drawn as a guard probe, which is not a target.)
            floor = max(COLD, WRONG_CALL) if kind == "chat" else COLD
            targeted = [BUILDERS[kind][t](s, ActionContext())[0] > floor for s in pool]
            counts = {g: [0, 0, 0, 0, 0] for g in ("aware", "pools", "schema")}
            gens: dict[str, Callable[[dict[str, Any]], st.SearchStrategy[Any]]] = {
                "aware": lambda s, t=t, k=kind: actions_for(k, s, types=[t]),
                "pools": lambda s, t=t: action_of_type(t),
                "schema": lambda s, t=t: schemas.action_strategy(t),
            }
            gens = {g: f for g, f in gens.items() if g in generators}  # the others stay at 0/0
            _count_changes(kind, pool, targeted, gens, counts, per_state)
            rows[t] = {
                g: {
                    "changed": c[0],
                    "total": c[1],
                    "malformed": c[2],
                    "changed_targeted": c[3],
                    "targeted": c[4],
                }
                for g, c in counts.items()
            }
            rows[t]["targeted_states"] = sum(targeted)
        print(f"  {kind}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return rows


def _share(x: dict[str, int]) -> float:
    return x["changed"] / x["total"] if x["total"] else float("nan")


def _pct(x: float) -> str:
    return "–" if x != x else f"{x:.0%}"  # NaN: the generator was not measured (--generators)


def _tshare(x: dict[str, int]) -> str:
    return f"{x['changed_targeted'] / x['targeted']:.0%}" if x.get("targeted") else "–"


def changes_table(rows: dict[str, dict[str, Any]], n_states: int) -> str:
    gens = ("aware", "pools", "schema")
    lines = [
        "| action type | state-aware | state-free (pools) | schema-only | targeted states | state-aware on targeted | pools on targeted | schema-only on targeted | schema-only rejected by model |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t, r in rows.items():
        lines.append(
            f"| `{t}` | {_pct(_share(r['aware']))} | {_pct(_share(r['pools']))} | {_pct(_share(r['schema']))} | "
            f"{r['targeted_states']}/{n_states} | {_tshare(r['aware'])} | {_tshare(r['pools'])} | {_tshare(r['schema'])} | "
            f"{r['schema']['malformed']}/{r['schema']['total']} |"
        )
    pooled = {
        g: {
            k: sum(r[g][k] for r in rows.values())
            for k in ("changed", "total", "changed_targeted", "targeted")
        }
        for g in gens
    }
    mean = {g: statistics.mean(_share(r[g]) for r in rows.values()) for g in gens}  # NaN if unmeasured
    lines.append(
        f"| **all types (pooled)** | **{_pct(_share(pooled['aware']))}** | **{_pct(_share(pooled['pools']))}** | "
        f"**{_pct(_share(pooled['schema']))}** | | **{_tshare(pooled['aware'])}** | **{_tshare(pooled['pools'])}** | "
        f"**{_tshare(pooled['schema'])}** | |"
    )
    lines.append(
        f"| **mean over types** | **{_pct(mean['aware'])}** | **{_pct(mean['pools'])}** | **{_pct(mean['schema'])}** | | | | | |"
    )
    return "\n".join(lines)


# --- part 2 ----------------------------------------------------------------------------------


def _first_line(e: BaseException) -> str:
    return str(e).splitlines()[0][:160] if str(e) else ""


def _time_strategy(
    strategy: st.SearchStrategy[Any], valid: Callable[[Any], bool], n: int, budget: float
) -> tuple[list[float], int, float]:
    """Draw up to `n` values or for `budget` seconds; (timestamps, invalid count, start)."""
    times: list[float] = []
    invalid = [0]
    start = time.perf_counter()

    @_settings(n)
    @given(strategy)
    def run(value: Any) -> None:
        times.append(time.perf_counter())
        invalid[0] += not valid(value)
        if time.perf_counter() - start > budget:
            raise TimeoutError

    with contextlib.suppress(TimeoutError):
        run()
    return times, invalid[0], start


def measure_schemathesis(
    schemas: SchemaSet, names: list[str], n: int, budget: float
) -> dict[str, dict[str, Any]]:
    schemas.prepare()  # load the OpenAPI document once (not timed per definition)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            times, invalid, start = _time_strategy(
                schemas.strategy(name), lambda v, name=name: schemas.is_valid(name, v), n, budget
            )
        except Exception as e:
            out[name] = {
                "ok": False,
                "examples": 0,
                "error": f"{type(e).__name__}: {_first_line(e)}",
            }
            continue
        first = times[0] - start if times else None
        rate = (
            (len(times) - 1) / (times[-1] - times[0])
            if len(times) > 1 and times[-1] > times[0]
            else None
        )
        out[name] = {
            "ok": bool(times),
            "examples": len(times),
            "first_s": first,
            "rate": rate,
            "invalid": invalid,
            "error": None if times else "no example",
        }
    return out


def measure_hjs(
    python: str, schemas: SchemaSet, names: list[str], n: int, budget: float
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:  # one worker call per definition: each gets only its closure
            defs_file, out_file = Path(tmp) / "defs.json", Path(tmp) / "out.json"
            defs_file.write_text(
                json.dumps({"draft": schemas.draft, "defs": schemas.closure(name), "names": [name]})
            )
            try:
                subprocess.run(
                    [
                        python,
                        str(Path(__file__).parent / "_hjs_worker.py"),
                        str(defs_file),
                        str(out_file),
                        "--examples",
                        str(n),
                        "--budget",
                        str(budget),
                    ],
                    check=True,
                    timeout=budget * 3 + 30,
                    capture_output=True,
                )
                out[name] = json.loads(out_file.read_text())[name]
            except subprocess.CalledProcessError as e:
                out[name] = {
                    "ok": False,
                    "examples": 0,
                    "error": f"worker failed: {e.stderr.decode()[-300:]}",
                }
            except subprocess.TimeoutExpired:
                out[name] = {
                    "ok": False,
                    "examples": 0,
                    "error": f"no example within {budget * 3 + 30:.0f}s",
                }
    return out


def engine_version(python: str) -> str:
    code = "import hypothesis, hypothesis_jsonschema as h; print(hypothesis.__version__, h.__version__)"
    v = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    return f"hypothesis-jsonschema {v[1]} on Hypothesis {v[0]}"


def rate_summary(label: str, res: dict[str, dict[str, Any]], total: int) -> list[str]:
    ok = {k: v for k, v in res.items() if v["ok"]}
    rates = sorted((v["rate"], k) for k, v in ok.items() if v.get("rate"))
    firsts = sorted((v["first_s"], k) for k, v in ok.items() if v.get("first_s") is not None)
    invalid = sum(v.get("invalid", 0) for v in ok.values())
    med = statistics.median(r for r, _ in rates) if rates else float("nan")
    worst = ", ".join(f"`{k}` {r:.2f}/s" for r, k in rates[:5])
    slow_first = ", ".join(f"`{k}` {f:.1f}s" for f, k in firsts[-3:])
    errors: dict[str, int] = {}
    for v in res.values():
        if not v["ok"]:
            key = (v.get("error") or "?").split(" in schema=")[0][:90]
            errors[key] = errors.get(key, 0) + 1
    lines = [
        f"| {label} | {len(ok)}/{total} | {med:.1f} | {worst} | {statistics.median(f for f, _ in firsts) if firsts else float('nan'):.2f}s (slowest: {slow_first}) | {invalid} |"
    ]
    return lines + [
        f"|   ↳ cannot generate: {n} × {e} | | | | | |"
        for e, n in sorted(errors.items(), key=lambda x: -x[1])
    ]


def render(raw: dict[str, Any]) -> str:
    md: list[str] = []
    if "changes" in raw:
        c = raw["changes"]
        md += [
            "## 1. Share of generated actions that change state (reference model, 0.7.0 profile)",
            "",
            f"Machine: {c['machine']}. {c['states']} reachable states per kind; {c['per_state']} "
            "actions per state, type and generator (every generator draws against the same states).",
            "",
            changes_table(c["rows"], c["states"]),
            "",
        ]
    if "rates" in raw:
        r = raw["rates"]
        table = [
            "| engine | definitions generated | median ex/s | 5 slowest (ex/s) | median time to first example | invalid outputs |",
            "|---|---:|---:|---|---|---:|",
        ]
        for label, res in r["engines"].items():
            table += rate_summary(label, res, r["definitions"])
        md += [
            "## 2. Schema-derived generation per definition",
            "",
            f"Machine: {r['machine']}. {r['definitions']} definitions; up to {r['examples']} "
            f"examples or {r['budget']:.0f} s per definition and engine.",
            "",
            *table,
            "",
        ]
    return "\n".join(md)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", help="spec directory (default: $AHP_SPEC_DIR)")
    p.add_argument("--part", choices=("changes", "rates", "all"), default="all")
    p.add_argument("--states", type=int, default=40, help="reachable states per kind (part 1)")
    p.add_argument(
        "--per-state", type=int, default=5, help="actions per state, type and generator (part 1)"
    )
    p.add_argument("--examples", type=int, default=20, help="examples per definition (part 2)")
    p.add_argument(
        "--budget", type=float, default=8.0, help="seconds per definition and engine (part 2)"
    )
    p.add_argument(
        "--hjs-python",
        action="append",
        default=[],
        help="python of a venv with hypothesis-jsonschema",
    )
    p.add_argument("--only", nargs="*", help="part 2: only these definitions")
    p.add_argument("--kinds", help="part 1: only these state kinds (comma-separated)")
    p.add_argument(
        "--generators",
        default="aware,pools,schema",
        help="part 1: generators to measure (schema-only is by far the slowest)",
    )
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    spec = SpecDir.from_env(args.spec)
    if spec is None:
        print("bench_strategies: needs --spec DIR or $AHP_SPEC_DIR", file=sys.stderr)
        return 2
    schemas = SchemaSet.from_spec_dir(spec)
    machine = (
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"Hypothesis {hypothesis.__version__}; spec: {spec.describe_version()}"
    )
    raw: dict[str, Any] = {}
    if args.part in ("changes", "all"):
        print("part 1: share of actions that change state", file=sys.stderr)
        rows = measure_changes(
            schemas,
            args.states,
            args.per_state,
            tuple(args.generators.split(",")),
            tuple(args.kinds.split(",")) if args.kinds else None,
        )
        raw["changes"] = {
            "machine": machine,
            "states": args.states,
            "per_state": args.per_state,
            "rows": rows,
        }
    if args.part in ("rates", "all"):
        import schemathesis

        names = args.only or schemas.definitions("all")
        print(f"part 2: {len(names)} definitions", file=sys.stderr)
        t0 = time.perf_counter()
        engines = {
            f"schemathesis {schemathesis.__version__} (in process)": measure_schemathesis(
                schemas, names, args.examples, args.budget
            )
        }
        print(f"  schemathesis: {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        for py in args.hjs_python:
            t0 = time.perf_counter()
            engines[engine_version(py)] = measure_hjs(
                py, schemas, names, args.examples, args.budget
            )
            print(f"  {py}: {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        raw["rates"] = {
            "machine": machine,
            "examples": args.examples,
            "budget": args.budget,
            "definitions": len(names),
            "engines": engines,
        }
    print(render(raw))
    if args.write:
        RESULTS.mkdir(exist_ok=True)
        RAW.parent.mkdir(exist_ok=True)
        merged = json.loads(RAW.read_text()) if RAW.is_file() else {}
        merged.update(raw)  # parts measured in separate runs are kept
        RAW.write_text(json.dumps(merged, separators=(",", ":"), default=str) + "\n")
        (RESULTS / "strategies.md").write_text(
            "# Strategy benchmark (generated by bench/bench_strategies.py --write)\n\n"
            + render(merged)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
