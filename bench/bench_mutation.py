"""Mutation score of the fuzzer, measured with a real mutation tool (cosmic-ray).

    python bench/bench_mutation.py [--sample N | --all] [--seed S] [--budget 30s] [--jobs 2]
                                   [--spec DIR] [--no-fixtures] [--out FILE]
    python bench/bench_mutation.py --list [--sample N] [--seed S]     # enumeration only
    python bench/bench_mutation.py --plain [--announce 0.7.0,0.8.0] --sample N --seed S --budget 60s

What it does (docs: bench/README.md):

1. **Enumerate** every first-order mutant of `harness/reference/*.py` with cosmic-ray's core
   operators (comparison, boolean, binary and unary operators, constants, `break`/`continue`,
   exception handlers, decorators, zero-iteration loops). A mutant whose code does not compile
   is *incompetent* and left out of the pool (counted). A seeded random sample (`--sample`,
   default 100, `--seed`) or every mutant (`--all`) is measured.
2. **Serve** each mutant the way any other implementation is served: the mutation is applied to
   a temporary copy of the `harness` package and the copy is served by
   `harness/targets/reference_adapter.py` in a subprocess (`PYTHONPATH` = the copy), while the
   pristine model in this checkout judges — the same arrangement as `tests/test_mutation.py`.
3. **Fuzz** each served mutant with a plain run of the engine (every state kind, fixed seed,
   `--budget` per mutant, default 30 s), in a fresh process per mutant, stopping at the first
   finding. A `known` upstream issue is not a kill. Time to detect = from the start of the run
   to the moment the failing step was caught (before shrinking).
4. **Fixtures**: the spec directory's conformance fixtures are run against the same served
   mutant (`ahp-fuzz conformance --target …`); a mutant that fails a fixture is killed by the
   fixtures alone. This separates what the fuzzer adds from what the upstream fixtures give.
   With `--plain` the fuzz step is instead literally `ahp-fuzz run --target adapter:<served
   mutant> --seed S --budget B` in a subprocess (every kind, the run's own lanes: the profile
   the spec folder chooses plus those the served adapter announces with `--announce-versions`),
   run to its budget; its exit code decides (1 = killed, 0 = survived: a `known` issue is not a
   kill) and report.json gives the first finding and its time to exposure.
5. **Judge** survivors: a survivor listed in `bench/mutation_equivalent.json` (judged by hand
   after reading the mutant: a one-line reason each) is *equivalent* — no input can tell it
   from the original — and leaves the denominator. Every other survivor is listed with its diff.

A control run of the unmutated package through the same path must be clean first (otherwise
every "kill" would be suspect); the script stops with exit status 2 if it is not.
Results: a Markdown table on stdout, JSON in `--out` (default bench/results/mutation.json).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "harness"
TARGET_DIR = PACKAGE / "reference"
EQUIVALENT_FILE = Path(__file__).resolve().parent / "mutation_equivalent.json"
EQUIVALENT_FORMAT = "ahp-fuzz/mutation-equivalent"
RESULT_FORMAT = "ahp-fuzz/mutation-result"


@dataclass(frozen=True)
class Mutant:
    """One first-order mutant: `occurrence` of `operator` in `module` (cosmic-ray's coordinates)."""

    module: str  # file name under harness/reference/
    operator: str  # cosmic-ray operator name, e.g. core/ReplaceComparisonOperator_Eq_NotEq
    occurrence: int
    line: int
    original: str  # the source line before
    mutated: str  # the source line after

    @property
    def id(self) -> str:
        return f"{self.module}:{self.line}:{self.operator.removeprefix('core/')}:{self.occurrence}"


@dataclass
class Outcome:
    mutant: str
    verdict: str  # killed | survived | equivalent | error
    detect_s: float | None = None
    invariant: str | None = None
    message: str | None = None
    fixtures_kill: bool | None = None
    reason: str | None = None  # for equivalent mutants
    diff: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --- enumeration -------------------------------------------------------------------------------


def _operators() -> list[tuple[str, Any]]:
    import cosmic_ray.plugins as plugins

    out = []
    for name in plugins.operator_names():
        cls = plugins.get_operator(name)
        if cls.arguments():  # parametrised operators (variable replacer/inserter) need a config
            continue
        out.append((name, cls()))
    return out


@dataclass(frozen=True)
class Site:
    """A place cosmic-ray can mutate (not yet known to compile)."""

    module: str
    operator: str
    occurrence: int
    line: int


def _annotation_lines(source: str) -> set[tuple[int, int, int, int]]:
    """(line, col, end_line, end_col) of every annotation: under `from __future__ import
    annotations` they are never evaluated, so a mutation there is equivalent by construction."""
    spans = set()
    for node in ast.walk(ast.parse(source)):
        notes: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            notes.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            notes.append(node.annotation)
        for n in notes:
            if n is not None and n.end_lineno is not None and n.end_col_offset is not None:
                spans.add((n.lineno, n.col_offset, n.end_lineno, n.end_col_offset))
    return spans


def _inside(pos: tuple[int, int], spans: set[tuple[int, int, int, int]]) -> bool:
    return any((l0, c0) <= pos < (l1, c1) for l0, c0, l1, c1 in spans)


def enumerate_sites(target_dir: Path = TARGET_DIR) -> tuple[list[Site], int]:
    """Every mutation site of the package outside annotations, and how many sites lie in
    annotations (not evaluated: equivalent by construction, left out)."""
    from cosmic_ray.ast import ast_nodes, get_ast_from_path

    sites: list[Site] = []
    in_annotations = 0
    for path in sorted(target_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        spans = _annotation_lines(source) if "from __future__ import annotations" in source else set()
        nodes = list(ast_nodes(get_ast_from_path(path)))
        for name, op in _operators():
            positions = [start for node in nodes for start, _end in op.mutation_positions(node)]
            for occurrence, (line, col) in enumerate(positions):
                if _inside((line, col), spans):
                    in_annotations += 1
                    continue
                sites.append(Site(path.name, name, occurrence, line))
    return sites, in_annotations


def realize(site: Site) -> Mutant | None:
    """The mutant at `site`, or None when the mutated code does not compile (incompetent)."""
    import cosmic_ray.plugins as plugins
    from cosmic_ray.mutating import mutate_code

    path = TARGET_DIR / site.module
    source = path.read_text(encoding="utf-8")
    code = mutate_code(source, plugins.get_operator(site.operator)(), site.occurrence)
    if code is None or code == source:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, str(path), "exec")
        except SyntaxError:
            return None
    old, new = source.splitlines(), code.splitlines()
    mutated = new[site.line - 1] if site.line - 1 < len(new) else ""
    return Mutant(site.module, site.operator, site.occurrence, site.line, old[site.line - 1].strip(), mutated.strip())


def choose_mutants(sites: list[Site], *, sample: int | None, seed: int) -> tuple[list[Mutant], int]:
    """A seeded random sample of compiling mutants (all of them with `sample=None`), and how
    many incompetent sites were met on the way."""
    order = list(sites)
    if sample is not None:
        random.Random(seed).shuffle(order)
    chosen: list[Mutant] = []
    incompetent = 0
    for site in order:
        if sample is not None and len(chosen) >= sample:
            break
        m = realize(site)
        if m is None:
            incompetent += 1
        else:
            chosen.append(m)
    return sorted(chosen, key=lambda m: (m.module, m.line, m.operator, m.occurrence)), incompetent


def plain_scope(sites: list[Site]) -> tuple[list[Site], dict[str, int]]:
    """The sites a plain run of a 0.x target can tell apart: left out (and counted, per module)
    are the modules bench/mutation_equivalent.json judges equivalent as a whole, and those only
    kinds from 0.9.0 on reach (automation, automationRun, canvas: a 0.7.0/0.8.0 run has none)."""
    from harness.spec.versions import kinds_of

    whole = {k for k in load_equivalent() if k.endswith(".py") and ":" not in k}
    run_kinds = set(kinds_of("0.8.0"))
    reach = module_kinds()
    out_of_run = {m for m, ks in reach.items() if ks and not set(ks) & run_kinds}
    kept: list[Site] = []
    left: dict[str, int] = {}
    for site in sites:
        if site.module in whole or site.module in out_of_run:
            left[site.module] = left.get(site.module, 0) + 1
        else:
            kept.append(site)
    return kept, left


# --- which state kinds reach a module -----------------------------------------------------------


def _relative_imports(path: Path) -> set[str]:
    """Sibling modules of harness/reference that `path` imports."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 and base:
                out.add(base.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif base.startswith("harness.reference."):
                out.add(base.split(".")[2])
    return {m for m in out if (TARGET_DIR / f"{m}.py").is_file()}


def module_kinds(target_dir: Path = TARGET_DIR) -> dict[str, tuple[str, ...]]:
    """Module file name -> the state kinds whose reducers reach it: the modules of each kind's
    handlers (the dispatch tables), what they import from the package, and what every
    `reduce` call goes through (dispatch, payload checks, profile). A module no kind reaches
    is not reducer code (empty tuple)."""
    from harness.reference.dispatch import TABLES

    imports = {p.stem: _relative_imports(p) for p in target_dir.glob("*.py")}
    common = {"dispatch", "payloads", "profile", "__init__"}

    def closure(roots: set[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(imports.get(m, set()) if m != "dispatch" else ())
        return seen

    reached: dict[str, set[str]] = {m: set() for m in imports}
    for kind, table in TABLES.items():
        roots = {h.__module__.rsplit(".", 1)[-1] for h in table.values()} | common
        roots |= {kind} & set(imports)  # the module that defines the kind's table (chat.py, …)
        for m in closure(roots):
            reached.setdefault(m, set()).add(kind)
    return {f"{m}.py": tuple(k for k in TABLES if k in ks) for m, ks in sorted(reached.items())}


# --- a workspace: a copy of the package that one mutant at a time is applied to ----------------


class Workspace:
    def __init__(self, base: Path) -> None:
        self.root = base
        shutil.copytree(PACKAGE, base / "harness", ignore=shutil.ignore_patterns("__pycache__"))
        self.pythonpath = str(base)

    def apply(self, mutant: Mutant) -> str:
        """Write the mutant into the copy; return a unified diff of the change."""
        import difflib

        import cosmic_ray.plugins as plugins
        from cosmic_ray.mutating import mutate_code

        path = self.root / "harness" / "reference" / mutant.module
        source = (TARGET_DIR / mutant.module).read_text(encoding="utf-8")
        code = mutate_code(source, plugins.get_operator(mutant.operator)(), mutant.occurrence)
        assert code is not None, mutant.id
        path.write_text(code, encoding="utf-8")
        return "".join(
            difflib.unified_diff(
                source.splitlines(True), code.splitlines(True), f"a/{mutant.module}", f"b/{mutant.module}", n=0
            )
        )

    def restore(self, mutant: Mutant) -> None:
        shutil.copyfile(TARGET_DIR / mutant.module, self.root / "harness" / "reference" / mutant.module)

    def adapter_spec(self, announce: tuple[str, ...] = ()) -> str:
        argv = [
            "/usr/bin/env",
            f"PYTHONPATH={self.pythonpath}",
            "PYTHONDONTWRITEBYTECODE=1",
            sys.executable,
            "-P",  # no current directory on sys.path: the copy, not this checkout, is imported
            "-m",
            "harness.targets.reference_adapter",
        ]
        if announce:
            argv += ["--announce-versions", ",".join(announce)]
        return "adapter:" + shlex.join(argv)


# --- one fuzz campaign (runs in a fresh process: `--fuzz-one`) ---------------------------------


#: The checks added by issue 8 (part B). `--baseline` re-fuzzes the mutants they killed with
#: their reports dropped, giving the score of the catalogue as it was before them.
NEW_CHECKS: frozenset[str] = frozenset(
    {
        "INV-002.clock", "INV-002.wallclock", "INV-007", "INV-007.published", "INV-020.active",
        "INV-020.active-probe", "INV-022.reducer", "INV-022.probe", "INV-051.probe",
        "INV-015.strict-probe",
    }
)


def _without(excluded: frozenset[str]) -> None:
    """In this (worker) process, drop the reports of `excluded` checks from every step."""
    import harness.engine.stepper as stepper

    original = stepper.check_step

    def filtered(*args: Any, **kwargs: Any) -> Any:
        return [v for v in original(*args, **kwargs) if v.invariant not in excluded]

    stepper.check_step = filtered  # type: ignore[assignment]


#: Profiles each mutant is fuzzed under: those a plain run against the model uses, plus 0.6.0
#: (the model serves it; some branches exist only there).
FUZZ_PROFILES: tuple[str, ...] = ("0.7.0", "0.7.0-main", "0.8.0", "0.6.0")


class _ProfiledAdapter:
    """An adapter target that also serves other profiles (one adapter process per profile), so
    the engine fuzzes every profile lane (`engine/arms.py`: `profiles` + `for_profile`)."""

    def __init__(self, spec: str, profile: Any, names: tuple[str, ...]) -> None:
        from harness.targets.base import open_target

        self._spec, self._open = spec, open_target
        self._inner = open_target(spec, profile=profile)
        self._others: list[Any] = []
        self.profiles = names

    def for_profile(self, profile: Any) -> Any:
        target = self._open(self._spec, profile=profile)
        self._others.append(target)
        return target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def close(self) -> None:
        for t in [self._inner, *self._others]:
            t.close()


def fuzz_one(
    spec: str,
    budget_s: float,
    seed: int,
    exclude: frozenset[str] = frozenset(),
    kinds: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Fuzz one served target until its first finding or the budget; report when it was caught.
    `kinds`: the state kinds to fuzz (empty: every kind, as a plain run)."""
    if exclude:
        _without(exclude)
    from harness.engine.events import Event, EventBus, Shrinking
    from harness.engine.run import RunConfig, run_campaign
    from harness.reference import Profile

    profile = Profile.named("0.7.0")
    started = time.monotonic()
    caught: list[float] = []

    def sink(event: Event) -> None:
        if isinstance(event, Shrinking) and not caught:
            caught.append(time.monotonic() - started)

    target = _ProfiledAdapter(spec, profile, FUZZ_PROFILES)
    try:
        summary = run_campaign(
            RunConfig(
                target=target,
                target_spec=spec,
                target_is_model=False,
                profile=profile,
                seed=seed,
                budget_s=budget_s,
                max_findings=1,
                probe_every=25,
                shrink_budget_s=2.0,
                **({"kinds": kinds} if kinds else {}),
            ),
            EventBus(sink),
        )
    finally:
        target.close()
    if not summary.findings:
        return {"found": False, "steps": summary.steps, "elapsed_s": round(time.monotonic() - started, 2)}
    f = summary.findings[0]
    return {
        "found": True,
        "detect_s": round(caught[0] if caught else time.monotonic() - started, 2),
        "invariant": f.invariant,
        "message": f.message[:300],
        "steps": summary.steps,
    }


def _run_fuzz_subprocess(
    spec: str,
    budget_s: float,
    seed: int,
    exclude: frozenset[str] = frozenset(),
    kinds: tuple[str, ...] = (),
) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--fuzz-one", spec, "--budget", f"{budget_s:g}s", "--seed", str(seed)]
    if exclude:
        cmd += ["--exclude", ",".join(sorted(exclude))]
    if kinds:
        cmd += ["--fuzz-kinds", ",".join(kinds)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=budget_s + 180, cwd=ROOT, check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if proc.returncode != 0:
        return {"error": f"fuzz worker exited {proc.returncode}: {proc.stderr.strip()[-600:]}"}
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": f"fuzz worker printed no result: {proc.stdout[-300:]} {proc.stderr[-300:]}"}


#: What the served mutant announces in `--plain` mode (`reference_adapter --announce-versions`):
#: the versions whose lanes a run against the reference model itself exercises (engine/arms.py
#: RUN_PROFILES: the spec folder's profile, 0.7.0-main for a 0.7.0 folder, plus 0.7.0 and 0.8.0).
PLAIN_ANNOUNCE: tuple[str, ...] = ("0.7.0", "0.8.0")


def plain_command(spec: str, budget_s: float, seed: int, out_dir: str) -> list[str]:
    """`ahp-fuzz run --target <spec> --seed S --budget B` — nothing else that changes what is
    fuzzed (`--out`, `--json`, `--quiet` only say where and how the result is written)."""
    return [
        sys.executable, "-m", "harness.cli", "run", "--target", spec, "--seed", str(seed),
        "--budget", f"{budget_s:g}s", "--out", out_dir, "--json", "--quiet",
    ]


def plain_run(spec: str, budget_s: float, seed: int) -> dict[str, Any]:
    """A plain `ahp-fuzz run` of the served target, to its budget. Exit 1 = killed (the first
    finding by time to exposure), 0 = clean (known upstream issues do not count), else error."""
    with tempfile.TemporaryDirectory(prefix="ahp-plain-") as tmp:
        out_dir = str(Path(tmp) / "run")
        cmd = plain_command(spec, budget_s, seed, out_dir)
        started = time.monotonic()
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=budget_s + 240, cwd=ROOT, check=False,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        wall = round(time.monotonic() - started, 1)
        try:
            report = json.loads((Path(out_dir) / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            report = {}
    base = {"exit": proc.returncode, "steps": report.get("steps"), "wall_s": wall,
            "known": len(report.get("known") or {})}
    if proc.returncode == 0:
        return {**base, "found": False}
    if proc.returncode != 1:
        return {**base, "error": f"ahp-fuzz run exited {proc.returncode}: {proc.stderr.strip()[-600:]}"}
    findings = [f for f in report.get("findings") or [] if isinstance(f, dict)]
    if not findings:
        return {**base, "error": "ahp-fuzz run exited 1 but report.json lists no finding"}

    def exposed(f: dict[str, Any]) -> float:
        e = f.get("exposure") or {}
        return float(e.get("seconds")) if isinstance(e.get("seconds"), int | float) else float("inf")

    first = min(findings, key=exposed)
    t = exposed(first)
    return {
        **base, "found": True, "detect_s": None if t == float("inf") else round(t, 2),
        "invariant": first.get("invariant"), "message": str(first.get("message", ""))[:300],
        "findings": len(findings), "invariants": sorted({str(f.get("invariant")) for f in findings}),
    }


def fixtures_kill(spec: str, spec_dir: str) -> bool | None:
    """Whether the spec's conformance fixtures fail on the served target (None: could not tell)."""
    cmd = [sys.executable, "-m", "harness.cli", "conformance", "--spec", spec_dir, "--target", spec, "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    if proc.returncode in (0, 1):
        return proc.returncode == 1
    return None


# --- the measurement ----------------------------------------------------------------------------


def load_equivalent(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """mutant id -> one-line reason, from the hand-judged file (validated on load)."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != EQUIVALENT_FORMAT or doc.get("formatVersion") != 1:
        raise SystemExit(f"{path}: not an {EQUIVALENT_FORMAT} v1 file")
    out: dict[str, str] = {}
    for entry in doc.get("equivalent", []):
        key = entry.get("mutant") or entry.get("module") if isinstance(entry, dict) else None
        if not (isinstance(key, str) and entry.get("reason")):
            raise SystemExit(f"{path}: each entry needs a mutant id (or a module) and a reason: {entry!r}")
        out[key] = str(entry["reason"])
    return out


def out_of_profile(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """mutant id (or module) -> `only from V` / `only before V`: the judged entries whose code
    only a profile from that version on runs (a 1.0.0 action type, …), or only one before it
    (`onlyBefore`: the 0.6.0 rules). No lane of these benches (0.6.0–0.8.0) can
    tell them apart, so they leave the denominator like equivalent ones — but they are not
    equivalent, and are counted and listed apart (verdict `out-of-profile`)."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for e in doc.get("equivalent", []):
        if not isinstance(e, dict):
            continue
        key = str(e.get("mutant") or e.get("module"))
        if e.get("onlyFrom"):
            out[key] = f"only from {e['onlyFrom']}"
        elif e.get("onlyBefore"):  # code only profiles before that version run (0.6.0 rules)
            out[key] = f"only before {e['onlyBefore']}"
    return out


def verdict_unkilled(mutant: str, judged: dict[str, str], later: dict[str, str]) -> tuple[str, str | None]:
    """The verdict of a mutant the fuzzer did not kill: survived, equivalent or out-of-profile."""
    module = mutant.split(":", 1)[0]
    reason = judged.get(mutant) or judged.get(module)
    if reason is None:
        return "survived", None
    since = later.get(mutant) or later.get(module)
    return ("out-of-profile", f"{since}: {reason}") if since else ("equivalent", reason)


def equivalence_of(m: Mutant, judged: dict[str, str]) -> str | None:
    """The recorded reason `m` is equivalent: its own entry, or its module's."""
    return judged.get(m.id) or judged.get(m.module)


def _baseline_of(
    out: Outcome, m: Mutant, *, ws_pool: list[Workspace], budget_s: float, seed: int,
    kinds: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The verdict without this issue's checks: unchanged unless one of them made the kill."""
    if out.verdict != "killed" or out.invariant not in NEW_CHECKS:
        return {"verdict": out.verdict, "detect_s": out.detect_s, "invariant": out.invariant}
    ws = ws_pool.pop()
    try:
        ws.apply(m)
        got = _run_fuzz_subprocess(ws.adapter_spec(), budget_s, seed, NEW_CHECKS, kinds)
    finally:
        ws.restore(m)
        ws_pool.append(ws)
    if "error" in got:
        return {"verdict": "error", "message": got["error"]}
    if got.get("found"):
        return {"verdict": "killed", "detect_s": got["detect_s"], "invariant": got["invariant"]}
    return {"verdict": "survived"}


def measure(
    chosen: list[Mutant], *, budget_s: float, seed: int, jobs: int, spec_dir: str | None,
    equivalent: dict[str, str], progress: bool = True, baseline: bool = False,
    focus: str = "module", plain: tuple[str, ...] | None = None,
) -> list[Outcome]:
    """`plain`: the versions the served mutant announces, for a plain `ahp-fuzz run` per mutant
    (None: the bench's own engine run, `fuzz_one`)."""
    reach = module_kinds() if focus == "module" and plain is None else {}
    later = out_of_profile()
    with tempfile.TemporaryDirectory(prefix="ahp-mutation-") as tmp:
        spaces = [Workspace(Path(tmp) / f"w{i}") for i in range(jobs)]
        if plain is not None:  # the control gets the mutants' whole budget: a plain run is not stopped early
            control = plain_run(spaces[0].adapter_spec(plain), budget_s, seed)
        else:
            control = _run_fuzz_subprocess(spaces[0].adapter_spec(), min(budget_s, 20.0), seed)
        if control.get("error") or control.get("found"):
            raise SystemExit(f"control run of the unmutated package is not clean: {control}")
        if progress:
            print(f"  control clean: {control}", file=sys.stderr, flush=True)
        free = list(spaces)
        results: list[Outcome] = []

        def one(m: Mutant) -> Outcome:
            ws = free.pop()
            kinds = reach.get(m.module, ())
            try:
                diff = ws.apply(m)
                spec = ws.adapter_spec(plain or ())
                if plain is not None:
                    got = plain_run(spec, budget_s, seed)
                else:
                    got = _run_fuzz_subprocess(spec, budget_s, seed, kinds=kinds)
                fx = fixtures_kill(spec, spec_dir) if spec_dir else None
            finally:
                ws.restore(m)
                free.append(ws)
            if "error" in got:
                out = Outcome(m.id, "error", message=got["error"], fixtures_kill=fx, diff=diff)
            elif got.get("found"):
                out = Outcome(m.id, "killed", got["detect_s"], got["invariant"], got["message"], fx, diff=diff)
            else:
                verdict, reason = verdict_unkilled(m.id, equivalent, later)
                out = Outcome(m.id, verdict, fixtures_kill=fx, reason=reason, diff=diff)
            out.extra["kinds"] = list(kinds) or "all"
            if plain is not None:
                out.extra["plain"] = {k: v for k, v in got.items() if k not in ("found", "message", "error")}
            if baseline:
                out.extra["baseline"] = _baseline_of(
                    out, m, ws_pool=free, budget_s=budget_s, seed=seed, kinds=kinds
                )
            if progress:
                print(f"  {out.verdict:<10} {m.id}  {out.invariant or ''} "
                      f"{'' if out.detect_s is None else f'{out.detect_s:.1f}s'}"
                      + (f"  baseline: {out.extra['baseline']['verdict']}" if baseline else ""),
                      file=sys.stderr, flush=True)
            return out

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, chosen))
    return results


def _as_baseline(r: Outcome) -> Outcome:
    b = r.extra.get("baseline") or {}
    return Outcome(
        r.mutant, b.get("verdict", r.verdict), b.get("detect_s"), b.get("invariant"), None, r.fixtures_kill
    )


def summarize(results: list[Outcome]) -> dict[str, Any]:
    judged = [r for r in results if r.verdict in ("killed", "survived")]
    killed = [r for r in judged if r.verdict == "killed"]
    times = [r.detect_s for r in killed if r.detect_s is not None]
    fx = [r for r in judged if r.fixtures_kill]
    both = [r for r in judged if r.fixtures_kill or r.verdict == "killed"]
    return {
        "mutants": len(results),
        "equivalent": sum(r.verdict == "equivalent" for r in results),
        "outOfProfile": sum(r.verdict == "out-of-profile" for r in results),
        "errors": sum(r.verdict == "error" for r in results),
        "nonEquivalent": len(judged),
        "fuzzerKilled": len(killed),
        "fuzzerScore": round(len(killed) / len(judged), 4) if judged else None,
        "fixturesKilled": len(fx) if any(r.fixtures_kill is not None for r in results) else None,
        "eitherKilled": len(both),
        "fuzzerOnly": sum(r.verdict == "killed" and r.fixtures_kill is False for r in judged),
        "fixturesOnly": sum(r.verdict == "survived" and bool(r.fixtures_kill) for r in judged),
        "detectMedianS": round(statistics.median(times), 2) if times else None,
        "detectMaxS": round(max(times), 2) if times else None,
    }


def render(results: list[Outcome], s: dict[str, Any], command: str) -> str:
    pct = f"{100 * s['fuzzerScore']:.1f}%" if s["fuzzerScore"] is not None else "n/a"
    lines = [
        f"Command: `{command}`",
        "",
        f"- mutants measured: {s['mutants']} ({s['equivalent']} equivalent, "
        f"{s.get('outOfProfile', 0)} out of the run's profiles, {s['errors']} errors)",
        f"- fuzzer killed {s['fuzzerKilled']} of {s['nonEquivalent']} non-equivalent ({pct}); "
        f"fixtures alone killed {s['fixturesKilled']}; either {s['eitherKilled']} "
        f"(fuzzer only {s['fuzzerOnly']}, fixtures only {s['fixturesOnly']})",
        f"- time to detect: median {s['detectMedianS']} s, max {s['detectMaxS']} s",
    ]
    b = s.get("baseline")
    if b:
        bp = f"{100 * b['fuzzerScore']:.1f}%" if b["fuzzerScore"] is not None else "n/a"
        lines.append(
            f"- baseline in the same run (catalogue without this issue's checks): fuzzer killed "
            f"{b['fuzzerKilled']} of {b['nonEquivalent']} ({bp}); either with fixtures "
            f"{b['eitherKilled']}; detect median {b['detectMedianS']} s, max {b['detectMaxS']} s"
        )
    lines += [
        "",
        "| mutant | verdict | detect (s) | invariant | fixtures kill | note |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        note = r.reason or (r.message or "")[:90]
        fx = {True: "yes", False: "no", None: "—"}[r.fixtures_kill]
        det = "" if r.detect_s is None else f"{r.detect_s:.1f}"
        lines.append(
            f"| `{r.mutant}` | {r.verdict} | {det} | {r.invariant or ''} | {fx} | "
            f"{note.replace('|', '/').replace(chr(10), ' ')} |"
        )
    survivors = [r for r in results if r.verdict == "survived"]
    if survivors:
        lines += ["", "Survivors (diffs):", ""]
        for r in survivors:
            lines += [f"- `{r.mutant}`", "", "```diff", r.diff.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def rejudge(path: Path) -> int:
    """Apply the current equivalence judgements to a results file; rewrite it, print the table."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != RESULT_FORMAT or doc.get("formatVersion") != 1:
        raise SystemExit(f"{path}: not an {RESULT_FORMAT} v1 file")
    judged, later = load_equivalent(), out_of_profile()
    results = [Outcome(**r) for r in doc["results"]]
    for r in results:
        verdict, reason = verdict_unkilled(r.mutant, judged, later)
        if r.verdict == "survived" and reason:
            r.verdict, r.reason = verdict, reason
            if isinstance(r.extra.get("baseline"), dict) and r.extra["baseline"].get("verdict") == "survived":
                r.extra["baseline"]["verdict"] = verdict
    s = summarize(results)
    if any("baseline" in r.extra for r in results):
        s["baseline"] = summarize([_as_baseline(r) for r in results])
    doc["summary"], doc["results"] = s, [asdict(r) for r in results]
    doc["rejudged"] = True
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(render(results, s, doc["command"]))
    return 0


def _duration(text: str) -> float:
    t = text.strip().lower()
    for unit, mult in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if t.endswith(unit):
            return float(t[: -len(unit)]) * mult
    return float(t)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sample", type=int, default=100, help="random sample size (default 100)")
    p.add_argument("--all", action="store_true", help="every mutant instead of a sample")
    p.add_argument("--seed", type=int, default=0, help="sampling and fuzzing seed (default 0)")
    p.add_argument("--budget", default="30s", help="fuzz budget per mutant (default 30s)")
    p.add_argument("--jobs", type=int, default=2, help="mutants measured in parallel (default 2)")
    p.add_argument("--spec", default=os.environ.get("AHP_SPEC_DIR"), help="spec dir for the fixtures")
    p.add_argument("--no-fixtures", action="store_true", help="skip the fixture column")
    p.add_argument("--list", action="store_true", help="only enumerate (and sample); print JSON")
    p.add_argument("--mutants", metavar="ID,ID", default="",
                   help="measure these mutant ids only (as printed by a run) instead of a sample")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "mutation.json"))
    p.add_argument("--baseline", action="store_true",
                   help="also score the catalogue without this issue's checks (NEW_CHECKS): "
                   "the mutants they killed are fuzzed again with their reports dropped")
    p.add_argument("--rejudge", metavar="RESULTS",
                   help="re-apply bench/mutation_equivalent.json to a results file written by an "
                   "earlier run (survivors judged since become equivalent) and print its table")
    p.add_argument("--fuzz-one", metavar="TARGET", help=argparse.SUPPRESS)
    p.add_argument("--exclude", default="", help=argparse.SUPPRESS)
    p.add_argument("--fuzz-kinds", default="", help=argparse.SUPPRESS)
    p.add_argument("--focus", choices=("module", "all"), default="module",
                   help="state kinds fuzzed per mutant: the kinds whose reducers reach the mutated "
                   "module (default), or all seven as a plain run")
    p.add_argument("--plain", action="store_true",
                   help="fuzz each mutant with a plain `ahp-fuzz run --target adapter:<served mutant> --seed S "
                   "--budget B` (its exit code decides) instead of the bench's engine run; the draw leaves out "
                   "the modules judged equivalent as a whole and those only 1.x kinds reach (counted)")
    p.add_argument("--announce", default=",".join(PLAIN_ANNOUNCE), metavar="V,V",
                   help="--plain: the versions the served mutant announces (`--announce-versions`; "
                   f"default {','.join(PLAIN_ANNOUNCE)}; empty: its one profile)")
    args = p.parse_args(argv)
    try:
        budget = _duration(args.budget)
    except ValueError:
        p.error(f"--budget: not a duration: {args.budget!r} (e.g. 30s)")
    if budget <= 0 or args.jobs < 1 or args.sample < 1:
        p.error("--budget, --jobs and --sample must be positive")
    if args.rejudge:
        return rejudge(Path(args.rejudge))
    if args.fuzz_one:
        excluded = frozenset(x for x in args.exclude.split(",") if x)
        fk = tuple(x for x in args.fuzz_kinds.split(",") if x)
        print(json.dumps(fuzz_one(args.fuzz_one, budget, args.seed, excluded, fk)))
        return 0
    spec_dir = None if args.no_fixtures else args.spec
    if spec_dir is not None and not Path(spec_dir).is_dir():
        p.error(f"--spec: not a directory: {spec_dir}")
    sites, in_annotations = enumerate_sites()
    left_out: dict[str, int] = {}
    if args.mutants:
        wanted = [x.strip() for x in args.mutants.split(",") if x.strip()]
        by_id = {}
        for site in sites:
            if f"{site.module}:{site.line}:{site.operator.removeprefix('core/')}:{site.occurrence}" in wanted:
                m = realize(site)
                if m is not None:
                    by_id[m.id] = m
        missing = [w for w in wanted if w not in by_id]
        if missing:
            p.error(f"--mutants: no compiling mutant with id {', '.join(missing)}")
        chosen, incompetent = [by_id[w] for w in wanted], 0
    else:
        if args.plain:
            sites, left_out = plain_scope(sites)
        chosen, incompetent = choose_mutants(
            sites, sample=None if args.all else args.sample, seed=args.seed
        )
    pool = {"sites": len(sites), "inAnnotations": in_annotations, "incompetentSeen": incompetent}
    if not args.mutants and left_out:
        pool["leftOutOfDraw"] = left_out
    if args.list:
        print(json.dumps({**pool, "chosen": [asdict(m) | {"id": m.id} for m in chosen]}, indent=1))
        return 0
    equivalent = load_equivalent()
    print(f"{len(sites)} mutation sites ({in_annotations} more in annotations, left out); "
          f"measuring {len(chosen)} compiling mutants ({incompetent} sites on the way did not "
          f"compile), {budget:g} s each, {args.jobs} in parallel", file=sys.stderr)
    t0 = time.monotonic()
    plain = tuple(v for v in args.announce.split(",") if v) if args.plain else None
    results = measure(chosen, budget_s=budget, seed=args.seed, jobs=args.jobs, spec_dir=spec_dir,
                      equivalent=equivalent, baseline=args.baseline, focus=args.focus, plain=plain)
    s = summarize(results)
    if args.baseline:
        s["baseline"] = summarize([_as_baseline(r) for r in results])
    command = "python bench/bench_mutation.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Any] = {}
    if plain is not None:
        extra["plainRun"] = {
            "fuzzCommand": shlex.join(plain_command("adapter:<served mutant>", budget, args.seed, "<tmp>")),
            "servedWith": ["--announce-versions", ",".join(plain)] if plain else [],
            "specDir": os.environ.get("AHP_SPEC_DIR"),
        }
    out.write_text(json.dumps({
        "format": RESULT_FORMAT, "formatVersion": 1, "command": command, **extra,
        "pool": pool, "summary": s,
        "wallSeconds": round(time.monotonic() - t0, 1), "results": [asdict(r) for r in results],
    }, indent=1) + "\n", encoding="utf-8")
    print(render(results, s, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
