"""Relative paths mean the folder the command ran in, resolved once, at start-up.

`$AHP_SPEC_DIR` is made absolute in the environment (every process the command starts — an
adapter, a campaign worker, a host — inherits the folder the user meant, whatever its own
working directory); the path options a command reads at start-up or hands to other processes
(`--spec`, `--baseline`, `--database`, `--fixtures`) are made absolute in the parsed arguments.
`--out`, the finding file of `replay` and the folders of `report --merge` keep the spelling the
user gave, because they are printed back (`report: reports/x/report.json`, replay commands);
the CLI never changes its working directory, so they name the same place for the whole run,
and `report.json` records that folder (`cwd`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.spec.specdir import pin_env

#: The parsed options (argparse `dest`s) that are made absolute at start-up.
PATH_OPTIONS: tuple[str, ...] = ("spec", "baseline", "database", "fixtures")


def resolve_at_start(args: argparse.Namespace, start_dir: str | os.PathLike[str] | None = None) -> None:
    """Resolve `$AHP_SPEC_DIR` and the PATH_OPTIONS of `args` against `start_dir` (default:
    the current working directory), in place."""
    here = Path(start_dir) if start_dir is not None else Path.cwd()
    pin_env(here)
    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            path = os.path.expanduser(value)
            if not os.path.isabs(path):
                setattr(args, name, os.path.normpath(os.path.join(here, path)))
