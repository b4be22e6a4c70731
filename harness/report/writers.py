"""Event consumers that write run outputs: the findings folder, `report.json`, `junit.xml`.

Each is a callable taking engine events; `report.json` is rewritten after every finding and at
the end (atomically), so a killed run still leaves a valid report of what it had found.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from harness import __version__
from harness.corpus.store import CorpusStore
from harness.engine.events import Event, FindingFound, KnownSeen, Progress, RunFinished, RunStarted

REPORT_FORMAT = "ahp-fuzz/report"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class FindingWriter:
    """Saves each confirmed finding into `directory` the moment it arrives."""

    def __init__(self, directory: Path):
        self.store = CorpusStore(directory)
        self.paths: dict[str, Path] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, FindingFound):
            path, _ = self.store.save(event.finding)
            self.paths[event.finding.signature] = path


class JsonReport:
    """`report.json`: the run's configuration, counters, findings (with replay commands),
    known upstream violations seen, and per-action-type coverage."""

    def __init__(self, path: Path, findings: FindingWriter, argv: list[str] | None = None):
        self.path = path
        self.findings_writer = findings
        self.data: dict[str, Any] = {
            "format": REPORT_FORMAT,
            "formatVersion": 1,
            "tool": {"name": "ahp-fuzz", "version": __version__},
            "command": argv or [],
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "findings": [],
            "known": {},
            "status": "running",
        }

    def _save(self) -> None:
        write_atomic(self.path, json.dumps(self.data, indent=2, ensure_ascii=False) + "\n")

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.data.update(
                target=event.target, profile=event.profile, seed=event.seed,
                budgetSeconds=event.budget_s, kinds=list(event.kinds),
            )
            self._save()
        elif isinstance(event, FindingFound):
            f = event.finding
            path = self.findings_writer.paths.get(f.signature)
            self.data["findings"].append(
                {
                    "invariant": f.invariant, "severity": f.severity, "title": f.title,
                    "kind": f.kind, "message": f.message, "steps": f.failing_step + 1,
                    "signature": f.signature, "reproduced": event.reproduced,
                    "file": str(path) if path else None, "replay": f.replay_command(path),
                }
            )
            self._save()
        elif isinstance(event, KnownSeen):
            entry = self.data["known"].setdefault(
                event.invariant, {"knownIssue": event.known_issue, "kinds": [], "example": event.message}
            )
            if event.kind not in entry["kinds"]:
                entry["kinds"].append(event.kind)
        elif isinstance(event, Progress):
            self.data["progress"] = event.__dict__
        elif isinstance(event, RunFinished):
            for inv, n in event.known_counts.items():
                self.data["known"].setdefault(inv, {"kinds": []})["count"] = n
            self.data.update(
                status="finished",
                stoppedBecause=event.stopped_because,
                elapsedSeconds=round(event.elapsed_s, 3),
                examples=event.examples,
                steps=event.steps,
                stepsPerSecond=round(event.steps / event.elapsed_s, 1) if event.elapsed_s else None,
                coverage=event.coverage,
                **event.extra,
            )
            self._save()


class JunitReport:
    """`junit.xml`: one test case per invariant that fired (failure) plus one for the run."""

    def __init__(self, path: Path):
        self.path = path
        self.found: list[FindingFound] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, FindingFound):
            self.found.append(event)
        elif isinstance(event, RunFinished):
            cases = []
            for ev in self.found:
                f = ev.finding
                name = quoteattr(f"{f.invariant} {f.kind} {f.signature}")
                body = escape(f"{f.message}\nreplay: {f.replay_command()}")
                cases.append(
                    f'  <testcase classname="ahp-fuzz.{f.kind}" name={name}>'
                    f"<failure message={quoteattr(f.title)}>{body}</failure></testcase>"
                )
            cases.append(
                f'  <testcase classname="ahp-fuzz" name="campaign" time="{event.elapsed_s:.3f}"/>'
            )
            xml = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<testsuite name="ahp-fuzz" tests="{len(cases)}" failures="{len(self.found)}" '
                f'time="{event.elapsed_s:.3f}">\n' + "\n".join(cases) + "\n</testsuite>\n"
            )
            write_atomic(self.path, xml)
