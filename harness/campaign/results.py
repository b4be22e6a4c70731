"""A finished (or interrupted) campaign as the `report.json` document (schema: docs/report.md).

It extends the `ahp-fuzz run` report with a `campaign` section (workers, restarts, crashes,
database, shard), `branchCoverage`, the `outcomes` matrix and a `timeline` of samples.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from harness import __version__
from harness.report.writers import run_verdict

from .supervisor import CampaignState, outcomes_section

REPORT_FORMAT = "ahp-fuzz/report"
REPORT_FORMAT_VERSION = 1


def report_document(state: CampaignState, argv: list[str], version: Any = None) -> dict[str, Any]:
    spec = state.spec
    elapsed = state.elapsed
    steps = state.steps
    sent: dict[str, dict[str, int]] = {}
    for slot in state.slots:
        for t, c in slot.sent.items():
            agg = sent.setdefault(t, {"sent": 0, "changed": 0})
            agg["sent"] += c["sent"]
            agg["changed"] += c["changed"]
    known_counts = {}
    for slot in state.slots:
        known_counts[slot.index] = int(slot.total("known"))
    findings = sorted(state.findings.values(), key=lambda f: (f["invariant"], f["kind"], f["signature"]))
    return {
        "format": REPORT_FORMAT,
        "formatVersion": REPORT_FORMAT_VERSION,
        "tool": {"name": "ahp-fuzz", "version": __version__},
        "command": argv,
        "cwd": os.getcwd(),  # where the command ran: its relative paths resolve here
        "mode": "campaign",
        "startedAt": state.started_wall,
        "finishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "status": state.status,
        "pid": os.getpid(),  # with `host`: a second campaign into this folder sees a live one
        "host": socket.gethostname(),
        "verdict": run_verdict(status=state.status, findings=len(findings), steps=steps),
        "stoppedBecause": state.stopped_because,
        "target": ", ".join(spec.targets),
        "targets": list(spec.targets),
        "profile": spec.profile,
        "seed": spec.seed,
        "budgetSeconds": spec.budget_s,
        "kinds": list(spec.kinds) if spec.kinds else None,
        "elapsedSeconds": round(elapsed, 3),
        "examples": state.examples,
        "steps": steps,
        "stepsPerSecond": round(steps / elapsed, 1) if elapsed else None,
        "findings": findings,
        "known": state.known,
        "knownHits": sum(known_counts.values()),
        "coverage": dict(sorted(sent.items())),
        "campaign": {
            "workers": spec.workers,
            "restarts": state.restarts,
            "crashes": [{"worker": s.index, **c} for s in state.slots for c in s.crashes],
            "processes": [
                {"worker": s.index, "generation": s.generation, "target": s.target,
                 "pid": s.proc.pid if s.proc is not None else None}
                for s in state.slots
            ],
            "database": str(spec.database),
            "shard": {"index": spec.shard[0], "count": spec.shard[1]} if spec.shard else None,
            "coverageEvery": spec.coverage_every if spec.coverage else None,
            "steer": spec.steer,
        },
        "branchCoverage": state.branches,
        "outcomes": outcomes_section(state, version),
        "timeline": state.timeline,
    }
