"""Helpers shared by the subcommands: durations, option types, profiles and targets as usage
errors, and how ahp-fuzz was invoked (for commands printed to paste)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.reference import Profile

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def add_out_arguments(p: argparse.ArgumentParser, default: str, earlier: str, overwrite_keeps: str = "") -> None:
    """`--out` and its two exclusive reuse flags, as `run` and `campaign` take them (one rule:
    a folder holding an earlier `earlier` is refused unless --overwrite or --append)."""
    p.add_argument("--out", help=f"output folder (default: {default}); a folder holding an earlier "
                   f"{earlier} is refused unless --overwrite or --append")
    reuse = p.add_mutually_exclusive_group()
    reuse.add_argument("--overwrite", action="store_true",
                       help=f"remove an earlier run's outputs from --out first{overwrite_keeps}")
    reuse.add_argument("--append", action="store_true",
                       help="keep an earlier run's findings in --out and add to them")


def parse_duration(text: str) -> float:
    """`90`, `90s`, `5m`, `1.5h`, `500ms` → seconds."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (e.g. 60s, 5m, 1h)")
    value, unit = float(m.group(1)), m.group(2) or "s"
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


# -- option types (argparse: a bad value is a usage error, exit 2, before anything starts) --------


def duration_type(text: str) -> float:
    """A duration greater than zero."""
    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError(f"must be longer than zero, got {text!r}")
    try:
        value = parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be longer than zero, got {text!r}")
    return value


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer in [low, high] (no upper bound when high is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            want = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {want}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def seconds_type(text: str) -> float:
    """A number of seconds greater than zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds greater than zero, got {text!r}")
    return value


# -- targets and profiles ---------------------------------------------------------------------


def open_target_or_usage(spec: str, profile: Profile, timeout_s: float, **options: Any) -> Any:
    """`open_target`, with an unknown spelling or a target that cannot start as a usage error."""
    from harness.targets.base import TargetSetupError, open_target

    try:
        return open_target(spec, profile=profile, timeout_s=timeout_s, **options)
    except (ValueError, TargetSetupError) as e:
        raise UsageError(str(e)) from e


def profile_or_usage(name: str) -> Profile:
    try:
        return Profile.named(name)
    except ValueError as e:
        raise UsageError(str(e)) from e


# -- how we were invoked ----------------------------------------------------------------------


def program_name(argv0: str | None = None) -> str:
    """How to spell ahp-fuzz in a command a person pastes: as it was invoked.

    `.venv/bin/ahp-fuzz run …` prints `.venv/bin/ahp-fuzz replay …`; `ahp-fuzz` found on PATH
    prints `ahp-fuzz`; `python -m harness.cli` prints `<that python> -m harness.cli`.
    """
    arg = argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "")
    name = os.path.basename(arg)
    if name in ("__main__.py", "-m") or arg.endswith(os.path.join("harness", "cli", "__main__.py")):
        return f"{shlex.quote(_python_spelling())} -m harness.cli"
    if not name.startswith("ahp-fuzz"):
        return "ahp-fuzz"  # embedded (tests, another tool): the console script's name
    on_path = shutil.which(name)
    if on_path and os.path.abspath(on_path) == os.path.abspath(arg):
        return name
    if os.path.isabs(arg):
        try:
            rel = os.path.relpath(arg)
        except ValueError:
            rel = arg
        if not rel.startswith(".."):
            return shlex.quote(rel if os.sep in rel else f".{os.sep}{rel}")
    return shlex.quote(arg)


def _python_spelling() -> str:
    exe = sys.executable or "python3"
    try:
        rel = os.path.relpath(exe)
    except ValueError:
        return exe
    return exe if rel.startswith("..") else rel


def prepare_out(out: Path, *, overwrite: bool, append: bool, outputs: tuple[str, ...] | None = None) -> bool:
    """Check --out; with --overwrite remove an earlier run's `outputs` (default: what a `run`
    writes, `RUN_OUTPUTS`). True when appending to an earlier run. An earlier run without
    either flag is a usage error (nothing is mixed). The same rules for `run` and `campaign`."""
    from harness.report.writers import RUN_OUTPUTS, earlier_run, run_is_live

    check_out_folder(out)
    about = earlier_run(out)
    if about is None:
        return False
    if run_is_live(out):  # never clear or join a run that is still writing there
        raise UsageError(f"--out: {about}; choose another folder")
    if overwrite:
        for name in outputs if outputs is not None else RUN_OUTPUTS:
            p = out / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        return False
    if append:
        return True
    raise UsageError(f"--out: {about}; pass --overwrite to replace it or --append to add to it")


def check_out_folder(out: Path) -> None:
    """--out must be a folder (or not exist yet) this process can write in: checked before
    anything starts by making the folder and writing (then removing) a probe file in it, so
    that an unwritable place is a usage error (exit 2), not an internal error mid-run."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    made = [d for d in (out, *out.parents) if not d.exists()]  # what the probe creates, deepest first
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".ahp-fuzz-probe-"):
            pass
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write there ({e.strerror or e})") from None
    finally:
        for d in made:  # leave nothing behind: the run makes its folder when it starts
            try:
                d.rmdir()
            except OSError:
                break


# -- the verdict log (a test suite or CI wrapper watching every run) --------------------------

#: Names a file: every `run` and `campaign` appends one JSON line with its verdict to it
#: (tests/untested_guard.py fails a test whose run tested nothing; docs/ci.md).
VERDICT_LOG_ENV = "AHP_FUZZ_VERDICT_LOG"


def record_verdict(command: str, out: Path, verdict: str, why: str | None = None) -> None:
    """Append `{"command", "out", "verdict", "why"}` to $AHP_FUZZ_VERDICT_LOG, if it is set (one
    write of one line in append mode: lines of several processes never interleave)."""
    path = os.environ.get(VERDICT_LOG_ENV)
    if not path:
        return
    import json

    line = json.dumps({"command": command, "out": str(out), "verdict": verdict, "why": why}) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a log nobody can write is no reason to fail the run
