"""The conformance matrix: every implementation a column, every root cause a row (docs/matrix.md).

`build_matrix(columns, out)` reads one run folder per target (`report.json`, and the fixture
results `conformance.json` that `ahp-fuzz matrix` writes beside it), joins their findings on the
cause id (the same for every target: docs/corpus.md, "Root causes"), copies each finding into
`out/findings/<column>/`, exports it as an upstream fixture into `out/fixtures/<column>/`, and
writes `matrix.json` and `index.html` into `out`.

A cell is `found` (the target's run has a finding of that cause), `not-found` or
`not-applicable`. The matrix never invents agreement: a cause is `not-found` for a target only
when the target's run tested something and sent at least one of the cause's witness action types
that the target's profile knows, on a state kind the run fuzzed (`applicability`); otherwise the
target was never asked where the cause can show, and the cell is `not-applicable`, with why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.causes.signing import SEVERITY_RANK
from harness.corpus.fixture import ExportError, fixture_file_name, fixture_from_finding
from harness.corpus.jsonfile import read_json
from harness.corpus.load import FindingFormatError, load_finding
from harness.errors import UsageError
from harness.reference import Profile
from harness.spec.verdict import VerdictSwitches
from harness.spec.versions import is_known_to, kind_of

from .html import resolve_finding
from .merge import load_report
from .writers import write_atomic

MATRIX_FORMAT = "ahp-fuzz/matrix"
MATRIX_FORMAT_VERSION = 1
#: The fixture results `ahp-fuzz matrix` writes into each target's run folder.
CONFORMANCE_FILE = "conformance.json"
CONFORMANCE_FORMAT = "ahp-fuzz/conformance"

FOUND, NOT_FOUND, NOT_APPLICABLE = "found", "not-found", "not-applicable"
#: Run verdicts under which a run tested something (a cell can be "not found" only then).
_TESTED = ("clean", "found", "interrupted", "partial")

APPLICABILITY_RULE = (
    "a cause is not-found for a target only when that target's run tested something and sent at "
    "least one of the cause's witness action types that the target's profile knows, on a state kind "
    "the run fuzzed; otherwise the cell is not-applicable"
)


@dataclass
class Column:
    """One target: its run folder and the name of its column (a short, file-safe slug)."""

    name: str
    run_dir: Path


def column_name(index: int, target: str) -> str:
    """`01-reference`, `02-adapter-typed-client`, `03-ts-agent-host-protocol`: the order, then the
    target's kind and the name of what it runs (the last path it names, without its suffix),
    reduced to a file-safe slug."""
    scheme, sep, rest = target.partition(":")
    if "://" in target:  # a live host's address: all of it
        return f"{index:02d}-" + (
            "-".join(re.findall(r"[A-Za-z0-9]+", target)).lower()[:40].strip("-") or "target"
        )
    if not sep or not re.fullmatch(r"[a-z][a-z-]*", scheme):
        scheme, rest = "", target
    words = [w for w in rest.split() if not w.startswith(("-", "{"))]
    paths = [w for w in words if "/" in w or "." in w] or words
    name = Path(paths[-1].rstrip("/")).stem if paths else ""
    slug = (
        "-".join(re.findall(r"[A-Za-z0-9]+", f"{scheme} {name}")).lower()[:40].strip("-")
        or "target"
    )
    return f"{index:02d}-{slug}"


def run_folders(dirs: list[Path]) -> list[Path]:
    """The run folders of `dirs`, in order: a run folder (report.json) is itself; a matrix folder
    (matrix.json, as `ahp-fuzz matrix` writes it) stands for its targets' run folders, in its
    column order — so one matrix job per implementation merges into one page."""
    found = []
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"not a folder: {d}")
        if (d / "report.json").is_file() or not (d / "matrix.json").is_file():
            found.append(d)
            continue
        doc = _versioned(d / "matrix.json", MATRIX_FORMAT, "an ahp-fuzz matrix")
        found += [d / "targets" / str(t.get("column")) for t in doc.get("targets") or []]
    return found


def columns_of(run_dirs: list[Path]) -> list[Column]:
    """One column per run folder, named from its report's target, in the order given."""
    cols = []
    for i, d in enumerate(run_dirs, 1):
        rep = load_report(d)
        cols.append(Column(column_name(i, str(rep.get("target") or d.name)), d))
    return cols


def load_conformance(run_dir: Path) -> dict[str, Any] | None:
    """The fixture results of a run folder (None when the folder has none)."""
    path = run_dir / CONFORMANCE_FILE
    if not path.is_file():
        return None
    return _versioned(path, CONFORMANCE_FORMAT, "ahp-fuzz fixture results")


def _versioned(path: Path, fmt: str, what: str) -> dict[str, Any]:
    """The JSON document at `path` if it is `fmt` version 1, else a usage error naming `what` it
    should be (`read_json`: unreadable, non-UTF-8 or not JSON is one too)."""
    data = read_json(path, what, UsageError)
    if not isinstance(data, dict) or data.get("format") != fmt or data.get("formatVersion") != 1:
        raise UsageError(f'{path}: not {what} (no "format": "{fmt}", version 1)')
    return data


def conformance_document(
    results: list[Any],
    *,
    target: str,
    profile: str,
    spec: str | None,
    notes: list[str],
    error: str | None = None,
) -> dict[str, Any]:
    """`conformance.json`: fixture results (`harness.conformance.Result`s) as the matrix reads them."""
    return {
        "format": CONFORMANCE_FORMAT,
        "formatVersion": 1,
        "target": target,
        "profile": profile,
        "spec": spec,
        "notes": notes,
        "error": error,
        "results": [
            {"family": r.family, "name": r.name, "passed": r.passed, "problems": r.problems[:5]}
            for r in results
        ],
    }


def fixture_summary(conf: dict[str, Any] | None) -> dict[str, Any]:
    """A target's fixture results in the matrix: status, counts per family, the failing names."""
    if conf is None:
        return {
            "status": "not-run",
            "passed": 0,
            "failed": 0,
            "families": {},
            "failing": [],
            "notes": [],
            "why": f"the run folder has no {CONFORMANCE_FILE} (made by ahp-fuzz run, not ahp-fuzz matrix)",
        }
    families: dict[str, dict[str, int]] = {}
    failing = []
    for r in conf.get("results") or []:
        fam = families.setdefault(str(r.get("family")), {"passed": 0, "failed": 0})
        if r.get("passed"):
            fam["passed"] += 1
        else:
            fam["failed"] += 1
            failing.append(f"{r.get('family')} {r.get('name')}")
    passed = sum(f["passed"] for f in families.values())
    failed = sum(f["failed"] for f in families.values())
    if conf.get("error"):
        status = "error"
    elif not families:
        status = "not-run"
    else:
        status = "failed" if failed else "passed"
    out: dict[str, Any] = {
        "status": status,
        "passed": passed,
        "failed": failed,
        "families": dict(sorted(families.items())),
        "failing": failing,
        "notes": list(conf.get("notes") or []),
        "profile": conf.get("profile"),
    }
    if conf.get("error"):
        out["why"] = str(conf["error"])
    elif not families:
        out["why"] = "no fixtures (no spec folder)"
    return out


def _version_of(profile: Any) -> Any:
    try:
        return Profile.named(str(profile)).version
    except (ValueError, KeyError):
        return None  # e.g. a merge's "0.7.0, 0.8.0": no single version to hold a type against


def applicability(cause: dict[str, Any], target: dict[str, Any]) -> tuple[bool, str]:
    """Whether `target`'s run was asked where `cause` can show (APPLICABILITY_RULE), and why not."""
    if target["runVerdict"] not in _TESTED or not target["steps"]:
        return False, f"the run tested nothing ({target['runVerdict']})"
    fuzzed = set(target["kindsFuzzed"])
    version = _version_of(target["profile"])
    sent = target["sent"]
    witnesses = cause.get("witnesses") or {}
    types = [t for t in witnesses.get("actionTypes") or [] if kind_of(t) is not None]
    for t in types:
        if kind_of(t) not in fuzzed:
            continue
        if version is not None and not is_known_to(t, version):
            continue
        if sent is not None and not sent.get(t):
            continue
        return True, ""
    if not types:  # only pseudo types (`<adversarial>`, a frame): the state kinds decide
        kinds = set(witnesses.get("kinds") or [])
        if kinds & fuzzed:
            return True, ""
        return False, f"no state kind of the cause ({', '.join(sorted(kinds))}) was fuzzed"
    why = []
    if not {kind_of(t) for t in types} & fuzzed:
        why.append(
            f"its kinds ({', '.join(sorted({str(kind_of(t)) for t in types}))}) were not fuzzed"
        )
    elif version is not None and not any(is_known_to(t, version) for t in types):
        why.append(f"profile {target['profile']} has none of its action types")
    else:
        why.append("none of its action types was sent")
    return False, "; ".join(why)


def _target_entry(col: Column, rep: dict[str, Any]) -> dict[str, Any]:
    ann = rep.get("announced") if isinstance(rep.get("announced"), dict) else None
    coverage = rep.get("coverage")
    return {
        "column": col.name,
        "target": rep.get("target"),
        "announced": ann,
        "announcedVersion": (ann or {}).get("protocolVersion"),
        "profile": rep.get("profile"),
        "kindsFuzzed": list(rep.get("kindsFuzzed") or rep.get("kinds") or []),
        "seed": rep.get("seed"),
        "steps": int(rep.get("steps") or 0),
        "elapsedSeconds": rep.get("elapsedSeconds"),
        "stoppedBecause": rep.get("stoppedBecause"),
        "runVerdict": rep.get("verdict") or "running",
        "untested": rep.get("untested"),
        "run": str(col.run_dir),
        "known": {
            inv: {
                "knownIssue": k.get("knownIssue"),
                "kinds": k.get("kinds") or [],
                "count": k.get("count"),
            }
            for inv, k in sorted((rep.get("known") or {}).items())
        },
        "sent": (
            {t: int(c.get("sent") or 0) for t, c in coverage.items()}
            if isinstance(coverage, dict)
            else None
        ),
    }


def spec_of(rep: dict[str, Any], conf: dict[str, Any] | None) -> str | None:
    """The spec folder a run judged with, where its folder tells: the fixture results' `spec`,
    else a `--spec` on the run's command line (made absolute against its `cwd`)."""
    if conf is not None and conf.get("spec"):
        return str(conf["spec"])
    cmd = [str(a) for a in rep.get("command") or []]
    for i, arg in enumerate(cmd):
        value = (
            cmd[i + 1]
            if arg == "--spec" and i + 1 < len(cmd)
            else arg[7:]
            if arg.startswith("--spec=")
            else None
        )
        if value:
            path = Path(value)
            return str(
                path if path.is_absolute() or not rep.get("cwd") else Path(str(rep["cwd"])) / path
            )
    return None


def _copy_finding(
    entry: dict[str, Any], col: Column, out: Path, program: str, spec: str | None
) -> dict[str, Any]:
    """The cell of a found cause: the finding copied under out/findings/<column>/, its replay
    command (with the run's spec folder when the finding was judged with its schemas), and its
    export as an upstream fixture under out/fixtures/<column>/."""
    cell: dict[str, Any] = {
        "status": FOUND,
        "invariant": entry.get("invariant"),
        "severity": entry.get("severity"),
        "kind": entry.get("kind"),
        "message": entry.get("message"),
        "signature": entry.get("signature"),
        "reproduced": entry.get("reproduced"),
        "finding": None,
        "replay": None,
        "fixture": None,
    }
    src = resolve_finding(entry, col.run_dir)
    if src is None:
        cell["why"] = "the finding file is not in the run folder"
        return cell
    try:
        finding = load_finding(src)
    except FindingFormatError as e:
        raise UsageError(str(e)) from e
    dest = out / "findings" / col.name / finding.file_name
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.resolve() != dest.resolve():
        shutil.copyfile(src, dest)
    cell["finding"] = dest.relative_to(out).as_posix()
    cell["replay"] = finding.replay_command(dest.resolve(), program)
    try:
        needed = VerdictSwitches.of_finding(finding.extra).needed
    except ValueError:
        needed = None
    if needed and spec:
        cell["replay"] += f" --spec {shlex.quote(spec)}"
    elif needed:
        cell["replayNeeds"] = f"a {needed} spec folder: add --spec DIR (or set AHP_SPEC_DIR)"
    try:
        from harness.invariants.registry import REGISTRY

        inv = REGISTRY.get(finding.invariant)
        fixture = fixture_from_finding(finding, statement=inv.statement if inv else None)
    except (ExportError, ValueError) as e:
        cell["fixtureWhy"] = str(e)
        return cell
    fx = out / "fixtures" / col.name / fixture_file_name(finding)
    fx.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(fx, json.dumps(fixture, indent=2, ensure_ascii=False) + "\n")
    cell["fixture"] = fx.relative_to(out).as_posix()
    return cell


def _merge_witnesses(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {
        k: sorted(set(a.get(k) or []) | set(b.get(k) or []))
        for k in ("invariants", "actionTypes", "kinds")
    }
    merged["count"] = int(a.get("count") or 0) + int(b.get("count") or 0)
    return merged


def _verdict(target: dict[str, Any], found: int) -> str:
    rv = target["runVerdict"]
    if rv in ("untested", "error", "running"):
        return rv
    if found or target["fixtures"]["status"] == "failed":
        return "found"
    return "interrupted" if rv in ("interrupted", "partial") else "clean"


def build_matrix(
    columns: list[Column], out: Path, *, argv: list[str] | None = None, program: str = "ahp-fuzz"
) -> dict[str, Any]:
    """The matrix of `columns` (one run folder each), written as out/matrix.json and
    out/index.html (with out/findings/ and out/fixtures/); the document is returned."""
    if not columns:
        raise UsageError("a matrix needs at least one run folder")
    if len({c.name for c in columns}) != len(columns):
        raise UsageError("two columns of the matrix have the same name")
    if (out / "report.json").exists():  # its findings/ would be replaced by the matrix's copies
        raise UsageError(f"--out: {out} is a run folder; give the matrix a folder of its own")
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("findings", "fixtures"):
        if (out / sub).is_dir():
            shutil.rmtree(out / sub)  # a rebuilt matrix holds only its own copies
    targets: list[dict[str, Any]] = []
    causes: dict[str, dict[str, Any]] = {}
    results: dict[str, tuple[dict[str, Any] | None, str | None]] = {}  # column -> (fixture results, spec)
    for col in columns:
        rep = load_report(col.run_dir)
        tgt = _target_entry(col, rep)
        conf = load_conformance(col.run_dir)
        tgt["fixtures"] = fixture_summary(conf)
        spec = spec_of(rep, conf)
        results[col.name] = (conf, spec)
        targets.append(tgt)
        for entry in rep.get("findings") or []:
            cause = entry.get("cause") if isinstance(entry.get("cause"), dict) else None
            cid = (
                str(cause["id"])
                if cause and cause.get("id")
                else f"finding:{entry.get('signature')}"
            )
            row = causes.get(cid)
            if row is None:
                row = causes[cid] = {
                    "id": cid,
                    "summary": (cause or {}).get("summary")
                    or entry.get("title")
                    or entry.get("message"),
                    "key": (cause or {}).get("key"),
                    "severity": entry.get("severity"),
                    "witnesses": (cause or {}).get("witnesses")
                    or {
                        "invariants": [entry.get("invariant")],
                        "actionTypes": [],
                        "kinds": [entry.get("kind")],
                        "count": 1,
                    },
                    "cells": {},
                }
            else:
                row["witnesses"] = _merge_witnesses(
                    row["witnesses"], (cause or {}).get("witnesses") or {}
                )
                if SEVERITY_RANK.get(str(entry.get("severity")), 9) < SEVERITY_RANK.get(
                    str(row["severity"]), 9
                ):
                    row["severity"] = entry.get("severity")
            if (
                col.name not in row["cells"]
            ):  # one finding per cause in a run; a second is a namesake
                row["cells"][col.name] = _copy_finding(entry, col, out, program, spec)
    causes.update(fixture_rows(targets, results, program))
    for row in causes.values():
        for tgt in targets:
            if tgt["column"] in row["cells"]:
                continue
            ok, why = applicability(row, tgt)
            row["cells"][tgt["column"]] = (
                {"status": NOT_FOUND} if ok else {"status": NOT_APPLICABLE, "why": why}
            )
        row["cells"] = {t["column"]: row["cells"][t["column"]] for t in targets}
        row["foundBy"] = sum(1 for c in row["cells"].values() if c["status"] == FOUND)
        row["shared"] = row["foundBy"] >= 2
    rows = sorted(
        causes.values(),
        key=lambda r: (
            -r["foundBy"],
            SEVERITY_RANK.get(str(r["severity"]), 9),
            str(r["summary"]),
            r["id"],
        ),
    )
    for tgt in targets:
        counts = {  # root causes of the fuzz runs; failing fixtures are counted in "fixtures"
            s: sum(1 for r in rows if "fixture" not in r and r["cells"][tgt["column"]]["status"] == s)
            for s in (FOUND, NOT_FOUND, NOT_APPLICABLE)
        }
        tgt["causes"] = {
            "found": counts[FOUND],
            "notFound": counts[NOT_FOUND],
            "notApplicable": counts[NOT_APPLICABLE],
        }
        tgt["verdict"] = _verdict(tgt, counts[FOUND])
        tgt.pop("sent")
    doc: dict[str, Any] = {
        "format": MATRIX_FORMAT,
        "formatVersion": MATRIX_FORMAT_VERSION,
        "tool": {"name": "ahp-fuzz", "version": __version__},
        "command": argv or [],
        "cwd": os.getcwd(),
        "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "applicability": APPLICABILITY_RULE,
        "targets": targets,
        "causes": rows,
        "sharedCauses": [r["id"] for r in rows if r["shared"]],
    }
    write_atomic(out / "matrix.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    from .html_matrix import write_matrix_html

    write_matrix_html(out, doc)
    return doc


#: The invariant a failed upstream fixture is marked with in its row's cells.
FIXTURE_FAILED = "FIXTURE"
#: The fixture families whose failures are rows of the matrix (`fixture_rows`).
ROW_FAMILIES = ("round-trip",)


def fixture_rows(
    targets: list[dict[str, Any]],
    results: dict[str, tuple[dict[str, Any] | None, str | None]],
    program: str,
) -> dict[str, dict[str, Any]]:
    """A row per round-trip fixture that fails on some target, joined on its name like a cause on
    its id: found where it failed (with the problem and the command that runs the fixtures
    again), not found where it passed, not applicable where it did not run. Round trips test the
    codec, which no fuzz run exercises: without a row of their own they showed only as a count.
    A failing reducer fixture is a reducer behaviour the fuzz runs find as a cause of its own
    (joined on its cause id), so it stays a count in its column's header and a line below."""
    rows: dict[str, dict[str, Any]] = {}
    for tgt in targets:
        conf, _ = results[tgt["column"]]
        for r in (conf or {}).get("results") or []:
            if r.get("passed") or r.get("family") not in ROW_FAMILIES:
                continue
            family, name = str(r.get("family")), str(r.get("name"))
            rid = f"fixture:{family}:{name}"
            rows.setdefault(rid, {
                "id": rid, "summary": f"upstream {family} fixture {name} fails", "key": None,
                "severity": "violation",
                "witnesses": {"invariants": [FIXTURE_FAILED], "actionTypes": [], "kinds": [family], "count": 0},
                "fixture": {"family": family, "name": name}, "cells": {},
            })
    for row in rows.values():
        family, name = row["fixture"]["family"], row["fixture"]["name"]
        for tgt in targets:
            conf, spec = results[tgt["column"]]
            ran = [r for r in (conf or {}).get("results") or []
                   if str(r.get("family")) == family and str(r.get("name")) == name]
            if not ran:
                why = tgt["fixtures"].get("why") or "the fixture did not run on this target"
                row["cells"][tgt["column"]] = {"status": NOT_APPLICABLE, "why": str(why)}
            elif ran[0].get("passed"):
                row["cells"][tgt["column"]] = {"status": NOT_FOUND}
            else:
                problems = [str(p) for p in ran[0].get("problems") or []]
                command = f"{program} conformance --target {shlex.quote(str(tgt['target']))}"
                if spec:
                    command += f" --spec {shlex.quote(spec)}"
                row["cells"][tgt["column"]] = {
                    "status": FOUND, "invariant": FIXTURE_FAILED, "severity": "violation", "kind": family,
                    "message": "; ".join(problems) or "the fixture fails", "finding": None,
                    "replay": command, "fixture": None,
                }
                row["witnesses"]["count"] += 1
    return rows


def matrix_exit_code(doc: dict[str, Any]) -> int:
    """1 a cause was found or a fixture failed on some column; else 2 when a column tested
    nothing (the matrix has a hole: never "clean"); else 0."""
    verdicts = [t["verdict"] for t in doc["targets"]]
    if any(v == "found" for v in verdicts):
        return 1
    if any(v in ("untested", "error", "running") for v in verdicts):
        return 2
    return 0
