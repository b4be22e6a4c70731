"""`ahp-fuzz conformance`: a spec directory's reducer and round-trip fixtures against the model."""

from __future__ import annotations

import argparse
from typing import Any

from harness import conformance
from harness.conformance import _print_report, profile_for
from harness.errors import UsageError
from harness.spec.specdir import SpecDir, SpecDirError


def command(args: argparse.Namespace) -> int:
    try:
        spec = SpecDir.from_env(args.spec)
        if spec is None:
            raise UsageError("no spec directory: pass --spec DIR or set AHP_SPEC_DIR")
        profile, why = profile_for(spec, args.version)
        results = conformance.run(spec, profile)
    except (SpecDirError, ValueError) as e:
        raise UsageError(str(e)) from e
    if not results:
        raise UsageError(f"{spec.path}: no reducer or round-trip fixtures found")
    header = f"spec {spec.path} — model {profile.label} ({why})"
    _print_report(results, header, args.json)
    return 0 if all(r.passed for r in results) else 1


def register(sub: Any) -> None:
    p = sub.add_parser(
        "conformance",
        help="run a spec directory's reducer and round-trip fixtures against the reference model",
        description=conformance.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--spec", metavar="DIR", help="spec directory or AHP checkout (default: $AHP_SPEC_DIR)")
    p.add_argument(
        "--version",
        metavar="V",
        help="model this protocol version or named profile, e.g. 0.6.0, 0.7.0-main, 0.8.0, "
        "0.8.0-c840a57 (default: from the spec dir's CHANGELOG)",
    )
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.set_defaults(func=command)
