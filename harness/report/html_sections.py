"""Sections of `index.html` rendered in Python: the verdict banner, the rerun command, the known
upstream issues, and the reference model's branch coverage with a word on every module at 0 %."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.invariants.registry import REGISTRY

from .html_commands import names_relative_paths, rerun_command
from .html_escape import esc
from .html_findings import cause_groups
from .reference_map import off_reducer_path
from .reference_map import reference_map as _reference_map
from .writers import run_died


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "?"
    return f"{value:,.1f}".removesuffix(".0") if isinstance(value, float) else f"{value:,}"


def verdict(report: dict[str, Any]) -> tuple[str, str, str]:
    """`(key, headline, detail)` of the run: key is `error`, `interrupted`, `died`, `running`,
    `partial`, `findings`, `untested` (no step ran) or `clean` — a run that did not finish is
    flagged before its findings."""
    entries = [e for e in report.get("findings") or [] if isinstance(e, dict)]
    n = len(entries)
    causes = len(cause_groups(entries))
    found = _plural(n, "finding") + (f" ({_plural(causes, 'root cause')})" if causes != n else "")
    status = report.get("status")
    why = report.get("stoppedBecause")
    span = f"{_number(report.get('steps'))} steps in {_number(report.get('elapsedSeconds'))} s"
    if status == "error":
        detail = f"the run failed: {report.get('error') or 'no error message recorded'}"
        return "error", "error" + (f" — {found} before it failed" if n else ""), detail
    if status == "interrupted":
        detail = (f"stopped early ({why or 'interrupted'}) after {span}: every figure below covers only that part")
        return "interrupted", "interrupted" + (f" — {found} so far" if n else " — no findings so far"), detail
    if status == "running":
        if run_died(report):
            detail = (f"report.json still says running but process {report.get('pid')} is gone: the run was "
                      "killed or crashed; the figures are its last saved ones")
            return "died", "died without finishing" + (f" — {found}" if n else ""), detail
        return "running", "still running" + (f" — {found} so far" if n else ""), "this page was written mid-run"
    if status == "partial":
        detail = "a merge of runs that did not all finish: the figures cover what they did"
        return "partial", "partial" + (f" — {found}" if n else " — no findings"), detail
    if n:
        return "findings", found, f"in {span}" + (f"; stopped: {why}" if why else "")
    if not report.get("steps"):  # a run that executed no step tested nothing: never "clean"
        reason = report.get("untested") or f"no step ran in {_number(report.get('elapsedSeconds'))} s"
        return "untested", "nothing tested", f"{reason}; stopped: {why or '?'}"
    return "clean", "clean", f"no findings in {span}" + (f"; stopped: {why}" if why and why != "budget" else "")


def banner_html(report: dict[str, Any], origin: Path | None) -> str:
    key, headline, detail = verdict(report)
    items = known_items(report)
    extra = "".join(f'<p class="speaking">{esc(line)}</p>' for line in report.get("headline") or []
                    if isinstance(line, str))
    if items:
        numbers = [w.removeprefix("§11 ").removeprefix("items ").removeprefix("item ") for w in items]
        checks = sum(len(row["invariants"]) for row in items.values())
        extra = (f'<p>{_plural(len(items), "known upstream issue")} seen (REDUCERS.md §11 '
                 f'item{"s" if len(items) > 1 else ""} {esc(", ".join(numbers))}: documented upstream contradictions, '
                 f'not failures; <a href="#known">listed below</a>), by {_plural(checks, "check")} — '
                 'one §11 item can trip several invariants, so the summary\'s '
                 '“checks that saw a known issue” counts the checks and this the issues</p>')
    rerun = rerun_command(report, origin)
    if rerun is not None:
        note = "" if origin is not None or not names_relative_paths(report.get("command") or []) else (
            ' <span class="note">(run it from the folder the run started in: report.json does not record it)</span>')
        extra += f'<p class="rerun">rerun: <code id="rerun">{esc(rerun)}</code>{note}</p>'
    return (f'<div id="verdict" class="verdict verdict-{key}" data-verdict="{key}">'
            f'<p class="headline">{esc(headline)}</p><p>{esc(detail)}</p>{extra}</div>')


# -- known upstream issues ------------------------------------------------------------------------

_ISSUE = re.compile(r"^(?P<where>.*?§11 items? [\d–\-, and]*\d)\s*(?:\((?P<what>.*)\))?\s*$")


def _item_order(where: str) -> tuple[int, str]:
    m = re.search(r"§11 items? (\d+)", where)
    return (int(m.group(1)) if m else 10_000, where)


def known_items(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The known upstream issues seen, by REDUCERS.md §11 item (in item order): what upstream
    does, the invariants that saw it with their hits, the state kinds, one example."""
    items: dict[str, dict[str, Any]] = {}
    for inv, entry in (report.get("known") or {}).items():
        entry = entry if isinstance(entry, dict) else {}
        registered = REGISTRY.get(inv)
        issue = entry.get("knownIssue") or (registered.known_issue if registered else None) or ""
        m = _ISSUE.match(issue)
        where = m.group("where").removeprefix("REDUCERS.md ") if m else (issue or "(no §11 item recorded)")
        what = (m.group("what") or "") if m else ""
        row = items.setdefault(where, {"what": what, "invariants": [], "kinds": [], "example": None})
        row["invariants"].append((inv, entry.get("count")))
        row["kinds"] += [k for k in entry.get("kinds") or [] if k not in row["kinds"]]
        row["example"] = row["example"] or entry.get("example")
    return {where: items[where] for where in sorted(items, key=_item_order)}


def known_html(report: dict[str, Any]) -> str:
    items = known_items(report)
    if not items:
        return "<p>None seen in this run.</p>"
    rows = []
    for where, row in items.items():
        invs = "<br>".join(f"<code>{esc(i)}</code>" + (f" ({_number(c)})" if isinstance(c, int) else "")
                           for i, c in row["invariants"])
        rows.append(
            f'<tr data-item="{esc(where)}"><td class="item">{esc(where)}</td><td>{esc(row["what"])}</td><td>{invs}</td>'
            f'<td>{esc(", ".join(row["kinds"]))}</td><td class="example">{esc(row["example"] or "")}</td></tr>'
        )
    total = report.get("knownHits")
    hits = f" ({_number(total)} hits)" if isinstance(total, int) else ""
    return (
        f"<p>{_plural(len(items), 'item')} of REDUCERS.md §11{hits}: places where the upstream reducers, which the "
        "reference model reproduces, contradict their own spec. They are reported, never failures; a target that "
        "breaks the same invariant its own way gets a finding (docs/known-issues.md).</p>"
        "<table class=\"known\"><tr><th>REDUCERS.md</th><th>what upstream does</th><th>seen by (hits)</th>"
        "<th>state kinds</th><th>example</th></tr>" + "".join(rows) + "</table>"
    )


# -- branch coverage ------------------------------------------------------------------------------

def _steps_of(report: dict[str, Any], action_type: str) -> int:
    types = (report.get("outcomes") or {}).get("types") or {}
    if action_type in types:
        return int(types[action_type].get("steps") or 0)
    return int(((report.get("coverage") or {}).get(action_type) or {}).get("sent") or 0)


def _few(values: list[str], n: int = 4) -> str:
    return ", ".join(values[:n]) + (f" and {len(values) - n} more" if len(values) > n else "")


def zero_coverage_reason(label: str, report: dict[str, Any]) -> str:
    """Why a module of the reference model took no branch in this run, from the run's data."""
    handlers, used_by, _ = _reference_map()
    fuzzed = report.get("kindsFuzzed") or report.get("kinds") or []
    if label in handlers:
        kinds = sorted(handlers[label])
        if fuzzed and not set(kinds) & set(fuzzed):
            return (f"not reached: it reduces the {_few(kinds)} state kind{'s' if len(kinds) > 1 else ''}, "
                    f"not fuzzed in this run (fuzzed: {', '.join(fuzzed)})")
        types = sorted(t for k in kinds if not fuzzed or k in fuzzed for t in handlers[label][k])
        sent = sum(_steps_of(report, t) for t in types)
        unsent = [t for t in types if _steps_of(report, t) == 0]
        if not sent:
            return f"not reached: none of the {len(types)} action types it handles ({_few(types)}) was sent"
        return (f"{sent:,} steps of its action types ran through branch-free paths; the branches are in handlers "
                f"of types never sent ({_few(unsent)}) or in paths those steps did not take" if unsent else
                f"{sent:,} steps of its action types ran, none through a branching path")
    if off_reducer_path(label):
        return ("not on the reducer path: nothing under Model.reduce uses it (it serves other layers, e.g. the wire "
                "codec or the profile choice), and branch coverage counts reducer steps only")
    users = sorted(used_by.get(label, ()))
    names = [Path(u).stem for u in users]
    return f"a helper of {_few(names)}: none of its branches was taken by the steps of this run"


def branch_files_html(report: dict[str, Any]) -> str:
    bc = report.get("branchCoverage") or {}
    files = bc.get("files") or {}
    rows = []
    for name, f in files.items():
        missing = ", ".join(f"{a}→{b}" for a, b in f.get("missingBranches", [])) or "—"
        total = f.get("numBranches")
        zero = f.get("percentBranches") == 0 and bool(total)
        note = f'<td class="why">{esc(zero_coverage_reason(name, report))}</td>' if zero else "<td></td>"
        pct = "no branches" if total == 0 else f"{f.get('percentBranches')}%"
        rows.append(
            f'<tr data-module="{esc(name)}"{" class=zero" if zero else ""}><td class="mod"><code>{esc(name)}</code></td>'
            f"<td class=num>{f.get('coveredBranches')}/{total}</td><td class=num>{pct}</td>{note}"
            f"<td class=missing>{esc(missing)}</td></tr>"
        )
    if not rows:
        how = ("a campaign with <code>--coverage-every 0</code>, or measured by no worker"
               if report.get("mode") == "campaign" else "<code>ahp-fuzz campaign</code> measures it")
        return f"<p>No branch coverage was measured in this run ({how}).</p>"
    path = bc.get("reducerPath")
    lead = ""
    if path:
        off = ", ".join(f"<code>{esc(Path(m).name)}</code>" for m in path.get("offPath") or []) or "none"
        lead = (f"<p class=\"reducer-path\">Of the modules a reducer step runs: <b>{path['coveredBranches']}/"
                f"{path['numBranches']} branches, {path['percentBranches']}%</b>. Off that path, so at 0 % in "
                f"every run and not counted there: {off}.</p>")
    return lead + ("<table class=\"branches\"><tr><th>module</th><th>branches</th><th>%</th><th>why 0 %</th>"
            "<th>branches not taken (line→line; negative: exit)</th></tr>" + "".join(rows) + "</table>")


def command_coverage_html(report: dict[str, Any]) -> str:
    """`ahp-fuzz commands`: per method, the examples sent and the answers seen (`commandCoverage`);
    empty for any other report."""
    cov = report.get("commandCoverage")
    if not isinstance(cov, dict) or not cov:
        return ""
    rows = []
    for method, c in sorted(cov.items()):
        if not isinstance(c, dict):
            continue
        errors = ", ".join(f"{esc(code)}: {n}" for code, n in (c.get("errors") or {}).items())
        unanswered = ", ".join([*(f"{esc(k)}: {n}" for k, n in (c.get("unanswered") or {}).items()),
                                *(f"not sent, {esc(k)} by the bridge: {n}" for k, n in (c.get("notSent") or {}).items())])
        why = c.get("notTried")
        cls = ' class="zero"' if not c.get("sent") else ""
        rows.append(
            f'<tr{cls} data-method="{esc(method)}"><td><code>{esc(method)}</code></td>'
            f'<td class="num">{_number(c.get("sent"))}</td><td class="num">{_number(c.get("results"))}</td>'
            f'<td>{errors}</td><td>{unanswered}</td><td class="why">{esc(why) if why else ""}</td></tr>'
        )
    tried = sum(1 for c in cov.values() if isinstance(c, dict) and c.get("sent"))
    return (
        f'<h3 id="command-coverage">Commands: {tried} of {len(cov)} method(s) tried</h3>'
        '<table class="commands"><tr><th>method</th><th>examples sent</th><th>results</th>'
        "<th>errors (code: answers)</th><th>no answer</th><th>not tried because</th></tr>"
        + "".join(rows) + "</table>"
    )
