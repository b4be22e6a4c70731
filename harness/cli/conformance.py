"""`ahp-fuzz conformance`: a spec directory's reducer and round-trip fixtures against the
reference model, or through any target (`--target`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness import conformance
from harness.conformance import _print_report
from harness.errors import UsageError
from harness.spec.specdir import SpecDirError

from . import _profiles
from ._common import open_target_or_usage, seconds_type


def command(args: argparse.Namespace) -> int:
    spec = _profiles.spec_or_usage(args.spec, target=args.target)
    fixtures, recorded = _fixture_folder(args.fixtures) if args.fixtures else (None, None)
    if spec is None and fixtures is None:
        raise UsageError("no spec directory: pass --spec DIR, set AHP_SPEC_DIR, pass --fixtures DIR, "
                         "or a --target ts:DIR whose checkout holds schema/ and types/test-cases/")
    explicit = args.profile or args.version
    if explicit is None and recorded is None and spec is not None and spec.release.released is None:
        raise UsageError(f"{spec.path}: no CHANGELOG.md to tell the protocol version; pass --profile (e.g. 0.8.0)")
    choice = _profiles.choose_or_usage(explicit, recorded=recorded, spec=spec, target=args.target)
    target = None
    notes: list[str] = []
    if args.target is not None:
        target = open_target_or_usage(args.target, choice.profile, args.timeout)
    try:
        if target is not None:
            choice = _profiles.after_open(choice, target, args.target)  # "profile: …" on stderr
        try:
            results = conformance.run(
                spec, choice.profile, target, notes=notes,
                fixtures=fixtures,
            )
        except (SpecDirError, ValueError) as e:
            raise UsageError(str(e)) from e
    finally:
        if target is not None:
            target.close()
    where = args.fixtures or (spec.path if spec is not None else "")
    if not results:
        raise UsageError(f"{where}: no reducer or round-trip fixtures found")
    what = f"target {args.target}" if args.target else "model"
    header = f"fixtures {where} — {what}, profile {choice.profile.label} ({choice.why})"
    if args.json and target is None:  # stdout is the JSON alone: the profile used goes to stderr, as `run` says it
        print(f"profile: {choice.profile.label} ({choice.why})", file=sys.stderr)
    _print_report(results, header, args.json, notes)
    return 0 if all(r.passed for r in results) else 1


def _fixture_folder(folder: str) -> tuple[list[Any], str | None]:
    """The reducer fixtures of a folder, and the profile they record (`ahpFuzz.profile`, as
    `export-fixture` writes it) when they all record the same one."""
    import json
    from pathlib import Path

    from harness.spec.specdir import load_reducer_fixtures

    d = Path(folder)
    if not d.is_dir():
        raise UsageError(f"--fixtures: no such folder {d}")
    try:
        fixtures = load_reducer_fixtures(d)
        profiles = {
            (json.loads(f.read_text(encoding="utf-8")).get("ahpFuzz") or {}).get("profile")
            for f in sorted(d.glob("*.json"))
        }
    except (SpecDirError, ValueError, KeyError) as e:
        raise UsageError(f"--fixtures {d}: {e}") from e
    return fixtures, (profiles.pop() if len(profiles) == 1 and None not in profiles else None)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "conformance",
        help="run a spec directory's reducer and round-trip fixtures against the reference model or a target",
        description=conformance.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _profiles.add_options(p, baseline=False)
    p.add_argument("--version", metavar="V", help="the old spelling of --profile")
    p.add_argument("--target", metavar="T",
                   help="push the fixtures through this target (reference | adapter:<command line> | "
                   "ts:<AHP checkout> | js:<module>) instead of the in-process model")
    p.add_argument("--fixtures", metavar="DIR",
                   help="run this folder of reducer fixtures (e.g. written by export-fixture) "
                   "instead of the spec directory's")
    p.add_argument("--timeout", type=seconds_type, default=5.0,
                   help="per-step target timeout in seconds (default 5)")
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.set_defaults(func=command)
