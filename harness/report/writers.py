"""Event consumers that write run outputs: the findings folder, `report.json`, `junit.xml`.

Each is a callable taking engine events. `report.json` is rewritten (atomically) as the run
goes — at the start, after every finding and notice, on progress at most once a second, and at
the end — so at every moment its counters and its findings agree, and a run that died without
warning (kill -9, power loss) is recognisable: its report still says `"status": "running"` and
names a process that is gone (`earlier_run`). Output files are written 0644 (under umask 022).
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from harness import __version__
from harness.corpus.finding import Finding
from harness.corpus.store import CorpusStore, file_mode
from harness.engine.events import (
    CauseSeen,
    Event,
    FindingFound,
    KnownSeen,
    Notice,
    Progress,
    RunFinished,
    RunStarted,
)

REPORT_FORMAT = "ahp-fuzz/report"
#: What a run writes into its folder (`--overwrite` removes exactly these).
RUN_OUTPUTS = ("report.json", "junit.xml", "index.html", "findings", "internal-error.txt")
#: What a campaign writes besides (`--overwrite` removes these too; the example database stays:
#: it is an accelerator a later campaign resumes from).
CAMPAIGN_OUTPUTS = (*RUN_OUTPUTS, "coverage", "workers")


#: The one-word verdicts of a run, a campaign or a merge (`report.json` `"verdict"`, docs/report.md).
VERDICTS = ("clean", "found", "untested", "interrupted", "error", "running", "partial")


def run_verdict(*, status: str | None, findings: int, steps: int | None) -> str:
    """The verdict of a run from its status, finding count and step count. A run that ended
    without executing a step tested nothing: it is `untested`, never `clean` (exit 2)."""
    if status in ("error", "interrupted", "running"):
        return str(status)
    if findings:
        return "found"
    if not steps:
        return "untested"
    return "partial" if status == "partial" else "clean"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class FindingWriter:
    """Saves each confirmed finding into `directory` the moment it arrives; at the end of the
    run, a finding whose cause was witnessed again meanwhile is rewritten with its final
    witnesses (the trace is the same)."""

    def __init__(self, directory: Path, *, program: str = "ahp-fuzz"):
        self.store = CorpusStore(directory)
        self.program = program
        self.paths: dict[str, Path] = {}
        self._written: dict[str, Any] = {}  # signature -> the cause object as saved

    def __call__(self, event: Event) -> None:
        if isinstance(event, FindingFound):
            path, written = self.store.save(event.finding, program=self.program)
            self.paths[event.finding.signature] = path
            if written:
                self._written[event.finding.signature] = json.loads(json.dumps(event.finding.cause))
        elif isinstance(event, RunFinished):
            for f in event.findings:
                saved = self._written.get(f.signature, f.cause)
                if f.cause is not None and saved != f.cause:
                    self.store.save(f, program=self.program, replace=True)
                    self._written[f.signature] = json.loads(json.dumps(f.cause))


class JsonReport:
    """`report.json`: the run's configuration, counters, findings (with replay commands),
    known upstream violations seen, notices, and per-action-type coverage."""

    def __init__(
        self,
        path: Path,
        findings: FindingWriter,
        argv: list[str] | None = None,
        *,
        earlier_findings: list[str] | None = None,
        save_every_s: float = 1.0,
        started_at: float | None = None,
    ):
        """`started_at`: when the run began (epoch seconds), the moment its budget clock started
        (the command line's: before the engine was loaded and the target started); default now."""
        self.path = path
        self.findings_writer = findings
        self.save_every_s = save_every_s
        self._saved_at = 0.0
        self._live: dict[str, Finding] = {}  # signature -> finding (its cause grows during the run)
        self.data: dict[str, Any] = {
            "format": REPORT_FORMAT,
            "formatVersion": 1,
            "tool": {"name": "ahp-fuzz", "version": __version__},
            "command": argv or [],
            "cwd": os.getcwd(),  # where the command ran: its relative paths resolve here
            "startedAt": _now(started_at),
            "updatedAt": _now(),
            "status": "running",
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "progress": {"elapsedSeconds": 0.0, "examples": 0, "steps": 0, "findings": 0, "known": 0},
            "findings": [],
            "known": {},
            "notices": [],
        }
        if earlier_findings:
            self.data["earlierFindings"] = earlier_findings  # kept by --append

    def _save(self) -> None:
        self.data["updatedAt"] = _now()
        self.data["progress"]["findings"] = len(self.data["findings"])
        for entry in self.data["findings"]:  # witness counts as they are now
            f = self._live.get(entry.get("signature", ""))
            if f is not None and f.cause is not None:
                entry["cause"] = f.cause
        write_atomic(self.path, json.dumps(self.data, indent=2, ensure_ascii=False) + "\n")
        self._saved_at = time.monotonic()

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
            self._live[f.signature] = f
            self.data["findings"].append(
                {
                    **({"cause": f.cause} if f.cause is not None else {}),
                    "invariant": f.invariant, "severity": f.severity, "title": f.title,
                    "kind": f.kind, "message": f.message, "steps": f.failing_step + 1,
                    "signature": f.signature, "reproduced": event.reproduced,
                    "confirmed": f.extra.get("confirmed") is not False,
                    **({"exposure": f.extra["exposure"]} if "exposure" in f.extra else {}),
                    "file": str(path) if path else None,
                    "replay": f.replay_command(path, self.findings_writer.program),
                }
            )
            self._save()
        elif isinstance(event, CauseSeen):
            for entry in self.data["findings"]:
                if entry.get("signature") == event.signature:
                    entry["cause"] = event.cause
            if time.monotonic() - self._saved_at >= self.save_every_s:
                self._save()
        elif isinstance(event, Notice):
            self.data["notices"].append(event.message)
            if event.headline:
                self.data.setdefault("headline", []).append(event.message)
            self._save()
        elif isinstance(event, KnownSeen):
            entry = self.data["known"].setdefault(
                event.invariant, {"knownIssue": event.known_issue, "kinds": [], "example": event.message}
            )
            if event.kind not in entry["kinds"]:
                entry["kinds"].append(event.kind)
        elif isinstance(event, Progress):
            p = asdict(event)
            self.data["progress"] = {
                "elapsedSeconds": round(p.pop("elapsed_s"), 3), **p,
                "findings": len(self.data["findings"]),
            }
            if time.monotonic() - self._saved_at >= self.save_every_s:
                self._save()
        elif isinstance(event, RunFinished):
            for inv, n in event.known_counts.items():
                self.data["known"].setdefault(inv, {"kinds": []})["count"] = n
            for f in event.findings:
                self._live.setdefault(f.signature, f)
            # the counters summarise the sections as they end (a last Progress may be older)
            self.data["progress"].update(
                elapsedSeconds=round(event.elapsed_s, 3), examples=event.examples, steps=event.steps,
                known=sum(int(k.get("count", 0)) for k in self.data["known"].values()),
            )
            self.data.update(
                status=event.status,
                stoppedBecause=event.stopped_because,
                finishedAt=_now(),
                elapsedSeconds=round(event.elapsed_s, 3),
                examples=event.examples,
                steps=event.steps,
                stepsPerSecond=round(event.steps / event.elapsed_s, 1) if event.elapsed_s else None,
                coverage=event.coverage,
                **event.extra,
            )
            verdict = run_verdict(status=event.status, findings=len(event.findings), steps=event.steps)
            self.data["verdict"] = verdict
            if verdict == "untested":
                self.data["untested"] = (f"no step ran in {event.elapsed_s:.1f}s "
                                         f"(stopped: {event.stopped_because})")
            if event.error:
                self.data["error"] = event.error
            self._save()

    def untested_because(self, reason: str) -> None:
        """Record why an untested run tested nothing (the command line knows best), and save."""
        self.data["untested"] = reason
        self._save()


class JunitReport:
    """`junit.xml`: one test case per finding (failure) plus one for the run (an error when the
    run was interrupted or the harness failed)."""

    def __init__(self, path: Path, findings: FindingWriter | None = None):
        self.path = path
        self.findings_writer = findings
        self.found: list[FindingFound] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, FindingFound):
            self.found.append(event)
        elif isinstance(event, RunFinished):
            writer = self.findings_writer
            program = writer.program if writer else "ahp-fuzz"
            cases = []
            for ev in self.found:
                f = ev.finding
                path = writer.paths.get(f.signature) if writer else None
                name = quoteattr(case_name(f.cause, f.invariant, f.kind, f.signature))
                body = escape(f"{f.message}\n{witness_line(f.cause)}replay: {f.replay_command(path, program)}")
                cases.append(
                    f'  <testcase classname="ahp-fuzz.{f.kind}" name={name}>'
                    f"<failure message={quoteattr(f'[{f.severity}] {f.title}')}>{body}</failure></testcase>"
                )
            run_case = f'  <testcase classname="ahp-fuzz" name="campaign" time="{event.elapsed_s:.3f}"'
            errors = 0
            verdict = run_verdict(status=event.status, findings=len(event.findings), steps=event.steps)
            if event.status != "finished" or verdict == "untested":
                errors = 1
                why = event.error or (f"run {event.status} ({event.stopped_because})" if event.status != "finished"
                                      else f"nothing tested: no step ran (stopped: {event.stopped_because})")
                run_case += f"><error message={quoteattr(why)}/></testcase>"
            else:
                run_case += "/>"
            cases.append(run_case)
            xml = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<testsuite name="ahp-fuzz" tests="{len(cases)}" failures="{len(self.found)}" '
                f'errors="{errors}" time="{event.elapsed_s:.3f}">\n' + "\n".join(cases) + "\n</testsuite>\n"
            )
            write_atomic(self.path, xml)


def case_name(cause: Any, invariant: Any, kind: Any, signature: Any) -> str:
    """A JUnit test-case name: the cause first, then who saw it."""
    if isinstance(cause, dict) and cause.get("summary"):
        return f"{cause['summary']} ({invariant} {kind} {signature})"
    return f"{invariant} {kind} {signature}"


def witness_line(cause: Any) -> str:
    """`witnesses: …` and a newline, or "" for a finding without a cause."""
    w = cause.get("witnesses") if isinstance(cause, dict) else None
    if not isinstance(w, dict):
        return ""
    return f"witnesses: {describe_witnesses(w)}\n"


def describe_witnesses(w: dict[str, Any]) -> str:
    """`seen 57× by INV-011, INV-D01 on 12 action types (chat/delta, …) in chat, session`."""
    types = list(w.get("actionTypes") or [])
    shown = ", ".join(types[:3]) + (", …" if len(types) > 3 else "")
    return (f"seen {w.get('count', 0)}× by {', '.join(w.get('invariants') or []) or '—'} on "
            f"{len(types)} action type(s) ({shown}) in {', '.join(w.get('kinds') or []) or '—'}")


def earlier_run(folder: Path) -> str | None:
    """A sentence about the run whose outputs `folder` holds, or None when it holds none.
    A report still `"running"` whose process is gone is called out: that run died without
    finishing (killed, out of memory, power loss)."""
    report = folder / "report.json"
    if not report.is_file():
        if (folder / "findings").is_dir() and any((folder / "findings").glob("*.json")):
            return f"{folder} holds findings of an earlier run (no report.json)"
        return None
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{folder} holds an unreadable report.json"
    if not isinstance(data, dict):
        return f"{folder} holds an unreadable report.json"
    started = data.get("startedAt", "?")
    status = data.get("status")
    n = len(data.get("findings") or [])
    if status == "running":
        if run_died(data):
            return (
                f"run started {started} in {folder} died without finishing "
                f"(report.json still says running; process {data.get('pid')} is gone; {n} finding(s) saved)"
            )
        return f"{folder} belongs to a run started {started} that is still running (process {data.get('pid')})"
    return f"{folder} holds a run started {started} ({status}, {n} finding(s))"


def run_is_live(folder: Path) -> bool:
    """The report in `folder` says running and its process still runs (or runs elsewhere)."""
    try:
        data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("status") == "running" and not run_died(data)


def run_died(data: dict[str, Any]) -> bool:
    """A report that says running, written by a process of this host that no longer exists
    (or by a report without a pid, from before reports recorded one)."""
    if data.get("status") != "running":
        return False
    pid = data.get("pid")
    if data.get("host") not in (None, socket.gethostname()):
        return False  # another machine's run: cannot tell
    if type(pid) is not int:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _now(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
