"""Where findings live: a directory of finding files, written atomically and de-duplicated."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .finding import Finding
from .load import load_finding


def file_mode() -> int:
    """The mode a new file gets from open() under the current umask (0644 under 022): output
    files are for other people and tools to read, unlike mkstemp's private 0600."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


class CorpusStore:
    """A folder of findings. `save` is atomic (temp file + rename) and skips known signatures."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._signatures: dict[str, Path] | None = None

    def signatures(self) -> dict[str, Path]:
        """signature -> the file holding the finding with it."""
        if self._signatures is None:
            self._signatures = {f.signature: p for p, f in self.findings()}
        return self._signatures

    def findings(self) -> Iterator[tuple[Path, Finding]]:
        if not self.directory.is_dir():
            return
        for p in sorted(self.directory.glob("*.json")):
            yield p, load_finding(p)

    def save(self, finding: Finding, *, program: str = "ahp-fuzz", replace: bool = False) -> tuple[Path, bool]:
        """Write `finding`; returns (path, written). An existing signature is not written again
        (one finding per root cause), unless `replace` (the same finding with its witnesses
        brought up to date). `program` is how ahp-fuzz was invoked, for the replay command."""
        sigs = self.signatures()
        path = sigs.get(finding.signature) or self.directory / finding.file_name
        if finding.signature in sigs and not replace:
            return path, False  # the file that holds this cause already (an earlier run's)
        self.directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps(finding.to_json(path, program), indent=2, ensure_ascii=False) + "\n"
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            os.fchmod(fd, file_mode())
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        sigs[finding.signature] = path
        return path, True
