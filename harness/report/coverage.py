"""Branch coverage of the reference model (`harness/reference`) as report data.

`summary_of` turns coverage.py's JSON report into the report's `branchCoverage` section (totals
and, per module, every branch not taken); `combine` merges the data files of several workers or
run folders into one. Measuring is the campaign's business (harness/campaign/branches.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import coverage

import harness.reference

REFERENCE_DIR = Path(harness.reference.__file__).resolve().parent


def new_coverage(data_file: Path | None) -> coverage.Coverage:
    """A coverage.py object measuring branches of the reference model only."""
    return coverage.Coverage(
        data_file=str(data_file) if data_file is not None else None,
        branch=True,
        source=[str(REFERENCE_DIR)],
        config_file=False,
    )


def summary_of(cov: coverage.Coverage, *, with_files: bool = True) -> dict[str, Any]:
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix="ahp-cov-")
    os.close(fd)
    try:
        cov.json_report(outfile=tmp, pretty_print=False)
        raw = json.loads(Path(tmp).read_text(encoding="utf-8"))
    except coverage.CoverageException:
        return {"percentBranches": 0.0, "coveredBranches": 0, "numBranches": 0, "percentCovered": 0.0}
    finally:
        Path(tmp).unlink(missing_ok=True)
    return _section(raw, with_files)


def _section(raw: dict[str, Any], with_files: bool) -> dict[str, Any]:
    t = raw["totals"]
    out: dict[str, Any] = {
        "percentBranches": round(100.0 * t["covered_branches"] / t["num_branches"], 2) if t["num_branches"] else 100.0,
        "coveredBranches": t["covered_branches"],
        "numBranches": t["num_branches"],
        "percentCovered": round(t["percent_covered"], 2),
        "coveredLines": t["covered_lines"],
        "numStatements": t["num_statements"],
    }
    if with_files:
        files = {}
        for name, f in sorted(raw["files"].items()):
            s = f["summary"]
            rel = Path(name).resolve()
            label = f"harness/reference/{rel.relative_to(REFERENCE_DIR)}" if rel.is_relative_to(REFERENCE_DIR) else name
            files[label] = {
                "numBranches": s["num_branches"],
                "coveredBranches": s["covered_branches"],
                "percentBranches": round(100.0 * s["covered_branches"] / s["num_branches"], 2)
                if s["num_branches"] else 100.0,
                "missingBranches": [list(b) for b in f.get("missing_branches", [])],
                "missingLines": f.get("missing_lines", []),
            }
        out["files"] = files
        out["reducerPath"] = reducer_path(files)
    return out


def reducer_path(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The branch figure of the modules a reducer step runs (`reference_map`): the measure sees
    the model's calls only, so a module off that path (the wire codec, the collection draft's
    host-side helpers, the CLI's profile choice) is at 0 % in every run; it is listed, not counted."""
    from .reference_map import off_reducer_path

    off = sorted(name for name in files if off_reducer_path(name))
    on = [f for name, f in files.items() if name not in off]
    covered, total = sum(f["coveredBranches"] for f in on), sum(f["numBranches"] for f in on)
    return {
        "percentBranches": round(100.0 * covered / total, 2) if total else 100.0,
        "coveredBranches": covered,
        "numBranches": total,
        "offPath": off,
    }


def combine(data_files: list[Path], into: Path) -> dict[str, Any] | None:
    """Combine worker data files into `into` and summarise (None when nothing was measured)."""
    existing = [str(p) for p in data_files if p.exists()]
    if not existing:
        return None
    cov = new_coverage(into)
    cov.combine(existing, keep=True)
    cov.save()
    return summary_of(cov, with_files=True)
