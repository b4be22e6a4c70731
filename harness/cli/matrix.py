"""`ahp-fuzz matrix`: a conformance matrix of several implementations (docs/matrix.md).

For each `--target`, in the order given: its upstream fixtures (reducers, and round trips where
the target announces them) into `OUT/targets/<column>/conformance.json`, then one `ahp-fuzz run`
of `--budget` in its own process into `OUT/targets/<column>/` (a run folder like any other). Then
the matrix of those folders — the same as `ahp-fuzz report --matrix OUT/targets/* --out OUT`
builds: `matrix.json`, `index.html`, `findings/`, `fixtures/`.

Exit 0 every column clean, 1 a cause found or a fixture failing on some column, 2 usage or setup
error, or a column that tested nothing (the matrix then has a hole, and says where), 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.errors import UsageError

from . import _profiles
from ._common import (
    check_out_folder,
    duration_type,
    int_range,
    open_target_or_usage,
    program_name,
    seconds_type,
)


def fixtures_into(
    run_dir: Path, target: str, spec_arg: str | None, profile_arg: str | None, timeout_s: float
) -> str:
    """The target's upstream fixtures into `run_dir/conformance.json`; the one line to print."""
    from harness import conformance
    from harness.report.matrix import CONFORMANCE_FILE, conformance_document
    from harness.spec.specdir import SpecDirError

    spec = _profiles.spec_or_usage(spec_arg, target=target)
    notes: list[str] = []
    results: list[Any] = []
    error = None
    choice = _profiles.choose_or_usage(profile_arg, spec=spec, target=target)
    if spec is None:
        notes.append("no spec folder (--spec, AHP_SPEC_DIR or a ts: checkout): fixtures not run")
    else:
        try:
            opened = open_target_or_usage(target, choice.profile, timeout_s)
        except UsageError as e:
            error = str(e)
        else:
            try:
                choice = _profiles.after_open(choice, opened, target)
                results = conformance.run(spec, choice.profile, opened, notes=notes)
            except (SpecDirError, ValueError) as e:
                error = str(e)
            finally:
                opened.close()
    doc = conformance_document(
        results,
        target=target,
        profile=choice.profile.label,
        spec=str(spec.path) if spec is not None else None,
        notes=notes,
        error=error,
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFORMANCE_FILE).write_text(
        json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    passed = sum(1 for r in results if r.passed)
    return error or f"{passed}/{len(results)} fixtures pass" + (
        f" ({'; '.join(notes)})" if notes else ""
    )


def fuzz_into(run_dir: Path, target: str, args: argparse.Namespace) -> tuple[int, str]:
    """One `ahp-fuzz run` of the target in its own process; its exit code and verdict line."""
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--target",
        target,
        "--budget",
        f"{args.budget:g}s",
        "--seed",
        str(args.seed),
        "--out",
        str(run_dir),
        "--overwrite",
        "--quiet",
        "--json",
    ]
    for flag, value in (
        ("--spec", args.spec),
        ("--profile", args.profile),
        ("--kinds", args.kinds),
        ("--chunks", args.chunks),
        ("--max-findings", args.max_findings),
    ):
        if value is not None:
            cmd += [flag, str(value)]
    log = run_dir / "run.log"
    run_dir.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as err:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, check=False)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        return done.returncode, f"exit {done.returncode}, no result (see {log})"
    line = f"{result.get('verdict')}, {len(result.get('findings') or [])} finding(s), {result.get('steps') or 0:,} steps"
    if result.get("error"):
        line += f": {result['error']}"
    return done.returncode, line


def write_unstarted(run_dir: Path, target: str, why: str) -> None:
    """The report of a run that could not start (no report.json): status error, no step."""
    from harness import __version__

    report = {
        "format": "ahp-fuzz/report",
        "formatVersion": 1,
        "tool": {"name": "ahp-fuzz", "version": __version__},
        "status": "error",
        "verdict": "error",
        "error": why,
        "target": target,
        "steps": 0,
        "findings": [],
        "known": {},
        "coverage": {},
        "kindsFuzzed": [],
    }
    (run_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def command(args: argparse.Namespace) -> int:
    from harness.corpus.finding import portable_target
    from harness.report.matrix import build_matrix, column_name, columns_of

    if not args.target:
        raise UsageError("name at least one --target")
    out = Path(args.out)
    check_out_folder(out)
    args.crash_dir = out  # an internal error leaves its traceback here
    if (out / "matrix.json").exists() and not args.overwrite:
        raise UsageError(f"--out: {out} holds a matrix; pass --overwrite to replace it")
    if args.seed is None:
        args.seed = 1
    dirs = []
    for i, target in enumerate(args.target, 1):
        # named as report --matrix names it: from the target's portable spelling
        run_dir = out / "targets" / column_name(i, portable_target(target))
        if run_dir.exists():
            shutil.rmtree(run_dir)
        print(f"[{i}/{len(args.target)}] {target}", file=sys.stderr)
        _, line = fuzz_into(run_dir, target, args)
        print(f"  fuzz: {line}", file=sys.stderr)
        if not (run_dir / "report.json").is_file():  # it could not start: the column says so
            write_unstarted(run_dir, portable_target(target), line)
        print(
            f"  fixtures: {fixtures_into(run_dir, target, args.spec, args.profile, args.timeout)}",
            file=sys.stderr,
        )
        dirs.append(run_dir)
    doc = build_matrix(
        columns_of(dirs), out, argv=[program_name(), *sys.argv[1:]], program=program_name()
    )
    return say(doc, out)


def say(doc: dict[str, Any], out: Path) -> int:
    """The matrix in a few lines (stdout), the page's path last; the exit code."""
    from harness.report.matrix import matrix_exit_code

    for t in doc["targets"]:
        c = t["causes"]
        print(
            f"{t['column']}: {t['verdict']} — {c['found']} found, {c['notFound']} not found, "
            f"{c['notApplicable']} not applicable; fixtures {t['fixtures']['status']}"
        )
    for row in doc["causes"]:
        if row["shared"]:
            found = [col for col, cell in row["cells"].items() if cell["status"] == "found"]
            print(
                f"shared cause {row['id']}: {row['summary']} — found on {', '.join(found)} (possible spec ambiguity)"
            )
    print(f"matrix: {out / 'matrix.json'}")
    print(f"report: {out / 'index.html'}")
    return matrix_exit_code(doc)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "matrix",
        help="a conformance matrix of several implementations: fixtures and a fuzz run each, one page",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--target",
        action="append",
        metavar="T",
        help="a target, as for run (repeat: one column each, in this order)",
    )
    p.add_argument(
        "--budget",
        default="60s",
        type=duration_type,
        help="hard wall-clock limit of each target's fuzz run, e.g. 30s, 5m (default: 60s)",
    )
    p.add_argument("--seed", type=int_range(0), help="the seed of every run (default: 1)")
    _profiles.add_options(p, baseline=False)
    p.add_argument(
        "--kinds", help="comma-separated state kinds to fuzz on every target (default: as run)"
    )
    p.add_argument(
        "--chunks",
        type=int_range(1),
        metavar="N",
        help="stop each run after N seed chunks (within --budget): the same runs whatever the machine's speed",
    )
    p.add_argument(
        "--max-findings", type=int_range(1), help="stop each run after this many findings"
    )
    p.add_argument(
        "--timeout",
        type=seconds_type,
        default=5.0,
        help="per-step target timeout of the fixtures, seconds",
    )
    p.add_argument("--out", required=True, help="the matrix folder (created)")
    p.add_argument("--overwrite", action="store_true", help="replace an earlier matrix in --out")
    p.set_defaults(func=command)
