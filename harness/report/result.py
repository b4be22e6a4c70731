"""`--json`: the result of `run`, `replay` or `campaign` as one JSON document on stdout.

With `--json` every line meant for people goes to stderr and stdout carries exactly one JSON
document (docs/report.md, "The `--json` result"), so `ahp-fuzz run … --json | jq .verdict`
works. The document is versioned: `format` is `ahp-fuzz/result`, `formatVersion` 1; new fields
may be added within version 1, a change of meaning bumps it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from harness import __version__

RESULT_FORMAT = "ahp-fuzz/result"
RESULT_FORMAT_VERSION = 1


def _base(command: str, verdict: str, exit_code: int) -> dict[str, Any]:
    return {"format": RESULT_FORMAT, "formatVersion": RESULT_FORMAT_VERSION,
            "tool": {"name": "ahp-fuzz", "version": __version__},
            "command": command, "verdict": verdict, "exitCode": exit_code}


def _finding(entry: dict[str, Any]) -> dict[str, Any]:
    keys = ("invariant", "severity", "title", "kind", "message", "signature", "steps", "reproduced", "file",
            "replay", "cause", "worker", "foundAfterSeconds")
    return {k: entry[k] for k in keys if k in entry}


def from_report(command: str, report: dict[str, Any], out: Path, exit_code: int) -> dict[str, Any]:
    """The result of a `run` or a `campaign` from its `report.json` document."""
    doc = _base(command, str(report.get("verdict") or report.get("status")), exit_code)
    doc.update(
        status=report.get("status"),
        stoppedBecause=report.get("stoppedBecause"),
        target=report.get("target"),
        profile=report.get("profile"),
        seed=report.get("seed"),
        steps=report.get("steps"),
        examples=report.get("examples"),
        elapsedSeconds=report.get("elapsedSeconds"),
        findings=[_finding(f) for f in report.get("findings") or [] if isinstance(f, dict)],
        known={inv: {k: v for k, v in entry.items() if k in ("knownIssue", "kinds", "count")}
               for inv, entry in (report.get("known") or {}).items() if isinstance(entry, dict)},
        reports={"json": str(out / "report.json"), "junit": str(out / "junit.xml"),
                 "html": str(out / "index.html")},
    )
    for key in ("untested", "error", "earlierFindings"):
        if report.get(key):
            doc[key] = report[key]
    if command == "campaign":
        doc["campaign"] = {k: (report.get("campaign") or {}).get(k) for k in ("workers", "restarts")}
    return doc


def replay_result(exit_code: int, details: dict[str, Any]) -> dict[str, Any]:
    """The result of a `replay`: `reproduced` (exit 1), `not-reproduced` or `known` (exit 0: the
    finding's invariant fires only as a known issue), with the finding and what fired."""
    details = dict(details)
    verdict = "reproduced" if exit_code == 1 else str(details.pop("verdict", "not-reproduced"))
    details.pop("verdict", None)
    return {**_base("replay", verdict, exit_code), **details}


def usage_error(command: str | None, message: str, exit_code: int) -> dict[str, Any]:
    """A command that stopped before it ran (a usage or setup error, or an internal error)."""
    verdict = "usage-error" if exit_code == 2 else "internal-error"
    return {**_base(command or "", verdict, exit_code), "error": message, "findings": []}


def write(doc: dict[str, Any], stream: TextIO | None = None) -> None:
    """Print `doc` as the one JSON document of stdout."""
    target = stream or sys.stdout
    target.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    target.flush()


__all__ = ["RESULT_FORMAT", "RESULT_FORMAT_VERSION", "from_report", "replay_result", "usage_error", "write"]
