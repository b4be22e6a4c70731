"""`ahp-fuzz` — the command line: the one place that wires engine, targets and reporters.

Each subcommand is a module of this package exposing `register(subparsers)`; the parser it adds
sets `func(args) -> int`. Exit codes everywhere: 0 clean, 1 something was found (a failure, a
finding), 2 usage or setup error, 3 internal error (a bug in ahp-fuzz: one line on stderr, the
traceback saved to `internal-error.txt` in the run folder, or in the temp folder), 130 / 143
interrupted by SIGINT / SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys


def _end_while_loading(signum: int, frame: object) -> None:
    """A signal while ahp-fuzz is still loading: nothing has started, nothing to clean up."""
    name = signal.Signals(signum).name
    os.write(2, f"ahp-fuzz: interrupted ({name}) while loading: nothing was run\n".encode())
    os._exit(128 + signum)


# Started as the program (`ahp-fuzz …`, `python -m harness.cli …`): from here until `main` takes
# over, Ctrl-C or SIGTERM is one line and 130 / 143, not a traceback from the middle of an import.
if os.path.basename(sys.argv[0] if sys.argv else "") == "-m" or os.path.basename(
        sys.argv[0] if sys.argv else "").startswith("ahp-fuzz"):
    for _sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_sig, _end_while_loading)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Iterator, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

from harness import __version__  # noqa: E402
from harness.errors import (  # noqa: E402
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


class OptionError(Exception):
    """argparse refused the command line (`prog`: the command it parsed, e.g. `ahp-fuzz run`)."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse with the one error format of every other error (one line naming the problem,
    then where to read more; no usage block first), and `--budget -5s` read as a (bad) value
    rather than as an unknown option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\d+(?:\.\d+)?(?:ms|s|m|h)?$|^-\d*\.\d+$")

    def error(self, message: str) -> NoReturn:
        raise OptionError(self.prog, message)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given the command line, of the one it names first (the
    other subcommands' modules and what they import are then never loaded: start-up time)."""
    parser = _Parser(
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
    """Run one command; its exit code. From the first line on, SIGINT and SIGTERM end it with
    one line and 130 / 143 (a command that runs something handles them itself: `run` finalizes
    its report as interrupted), never a traceback, at every moment (issue 35)."""
    with _signals_interrupt():
        try:
            return _main(argv)
        except KeyboardInterrupt as e:  # a signal while parsing, or while reporting an error
            reason = getattr(e, "reason", "SIGINT")
            print(f"ahp-fuzz: interrupted ({reason}) before anything ran", file=sys.stderr)
            return EXIT_SIGTERM if reason == "SIGTERM" else EXIT_SIGINT


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise `RunStopped` (a KeyboardInterrupt naming the signal) while the
    command runs; the handlers before are restored after it (tests call `main` in-process)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise RunStopped(signal.Signals(signum).name)

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _interrupted(args: argparse.Namespace, reason: str) -> str:
    """The one line a signal leaves: whether anything was fuzzed and reported."""
    out = getattr(args, "crash_dir", None)
    if getattr(args, "command", None) in ("run", "campaign") and (out is None or not (out / "report.json").exists()):
        return f"ahp-fuzz: interrupted ({reason}) before the run started: nothing was fuzzed, no report written"
    return f"ahp-fuzz: interrupted ({reason})"


def _main(argv: Sequence[str] | None) -> int:
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
    try:
        args = parser.parse_args(argv)
    except OptionError as e:
        return _option_error(e, list(sys.argv[1:] if argv is None else argv))
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
        print(_interrupted(args, e.reason), file=sys.stderr)
        return EXIT_SIGTERM if e.reason == "SIGTERM" else EXIT_SIGINT
    except KeyboardInterrupt:
        print(_interrupted(args, "SIGINT"), file=sys.stderr)
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


def _option_error(e: OptionError, argv: list[str]) -> int:
    """One line saying what is wrong, one where to read more; with `--json`, the document too."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    command = next((w.replace("-", "_") for w in words if w.replace("-", "_") in COMMAND_MODULES), None)
    prog = f"ahp-fuzz {command.replace('_', '-')}" if command and e.prog == "ahp-fuzz" else e.prog
    print(f"ahp-fuzz: error: {e}\n  see: {prog} --help", file=sys.stderr)
    if "--json" in words and command in JSON_COMMANDS:
        from harness.report.result import usage_error, write

        with contextlib.suppress(OSError):
            write(usage_error(command, str(e), EXIT_USAGE))
    return EXIT_USAGE


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
