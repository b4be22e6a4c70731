"""`ahp-fuzz invariants`: print the invariant catalogue (table, JSON or the Markdown docs page)."""

from __future__ import annotations

import argparse
import json
import sys

from harness.invariants import listing
from harness.invariants.base import SCOPES, SEVERITIES, Invariant
from harness.invariants.dispatchability import model_self_check
from harness.spec.versions import KINDS

_SEVERITY_STYLE = {
    "violation": "red",
    "warning": "yellow",
    "divergence": "magenta",
    "known": "cyan",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "invariants",
        help="list the invariant catalogue",
        description="List every invariant: id, title, severity, scope, whether it is checked, "
        "and its spec source.",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="machine-readable output")
    out.add_argument("--markdown", action="store_true", help="the docs/invariants.md page")
    out.add_argument(
        "--self-check",
        action="store_true",
        help="check the model's client-dispatchable table (INV-053); exit 1 on a mismatch",
    )
    p.add_argument("--kind", choices=KINDS, help="only invariants that apply to this state kind")
    p.add_argument("--scope", choices=SCOPES, help="only this scope")
    p.add_argument("--severity", choices=SEVERITIES, help="only this severity")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.self_check:
        problems = model_self_check()
        for v in problems:
            print(f"{v.invariant}: {v.message}")
        if not problems:
            print("INV-053 model self-check: the client-dispatchable table matches the spec counts")
        return 1 if problems else 0
    selected = listing.select(kind=args.kind, scope=args.scope, severity=args.severity)
    if args.json:
        doc = {
            "summary": listing.summary(selected),
            "invariants": [listing.as_dict(i) for i in selected],
        }
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.markdown:
        sys.stdout.write(listing.render_markdown({i.id: i for i in selected}))
        return 0
    _print_table(selected)
    return 0


def _print_table(selected: list[Invariant]) -> None:
    from rich.table import Table

    from harness.report.console import table_console

    console = table_console()  # piped: no row wraps (README), the source column included
    wide = console.width >= 140
    s = listing.summary(selected)
    table = Table(
        title="AHP invariant catalogue",
        caption=f"{s['total']} entries: {s['checkable']} checked per step ({s['probe']} probes), "
        f"{s['elsewhere']} elsewhere, {s['total'] - s['checkable'] - s['elsewhere']} not yet checkable"
        + ("" if wide else " — sources: --json, --markdown or a wider terminal"),
    )
    table.add_column("id", no_wrap=True)
    table.add_column("title")
    table.add_column("severity", no_wrap=True)
    table.add_column("scope", no_wrap=True)
    table.add_column("checked")
    if wide:
        table.add_column("source", overflow="fold")
    for inv in selected:
        style = _SEVERITY_STYLE.get(inv.severity, "")
        checked = listing.checked_label(inv)
        row = [
            inv.id,
            inv.title,
            f"[{style}]{inv.severity}[/]" if style else inv.severity,
            inv.scope,
            checked if inv.checkable else f"[dim]{checked}[/]",
        ]
        table.add_row(*row, *([inv.source] if wide else []))
    console.print(table)
