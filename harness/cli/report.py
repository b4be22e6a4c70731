"""`ahp-fuzz report`: rebuild a run folder's HTML report, or merge several run folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.errors import UsageError


def report_command(args: argparse.Namespace) -> int:
    from harness.report.html import write_html
    from harness.report.merge import load_report, merge_runs

    if args.matrix:
        return _matrix(args)
    if args.merge:
        if args.dir:
            raise UsageError("give either a run folder or --merge DIR… --out DIR, not both")
        if not args.out:
            raise UsageError("--merge needs --out DIR")
        dirs = [Path(d) for d in args.merge]
        for d in dirs:
            if not d.is_dir():
                raise UsageError(f"not a folder: {d}")
            _say_if_died(d)
        out = Path(args.out)
        if out.resolve() in {d.resolve() for d in dirs}:
            raise UsageError("--out must be a new folder, not one of the merged ones")
        report = merge_runs(dirs, out, ["ahp-fuzz", *sys.argv[1:]])
        m = report["merge"]
        print(f"merged {len(dirs)} run(s): {len(report['findings'])} finding(s) "
              f"({m['duplicateFindings']} duplicate(s) dropped), {report['steps']:,} steps", file=sys.stderr)
        print(f"report: {out / 'index.html'}")
        return 0
    if not args.dir:
        raise UsageError("give a run folder (ahp-fuzz report DIR) or --merge DIR… --out DIR")
    run_dir = Path(args.dir)
    if not run_dir.is_dir():
        raise UsageError(f"not a folder: {run_dir}")
    _say_if_died(run_dir)
    report = load_report(run_dir)
    path = write_html(run_dir, report)
    print(f"report: {path}")
    return 0


def _matrix(args: argparse.Namespace) -> int:
    """`report --matrix DIR… --out DIR`: the conformance matrix of existing run folders."""
    from harness.report.matrix import build_matrix, columns_of, run_folders

    from ._common import program_name
    from .matrix import say

    if args.dir or args.merge:
        raise UsageError("give either --matrix DIR… --out DIR, or a run folder, or --merge")
    if not args.out:
        raise UsageError("--matrix needs --out DIR")
    dirs = run_folders([Path(d) for d in args.matrix])
    out = Path(args.out)
    if out.resolve() in {d.resolve() for d in dirs}:
        raise UsageError("--out must be a new folder, not one of the run folders")
    for d in dirs:
        _say_if_died(d)
    doc = build_matrix(columns_of(dirs), out, argv=[program_name(), *sys.argv[1:]], program=program_name())
    code = say(doc, out)
    return 0 if code == 1 else code  # a report of what was found is no failure of the report


def _say_if_died(run_dir: Path) -> None:
    """A run folder whose report still says "running" although its process is gone is called
    out, so a report of a run that died without warning is never read as a finished one."""
    from harness.report.writers import earlier_run

    sentence = earlier_run(run_dir)
    if sentence and "died without finishing" in sentence:
        print(f"ahp-fuzz: warning: {sentence}", file=sys.stderr)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="rebuild index.html from a run folder, or merge run folders (shards) into one report",
        description="'ahp-fuzz report DIR' rebuilds DIR/index.html from DIR/report.json. "
        "'ahp-fuzz report --merge DIR1 DIR2 … --out DIR' merges run folders (seed shards, several "
        "machines) into one report.json/junit.xml/index.html, de-duplicating findings by signature. "
        "'ahp-fuzz report --matrix DIR1 DIR2 … --out DIR' joins run folders of different targets into a "
        "conformance matrix (matrix.json, index.html; docs/matrix.md). Exit 0, or 2 on a usage error.",
    )
    p.add_argument("dir", nargs="?", help="a run folder (holding report.json)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="run folders to merge")
    p.add_argument("--matrix", nargs="+", metavar="DIR",
                   help="run folders (or matrix folders) to join into a conformance matrix, one column each "
                   "(docs/matrix.md)")
    p.add_argument("--out", help="output folder of a merge")
    p.set_defaults(func=report_command)
