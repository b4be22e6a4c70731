"""Where Hypothesis keeps its files when ahp-fuzz drives it: never a `.hypothesis/` folder in
the user's working folder.

Hypothesis writes a storage folder the first time a strategy needs its Unicode tables (every
text ahp-fuzz generates does): `.hypothesis/unicode_data/` in the *current* folder by default.
Building the table for the `utf-8` codec takes about 2 s, so a run in a folder that has none
spends that before its first step, and leaves the folder behind in the user's project.

* The command line (`ahp-fuzz …`) keeps it in a per-user cache, `$XDG_CACHE_HOME/ahp-fuzz/hypothesis`
  (default `~/.cache/ahp-fuzz/hypothesis`): built once per user and machine, read (in a few
  milliseconds) by every later run in any folder, and by the processes a run starts (campaign
  workers, matrix runs), which inherit the setting.
* The pytest plugin keeps it under its own output folder (`--ahp-out`, default `.ahp-fuzz/`):
  `.ahp-fuzz/hypothesis/` (docs/howto.md).

Either way a `HYPOTHESIS_STORAGE_DIRECTORY` the user set wins, and nothing is changed once
Hypothesis has chosen its folder in this process. Holds no other state: ahp-fuzz's own example
database is `--database` (an explicit folder).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Hypothesis' own setting (read the first time it needs its storage folder).
ENV_VAR = "HYPOTHESIS_STORAGE_DIRECTORY"


def user_cache() -> Path:
    """The per-user cache folder of the command line's Hypothesis storage."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "ahp-fuzz" / "hypothesis"


def use_storage(folder: Path) -> Path:
    """Point Hypothesis' storage at `folder` unless the user chose one; returns the folder in use.
    Sets the environment, so the processes this one starts use the same folder."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return Path(chosen)
    os.environ[ENV_VAR] = str(folder)
    return folder
