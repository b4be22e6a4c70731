"""Saving a finding from any of several worker processes: atomic, first writer wins.

A finding's file name carries its signature, so two workers that confirm the same finding aim at
the same path. The file is written to a temporary name, flushed to disk, then *linked* into
place: `os.link` fails when the name exists, so the first complete file stays and a second
worker's copy is discarded — never a torn or half-replaced file, whatever gets killed when.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from harness.corpus.finding import Finding


def save_once(directory: Path, finding: Finding, program: str = "ahp-fuzz") -> tuple[Path, bool]:
    """Write `finding` into `directory` unless its signature is already there.

    Returns (path, written): written is False when another worker (or an earlier run) had
    already saved a finding with that signature. `program` is how ahp-fuzz was invoked, for the
    replay command in the file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / finding.file_name
    if path.exists():
        return path, False
    text = json.dumps(finding.to_json(path, program), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return path, False
        return path, True
    finally:
        Path(tmp).unlink(missing_ok=True)
