"""`ahp-fuzz` — the command line: the one place that wires engine, targets and reporters.

Each subcommand is a module of this package exposing `register(subparsers)`; the parser it adds
sets `func(args) -> int`. Exit codes everywhere: 0 clean, 1 something was found (a failure, a
finding), 2 usage or setup error, 3 internal error (a bug in ahp-fuzz: one line on stderr, the
traceback saved to `internal-error.txt` in the run folder, or in the temp folder), 130 / 143
interrupted by SIGINT / SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from harness import __version__
from harness.errors import (
    EXIT_INTERNAL,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
    RunStopped,
    UsageError,
)

#: Subcommand modules (under `harness.cli`), in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "run",
    "replay",
    "conformance",
    "invariants",
    "strategies",
    "campaign",
    "report",
    "matrix",
    "host",
    "export_fixture",
    "commands",
    "completion",
)

__all__ = ["COMMAND_MODULES", "UsageError", "build_parser", "main"]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given the command line, of the one it names first (the
    other subcommands' modules and what they import are then never loaded: start-up time)."""
    parser = argparse.ArgumentParser(
        prog="ahp-fuzz",
        description="Fuzz and property-test Agent Host Protocol reducers and hosts.",
    )
    parser.add_argument("--version", action="version", version=f"ahp-fuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _named_command(argv) or COMMAND_MODULES:
        importlib.import_module(f"harness.cli.{name}").register(sub)
    return parser


def _named_command(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The module of the subcommand `argv` starts with (`run …`, `export-fixture …`), or ()."""
    if not argv or "_ARGCOMPLETE" in os.environ:
        return ()
    return tuple(name for name in COMMAND_MODULES if name.replace("_", "-") == argv[0])


def main(argv: Sequence[str] | None = None) -> int:
    from harness.hypothesis_home import use_storage, user_cache

    use_storage(user_cache())  # Hypothesis' Unicode tables: once per user, never in the user's folder
    if argv is None:
        argv = sys.argv[1:]
    try:
        parser = build_parser(argv)
    except Exception as e:  # a subcommand module that does not import: a broken install
        where = _save_traceback(None)
        print(f"ahp-fuzz: internal error: {type(e).__name__}: {e}\n  traceback saved to {where}",
              file=sys.stderr)
        return EXIT_INTERNAL
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (`ahp-fuzz completion SHELL`)
        import argcomplete

        argcomplete.autocomplete(parser)  # prints them and exits; imported at no other time
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from harness.cli._paths import resolve_at_start

    resolve_at_start(args)  # relative paths mean the folder the command ran in, from here on
    try:
        return int(args.func(args))
    except UsageError as e:
        print(f"ahp-fuzz: error: {e}", file=sys.stderr)
        _json_failure(args, str(e), EXIT_USAGE)
        return EXIT_USAGE
    except RunStopped as e:  # (a KeyboardInterrupt: caught first)
        print(f"ahp-fuzz: interrupted ({e.reason})", file=sys.stderr)
        return EXIT_SIGTERM if e.reason == "SIGTERM" else EXIT_SIGINT
    except KeyboardInterrupt:
        print("ahp-fuzz: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except BrokenPipeError:
        # The reader went away (`ahp-fuzz … | head`): stop quietly, as Unix tools do.
        _silence_stdout()
        return 0
    except Exception as e:  # a bug in ahp-fuzz: never exit 1, which means "found something"
        where = _save_traceback(getattr(args, "crash_dir", None))
        print(
            f"ahp-fuzz: internal error: {type(e).__name__}: {e}\n"
            f"  this is a bug in ahp-fuzz, not in the target; traceback saved to {where}",
            file=sys.stderr,
        )
        _json_failure(args, f"internal error: {type(e).__name__}: {e} (traceback: {where})", EXIT_INTERNAL)
        return EXIT_INTERNAL


#: The commands whose `--json` promises one JSON document on stdout, also when they fail.
JSON_COMMANDS = ("run", "replay", "campaign")


def _json_failure(args: argparse.Namespace, message: str, code: int) -> None:
    """With `--json`, a command that stopped on an error still prints its one document."""
    if getattr(args, "json", False) and getattr(args, "command", None) in JSON_COMMANDS:
        from harness.report.result import usage_error, write

        with contextlib.suppress(OSError):
            write(usage_error(args.command, message, code))


def _save_traceback(folder: Path | None) -> str:
    """Write the current exception's traceback to `folder/internal-error.txt` (or a temp file)."""
    text = f"ahp-fuzz {__version__}\ncommand: {' '.join(sys.argv)}\n\n{traceback.format_exc()}"
    try:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / "internal-error.txt"
            path.write_text(text, encoding="utf-8")
            return str(path)
    except OSError:
        pass
    fd, name = tempfile.mkstemp(prefix="ahp-fuzz-internal-error-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return name


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
