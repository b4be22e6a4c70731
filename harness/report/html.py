"""`index.html`: a self-contained report page for a run folder (no network at view time).

Everything is inline: CSS, a small script, the report data as JSON and the charts, drawn as SVG by
the script. The script fills the summary, the outcome matrix and the charts from the embedded
`report.json` and then sets `data-rendered="true"` on `<body>` (what the headless-browser test
waits for). Everything a reader needs without a script is rendered here in Python, escaped: the
verdict banner and the rerun command (html_sections), the findings grouped by root cause with
absolute replay commands (html_findings, html_commands), the known upstream issues, the branch
coverage with a reason for every module at 0 %, and the invariant table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.invariants.listing import as_dict
from harness.invariants.registry import REGISTRY

from .html_commands import run_origin
from .html_escape import embed, esc
from .html_findings import findings_html
from .html_sections import banner_html, branch_files_html, command_coverage_html, known_html
from .writers import write_atomic

__all__ = ["esc", "render", "resolve_finding", "write_html"]


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


#: The checks a run has only with a spec folder's published state schema (harness/spec/verdict.py).
PUBLISHED_SCHEMA_CHECKS = ("INV-007", "INV-007.published")


def _invariant_rows(report: dict[str, Any]) -> str:
    exercised = (report.get("outcomes") or {}).get("invariantSteps") or {}
    found: dict[str, int] = {}
    for f in report.get("findings") or []:
        found[f.get("invariant", "")] = found.get(f.get("invariant", ""), 0) + 1
    known = report.get("known") or {}
    switches = report.get("schemaChecks")
    rows = []
    for inv in REGISTRY.values():
        d = as_dict(inv)
        if inv.id in PUBLISHED_SCHEMA_CHECKS and isinstance(switches, dict) and not switches.get("publishedSchema"):
            d["checked"] = "off in this run: no spec folder with a state schema (--spec DIR, $AHP_SPEC_DIR)"
        status = "finding" if found.get(inv.id) else "known" if inv.id in known else ""
        rows.append(
            f'<tr class="{status}" data-invariant="{esc(inv.id)}"><td>{esc(inv.id)}</td><td>{esc(d["title"])}</td>'
            f'<td>{esc(d["severity"])}</td><td>{esc(d["scope"])}</td><td>{esc(d["checked"])}</td>'
            f'<td class="num">{exercised.get(inv.id, 0)}</td><td class="num">{found.get(inv.id, 0)}</td>'
            f'<td>{"yes" if inv.id in known else ""}</td><td class="src">{esc(d["source"])}</td></tr>'
        )
    return "".join(rows)


#: Tiles only a campaign (or a merge of campaigns) has figures for, each shown where its report
#: key is: (key, summary card, chart). A run's page has none of them.
_CAMPAIGN_TILES = (
    ("branchCoverage", '<div class="card">branch coverage (reference) %<b data-field="branchPercent"></b></div>',
     '<div id="chart-coverage"></div>'),
    ("branchCoverage", '<div class="card">of its reducer path %<b data-field="reducerPathPercent"></b></div>', ""),
    ("outcomes", '<div class="card">(type, outcome) pairs<b data-field="outcomePairs"></b></div>',
     '<div id="chart-pairs"></div>'),
    ("campaign", '<div class="card">workers<b data-field="workers"></b></div>', ""),
    ("campaign", '<div class="card">worker restarts<b data-field="restarts"></b></div>', ""),
)


def render(report: dict[str, Any], run_dir: Path) -> str:
    origin = run_origin(report, run_dir)
    mode = report.get("mode") or "run"
    return _PAGE.format(
        title=esc(f"ahp-fuzz {mode} — {report.get('target', '?')}"),
        heading=esc(f"ahp-fuzz {mode} report"),
        banner=banner_html(report, origin),
        data=embed(report),
        findings=findings_html(report, run_dir, origin),
        known=known_html(report),
        invariants=_invariant_rows(report),
        branch_files=branch_files_html(report),
        command_coverage=command_coverage_html(report),
        campaign_cards="".join(card for key, card, _ in _CAMPAIGN_TILES if key in report),
        campaign_charts="".join(chart for key, _, chart in _CAMPAIGN_TILES if key in report and chart),
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
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1240px;padding:1em 2em;color:#1d1d1f}
h1{font-size:1.5em;margin:.3em 0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h5{font-size:1em;margin:.6em 0 .2em}
p,li,h1,h3,h4,td,th{overflow-wrap:break-word}code,pre,td.example,td.missing,td.src,td.why,.card b{overflow-wrap:anywhere}
th code,td code{overflow-wrap:normal;word-break:normal}td.item,td.mod{white-space:nowrap}
table{border-collapse:collapse;margin:.5em 0;width:100%}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{border-radius:8px;padding:.6em 1.2em;margin:.6em 0 1em;border:2px solid;background:#f4f4f5}
.verdict p{margin:.25em 0}.verdict .headline{font-size:2em;font-weight:700;line-height:1.2}
.verdict-clean{background:#e9f7ee;border-color:#1a7f37}.verdict-clean .headline{color:#1a7f37}
.verdict-findings{background:#fdecec;border-color:#c62828}.verdict-findings .headline{color:#b71c1c}
.verdict-interrupted,.verdict-partial,.verdict-running,.verdict-untested{background:#fff4dc;border-color:#b26a00}
.verdict-interrupted .headline,.verdict-partial .headline,.verdict-running .headline,.verdict-untested .headline{color:#8a5200}
.verdict-error,.verdict-died{background:#3b0d0d;border-color:#3b0d0d;color:#fff}.verdict-error code,.verdict-died code{color:#1d1d1f}
.verdict .rerun code{background:#fff;padding:1px 4px;border-radius:3px;font-size:12px}
.note{color:#666;font-size:12px}.verdict-error .note,.verdict-died .note{color:#ddd}.verdict-error a,.verdict-died a{color:#fff}
.cards{display:flex;flex-wrap:wrap;gap:.6em}.card{border:1px solid #ddd;border-radius:6px;padding:.5em .9em;min-width:8em;max-width:100%}
.card b{display:block;font-size:1.4em}.card.wide b{font-size:1em;font-family:ui-monospace,monospace}
.cause{border-left:4px solid #c62828;padding:.1em 0 .1em 1em;margin:1.5em 0}.cause>h3{margin:.2em 0}
.witnesses{color:#444;margin:.2em 0}
.finding{border:1px solid #e0b4b4;border-radius:6px;padding:.2em 1em;margin:.8em 0;background:#fff8f8}
.finding .meta{color:#555;font-size:12px}
.sev{border-radius:4px;padding:0 .4em;color:#fff;background:#b00}.sev-warning{background:#c80}.sev-divergence{background:#75b}
.said{font-weight:600}.sides{display:flex;flex-wrap:wrap;gap:1em}.side{flex:1 1 28em;min-width:0}
.nochange{color:#666;font-style:italic}li.differs code{background:#ffe08a}
pre{margin:0;white-space:pre-wrap;word-break:break-all;font-size:12px}tr.failing{background:#fdd}tr.finding{background:#fee}tr.known{background:#ffe}
td.src,td.missing,td.example,td.why{font-size:12px;color:#444}tr.zero td.why{color:#7a4b00}
.charts{display:flex;flex-wrap:wrap;gap:1em}svg{background:#fafafa;border:1px solid #ddd;display:block}
.matrix-box{width:fit-content;max-width:100%;max-height:80vh;overflow:auto;border:1px solid #ddd}
.matrix{width:auto;margin:0}.matrix th{position:sticky;top:0;z-index:1}.matrix tr.sub th{top:1.9em}
.matrix th.v{vertical-align:bottom;padding:4px 2px}.matrix th.v span{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
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
  set('branchPercent', bc ? bc.percentBranches : null); set('reducerPathPercent', bc && bc.reducerPath ? bc.reducerPath.percentBranches : null); set('outcomePairs', oc.distinctPairs === undefined ? null : oc.distinctPairs);
  set('workers', camp.workers === undefined ? 1 : camp.workers); set('restarts', camp.restarts === undefined ? 0 : camp.restarts);
  // the action type x outcome matrix: outcome headers written vertically, "no-op: …" grouped
  var types = oc.types || {}, outs = oc.distinctOutcomes || [];
  var m = document.getElementById('matrix');
  function group(o){ var i=o.indexOf(': '); return i>0 ? [o.slice(0,i), o.slice(i+2)] : [null, o]; }
  function vth(label, extra){ return '<th class="v"'+(extra||'')+' title="'+esc(label)+'"><span>'+esc(label)+'</span></th>'; }
  if (outs.length) {
    var top = '<tr><th rowspan="2">action type</th>'+vth('steps',' rowspan="2"'), sub = '<tr class="sub">';
    for (var i=0; i<outs.length;) {
      var g = group(outs[i])[0], j = i;
      while (j < outs.length && group(outs[j])[0] === g && g !== null) j++;
      if (g === null) { top += vth(outs[i], ' rowspan="2"'); i++; }
      else { top += '<th colspan="'+(j-i)+'">'+esc(g)+'</th>'; for (; i<j; i++) sub += vth(group(outs[i])[1]); }
    }
    top += vth('invariants exercised', ' rowspan="2"') + '</tr>';
    var h = top + sub + '</tr>';
    Object.keys(types).sort().forEach(function(t){
      var row = types[t];
      h += '<tr data-type="'+esc(t)+'"><td><code>'+esc(t)+'</code></td><td class="num">'+row.steps+'</td>' + outs.map(function(o){
        var n = row.outcomes[o] || 0; return '<td class="num '+(n?'hit':'zero')+'" title="'+esc(t+' · '+o)+'">'+n+'</td>'; }).join('') +
        '<td class="num" title="'+esc((row.invariants||[]).join(' '))+'">'+(row.invariants||[]).length+'</td></tr>';
    });
    m.innerHTML = h;
  } else {
    var sent = R.coverage || {}, h2 = '<tr><th>action type</th><th>sent</th><th>changed state</th></tr>';
    var neutral = R.noStateEffect || [];
    Object.keys(sent).sort().forEach(function(t){ var nse = neutral.indexOf(t) >= 0; h2 += '<tr data-type="'+esc(t)+'"><td><code>'+esc(t)+'</code></td><td class="num">'+sent[t].sent+'</td><td class="num"'+(nse?' title="the spec gives this type no effect on the state (a request the host answers with other actions, or a side effect)"':'')+'>'+sent[t].changed+(nse?' (no state effect)':'')+'</td></tr>'; });
    m.innerHTML = h2;
  }
  // charts over time; every y-axis starts at 0 (percentages run to 100)
  var tl = (R.timeline || []).slice();
  if (!tl.length && R.steps !== undefined) { tl = [{t:0,steps:0,findings:0,branchPercent:null},{t:R.elapsedSeconds||0,steps:R.steps,findings:(R.findings||[]).length,branchPercent:bc?bc.percentBranches:null}]; }
  chart('chart-steps', tl, 'steps', 'steps', null);
  chart('chart-findings', tl, 'findings', 'findings', null);
  chart('chart-coverage', tl, 'branchPercent', 'branch coverage % (reference model)', 100);
  chart('chart-pairs', tl, 'outcomePairs', '(type, outcome) pairs', null);
  function chart(id, pts, key, label, top){
    var el = document.getElementById(id); if(!el) return;
    var W=280,H=170,P=40,T=24, xs=pts.map(function(p){return p.t;}), ys=pts.map(function(p){return p[key];}).filter(function(v){return v!==null&&v!==undefined;});
    var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="'+W+'" height="'+H+'" data-points="'+ys.length+'"';
    if (ys.length) {
      var xmax=Math.max.apply(null,xs)||1, ymin=0, ymax=top!==null?top:(Math.max.apply(null,ys)||1);
      svg += ' data-ymin="'+ymin+'" data-ymax="'+ymax+'">';
      var y0=H-P, y1=T, x0=P, x1=W-10;
      svg += '<line x1="'+x0+'" y1="'+y0+'" x2="'+x1+'" y2="'+y0+'" stroke="#999"/><line x1="'+x0+'" y1="'+y0+'" x2="'+x0+'" y2="'+y1+'" stroke="#999"/>';
      var d=''; pts.forEach(function(p){ var v=p[key]; if(v===null||v===undefined) return;
        var x=x0+(x1-x0)*(p.t/xmax), y=y0-(y0-y1)*(v-ymin)/(ymax-ymin); d+=(d?'L':'M')+x.toFixed(1)+' '+y.toFixed(1); });
      svg += '<path d="'+d+'" fill="none" stroke="#2563eb" stroke-width="2"/>';
      svg += '<text x="'+(x0-4)+'" y="'+(y0+4)+'" font-size="10" text-anchor="end">'+fmt(ymin)+'</text><text x="'+(x0-4)+'" y="'+(y1+4)+'" font-size="10" text-anchor="end">'+fmt(ymax)+'</text>';
      svg += '<text x="'+x0+'" y="'+(H-22)+'" font-size="10">0 s</text><text x="'+x1+'" y="'+(H-22)+'" font-size="10" text-anchor="end">'+fmt(xmax)+' s</text>';
      var last = ys[ys.length-1]; svg += '<text x="'+x1+'" y="'+(H-6)+'" font-size="11" text-anchor="end">last: '+fmt(last)+'</text>';
    } else { svg += '><text x="'+P+'" y="'+(H/2)+'" font-size="12">not measured</text>'; }
    svg += '<text x="6" y="14" font-size="12" font-weight="600">'+esc(label)+'</text>';
    el.innerHTML = svg + '</svg>';
  }
  function esc(s){ return String(s).replace(/[&<>"']/g, function(c){ return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]; }); }
  document.body.setAttribute('data-rendered', 'true');
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<style>{css}</style></head>
<body data-rendered="false">
<h1>{heading}</h1>
{banner}
<noscript><p>This page draws its summary, matrix and charts with an inline script.</p></noscript>
<section id="summary"><h2>Summary</h2><div class="cards">
<div class="card">status<b data-field="status"></b></div>
<div class="card wide">target<b data-field="target"></b></div>
<div class="card">profile<b data-field="profile"></b></div>
<div class="card">seed<b data-field="seed"></b></div>
<div class="card">elapsed (s)<b data-field="elapsedSeconds"></b></div>
<div class="card">runs<b data-field="examples"></b></div>
<div class="card">steps<b data-field="steps"></b></div>
<div class="card">steps/s<b data-field="stepsPerSecond"></b></div>
<div class="card">findings<b data-field="findings"></b></div>
<div class="card" title="invariants that fired as known upstream issues (one REDUCERS.md §11 item can trip several)">checks that saw a known issue<b data-field="known"></b></div>
{campaign_cards}</div></section>
<section id="findings"><h2>Findings, by root cause</h2>{findings}</section>
<section id="known"><h2>Known upstream issues (REDUCERS.md §11)</h2>{known}</section>
<section id="charts"><h2>Over time</h2><div class="charts">
<div id="chart-steps"></div><div id="chart-findings"></div>{campaign_charts}
</div></section>
<section id="coverage"><h2>Spec coverage: action type × outcome</h2>{command_coverage}
<p>Outcomes are classified from the reference model's state before and after each valid step
(docs/campaign.md); an invariant is exercised by a step when the registry runs it for that state kind and action type.</p>
<div class="matrix-box"><table class="matrix" id="matrix"></table></div>
<h3>Branch coverage of the reference model</h3>{branch_files}</section>
<section id="invariants"><h2>Invariants</h2>
<table><tr><th>id</th><th>title</th><th>severity</th><th>scope</th><th>checked</th><th>steps exercised</th><th>findings</th><th>known seen</th><th>spec source</th></tr>
{invariants}</table></section>
<script type="application/json" id="report-data">{data}</script>
<script>{js}</script>
</body></html>
"""
