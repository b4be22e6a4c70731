"""Reports: report.json against its schema, junit.xml, the self-contained index.html opened in a
real headless browser (numbers checked against report.json), `ahp-fuzz report` rebuild and merge."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.cli import main
from harness.corpus.finding import Finding, TraceStep
from harness.reference import Model, Profile
from harness.report.html import write_html

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)"
)


def validate(report: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


def render_dom(html_file: Path, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--disable-sync", f"--user-data-dir={profile}",
           "--dump-dom", html_file.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """The bits of the rendered DOM the tests read: fields, matrix rows, charts, findings."""

    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str] = {}
        self.fields: dict[str, str] = {}
        self.matrix_rows: list[str] = []
        self.charts: list[int] = []
        self.findings: list[str] = []
        self.invariant_rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.body = a
        if "data-field" in a:
            self.fields[a["data-field"]] = a.get("data-value", "")
        if tag == "tr" and "data-type" in a:
            self.matrix_rows.append(a["data-type"])
        if tag == "svg" and "data-points" in a:
            self.charts.append(int(a["data-points"]))
        if tag == "div" and a.get("class") == "finding":
            self.findings.append(a.get("data-signature", ""))
        if tag == "tr" and "data-invariant" in a:
            self.invariant_rows += 1


def parse(dom_text: str) -> Dom:
    d = Dom()
    d.feed(dom_text)
    return d


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("campaign") / "run"
    cmd = [sys.executable, "-m", "harness.cli", "campaign", "--minutes", "0.25", "--workers", "1", "--seed", "2", "--chunk", "5",
           "--out", str(out), "--quiet"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(out / "index.html")  # results on stdout, the page last
    return out


def test_campaign_writes_three_formats(campaign_dir: Path) -> None:
    report = json.loads((campaign_dir / "report.json").read_text())
    validate(report)
    assert report["mode"] == "campaign" and report["status"] == "finished" and report["steps"] > 0
    assert report["branchCoverage"]["numBranches"] > 0 and report["outcomes"]["distinctPairs"] > 0
    assert report["timeline"] and report["timeline"][-1]["steps"] == report["steps"]
    suite = ET.parse(campaign_dir / "junit.xml").getroot()
    assert suite.tag == "testsuite" and suite.get("failures") == "0"
    html = (campaign_dir / "index.html").read_text()
    # self-contained: nothing fetched from anywhere at view time
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html


@needs_chromium
def test_html_renders_in_a_browser_with_the_json_numbers(campaign_dir: Path, tmp_path: Path) -> None:
    report = json.loads((campaign_dir / "report.json").read_text())
    dom = parse(render_dom(campaign_dir / "index.html", tmp_path))
    assert dom.body.get("data-rendered") == "true", "the page script did not run"
    f = dom.fields
    assert int(f["steps"]) == report["steps"]
    assert int(f["examples"]) == report["examples"]
    assert int(f["findings"]) == len(report["findings"]) == 0
    assert float(f["branchPercent"]) == report["branchCoverage"]["percentBranches"]
    assert int(f["outcomePairs"]) == report["outcomes"]["distinctPairs"]
    assert int(f["workers"]) == 1 and f["status"] == "finished"
    assert sorted(dom.matrix_rows) == sorted(report["outcomes"]["types"])
    assert len(dom.charts) == 4 and dom.charts[0] == len(report["timeline"])
    assert dom.invariant_rows > 40  # the whole catalogue, with its spec sources


def _crafted_run(tmp: Path, name: str, signature_suffix: str = "") -> tuple[Path, Finding]:
    """A run folder holding one real finding file (a divergence: the target kept a stale draft)."""
    model = Model(Profile.named("0.7.0"))
    initial = {"turns": [], "status": 0}
    action = {"type": "chat/draftChanged", "draft": {"text": "new" + signature_suffix}}
    expected = model.reduce("chat", initial, action, 2_000)
    finding = Finding(
        invariant="DIVERGENCE", severity="divergence", title="differs from the reference model",
        message="draft not updated", profile="0.7.0", target="adapter:my-impl", kind="chat", initial=initial,
        steps=[TraceStep({"type": "chat/activityChanged", "activity": "x"}, 1_000)] * bool(signature_suffix)
        + [TraceStep(action, 2_000)],
        failing_step=int(bool(signature_suffix)), expected=expected, observed=initial,
    )
    run = tmp / name
    path = run / "findings" / finding.file_name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(finding.to_json(path)))
    report = {
        "format": "ahp-fuzz/report", "formatVersion": 1, "status": "finished", "target": "adapter:my-impl",
        "profile": "0.7.0", "seed": 3, "elapsedSeconds": 10.0, "examples": 5, "steps": 100, "stepsPerSecond": 10.0,
        "findings": [{"invariant": finding.invariant, "severity": finding.severity, "title": finding.title,
                      "kind": "chat", "message": finding.message, "steps": len(finding.steps),
                      "signature": finding.signature, "reproduced": True, "file": str(path),
                      "replay": finding.replay_command(path), "foundAfterSeconds": 4.0}],
        "known": {}, "coverage": {"chat/draftChanged": {"sent": 10, "changed": 9}},
        "timeline": [{"t": 0, "steps": 0, "findings": 0}, {"t": 10.0, "steps": 100, "findings": 1}],
    }
    (run / "report.json").write_text(json.dumps(report))
    return run, finding


@needs_chromium
def test_finding_shows_trace_diff_and_replay(tmp_path: Path) -> None:
    run, finding = _crafted_run(tmp_path, "a")
    write_html(run)
    text = render_dom(run / "index.html", tmp_path)
    dom = parse(text)
    assert dom.body.get("data-rendered") == "true"
    assert dom.findings == [finding.signature]
    assert finding.replay_command(run / "findings" / finding.file_name) in text
    assert "$.draft" in text  # the state diff names the field the target failed to change
    assert "chat/draftChanged" in text


def test_report_command_rebuilds_and_merges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, fa = _crafted_run(tmp_path, "a")
    b, _ = _crafted_run(tmp_path, "b")  # the same finding again (same signature)
    c, fc = _crafted_run(tmp_path, "c", signature_suffix="!")  # a different one
    assert main(["report", str(a)]) == 0
    assert (a / "index.html").is_file()
    out = tmp_path / "merged"
    assert main(["report", "--merge", str(a), str(b), str(c), "--out", str(out)]) == 0
    merged = json.loads((out / "report.json").read_text())
    validate(merged)
    assert sorted(f["signature"] for f in merged["findings"]) == sorted({fa.signature, fc.signature})
    assert merged["merge"]["duplicateFindings"] == 1
    assert merged["steps"] == 300 and merged["coverage"]["chat/draftChanged"] == {"sent": 30, "changed": 27}
    assert len(list((out / "findings").glob("*.json"))) == 2
    assert ET.parse(out / "junit.xml").getroot().get("failures") == "2"
    assert (out / "index.html").is_file()
    assert f"report: {out / 'index.html'}" in capsys.readouterr().out  # results on stdout


def test_report_command_calls_out_a_run_that_died(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report.json still "running" whose process is gone was left by a run that died without
    warning (kill -9, out of memory): `ahp-fuzz report` says so instead of passing it as done."""
    run, _ = _crafted_run(tmp_path, "died")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    data = json.loads((run / "report.json").read_text())
    data.update(status="running", pid=int(gone.stdout))
    data.pop("host", None)
    (run / "report.json").write_text(json.dumps(data))
    assert main(["report", str(run)]) == 0
    err = capsys.readouterr().err
    assert "died without finishing" in err
    data["status"] = "finished"
    (run / "report.json").write_text(json.dumps(data))
    assert main(["report", str(run)]) == 0
    assert "died" not in capsys.readouterr().err


def test_report_command_usage_errors(tmp_path: Path) -> None:
    assert main(["report"]) == 2
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert main(["report", "--merge", str(tmp_path)]) == 2  # no --out
    (tmp_path / "report.json").write_text('{"format": "something else"}')
    assert main(["report", str(tmp_path)]) == 2
    (tmp_path / "report.json").write_text("not json")
    assert main(["report", "--merge", str(tmp_path), "--out", str(tmp_path / "o")]) == 2


@needs_chromium
def test_run_folders_get_an_html_report_too(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "harness.cli", "run", "--budget", "600s", "--chunks", "1", "--seed", "1",
           "--out", str(out), "--quiet"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    validate(report)
    dom = parse(render_dom(out / "index.html", tmp_path))
    assert dom.body.get("data-rendered") == "true"
    assert int(dom.fields["steps"]) == report["steps"]
    assert sorted(dom.matrix_rows) == sorted(report["coverage"])  # per-type sent/changed when no matrix


@needs_chromium
def test_a_real_campaign_page_fits_1400px_with_its_banner(campaign_dir: Path, tmp_path: Path) -> None:
    """The page of a real campaign (a clean one), at the 1400 px the issue measured it at."""
    from tests.test_report_html_browser import WIDTH, measure

    m = measure(campaign_dir / "index.html", tmp_path)
    assert m["innerWidth"] == WIDTH and m["rendered"] == "true"
    assert m["scrollWidth"] <= WIDTH and m["wide"] == [], m["wide"]
    assert m["banner"]["verdict"] == "clean" and m["banner"]["text"].startswith("clean")
    assert all(c["ymin"] == "0" for c in m["charts"]), m["charts"]
