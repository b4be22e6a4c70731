"""`ahp-fuzz` — the command line.

Each subcommand lives in the package of the idea it belongs to and exposes
`register(subparsers)`; the parser it adds sets `func(args) -> int`. Exit codes everywhere:
0 clean, 1 something was found (a failure, a finding), 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness import __version__

#: Modules that each add subcommands, in help order.
COMMAND_MODULES = (
    "harness.conformance",  # conformance
    "harness.engine.commands",  # run, replay
    "harness.invariants.commands",  # invariants
    "strategies.commands",  # strategies
)


class UsageError(Exception):
    """Bad arguments or environment: printed without a traceback, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ahp-fuzz",
        description="Fuzz and property-test Agent Host Protocol reducers and hosts.",
    )
    parser.add_argument("--version", action="version", version=f"ahp-fuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:  # a command package not built yet
            if e.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as e:
        print(f"ahp-fuzz: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ahp-fuzz: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
