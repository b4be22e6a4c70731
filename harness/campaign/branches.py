"""Measuring branch coverage of the reference model inside a campaign worker.

One worker measures (the others run at full speed); within it, one chunk in `every` is traced, so
the cost can be dialled down (bench/bench_coverage.py measures it). The data file is combined
with the other generations' by the parent at the end (harness/report/coverage.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report.coverage import new_coverage, summary_of


class BranchSampler:
    """Traces the reference model in this process, in windows (`start`/`stop`)."""

    def __init__(self, data_file: Path | None = None) -> None:
        self.cov = new_coverage(data_file)
        self.running = False

    def start(self) -> None:
        if not self.running:
            self.cov.start()
            self.running = True

    def stop(self) -> None:
        if self.running:
            self.cov.stop()
            self.running = False

    def summary(self, *, with_files: bool = False) -> dict[str, Any]:
        return summary_of(self.cov, with_files=with_files)

    def save(self) -> None:
        self.cov.save()
