"""Reading a JSON file the harness was handed (a finding, a baseline), with every way it can fail
turned into the caller's own format error: a clear message and exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json(path: str | Path, what: str, error: type[Exception]) -> Any:
    """The JSON value in `path`; a missing file, a folder, an unreadable or non-UTF-8 file and
    text that is not JSON raise `error` with a message naming `what` the file should be."""
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"no such {what} file: {p}") from None
    except IsADirectoryError:
        raise error(f"{p} is a folder, not a {what} file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{p}: cannot read ({e})") from e
    except json.JSONDecodeError as e:
        raise error(f"{p}: not JSON ({e})") from e
