"""Merging run folders (seed shards, nightly workers on several machines) into one report.

`merge_runs([dir…], out)` reads each folder's `report.json` (a format this harness writes: checked
on load), copies every finding file into `out/findings/` de-duplicated by signature (the first
folder given wins), adds up counters and the outcome matrix, combines branch-coverage data files
when the folders carry them, and writes `report.json`, `junit.xml` and `index.html` into `out`.

The merged timeline adds the runs' step counts at each sample time (each run holding its last
value), counts distinct findings by the time they were found, and keeps the best coverage.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from harness import __version__
from harness.corpus.load import FindingFormatError, load_finding
from harness.errors import UsageError

from .coverage import combine
from .html import resolve_finding, write_html
from .writers import REPORT_FORMAT, case_name, run_verdict, witness_line, write_atomic

MERGE_FORMAT_VERSION = 1


def _merge_causes(a: Any, b: Any) -> Any:
    """One cause seen by two runs: the first run's finding, the witnesses of both."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a
    wa, wb = a.get("witnesses") or {}, b.get("witnesses") or {}
    merged = {
        k: sorted(set(wa.get(k) or []) | set(wb.get(k) or [])) for k in ("invariants", "actionTypes", "kinds")
    }
    merged["count"] = int(wa.get("count") or 0) + int(wb.get("count") or 0)
    return {**a, "witnesses": merged}


def _by_cause(entry: dict[str, Any]) -> tuple[int, str, str, str, str]:
    """Causes first (by what the target did), then findings of files written before causes."""
    cause = entry.get("cause") if isinstance(entry.get("cause"), dict) else None
    summary = str(cause.get("summary", "")) if cause else ""
    return (0 if cause else 1, summary, str(entry.get("invariant")), str(entry.get("kind")), str(entry.get("signature")))


def load_report(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{run_dir}: no report.json (not an ahp-fuzz run folder)") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not JSON ({e})") from e
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise UsageError(f'{path}: not an ahp-fuzz report (no "format": "{REPORT_FORMAT}")')
    if data.get("formatVersion") != 1:
        raise UsageError(f"{path}: report format version {data.get('formatVersion')!r}; this ahp-fuzz reads 1")
    return data


def junit_from_report(report: dict[str, Any]) -> str:
    """`junit.xml` for a report document: one failing test case per finding, one for the run."""
    cases = []
    for f in report.get("findings") or []:
        name = quoteattr(case_name(f.get("cause"), f.get("invariant"), f.get("kind"), f.get("signature")))
        body = escape(f"{f.get('message', '')}\n{witness_line(f.get('cause'))}replay: {f.get('replay', '')}")
        cases.append(
            f'  <testcase classname="ahp-fuzz.{escape(str(f.get("kind")))}" name={name}>'
            f"<failure message={quoteattr(str(f.get('title', '')))}>{body}</failure></testcase>"
        )
    elapsed = float(report.get("elapsedSeconds") or 0.0)
    mode = report.get("mode", "run")
    n_find = len(report.get("findings") or [])
    verdict = run_verdict(status=report.get("status"), findings=n_find, steps=report.get("steps"))
    run_case = f'  <testcase classname="ahp-fuzz" name="{escape(mode)}" time="{elapsed:.3f}"'
    errors = 0
    if verdict in ("interrupted", "error", "running", "untested"):
        # an interrupted campaign, one that failed, or one that tested nothing is no passing case
        errors = 1
        why = report.get("error") or (
            f"{mode} {verdict} ({report.get('stoppedBecause')}) after {report.get('steps') or 0} steps"
            if verdict != "untested" else f"nothing tested: {report.get('untested') or 'no step ran'}")
        run_case += f"><error message={quoteattr(str(why))}/></testcase>"
    else:
        run_case += "/>"
    cases.append(run_case)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuite name="ahp-fuzz" tests="{len(cases)}" failures="{n_find}" errors="{errors}" '
        f'time="{elapsed:.3f}">\n'
        + "\n".join(cases) + "\n</testsuite>\n"
    )


def write_report_folder(out: Path, report: dict[str, Any]) -> None:
    """report.json, junit.xml and index.html for `report` in `out` (atomically, each)."""
    write_atomic(out / "report.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write_atomic(out / "junit.xml", junit_from_report(report))
    write_html(out, report)


def _merge_outcomes(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    present = [p for p in parts if p]
    if not present:
        return None
    types: dict[str, dict[str, Any]] = {}
    inv: dict[str, int] = {}
    for p in present:
        for t, row in (p.get("types") or {}).items():
            into = types.setdefault(t, {"kinds": [], "outcomes": {}, "steps": 0, "invariants": []})
            into["kinds"] = sorted(set(into["kinds"]) | set(row.get("kinds", [])))
            for o, n in row.get("outcomes", {}).items():
                into["outcomes"][o] = into["outcomes"].get(o, 0) + n
            into["steps"] += row.get("steps", 0)
            into["invariants"] = sorted(set(into["invariants"]) | set(row.get("invariants", [])))
        for i, n in (p.get("invariantSteps") or {}).items():
            inv[i] = inv.get(i, 0) + n
    return {
        "types": dict(sorted(types.items())),
        "distinctPairs": sum(len(r["outcomes"]) for r in types.values()),
        "distinctOutcomes": sorted({o for r in types.values() for o in r["outcomes"]}),
        "invariantSteps": dict(sorted(inv.items())),
    }


def _merge_timeline(reports: list[dict[str, Any]], findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = [r.get("timeline") or [] for r in reports]
    times = sorted({p["t"] for line in lines for p in line})
    out = []
    for t in times:
        steps, cov, pairs = 0, None, None
        for line in lines:
            last = None
            for p in line:
                if p["t"] <= t:
                    last = p
            if last is None:
                continue
            steps += last.get("steps") or 0
            if last.get("branchPercent") is not None:
                cov = max(cov or 0.0, last["branchPercent"])
            if last.get("outcomePairs") is not None:
                pairs = max(pairs or 0, last["outcomePairs"])
        found = sum(1 for f in findings if f.get("foundAfterSeconds") is not None and f["foundAfterSeconds"] <= t)
        out.append({"t": t, "steps": steps, "findings": found, "branchPercent": cov, "outcomePairs": pairs})
    return out


def merge_runs(run_dirs: list[Path], out: Path, argv: list[str] | None = None) -> dict[str, Any]:
    if not run_dirs:
        raise UsageError("--merge needs at least one run folder")
    reports = [load_report(d) for d in run_dirs]
    (out / "findings").mkdir(parents=True, exist_ok=True)
    findings: dict[str, dict[str, Any]] = {}
    duplicates = 0
    for run_dir, rep in zip(run_dirs, reports, strict=True):
        for entry in rep.get("findings") or []:
            sig = entry.get("signature")
            if sig in findings:
                duplicates += 1  # one cause seen by several runs: one finding, witnesses added up
                if isinstance(findings[sig].get("cause"), dict):
                    findings[sig]["cause"] = _merge_causes(findings[sig]["cause"], entry.get("cause"))
                continue
            src = resolve_finding(entry, run_dir)
            merged = {**entry, "fromRun": str(run_dir)}
            if src is not None:
                try:
                    f = load_finding(src)
                except FindingFormatError as e:
                    raise UsageError(str(e)) from e
                dest = out / "findings" / f.file_name
                if not dest.exists():
                    shutil.copyfile(src, dest)
                merged["file"] = str(dest)
                merged["replay"] = f.replay_command(dest)
            findings[sig] = merged
    known: dict[str, dict[str, Any]] = {}
    for rep in reports:
        for inv, k in (rep.get("known") or {}).items():
            into = known.setdefault(inv, {"knownIssue": k.get("knownIssue"), "kinds": [], "example": k.get("example")})
            into["kinds"] = sorted(set(into["kinds"]) | set(k.get("kinds") or []))
            if "count" in k:
                into["count"] = into.get("count", 0) + k["count"]
    sent: dict[str, dict[str, int]] = {}
    for rep in reports:
        for t, c in (rep.get("coverage") or {}).items():
            into_c = sent.setdefault(t, {"sent": 0, "changed": 0})
            into_c["sent"] += c.get("sent", 0)
            into_c["changed"] += c.get("changed", 0)
    cov_files = [p for d in run_dirs for p in sorted((d / "coverage").glob("*.coverage"))]
    branch = combine(cov_files, out / "coverage" / "merged.coverage") if cov_files else None
    if branch is None or not branch.get("numBranches"):  # e.g. data files from another machine's paths
        measured = [r["branchCoverage"] for r in reports if r.get("branchCoverage")]
        branch = max(measured, key=lambda b: b.get("percentBranches", 0)) if measured else None
    steps = sum(int(r.get("steps") or 0) for r in reports)
    wall = max(float(r.get("elapsedSeconds") or 0.0) for r in reports)
    worker_s = sum(float(r.get("elapsedSeconds") or 0.0) for r in reports)
    merged_findings = sorted(findings.values(), key=_by_cause)
    report: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "formatVersion": 1,
        "tool": {"name": "ahp-fuzz", "version": __version__},
        "command": argv or [],
        "cwd": os.getcwd(),  # where the command ran: its relative paths resolve here
        "mode": "merge",
        "startedAt": min((r.get("startedAt") or "") for r in reports),
        "finishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "status": "finished" if all(r.get("status") == "finished" for r in reports) else "partial",
        "stoppedBecause": "merged",
        "target": ", ".join(sorted({str(r.get("target")) for r in reports})),
        "targets": sorted({t for r in reports for t in (r.get("targets") or [r.get("target")]) if t}),
        "profile": ", ".join(sorted({str(r.get("profile")) for r in reports})),
        "seed": None,
        "elapsedSeconds": round(wall, 3),
        "examples": sum(int(r.get("examples") or 0) for r in reports),
        "steps": steps,
        "stepsPerSecond": round(steps / worker_s, 1) if worker_s else None,
        "findings": merged_findings,
        "known": known,
        "coverage": dict(sorted(sent.items())),
        "merge": {
            "formatVersion": MERGE_FORMAT_VERSION,
            "runs": [{"dir": str(d), "seed": r.get("seed"), "steps": r.get("steps"),
                      "findings": len(r.get("findings") or []), "shard": (r.get("campaign") or {}).get("shard")}
                     for d, r in zip(run_dirs, reports, strict=True)],
            "duplicateFindings": duplicates,
            "runSeconds": round(worker_s, 3),
        },
        "campaign": {"workers": sum(int((r.get("campaign") or {}).get("workers") or 1) for r in reports),
                     "restarts": sum(int((r.get("campaign") or {}).get("restarts") or 0) for r in reports)},
        "branchCoverage": branch,
        "outcomes": _merge_outcomes([r.get("outcomes") or {} for r in reports]),
        "timeline": _merge_timeline(reports, merged_findings),
    }
    report["verdict"] = run_verdict(status=report["status"], findings=len(merged_findings), steps=steps)
    write_report_folder(out, report)
    return report
