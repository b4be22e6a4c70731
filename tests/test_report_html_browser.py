"""`index.html` in real headless Chromium at a 1400 px window (issue 18): the verdict banner is at
the top and in the screenshot, nothing overflows the page horizontally (the action × outcome
matrix scrolls in its own box), and every chart's y-axis starts at 0.

How: the page is copied with one extra inline script at its end that measures the laid-out page
and writes the figures into the DOM; `chromium --dump-dom` prints that DOM. A second Chromium run
takes a screenshot, decoded here (PNG, zlib only) to check the banner's colour where the
measurement says the banner is. Set `AHP_REPORT_SCREENSHOTS=DIR` to keep the screenshots."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from harness.corpus.finding import Finding, TraceStep
from harness.reference import Model, Profile
from harness.report.html import write_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)"
)
WIDTH, HEIGHT = 1400, 900

#: Runs after the page's own script; writes what the test checks into <pre id="measure">.
MEASURE = """<script>
(function(){
  var de = document.documentElement, vw = de.clientWidth, b = document.getElementById('verdict');
  var r = b ? b.getBoundingClientRect() : null, wide = [];
  document.querySelectorAll('body *').forEach(function(el){
    if (el.closest('.matrix-box') && !el.classList.contains('matrix-box')) return;
    var e = el.getBoundingClientRect();
    if (e.width && e.right > vw + 0.5) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + el.className);
  });
  var box = document.querySelector('.matrix-box'), charts = [];
  document.querySelectorAll('svg[data-points]').forEach(function(s){
    var p = s.querySelector('path');
    charts.push({id: s.parentNode.id, ymin: s.getAttribute('data-ymin'), ymax: s.getAttribute('data-ymax'),
                 d: p ? p.getAttribute('d') : null, height: +s.getAttribute('height')});
  });
  var m = document.createElement('pre'); m.id = 'measure';
  m.textContent = JSON.stringify({
    innerWidth: window.innerWidth, clientWidth: vw, scrollWidth: de.scrollWidth, bodyScrollWidth: document.body.scrollWidth,
    rendered: document.body.getAttribute('data-rendered'), wide: wide.slice(0, 20),
    banner: r && {top: r.top, left: r.left, width: r.width, height: r.height, text: b.innerText,
                  verdict: b.getAttribute('data-verdict'), background: getComputedStyle(b).backgroundColor},
    matrix: box && {clientWidth: box.clientWidth, scrollWidth: box.scrollWidth, right: box.getBoundingClientRect().right},
    charts: charts
  });
  document.body.appendChild(m);
})();
</script>"""


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--disable-sync", f"--user-data-dir={profile}",
           f"--window-size={WIDTH},{HEIGHT}", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def measure(index: Path, tmp_path: Path) -> dict[str, Any]:
    page = tmp_path / "measured.html"  # the page is self-contained: it renders anywhere
    page.write_text(index.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = _chromium("--dump-dom", page.resolve().as_uri(), profile=tmp_path / "profile-dom").stdout
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text)


def screenshot(index: Path, tmp_path: Path, name: str) -> Path:
    keep = os.environ.get("AHP_REPORT_SCREENSHOTS")
    out = (Path(keep) if keep else tmp_path) / f"{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    _chromium(f"--screenshot={out}", index.resolve().as_uri(), profile=tmp_path / "profile-shot")
    assert out.is_file(), "chromium wrote no screenshot"
    return out


def png_pixels(path: Path) -> tuple[int, int, list[bytes], int]:
    """Width, height, unfiltered rows and bytes per pixel of an 8-bit RGB(A) PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, up_left = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def _wide_run(tmp: Path, *, status: str = "finished") -> Path:
    """A run folder built to stress the layout: a long target, a finding with long unbroken
    strings, many outcome columns, long action type names, known issues, branch coverage, and
    a coverage timeline that starts at 52.6 %."""
    model = Model(Profile.named("0.7.0"))
    initial = {"turns": [], "status": 0}
    action = {"type": "chat/draftChanged", "draft": {"text": "x" * 400}}
    finding = Finding(
        invariant="DIVERGENCE", severity="divergence", title="differs from the reference model",
        message="draft not updated: " + "y" * 300, profile="0.7.0", target="adapter:my-impl", kind="chat",
        initial=initial, steps=[TraceStep(action, 2_000)], failing_step=0,
        expected=model.reduce("chat", initial, action, 2_000), observed=initial,
    )
    run = tmp / ("a-deeply-nested-folder-name-" * 4) / "run"
    path = run / "findings" / finding.file_name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(finding.to_json(path)))
    outcomes = ["applied", "rejected"] + [f"no-op: unknown {f}" for f in
                                          ("toolCallId", "partId", "requestId", "resource", "directory", "uri",
                                           "questionId", "turnId", "entryId", "clientId")] + \
               ["no-op: guard", "no-op: same value", "no-op: status guard", "no-op: stale turn", "no-op: no active turn"]
    types = {f"session/someVeryLongActionTypeNameNumber{i}Changed": {
        "kinds": ["session"], "steps": 100 + i, "outcomes": {o: (i * 7 + j) % 5 for j, o in enumerate(outcomes)},
        "invariants": ["INV-001", "INV-007"]} for i in range(30)}
    files = {f"harness/reference/{name}.py": {"numBranches": 10, "coveredBranches": c, "percentBranches": c * 10.0,
                                              "missingBranches": [[i, i + 1] for i in range(10, 60)], "missingLines": []}
             for name, c in (("annotations", 0), ("codec", 0), ("turns", 10), ("tool_calls", 7))}
    report = {
        "format": "ahp-fuzz/report", "formatVersion": 1, "mode": "campaign", "status": status,
        "stoppedBecause": "budget" if status == "finished" else "SIGINT",
        "target": "adapter:" + "/opt/some/really/long/path/to/an/adapter/binary" * 3 + " --flag",
        "command": ["ahp-fuzz", "campaign", "--target", "adapter:" + "z" * 200, "--out", str(run)],
        "profile": "0.7.0", "seed": 3, "elapsedSeconds": 60.0, "examples": 50, "steps": 3000,
        "stepsPerSecond": 50.0, "kinds": ["chat", "session"],
        "findings": [{"invariant": finding.invariant, "severity": finding.severity, "title": finding.title,
                      "kind": "chat", "message": finding.message, "steps": 1, "signature": finding.signature,
                      "reproduced": True, "file": str(path), "replay": finding.replay_command(path),
                      "cause": {"id": "abcdefabcdef", "summary": "the target ignores chat/draftChanged " + "w" * 150,
                                "witnesses": {"invariants": ["DIVERGENCE"], "actionTypes": ["chat/draftChanged"],
                                              "kinds": ["chat"], "count": 3}}}],
        "known": {"INV-022.probe": {"knownIssue": "REDUCERS.md §11 item 14 (turnStarted over an active turn discards it)",
                                    "kinds": ["chat"], "example": "e" * 300, "count": 5}},
        "coverage": {},
        "branchCoverage": {"percentBranches": 60.0, "coveredBranches": 17, "numBranches": 40, "percentCovered": 60.0,
                           "files": files},
        "outcomes": {"types": types, "distinctPairs": 300, "distinctOutcomes": outcomes, "invariantSteps": {}},
        "timeline": [{"t": 5.0, "steps": 300, "findings": 0, "branchPercent": 52.6, "outcomePairs": 80},
                     {"t": 30.0, "steps": 1500, "findings": 1, "branchPercent": 58.0, "outcomePairs": 200},
                     {"t": 60.0, "steps": 3000, "findings": 1, "branchPercent": 60.0, "outcomePairs": 300}],
        "campaign": {"workers": 2, "restarts": 0},
    }
    (run / "report.json").write_text(json.dumps(report))
    write_html(run)
    return run


@pytest.mark.parametrize("status", ["finished", "interrupted"])
def test_report_fits_1400px_with_the_banner_on_top(tmp_path: Path, status: str) -> None:
    run = _wide_run(tmp_path, status=status)
    m = measure(run / "index.html", tmp_path)
    assert m["rendered"] == "true", "the page script did not run"
    assert m["innerWidth"] == WIDTH, m  # the window size took effect: the check below means something
    assert m["scrollWidth"] <= WIDTH and m["bodyScrollWidth"] <= WIDTH, m["wide"]
    assert m["wide"] == [], m["wide"]
    # the matrix is wider than its box, and scrolls inside it
    assert m["matrix"]["right"] <= WIDTH
    banner = m["banner"]
    assert banner["verdict"] == ("findings" if status == "finished" else "interrupted")
    assert banner["text"].startswith("1 finding" if status == "finished" else "interrupted — 1 finding so far")
    assert 0 <= banner["top"] < 200 and banner["height"] > 40  # at the top, in the first screen


def test_every_chart_starts_at_zero(tmp_path: Path) -> None:
    """The coverage chart started at its lowest sample (52.6); now 0, and percentages end at 100."""
    m = measure(_wide_run(tmp_path) / "index.html", tmp_path)
    charts = {c["id"]: c for c in m["charts"]}
    assert set(charts) == {"chart-steps", "chart-findings", "chart-coverage", "chart-pairs"}
    assert all(c["ymin"] == "0" for c in charts.values()), charts
    cov = charts["chart-coverage"]
    assert cov["ymax"] == "100"
    ys = [float(y) for y in re.findall(r"[ML][\d.]+ ([\d.]+)", cov["d"])]
    # 52.6 % is drawn a little above the middle of the plot, not on its floor
    bottom, top = cov["height"] - 40, 24
    assert ys[0] == pytest.approx(bottom - (bottom - top) * 0.526, abs=0.2)


def test_screenshot_shows_the_banner(tmp_path: Path) -> None:
    run = _wide_run(tmp_path)
    m = measure(run / "index.html", tmp_path)
    shot = screenshot(run / "index.html", tmp_path, "report-1400")
    width, height, rows, bpp = png_pixels(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    want = tuple(int(v) for v in re.findall(r"\d+", m["banner"]["background"])[:3])
    assert want != (255, 255, 255), "the banner has a colour of its own"
    b = m["banner"]
    # a strip inside the banner, right of its text: the banner's colour, in the screenshot
    y = int(b["top"] + b["height"] - 6)
    xs = range(int(b["left"] + b["width"] - 60), int(b["left"] + b["width"] - 10))
    seen = [tuple(rows[y][x * bpp:x * bpp + 3]) for x in xs]
    assert all(max(abs(p - q) for p, q in zip(px, want, strict=True)) <= 3 for px in seen), (want, seen[:3])
    # and above the banner, the page's white
    above = int(b["top"]) - 3
    assert above < 0 or tuple(rows[above][int(b["left"] + 20) * bpp:][:3]) == (255, 255, 255)
