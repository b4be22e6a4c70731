"""`ahp-fuzz strategies`: list every strategy and what it targets; optionally lint a spec dir."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "strategies",
        help="list the Hypothesis strategies and what each one targets",
        description="List every strategy of the inventory (name, valid/adversarial, target). "
        "With --spec (or $AHP_SPEC_DIR) and --lint, also lint that spec directory's schemas.",
    )
    p.add_argument("--spec", metavar="DIR", help="spec directory (default: $AHP_SPEC_DIR)")
    p.add_argument(
        "--lint", action="store_true",
        help="lint the spec directory's schemas and report problems (exit 1 when an error is "
        "reported, repaired or not; 2 when the schemas cannot be used at all)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--adversarial", action="store_true", help="only adversarial strategies")
    p.add_argument("--valid", action="store_true", help="only valid strategies")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.errors import UsageError
    from harness.spec.specdir import SpecDirError
    from strategies.inventory import INVENTORY

    entries = [
        e
        for e in INVENTORY
        if not (args.adversarial and e.nature != "adversarial")
        and not (args.valid and e.nature != "valid")
    ]
    if args.json:
        print(
            json.dumps(
                [{"name": e.name, "nature": e.nature, "targets": e.targets} for e in entries],
                indent=2,
            )
        )
    else:
        _table(entries)
    if args.lint:
        from strategies.schema import SchemaProblem, SchemaSet, lint

        try:
            from harness.spec.specdir import SpecDir

            spec = SpecDir.from_env(args.spec)
        except SpecDirError as e:
            raise UsageError(str(e)) from e
        if spec is None:
            raise UsageError("--lint needs --spec DIR or $AHP_SPEC_DIR")
        report, _ = lint(spec.schemas)
        for issue in report.issues:
            print(issue.render(), file=sys.stderr if args.json else sys.stdout)
        try:
            SchemaSet.from_spec_dir(spec)
        except SchemaProblem as e:
            print(f"ahp-fuzz: schema problem: {e}", file=sys.stderr)
            return 2
        if any(issue.severity == "error" for issue in report.issues):
            return 1  # the lint found something (even when generation could repair around it)
    return 0


def _table(entries: list[Any]) -> None:
    from rich.table import Table

    from harness.report.console import table_console

    table = Table(title=f"ahp-fuzz strategies ({len(entries)})", show_lines=False)
    table.add_column("strategy", style="bold", no_wrap=True)
    table.add_column("kind")
    table.add_column("targets")
    for e in entries:
        table.add_row(
            e.name, "[red]adversarial[/red]" if e.nature == "adversarial" else "valid", e.targets
        )
    table_console(min_width=120).print(table)  # piped: no row wraps (README)
