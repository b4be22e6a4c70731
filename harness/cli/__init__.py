"""`ahp-fuzz` — the command line: the one place that wires engine, targets and reporters.

Each subcommand is a module of this package exposing `register(subparsers)`; the parser it adds
sets `func(args) -> int`. Exit codes everywhere: 0 clean, 1 something was found (a failure, a
finding), 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import UsageError

#: Subcommand modules (under `harness.cli`), in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "run",
    "replay",
    "conformance",
    "invariants",
    "strategies",
    "campaign",
    "report",
)

__all__ = ["COMMAND_MODULES", "UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ahp-fuzz",
        description="Fuzz and property-test Agent Host Protocol reducers and hosts.",
    )
    parser.add_argument("--version", action="version", version=f"ahp-fuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"harness.cli.{name}").register(sub)
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
    except BrokenPipeError:
        # The reader went away (`ahp-fuzz … | head`): stop quietly, as Unix tools do.
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
