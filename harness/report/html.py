"""`index.html`: a self-contained report page for a run folder (no network at view time).

Everything is inline: CSS, a small script, the report data as JSON and the charts, drawn as SVG by
the script. The script fills the summary, the outcome matrix and the charts from the embedded
`report.json` and then sets `data-rendered="true"` on `<body>` (what the headless-browser test
waits for). Findings (minimal trace, state diff, replay command) and the invariant table are
rendered here in Python, escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.corpus.finding import Finding, FindingFormatError, load_finding
from harness.diff import json_diff
from harness.invariants.listing import as_dict
from harness.invariants.registry import REGISTRY
from harness.reference import MalformedAction, Model, Profile

from .writers import write_atomic

_E = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def esc(value: Any) -> str:
    return "".join(_E.get(ch, ch) for ch in str(value))


def _embed(data: Any) -> str:
    """JSON safe inside a <script> element."""
    return (json.dumps(data, ensure_ascii=False, sort_keys=True)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def resolve_finding(entry: dict[str, Any], run_dir: Path) -> Path | None:
    """Where a report's finding file is: as recorded, else in the run folder's findings/."""
    name = entry.get("file")
    if not name:
        return None
    p = Path(name)
    for candidate in (p, run_dir / "findings" / p.name, run_dir / p):
        if candidate.is_file():
            return candidate
    return None


def _state_before_failing_step(f: Finding) -> Any:
    """The reference model's state just before the failing step (probe steps move nothing)."""
    try:
        model = Model(Profile.named(f.profile))
    except ValueError:
        return None
    state: Any = f.initial
    for step in f.steps[: f.failing_step]:
        if step.probe:
            continue
        try:
            state = model.reduce(f.kind, state, step.action, step.now_ms)
        except (MalformedAction, ValueError):
            continue
    return state


def _finding_html(entry: dict[str, Any], run_dir: Path) -> str:
    path = resolve_finding(entry, run_dir)
    finding: Finding | None = None
    if path is not None:
        try:
            finding = load_finding(path)
        except FindingFormatError:
            finding = None
    head = (
        f'<h3><span class="sev sev-{esc(entry.get("severity"))}">{esc(entry.get("severity"))}</span> '
        f'{esc(entry.get("invariant"))} on {esc(entry.get("kind"))} — {esc(entry.get("title"))}</h3>'
        f'<p class="msg">{esc(entry.get("message"))}</p>'
        f'<p>signature <code>{esc(entry.get("signature"))}</code>, {esc(entry.get("steps"))} step(s), '
        f'{"reproduced on replay" if entry.get("reproduced") else "<b>did not reproduce on replay</b>"}</p>'
        f'<p>replay: <code class="replay">{esc(entry.get("replay"))}</code></p>'
    )
    if finding is None:
        return f'<div class="finding" data-signature="{esc(entry.get("signature"))}">{head}<p>(finding file not found)</p></div>'
    rows = []
    for i, step in enumerate(finding.steps):
        mark = " failing" if i == finding.failing_step else ""
        probe = " (probe)" if step.probe else ""
        rows.append(
            f'<tr class="step{mark}"><td>{i + 1}</td><td>{step.now_ms}</td>'
            f'<td><pre>{esc(json.dumps(step.action, ensure_ascii=False, sort_keys=True))}</pre>{probe}</td></tr>'
        )
    before = _state_before_failing_step(finding)
    after = finding.expected if finding.expected is not None else finding.observed
    step_diff = json_diff(before, after, limit=40) if before is not None and isinstance(after, dict) else []
    step_diff = [line.replace(": expected ", ": before ", 1).replace(", got ", ", after ", 1) for line in step_diff]
    div = (json_diff(finding.expected, finding.observed, limit=40)
           if finding.expected is not None and isinstance(finding.observed, dict | list) else [])
    diff_html = "".join(f"<li><code>{esc(line)}</code></li>" for line in step_diff) or "<li>(no change)</li>"
    div_html = ("<h4>expected (reference model) vs observed (target)</h4><ul>"
                + "".join(f"<li><code>{esc(line)}</code></li>" for line in div) + "</ul>") if div else ""
    initial = esc(json.dumps(finding.initial, ensure_ascii=False, sort_keys=True, indent=1))
    return (
        f'<div class="finding" data-signature="{esc(finding.signature)}">{head}'
        f"<details><summary>initial state</summary><pre>{initial}</pre></details>"
        f'<h4>minimal trace</h4><table class="trace"><tr><th>#</th><th>nowMs</th><th>action</th></tr>{"".join(rows)}</table>'
        f"<h4>state diff of the failing step (before → after)</h4><ul>{diff_html}</ul>{div_html}</div>"
    )


def _invariant_rows(report: dict[str, Any]) -> str:
    exercised = (report.get("outcomes") or {}).get("invariantSteps") or {}
    found: dict[str, int] = {}
    for f in report.get("findings") or []:
        found[f.get("invariant", "")] = found.get(f.get("invariant", ""), 0) + 1
    known = report.get("known") or {}
    rows = []
    for inv in REGISTRY.values():
        d = as_dict(inv)
        status = "finding" if found.get(inv.id) else "known" if inv.id in known else ""
        rows.append(
            f'<tr class="{status}" data-invariant="{esc(inv.id)}"><td>{esc(inv.id)}</td><td>{esc(d["title"])}</td>'
            f'<td>{esc(d["severity"])}</td><td>{esc(d["scope"])}</td><td>{esc(d["checked"])}</td>'
            f'<td class="num">{exercised.get(inv.id, 0)}</td><td class="num">{found.get(inv.id, 0)}</td>'
            f'<td>{"yes" if inv.id in known else ""}</td><td class="src">{esc(d["source"])}</td></tr>'
        )
    return "".join(rows)


def _branch_files(report: dict[str, Any]) -> str:
    bc = report.get("branchCoverage") or {}
    files = bc.get("files") or {}
    rows = []
    for name, f in files.items():
        missing = ", ".join(f"{a}→{b}" for a, b in f.get("missingBranches", [])) or "—"
        rows.append(
            f"<tr><td><code>{esc(name)}</code></td><td class=num>{f.get('coveredBranches')}/{f.get('numBranches')}</td>"
            f"<td class=num>{f.get('percentBranches')}%</td><td class=missing>{esc(missing)}</td></tr>"
        )
    if not rows:
        return "<p>No branch coverage was measured in this run.</p>"
    return ("<table><tr><th>module</th><th>branches</th><th>%</th><th>branches not taken (line→line; "
            "negative: exit)</th></tr>" + "".join(rows) + "</table>")


def render(report: dict[str, Any], run_dir: Path) -> str:
    findings = "".join(_finding_html(f, run_dir) for f in report.get("findings") or []) or "<p>No findings.</p>"
    title = f"ahp-fuzz report — {report.get('target', '?')}"
    return _PAGE.format(
        title=esc(title),
        data=_embed(report),
        findings=findings,
        invariants=_invariant_rows(report),
        branch_files=_branch_files(report),
        css=_CSS,
        js=_JS,
    )


def write_html(run_dir: Path, report: dict[str, Any] | None = None) -> Path:
    """(Re)build `run_dir/index.html` from `report` (default: `run_dir/report.json`)."""
    if report is None:
        report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    out = run_dir / "index.html"
    write_atomic(out, render(report, run_dir))
    return out


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#1d1d1f}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;width:100%}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:.6em}.card{border:1px solid #ddd;border-radius:6px;padding:.5em .9em;min-width:8em}
.card b{display:block;font-size:1.4em}.finding{border:1px solid #e0b4b4;border-radius:6px;padding:.2em 1em;margin:1em 0;background:#fff8f8}
.sev{border-radius:4px;padding:0 .4em;color:#fff;background:#b00}.sev-warning{background:#c80}.sev-divergence{background:#75b}
pre{margin:0;white-space:pre-wrap;word-break:break-all;font-size:12px}tr.failing{background:#fdd}tr.finding{background:#fee}tr.known{background:#ffe}
td.src,td.missing{font-size:12px;color:#444}svg{background:#fafafa;border:1px solid #ddd}.charts{display:flex;flex-wrap:wrap;gap:1em}
.matrix td.zero{color:#bbb}.matrix td.hit{background:#eaf6ea}code.replay{background:#eef;padding:1px 4px}
"""

_JS = r"""
(function(){
  var R = JSON.parse(document.getElementById('report-data').textContent);
  function fmt(v){ if(v===null||v===undefined) return '–'; if(typeof v==='number') return (Math.round(v*10)/10).toLocaleString('en-US'); return String(v); }
  function set(field, v){ var el=document.querySelector('[data-field="'+field+'"]'); if(el){ el.textContent=fmt(v); el.setAttribute('data-value', v===null||v===undefined?'':String(v)); } }
  var bc = R.branchCoverage || null, oc = R.outcomes || {}, camp = R.campaign || {};
  set('status', R.status); set('target', R.target); set('profile', R.profile); set('seed', R.seed === null || R.seed === undefined ? null : String(R.seed));
  set('elapsedSeconds', R.elapsedSeconds); set('examples', R.examples); set('steps', R.steps);
  set('stepsPerSecond', R.stepsPerSecond); set('findings', (R.findings||[]).length);
  var known = 0; for (var k in (R.known||{})) known++; set('known', known);
  set('branchPercent', bc ? bc.percentBranches : null); set('outcomePairs', oc.distinctPairs === undefined ? null : oc.distinctPairs);
  set('workers', camp.workers === undefined ? 1 : camp.workers); set('restarts', camp.restarts === undefined ? 0 : camp.restarts);
  // the action type x outcome matrix
  var types = oc.types || {}, outs = oc.distinctOutcomes || [];
  var m = document.getElementById('matrix');
  if (outs.length) {
    var h = '<tr><th>action type</th><th>steps</th>' + outs.map(function(o){return '<th>'+esc(o)+'</th>';}).join('') + '<th>invariants exercised</th></tr>';
    Object.keys(types).sort().forEach(function(t){
      var row = types[t];
      h += '<tr data-type="'+esc(t)+'"><td><code>'+esc(t)+'</code></td><td class="num">'+row.steps+'</td>' + outs.map(function(o){
        var n = row.outcomes[o] || 0; return '<td class="num '+(n?'hit':'zero')+'">'+n+'</td>'; }).join('') +
        '<td class="num" title="'+esc((row.invariants||[]).join(' '))+'">'+(row.invariants||[]).length+'</td></tr>';
    });
    m.innerHTML = h;
  } else {
    var sent = R.coverage || {}, h2 = '<tr><th>action type</th><th>sent</th><th>changed state</th></tr>';
    Object.keys(sent).sort().forEach(function(t){ h2 += '<tr data-type="'+esc(t)+'"><td><code>'+esc(t)+'</code></td><td class="num">'+sent[t].sent+'</td><td class="num">'+sent[t].changed+'</td></tr>'; });
    m.innerHTML = h2;
  }
  // charts over time
  var tl = (R.timeline || []).slice();
  if (!tl.length && R.steps !== undefined) { tl = [{t:0,steps:0,findings:0,branchPercent:null},{t:R.elapsedSeconds||0,steps:R.steps,findings:(R.findings||[]).length,branchPercent:bc?bc.percentBranches:null}]; }
  chart('chart-steps', tl, 'steps', 'steps');
  chart('chart-findings', tl, 'findings', 'findings');
  chart('chart-coverage', tl, 'branchPercent', 'branch coverage %');
  chart('chart-pairs', tl, 'outcomePairs', '(type, outcome) pairs');
  function chart(id, pts, key, label){
    var el = document.getElementById(id); if(!el) return;
    var W=360,H=180,P=36, xs=pts.map(function(p){return p.t;}), ys=pts.map(function(p){return p[key];}).filter(function(v){return v!==null&&v!==undefined;});
    var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="'+W+'" height="'+H+'" data-points="'+ys.length+'"><text x="'+P+'" y="14" font-size="12">'+esc(label)+'</text>';
    if (ys.length) {
      var xmax=Math.max.apply(null,xs)||1, ymax=Math.max.apply(null,ys)||1, ymin=key==='branchPercent'?Math.min.apply(null,ys):0;
      if (ymax===ymin) ymax=ymin+1;
      var d=''; pts.forEach(function(p){ var v=p[key]; if(v===null||v===undefined) return;
        var x=P+(W-P-10)*(p.t/xmax), y=H-P+((H-P-20)*-(v-ymin)/(ymax-ymin)); d+=(d?'L':'M')+x.toFixed(1)+' '+y.toFixed(1); });
      svg += '<path d="'+d+'" fill="none" stroke="#2563eb" stroke-width="2"/>';
      svg += '<text x="2" y="'+(H-P)+'" font-size="10">'+fmt(ymin)+'</text><text x="2" y="24" font-size="10">'+fmt(ymax)+'</text>';
      svg += '<text x="'+P+'" y="'+(H-8)+'" font-size="10">0 s</text><text x="'+(W-50)+'" y="'+(H-8)+'" font-size="10">'+fmt(xmax)+' s</text>';
    } else { svg += '<text x="'+P+'" y="'+(H/2)+'" font-size="12">not measured</text>'; }
    el.innerHTML = svg + '</svg>';
  }
  function esc(s){ return String(s).replace(/[&<>"']/g, function(c){ return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]; }); }
  document.body.setAttribute('data-rendered', 'true');
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<style>{css}</style></head>
<body data-rendered="false">
<h1>{title}</h1>
<noscript><p>This page draws its summary, matrix and charts with an inline script.</p></noscript>
<section id="summary"><h2>Summary</h2><div class="cards">
<div class="card">status<b data-field="status"></b></div>
<div class="card">target<b data-field="target"></b></div>
<div class="card">profile<b data-field="profile"></b></div>
<div class="card">seed<b data-field="seed"></b></div>
<div class="card">elapsed (s)<b data-field="elapsedSeconds"></b></div>
<div class="card">runs<b data-field="examples"></b></div>
<div class="card">steps<b data-field="steps"></b></div>
<div class="card">steps/s<b data-field="stepsPerSecond"></b></div>
<div class="card">findings<b data-field="findings"></b></div>
<div class="card">known upstream issues seen<b data-field="known"></b></div>
<div class="card">branch coverage (reference) %<b data-field="branchPercent"></b></div>
<div class="card">(type, outcome) pairs<b data-field="outcomePairs"></b></div>
<div class="card">workers<b data-field="workers"></b></div>
<div class="card">worker restarts<b data-field="restarts"></b></div>
</div></section>
<section id="charts"><h2>Over time</h2><div class="charts">
<div id="chart-steps"></div><div id="chart-findings"></div><div id="chart-coverage"></div><div id="chart-pairs"></div>
</div></section>
<section id="findings"><h2>Findings</h2>{findings}</section>
<section id="coverage"><h2>Spec coverage: action type × outcome</h2>
<p>Outcomes are classified from the reference model's state before and after each valid step
(docs/campaign.md); an invariant is exercised by a step when the registry runs it for that state kind and action type.</p>
<div style="overflow-x:auto"><table class="matrix" id="matrix"></table></div>
<h3>Branch coverage of the reference model</h3>{branch_files}</section>
<section id="invariants"><h2>Invariants</h2>
<table><tr><th>id</th><th>title</th><th>severity</th><th>scope</th><th>checked</th><th>steps exercised</th><th>findings</th><th>known seen</th><th>spec source</th></tr>
{invariants}</table></section>
<script type="application/json" id="report-data">{data}</script>
<script>{js}</script>
</body></html>
"""
