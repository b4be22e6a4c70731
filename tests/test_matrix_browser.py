"""The matrix page in real headless Chromium at 1400 px (issue 26): 5 targets × 40 causes, built
from crafted run folders, is readable — nothing overflows the page or the matrix's own box (no
sideways scrolling), no cell's text spills out of its cell, every row and column shows, the text
stays at a readable size, and the screenshot has the colours where the layout puts the cells.
`AHP_REPORT_SCREENSHOTS=DIR` keeps the screenshot."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness.report.html_matrix import write_matrix_html
from harness.report.matrix import Column, build_matrix, column_name
from harness.spec.versions import action_types
from tests.test_report_html_browser import CHROMIUM, WIDTH, _chromium, png_pixels

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)"
)
TARGETS, CAUSES = 5, 40

MEASURE = """<script>
(function(){
  var de = document.documentElement, vw = de.clientWidth, box = document.querySelector('.cm-box');
  var spill = [], small = [], wide = [];
  document.querySelectorAll('body *').forEach(function(el){
    var e = el.getBoundingClientRect();
    if (e.width && e.right > vw + 0.5) wide.push(el.tagName.toLowerCase() + '.' + el.className);
  });
  document.querySelectorAll('#matrix th, #matrix td').forEach(function(el){
    if (el.scrollWidth > el.clientWidth + 1) spill.push(el.className + ':' + el.textContent.slice(0, 40));
    var fs = parseFloat(getComputedStyle(el).fontSize); if (fs < 11) small.push(el.className + ':' + fs);
  });
  var rows = [].slice.call(document.querySelectorAll('#matrix tbody tr'));
  var cols = [].slice.call(document.querySelectorAll('#matrix th.col'));
  var found = document.querySelector('#matrix td.found'), fr = found.getBoundingClientRect();
  var clean = document.querySelector('#matrix td.not-found'), cr = clean.getBoundingClientRect();
  var m = document.createElement('pre'); m.id = 'measure';
  m.textContent = JSON.stringify({
    innerWidth: window.innerWidth, clientWidth: vw, scrollWidth: de.scrollWidth, wide: wide.slice(0, 20),
    box: {clientWidth: box.clientWidth, scrollWidth: box.scrollWidth},
    spill: spill.slice(0, 20), small: small.slice(0, 20),
    rows: rows.length, shownRows: rows.filter(function(r){ return r.getBoundingClientRect().height >= 18; }).length,
    cols: cols.map(function(c){ var r = c.getBoundingClientRect(); return {w: r.width, verdict: c.querySelector('.col-verdict').textContent}; }),
    cellWidths: [].slice.call(rows[0].querySelectorAll('td')).map(function(td){ return td.getBoundingClientRect().width; }),
    found: {x: fr.left + 4, y: fr.top + 3, bg: getComputedStyle(found).backgroundColor},
    clean: {x: cr.left + 4, y: cr.top + 3, bg: getComputedStyle(clean).backgroundColor},
    height: de.scrollHeight
  });
  document.body.appendChild(m);
})();
</script>"""


def _runs(tmp: Path) -> list[Column]:
    """5 run folders (long target spellings) over 40 causes with long summaries: each target
    finds some, the last one fuzzed only the root kind (its cells are mostly "not applicable")."""
    kinds = ["chat", "session", "terminal", "changeset"]
    types = {k: action_types("0.7.0", k) for k in kinds}
    causes = [{"id": f"{i:012x}", "key": ["value", str(i)],
               "summary": f"`chat/someRatherLongActionName{i}` is not applied as the model applies it (what it "
                          f"changes stays as it was) — {'with a long explanation ' * (i % 3)}",
               "witnesses": {"invariants": ["INV-D01", "INV-007"], "actionTypes": [types[kinds[i % 4]][(i // 4) % 8]],
                             "kinds": [kinds[i % 4]], "count": i + 1}} for i in range(CAUSES)]
    cols = []
    for t in range(TARGETS):
        folder = tmp / f"run{t}"
        folder.mkdir()
        mine = [c for i, c in enumerate(causes) if (i + t) % 3 == 0 or i % 7 == 0]
        entries = [{"cause": c, "invariant": "INV-D01.someLongerName", "severity": ["violation", "warning", "divergence"][t % 3],
                    "title": "t", "kind": c["witnesses"]["kinds"][0], "message": "m" * 200, "signature": c["id"],
                    "steps": 3, "reproduced": True} for c in mine]
        fuzzed = ["root"] if t == TARGETS - 1 else kinds
        report = {"format": "ahp-fuzz/report", "formatVersion": 1, "status": "finished", "verdict": "found",
                  "target": f"adapter:/opt/implementations/number-{t}/bin/some-rather-long-adapter-name --with-flags=x,y,z",
                  "profile": "0.7.0-main", "kindsFuzzed": fuzzed, "steps": 1000 * (t + 1), "seed": 1,
                  "announced": {"name": f"implementation {t}", "protocolVersion": "0.7.0"},
                  "findings": entries if t < TARGETS - 1 else entries[:2], "coverage": None,
                  "known": {"INV-022.probe": {"knownIssue": "REDUCERS.md §11 item 14", "kinds": ["chat"], "count": t}}}
        (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
        cols.append(Column(column_name(t + 1, str(report["target"])), folder))
    return cols


def _measure(page: Path, tmp: Path) -> dict[str, Any]:
    measured = tmp / "measured.html"  # the page runs no script: its policy lets this copy run the measuring one
    text = page.read_text(encoding="utf-8").replace("style-src 'unsafe-inline';", "style-src 'unsafe-inline'; script-src 'unsafe-inline';")
    measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = _chromium("--dump-dom", measured.resolve().as_uri(), profile=tmp / "profile-dom").stdout
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


def test_a_5_by_40_matrix_is_readable_at_1400px(tmp_path: Path) -> None:
    out = tmp_path / "matrix"
    doc = build_matrix(_runs(tmp_path), out)
    assert len(doc["targets"]) == TARGETS and len(doc["causes"]) == CAUSES
    for row in doc["causes"]:  # the links a real matrix has (these run folders hold no finding files)
        for col, cell in row["cells"].items():
            if cell["status"] == "found":
                cell.update(finding=f"findings/{col}/inv-d01-chat-{row['id']}.json",
                            fixture=f"fixtures/{col}/ahp-fuzz-inv-d01-chat-{row['id']}.json",
                            replay=f"ahp-fuzz replay {out}/findings/{col}/inv-d01-chat-{row['id']}.json")
    page = write_matrix_html(out, doc)
    m = _measure(page, tmp_path)
    assert m["innerWidth"] == WIDTH, m  # the window size took effect
    assert m["scrollWidth"] <= WIDTH and m["wide"] == [], m["wide"]
    assert m["box"]["scrollWidth"] <= m["box"]["clientWidth"], m["box"]  # no sideways scrolling of the matrix
    assert m["spill"] == [], m["spill"]
    assert m["small"] == [], m["small"]
    assert m["rows"] == CAUSES and m["shownRows"] == CAUSES
    assert len(m["cols"]) == TARGETS and all(c["w"] >= 120 for c in m["cols"]), m["cols"]
    assert all(c["verdict"] for c in m["cols"])
    assert min(m["cellWidths"]) >= 120, m["cellWidths"]
    shot_dir = Path(os.environ.get("AHP_REPORT_SCREENSHOTS") or tmp_path)
    shot_dir.mkdir(parents=True, exist_ok=True)
    shot = shot_dir / "matrix-5x40.png"
    shot.unlink(missing_ok=True)
    tall = int(max(m["found"]["y"], m["clean"]["y"])) + 60  # down to the first cell of each kind, no further
    assert tall < 2400, (m["found"], m["clean"])  # both within the first screens of the page
    _chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{tall}", page.resolve().as_uri(),
              profile=tmp_path / "profile-shot")
    width, height, rows, bpp = png_pixels(shot)
    assert (width, height) == (WIDTH, tall)
    for which in ("found", "clean"):
        x, y = int(m[which]["x"]), int(m[which]["y"])
        pixel = tuple(rows[y][x * bpp: x * bpp + 3])
        assert all(abs(a - b) <= 8 for a, b in zip(pixel, _rgb(m[which]["bg"]), strict=True)), (which, pixel, m[which])
    assert _rgb(m["found"]["bg"]) != _rgb(m["clean"]["bg"])
