"""`ahp-fuzz export-fixture`: write a finding as an upstream reducer conformance fixture.

The fixture (REDUCERS.md §7: `{description, reducer, initial, actions, expected}`) holds the
finding's valid-lane steps up to the failing one and the state the reference model produces
under the finding's profile, so every language's fixture runner can check it:
`ahp-fuzz conformance --fixtures DIR [--target T]` runs such a folder. Exit 0 written, 2 when the
file is not a finding or has no valid-lane step to fold.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.errors import UsageError


def command(args: argparse.Namespace) -> int:
    from harness.corpus.fixture import ExportError, fixture_file_name, fixture_from_finding
    from harness.corpus.load import FindingFormatError, load_finding
    from harness.invariants.registry import REGISTRY

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} is not a folder")
    written = []
    for name in args.findings:
        try:
            finding = load_finding(name)
            inv = REGISTRY.get(finding.invariant)
            fixture = fixture_from_finding(finding, statement=inv.statement if inv else None)
        except (FindingFormatError, ExportError, ValueError) as e:
            raise UsageError(str(e)) from e
        out.mkdir(parents=True, exist_ok=True)
        path = out / fixture_file_name(finding)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(path)
        written.append(path)
        print(f"{path}  ({len(fixture['actions'])} action(s), {fixture['reducer']}, "
              f"profile {fixture['ahpFuzz']['profile']})")
    print(f"check with: ahp-fuzz conformance --fixtures {out} [--target …]")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "export-fixture",
        help="write findings as upstream reducer conformance fixtures",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("findings", nargs="+", metavar="FINDING", help="finding JSON file(s)")
    p.add_argument("--out", default=".", metavar="DIR", help="folder to write the fixtures to (default: .)")
    p.set_defaults(func=command)
