"""`index.html` says only what applies (issue 35): the rerun line reproduces the run (a seed from
the clock included), a live finding without a cause is a missing cause (a command trace's cause is
not recorded yet), and campaign-only tiles show on campaign pages only.

These read the generated HTML (no browser); tests/test_report_html_browser.py renders pages in
headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.report.html import render
from harness.report.html_commands import rerun_command

from .test_report_html_glance import base_report, parse

CAMPAIGN_FIELDS = ("branchPercent", "outcomePairs", "workers", "restarts")


@pytest.mark.parametrize(("command", "rerun"), [
    (["ahp-fuzz", "run", "--budget", "5s"], "ahp-fuzz run --budget 5s --seed 7"),  # the seed came from the clock
    (["ahp-fuzz", "run", "--seed", "7"], "ahp-fuzz run --seed 7"),
    (["ahp-fuzz", "run", "--seed=7"], "ahp-fuzz run --seed=7"),
    (["ahp-fuzz", "campaign", "--minutes", "1"], "ahp-fuzz campaign --minutes 1 --seed 7"),
    (["ahp-fuzz", "commands", "--target", "host:embedded"], "ahp-fuzz commands --target host:embedded --seed 7"),
    (["ahp-fuzz", "report", "--merge", "a", "b"], "ahp-fuzz report --merge a b"),  # takes no seed
])
def test_the_rerun_line_names_the_seed_the_run_used(command: list[str], rerun: str) -> None:
    assert rerun_command(base_report(command=command, seed=7), None) == rerun


def test_a_report_without_a_seed_reruns_as_recorded() -> None:
    assert rerun_command(base_report(command=["ahp-fuzz", "run"], seed=None), None) == "ahp-fuzz run"


def _live_entry(**extra: Any) -> dict[str, Any]:
    return {"invariant": "INV-045", "severity": "violation", "title": "t", "kind": "live", "message": "lost",
            "steps": 3, "signature": "inv-045-live-abc", "reproduced": True, "file": None,
            "replay": "ahp-fuzz replay x.json", **extra}


def test_a_live_finding_without_a_cause_is_a_gap_a_command_trace_is_not_caused_yet(tmp_path: Path) -> None:
    # live findings carry causes (issue 33): one without is a missing cause, not "not recorded yet"
    report = base_report(target="host:embedded", findings=[_live_entry()])
    text = parse(render(report, tmp_path)).text["id=findings"]
    assert "no root cause recorded" in text and "not recorded for live runs" not in text
    report = base_report(target="host:embedded", findings=[_live_entry(kind="commands")])
    assert "causes are not recorded for command traces yet" in parse(render(report, tmp_path)).text["id=findings"]


def test_a_live_finding_with_a_cause_shows_it(tmp_path: Path) -> None:
    cause = {"id": "c-1", "summary": "closed the connection on a null frame", "key": "k", "witnesses": {}}
    page = parse(render(base_report(findings=[_live_entry(cause=cause)]), tmp_path))
    assert page.causes[0]["id"] == "c-1" and "closed the connection" in page.text["id=findings"]
    assert "not recorded" not in page.text["id=findings"]


def test_a_run_page_has_no_campaign_tiles(tmp_path: Path) -> None:
    html = render(base_report(), tmp_path)
    for field in CAMPAIGN_FIELDS:
        assert f'data-field="{field}"' not in html, field
    assert 'id="chart-coverage"' not in html and 'id="chart-pairs"' not in html
    assert 'data-field="steps"' in html and 'id="chart-steps"' in html


def test_a_campaign_page_has_them(tmp_path: Path) -> None:
    report = base_report(mode="campaign", branchCoverage={"percentBranches": 60.0}, outcomes={"distinctPairs": 300},
                         campaign={"workers": 2, "restarts": 0})
    html = render(report, tmp_path)
    for field in CAMPAIGN_FIELDS:
        assert f'data-field="{field}"' in html, field
    assert 'id="chart-coverage"' in html and 'id="chart-pairs"' in html


def test_a_run_page_renders_its_tiles_and_charts_in_chromium(tmp_path: Path) -> None:
    """In a real browser: the page's script runs to the end on a run page without the campaign
    tiles (it fills what is there), and draws only the run's charts."""
    from .test_report_html_browser import CHROMIUM, measure

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
    from harness.report.html import write_html

    run = tmp_path / "run"
    run.mkdir()
    m = measure(write_html(run, base_report()), tmp_path)
    assert m["rendered"] == "true"
    assert sorted(c["id"] for c in m["charts"]) == ["chart-findings", "chart-steps"]
