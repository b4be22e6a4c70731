"""`index.html` of a conformance matrix (docs/matrix.md): one self-contained page, no script.

Autobahn-style: a column per target headed by its verdict, a row per root cause, a coloured cell
each — found (red, linking to the finding, its replay command and its exported fixture), not
found (green), not applicable (grey, with why). A cause found on two or more targets is flagged
as a possible spec ambiguity. Below: every mark with its replay command, the fixture results,
the known upstream issues (REDUCERS.md §11) per target, and the targets as run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .html_escape import embed, esc
from .writers import write_atomic

_MARK = {"found": "✗", "not-found": "✓", "not-applicable": "–"}
_VERDICT_WORD = {
    "clean": "clean",
    "found": "found",
    "untested": "nothing tested",
    "error": "error",
    "interrupted": "interrupted",
    "running": "did not finish",
}


def write_matrix_html(out: Path, doc: dict[str, Any]) -> Path:
    path = out / "index.html"
    write_atomic(path, render_matrix(doc))
    return path


def anchor(cause_id: str, column: str) -> str:
    return "m-" + "".join(
        ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{cause_id}-{column}"
    )


def _column_head(t: dict[str, Any]) -> str:
    fx = t["fixtures"]
    if fx["status"] in ("passed", "failed"):
        fixtures = f"fixtures {fx['passed']}/{fx['passed'] + fx['failed']}"
    else:
        fixtures = f"fixtures {fx['status']}"
    verdict = t["verdict"]
    word = _VERDICT_WORD.get(verdict, verdict)
    if verdict == "found":
        word = f"{t['causes']['found']} cause(s)" if t["causes"]["found"] else "fixtures fail"
    version = t.get("announcedVersion") or "—"
    return (
        f'<th class="col" data-column="{esc(t["column"])}" data-verdict="{esc(verdict)}">'
        f'<span class="col-verdict v-{esc(verdict)}">{esc(word)}</span>'
        f'<a class="col-name" href="#t-{esc(t["column"])}"><code>{esc(t["target"])}</code></a>'
        f'<span class="col-meta">announced {esc(version)} · profile {esc(t.get("profile"))}</span>'
        f'<span class="col-meta fx-{esc(fx["status"])}">{esc(fixtures)}</span></th>'
    )


def _cell(row: dict[str, Any], column: str) -> str:
    c = row["cells"][column]
    status = c["status"]
    attrs = f'class="cell {esc(status)}" data-status="{esc(status)}" data-column="{esc(column)}"'
    if status != "found":
        title = (
            "not found: the target was fuzzed where this cause can show"
            if status == "not-found"
            else f"not applicable: {c.get('why', '')}"
        )
        return f'<td {attrs} title="{esc(title)}">{_MARK[status]}</td>'
    links = []
    if c.get("finding"):
        links.append(f'<a class="finding-link" href="{esc(c["finding"])}">finding</a>')
    links.append(
        f'<a class="replay-link" href="#{anchor(row["id"], column)}" title="{esc(c.get("replay") or "")}">replay</a>'
    )
    if c.get("fixture"):
        links.append(f'<a class="fixture-link" href="{esc(c["fixture"])}">fixture</a>')
    return (
        f'<td {attrs} title="{esc(c.get("invariant"))} on {esc(c.get("kind"))}: {esc(c.get("message") or "")}">'
        f'<span class="mark">{_MARK[status]} {esc(c.get("invariant"))}</span>'
        f'<span class="links">{" · ".join(links)}</span></td>'
    )


def _row(row: dict[str, Any], columns: list[str]) -> str:
    w = row.get("witnesses") or {}
    flag = (
        (
            '<span class="ambiguity" title="found on two or more implementations: the spec, or what '
            'generates its types, may be where the fix belongs">possible spec ambiguity</span>'
        )
        if row["shared"]
        else ""
    )
    head = (
        f'<th class="cause" scope="row"><span class="sev sev-{esc(row["severity"])}">{esc(row["severity"])}</span> '
        f'{flag}<span class="summary">{esc(row["summary"])}</span>'
        f'<span class="cause-meta"><code>{esc(row["id"])}</code> · {esc(", ".join(w.get("kinds") or []))} · '
        f"found on {row['foundBy']}</span></th>"
    )
    cls = "shared" if row["shared"] else ""
    return (
        f'<tr class="{cls}" data-cause="{esc(row["id"])}" data-shared="{str(row["shared"]).lower()}">'
        + head
        + "".join(_cell(row, c) for c in columns)
        + "</tr>"
    )


def _marks(doc: dict[str, Any]) -> str:
    names = {t["column"]: t["target"] for t in doc["targets"]}
    parts = []
    for row in doc["causes"]:
        for column, c in row["cells"].items():
            if c["status"] != "found":
                continue
            files = []
            if c.get("finding"):
                files.append(
                    f'finding <a href="{esc(c["finding"])}"><code>{esc(c["finding"])}</code></a>'
                )
            if c.get("fixture"):
                files.append(
                    f'fixture <a href="{esc(c["fixture"])}"><code>{esc(c["fixture"])}</code></a>'
                )
            elif c.get("fixtureWhy"):
                files.append(f"no fixture: {esc(c['fixtureWhy'])}")
            needs = c.get("replayNeeds")
            needs = f' <span class="note">(needs {esc(needs)})</span>' if needs else ""
            replay = (
                f'<p>replay: <code class="replay">{esc(c["replay"])}</code>{needs}</p>'
                if c.get("replay")
                else f'<p class="note">{esc(c.get("why", "no finding file"))}</p>'
            )
            parts.append(
                f'<div class="markdetail" id="{anchor(row["id"], column)}"><h4>{esc(row["summary"])} '
                f'<span class="note">— <code>{esc(names[column])}</code></span></h4>'
                f'<p class="note">{esc(c.get("invariant"))} ({esc(c.get("severity"))}) on {esc(c.get("kind"))}: '
                f"{esc(c.get('message') or '')}</p>{replay}<p>{' · '.join(files)}</p></div>"
            )
    return "".join(parts) or "<p>No cause was found on any target.</p>"


def _fixtures(doc: dict[str, Any]) -> str:
    families = sorted({f for t in doc["targets"] for f in t["fixtures"]["families"]})
    head = (
        "<tr><th>fixtures</th>"
        + "".join(f"<th><code>{esc(t['column'])}</code></th>" for t in doc["targets"])
        + "</tr>"
    )
    body = []
    for fam in families:
        cells = []
        for t in doc["targets"]:
            f = t["fixtures"]["families"].get(fam)
            if f is None:
                cells.append('<td class="na">–</td>')
            else:
                cls = "bad" if f["failed"] else "ok"
                cells.append(
                    f'<td class="num {cls}">{f["passed"]}/{f["passed"] + f["failed"]}</td>'
                )
        body.append(f"<tr><td><code>{esc(fam)}</code></td>{''.join(cells)}</tr>")
    notes = []
    for t in doc["targets"]:
        fx = t["fixtures"]
        for line in (
            ([fx["why"]] if fx.get("why") else [])
            + fx["notes"]
            + [f"FAIL {n}" for n in fx["failing"][:20]]
        ):
            notes.append(f"<li><code>{esc(t['column'])}</code>: {esc(line)}</li>")
    return f'<table class="small">{head}{"".join(body)}</table>' + (
        f"<ul class='note'>{''.join(notes)}</ul>" if notes else ""
    )


def _known(doc: dict[str, Any]) -> str:
    items: dict[str, str] = {}
    for t in doc["targets"]:
        for inv, k in t["known"].items():
            items.setdefault(inv, str(k.get("knownIssue") or ""))
    if not items:
        return "<p>No known upstream issue was seen on any target.</p>"
    head = (
        "<tr><th>check</th><th>upstream issue</th>"
        + "".join(f"<th><code>{esc(t['column'])}</code></th>" for t in doc["targets"])
        + "</tr>"
    )
    body = []
    for inv in sorted(items):
        cells = []
        for t in doc["targets"]:
            k = t["known"].get(inv)
            cells.append(
                '<td class="na">–</td>'
                if k is None
                else f'<td class="num">{esc(k.get("count") if k.get("count") is not None else "seen")}</td>'
            )
        body.append(
            f'<tr data-known="{esc(inv)}"><td><code>{esc(inv)}</code></td><td class="why">{esc(items[inv])}</td>'
            + "".join(cells)
            + "</tr>"
        )
    return f'<table class="small">{head}{"".join(body)}</table>'


def _targets(doc: dict[str, Any]) -> str:
    rows = []
    for t in doc["targets"]:
        ann = t.get("announced") or {}
        rows.append(
            f'<tr id="t-{esc(t["column"])}"><td><code>{esc(t["column"])}</code></td><td><code>{esc(t["target"])}</code></td>'
            f"<td>{esc(ann.get('name') or '—')}</td><td>{esc(t.get('announcedVersion') or '—')}</td>"
            f"<td>{esc(t.get('profile'))}</td><td>{esc(', '.join(t['kindsFuzzed']))}</td>"
            f'<td class="num">{t["steps"]:,}</td><td class="num">{esc(t.get("seed"))}</td>'
            f"<td>{esc(t['runVerdict'])} ({esc(t.get('stoppedBecause'))}){': ' + esc(t['untested']) if t.get('untested') else ''}</td>"
            f'<td class="num">{t["causes"]["found"]} / {t["causes"]["notFound"]} / {t["causes"]["notApplicable"]}</td>'
            f'<td class="src"><code>{esc(t["run"])}</code></td></tr>'
        )
    return (
        "<table class='small'><tr><th>column</th><th>target</th><th>announced name</th><th>announced version</th>"
        "<th>profile used</th><th>kinds fuzzed</th><th>steps</th><th>seed</th><th>run</th>"
        "<th>found / not found / n.a.</th><th>run folder</th></tr>" + "".join(rows) + "</table>"
    )


def render_matrix(doc: dict[str, Any]) -> str:
    columns = [t["column"] for t in doc["targets"]]
    rows = doc["causes"]
    shared = len(doc["sharedCauses"])
    dirty = [t for t in doc["targets"] if t["verdict"] != "clean"]
    verdict = "clean" if not dirty else "findings"
    headline = (
        f"{len(rows)} root cause(s) across {len(columns)} target(s)"
        if rows
        else f"no root cause on {len(columns)} target(s)"
    )
    banner = (
        f'<div id="verdict" class="verdict verdict-{verdict}" data-verdict="{verdict}">'
        f'<p class="headline">{esc(headline)}</p>'
        f"<p>{shared} cause(s) found on two or more implementations — flagged as a possible spec ambiguity. "
        f"{len(columns) - len(dirty)} of {len(columns)} column(s) clean.</p>"
        f'<p class="legend"><span class="cell found">✗ found</span> <span class="cell not-found">✓ not found</span> '
        f'<span class="cell not-applicable">– not applicable</span> <span class="note">{esc(doc["applicability"])}</span></p></div>'
    )
    table = (
        '<div class="cm-box"><table class="cm" id="matrix"><colgroup><col class="c-cause">'
        + "".join('<col class="c-target">' for _ in columns)
        + "</colgroup>"
        + '<thead><tr><th class="corner">root cause</th>'
        + "".join(_column_head(t) for t in doc["targets"])
        + "</tr></thead><tbody>"
        + (
            "".join(_row(r, columns) for r in rows)
            if rows
            else f'<tr><td colspan="{len(columns) + 1}">No cause was found on any target.</td></tr>'
        )
        + "</tbody></table></div>"
    )
    return _PAGE.format(
        css=_CSS,
        banner=banner,
        table=table,
        marks=_marks(doc),
        fixtures=_fixtures(doc),
        known=_known(doc),
        targets=_targets(doc),
        created=esc(doc.get("createdAt")),
        version=esc(doc["tool"]["version"]),
        data=embed({k: doc[k] for k in ("format", "formatVersion", "sharedCauses")}),
    )


_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1320px;padding:1em 2em;color:#1d1d1f}
h1{font-size:1.5em;margin:.3em 0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}h4{margin:.4em 0 .2em}
code{overflow-wrap:anywhere}p,li,td,th{overflow-wrap:break-word}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
table.small{width:100%;font-size:13px}td.ok{background:#e9f7ee}td.bad{background:#fdecec}td.na{color:#999;text-align:center}
td.why,td.src{font-size:12px;color:#444}
.verdict{border-radius:8px;padding:.6em 1.2em;margin:.6em 0 1em;border:2px solid;background:#f4f4f5}
.verdict p{margin:.25em 0}.verdict .headline{font-size:1.8em;font-weight:700;line-height:1.2}
.verdict-clean{background:#e9f7ee;border-color:#1a7f37}.verdict-clean .headline{color:#1a7f37}
.verdict-findings{background:#fdecec;border-color:#c62828}.verdict-findings .headline{color:#b71c1c}
.legend .cell{display:inline-block;padding:1px 8px;border-radius:3px;margin-right:.4em}
.note{color:#666;font-size:12px}
.cm-box{max-width:100%;overflow-x:auto}
.cm{table-layout:fixed;width:100%;margin:0}.cm col.c-cause{width:30em}
.cm th.col{font-weight:normal;font-size:12px;vertical-align:bottom}
.cm th.col>span,.cm th.col>a{display:block}.col-name code{font-size:12px;overflow-wrap:anywhere}
.col-verdict{font-weight:700;font-size:13px;padding:2px 6px;border-radius:3px;margin-bottom:3px;color:#fff;background:#8a5200}
.col-verdict.v-clean{background:#1a7f37}.col-verdict.v-found{background:#c62828}
.col-meta{color:#555}.fx-failed{color:#b71c1c;font-weight:600}
.cm th.cause{font-weight:normal;background:#fafafa}.cm th.cause .summary{display:block}
.cause-meta{display:block;color:#666;font-size:12px}
.cm tr.shared th.cause{background:#fff4dc}
.ambiguity{display:inline-block;background:#b26a00;color:#fff;border-radius:4px;padding:0 .4em;font-size:12px;margin:0 .3em .2em 0}
.sev{border-radius:4px;padding:0 .4em;color:#fff;background:#b00;font-size:12px}.sev-warning{background:#c80}.sev-divergence{background:#75b}
.cell{text-align:center;vertical-align:middle;font-size:13px}
.cell.found{background:#f4a3a3}.cell.not-found{background:#a8dab5;color:#14532d}.cell.not-applicable{background:#e6e6e6;color:#777}
.cell .mark{display:block;font-weight:600}.cell .links{display:block;font-size:12px}
.markdetail{border-left:4px solid #c62828;padding:.1em 0 .1em 1em;margin:1em 0}
code.replay{background:#eef;padding:1px 4px}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ahp-fuzz conformance matrix</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<style>{css}</style></head>
<body data-rendered="true">
<h1>Conformance matrix</h1>
{banner}
<section id="causes"><h2>Root causes × targets</h2>{table}</section>
<section id="marks"><h2>Every mark: finding, replay, fixture</h2>{marks}</section>
<section id="fixtures"><h2>Upstream fixtures</h2>{fixtures}</section>
<section id="known"><h2>Known upstream issues (REDUCERS.md §11) per target</h2>{known}</section>
<section id="targets"><h2>Targets</h2>{targets}</section>
<p class="note">ahp-fuzz {version} · {created} · the data: <a href="matrix.json">matrix.json</a></p>
<script type="application/json" id="matrix-data">{data}</script>
</body></html>
"""
