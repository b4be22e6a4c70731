"""Commands a reader of `index.html` pastes: the rerun command and the replay commands, absolute.

`report.json` records the command line as typed (`command`) and each finding's file and replay
command as written — relative to the folder the run started in when `--out` or the program was
relative. The page must work from anywhere, so the commands it shows are made absolute against
that folder (the run's *origin*), found in this order:

1. `cwd` in `report.json`, when the writer recorded it;
2. a relative `--out` (or the default `reports/<name>`) matched against the run folder's path:
   `--out reports/run-1` with the folder at `/home/u/proj/reports/run-1` started in `/home/u/proj`;
3. a relative finding `file` matched the same way;
4. the current folder, when the recorded program (e.g. `.venv/bin/ahp-fuzz`) exists there.

When none applies the commands are shown as recorded, and the page says so.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_OUT = "--out"


def _out_argument(command: list[Any]) -> str | None:
    """The value of `--out` in a recorded command line (None when absent)."""
    for i, arg in enumerate(command):
        if not isinstance(arg, str):
            continue
        if arg == _OUT and i + 1 < len(command) and isinstance(command[i + 1], str):
            return command[i + 1]
        if arg.startswith(_OUT + "="):
            return arg[len(_OUT) + 1:]
    return None


def _strip_tail(folder: Path, tail: Path) -> Path | None:
    """`folder` without its last parts when they are `tail` (`/a/b/c` minus `b/c` is `/a`)."""
    tail = Path(os.path.normpath(tail))
    if tail.is_absolute() or ".." in tail.parts:
        return None
    n = len(tail.parts) if tail.parts != (".",) else 0
    if n == 0:
        return folder
    if len(folder.parts) > n and folder.parts[-n:] == tail.parts:
        return Path(*folder.parts[:-n])
    return None


def _spellings(folder: Path) -> Iterable[Path]:
    """The run folder as an absolute path, as given and with symbolic links resolved."""
    plain = Path(os.path.abspath(folder))
    yield plain
    real = plain.resolve()
    if real != plain:
        yield real


def run_origin(report: dict[str, Any], run_dir: Path) -> Path | None:
    """The folder the run was started in (module docstring), or None when it cannot be told."""
    cwd = report.get("cwd")
    if isinstance(cwd, str) and os.path.isabs(cwd):
        return Path(cwd)
    command = report.get("command") if isinstance(report.get("command"), list) else []
    tails: list[Path] = []
    out = _out_argument(command)
    if out is not None:
        if not os.path.isabs(out):
            tails.append(Path(out))
    elif command:
        tails.append(Path("reports") / Path(os.path.abspath(run_dir)).name)  # the default --out
    for entry in report.get("findings") or []:
        name = entry.get("file") if isinstance(entry, dict) else None
        if isinstance(name, str) and name and not os.path.isabs(name):
            tails.append(Path(name).parent.parent)  # <run folder>/findings/<file>
    for tail in tails:
        for folder in _spellings(run_dir):
            origin = _strip_tail(folder, tail)
            if origin is not None:
                return origin
    first = _first_word(command[0]) if command and isinstance(command[0], str) else ""
    if "/" in first and not os.path.isabs(first) and (Path.cwd() / first).is_file():
        return Path.cwd()
    return None


def _first_word(program: str) -> str:
    try:
        words = shlex.split(program)
    except ValueError:
        return ""
    return words[0] if words else ""


def absolute_program(program: str, origin: Path | None) -> str:
    """`program` (a shell spelling such as `.venv/bin/ahp-fuzz` or `/usr/bin/python3 -m
    harness.cli`) with a relative first word made absolute against `origin`. A bare name found
    on PATH (`ahp-fuzz`) stays as it is."""
    try:
        words = shlex.split(program)
    except ValueError:
        return program
    if not words or "/" not in words[0] or os.path.isabs(words[0]) or origin is None:
        return program
    words[0] = os.path.normpath(origin / words[0])
    return shlex.join(words)


def is_portable(program: str) -> bool:
    """The program works from any folder: absolute, or a bare name looked up on PATH."""
    first = _first_word(program)
    return bool(first) and ("/" not in first or os.path.isabs(first))


def names_relative_paths(command: list[Any]) -> bool:
    """Some word of the command line (or of an option's value, as in `adapter:./impl --x y/z`)
    looks like a relative path, so the line works only from the folder the run started in."""
    for arg in command:
        for word in str(arg).split():
            value = word.split(":", 1)[1] if ":" in word and "://" not in word else word
            value = value.split("=", 1)[1] if value.startswith("-") and "=" in value else value
            if "/" in value and not value.startswith(("/", "{")) and "://" not in value:
                return True
    return False


#: The commands whose report records the seed they ran with (`--seed`, else one from the clock).
SEEDED_COMMANDS = ("run", "campaign", "commands")


def rerun_command(report: dict[str, Any], origin: Path | None) -> str | None:
    """The recorded command line, pasteable from anywhere: `cd <origin> && <command>` (targets and
    options may name relative paths too), with an absolute program. A seed the command took from
    the clock is added as `--seed N`, so the line reruns the same run. None when not recorded."""
    command = report.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return None
    command = [*command, *_seed_option(command, report)]
    line = " ".join([absolute_program(command[0], origin), *(shlex.quote(a) for a in command[1:])])
    return f"cd {shlex.quote(str(origin))} && {line}" if origin is not None else line


def _seed_option(command: list[str], report: dict[str, Any]) -> list[str]:
    """`["--seed", N]` when the command did not name the seed its report records."""
    seed = report.get("seed")
    if len(command) < 2 or command[1] not in SEEDED_COMMANDS or isinstance(seed, bool) or not isinstance(seed, int):
        return []
    if any(a == "--seed" or a.startswith("--seed=") for a in command[2:]):
        return []
    return ["--seed", str(seed)]


def finding_file(entry: dict[str, Any], run_dir: Path, origin: Path | None) -> Path | None:
    """The absolute path of a finding's file: as recorded (relative to the origin), else in the
    run folder's `findings/` (a copied or merged folder). None when it is nowhere."""
    name = entry.get("file")
    if not isinstance(name, str) or not name:
        return None
    recorded = Path(name)
    candidates = [recorded] if recorded.is_absolute() else ([origin / recorded] if origin else [])
    candidates += [run_dir / "findings" / recorded.name, run_dir / recorded]
    for candidate in candidates:
        if candidate.is_file():
            return Path(os.path.abspath(candidate))
    return None


def replay_command(entry: dict[str, Any], report: dict[str, Any], run_dir: Path, origin: Path | None) -> str:
    """`<program> replay <absolute finding file>`, the program as the run spelled it, made
    absolute. Falls back to the recorded replay command when the file is not found."""
    recorded = entry.get("replay") if isinstance(entry.get("replay"), str) else ""
    cut = recorded.rfind(" replay ")
    if cut > 0:
        program = recorded[:cut]
    else:
        command = report.get("command") or []
        program = command[0] if command and isinstance(command[0], str) else "ahp-fuzz"
    path = finding_file(entry, run_dir, origin)
    if path is None:
        return recorded or f"{absolute_program(program, origin)} replay {shlex.quote(str(entry.get('file')))}"
    return f"{absolute_program(program, origin)} replay {shlex.quote(str(path))}"
