"""`ahp-fuzz commands` says what it covered (issue 33): per method, the examples sent and the
answers seen, in report.json (`commandCoverage`) and the HTML; every method is sent once before
any is sent twice, and one never sent is named with why. Bounded by rounds and examples."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.bridge import fuzz
from harness.bridge.fuzz import CommandRun, CommandRunConfig, CommandRunResult
from harness.cli import main
from harness.report.html import render

METHODS = ("ping", "listSessions", "createSession", "fetchTurns")


def test_every_method_is_sent_once_before_any_twice_and_its_answers_are_counted(spec_dir: Any) -> None:
    run = CommandRun(CommandRunConfig(target="host:embedded", spec=spec_dir, seed=3, budget_s=120, methods=METHODS,
                                      examples=3, phases=("positive",), operation_cap_s=None, max_rounds=1,
                                      verify=False))
    result = run.run()
    sent = [e.method for e in run.session.app.exchanges if e.method in METHODS]
    assert sorted(sent[:len(METHODS)]) == sorted(METHODS)  # the first pass: each once
    cov = result.coverage_json()
    assert sorted(cov) == sorted(METHODS)
    for method, c in cov.items():
        assert c["sent"] == result.method_calls[method] >= 2, method
        assert c["results"] + sum(c["errors"].values()) + sum(c["unanswered"].values()) == c["sent"], method
        assert "notTried" not in c
    assert cov["ping"]["results"] == cov["ping"]["sent"]  # the embedded host answers every ping


def test_a_method_never_sent_is_named_with_why() -> None:
    result = CommandRunResult(methods=("ping", "createTerminal"), method_calls={"ping": 2},
                              answers={"ping": {"result": 1, "error -32602": 1}},
                              untried={"createTerminal": "the run stopped (budget) before it was sent"})
    cov = result.coverage_json()
    assert cov["ping"] == {"sent": 2, "results": 1, "errors": {"-32602": 1}, "unanswered": {}}
    assert cov["createTerminal"]["sent"] == 0 and "budget" in cov["createTerminal"]["notTried"]


def test_what_the_bridge_answered_itself_is_not_counted_as_sent() -> None:
    # issue 33, the ahpx mock: ~20 % of the examples per method were bodies the bridge refused
    # (not JSON) or fenced — counted as sent and "lost", though the host never saw them
    result = CommandRunResult(methods=("resourceWrite",), method_calls={"resourceWrite": 10},
                              answers={"resourceWrite": {"error -32601": 5, "refused": 3, "fenced": 2}})
    cov = result.coverage_json()["resourceWrite"]
    assert cov == {"sent": 5, "results": 0, "errors": {"-32601": 5}, "unanswered": {},
                   "notSent": {"fenced": 2, "refused": 3}}
    page = render({"commandCoverage": result.coverage_json()}, Path("."))
    assert "not sent, refused by the bridge: 3" in page


def test_report_json_and_the_page_carry_the_coverage(spec_dir: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    real = fuzz.run_commands  # one round, no time caps: bounded by what it draws, not by the clock
    monkeypatch.setattr(fuzz, "run_commands", lambda config, emit=None: real(
        dataclasses.replace(config, max_rounds=1, operation_cap_s=None), emit))
    out = tmp_path / "c"
    code = main(["commands", "--target", "host:embedded", "--spec", str(spec_dir.path), "--methods", "ping,listSessions",
                 "--examples", "2", "--no-stateful", "--no-negative", "--seed", "1", "--budget", "600s",
                 "--quiet", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    cov = report["commandCoverage"]
    assert set(cov) == {"ping", "listSessions"} and all(c["sent"] >= 1 for c in cov.values())
    page = render(report, out)
    assert "Commands: 2 of 2 method(s) tried" in page and 'data-method="listSessions"' in page
    untried = render({**report, "commandCoverage": {**cov, "createTerminal": {
        "sent": 0, "results": 0, "errors": {}, "unanswered": {}, "notTried": "the run stopped (budget) before it was sent"}}},
        out)
    assert "Commands: 2 of 3 method(s) tried" in untried and "the run stopped (budget) before it was sent" in untried
