"""Reading any finding file: the one place that knows every finding format.

`finding.py` (action traces, live traces) and `command_finding.py` (JSON-RPC command traces)
each read their own format; this module looks at a file's `"format"` and hands it to the right
one, so neither format module imports the other (command_finding → finding only).
"""

from __future__ import annotations

from pathlib import Path

from . import command_finding
from .command_finding import CommandFinding
from .finding import Finding, FindingFormatError
from .jsonfile import read_json

__all__ = ["CommandFinding", "Finding", "FindingFormatError", "load_finding"]


def load_finding(path: str | Path) -> Finding:
    """The finding in `path`, of whichever format it is (a `CommandFinding` has the fields and
    methods the store and the report writers use; `ahp-fuzz replay` dispatches on the class)."""
    p = Path(path)
    data = read_json(p, "finding", FindingFormatError)
    if isinstance(data, dict) and data.get("format") == command_finding.FORMAT:
        return CommandFinding.from_json(data, str(p))  # type: ignore[return-value]
    return Finding.from_json(data, str(p))
