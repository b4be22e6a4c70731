"""The verdict lists findings violations first, then divergences, then warnings (issue 23: a
maintainer reads the serious ones first), each on one line whatever newlines its message holds."""

from __future__ import annotations

import io

from rich.console import Console

from harness.corpus.finding import Finding
from harness.engine.events import RunFinished
from harness.report.console import ConsoleReporter, by_severity, cause_line


def _finding(inv: str, severity: str, message: str = "m") -> Finding:
    return Finding(invariant=inv, severity=severity, title=inv, message=message, profile="0.7.0", target="t",
                   kind="session", initial={}, steps=[], failing_step=0)


def test_violations_come_before_divergences_and_warnings() -> None:
    found = [_finding("W", "warning"), _finding("V1", "violation"), _finding("D", "divergence"),
             _finding("V2", "violation")]
    assert [f.invariant for f in by_severity(found)] == ["V1", "V2", "D", "W"]
    buf = io.StringIO()
    reporter = ConsoleReporter(Console(file=io.StringIO()), out=Console(file=buf, width=10_000))
    reporter(RunFinished(1.0, 1, 1, found, {}))
    lines = [line.split()[0] for line in buf.getvalue().splitlines()[1:]]
    assert lines == ["V1", "V2", "D", "W"]


def test_a_cause_line_is_one_line() -> None:
    line = cause_line(_finding("ST-X", "warning", "first\n\nsecond line"), "ahp-fuzz replay /abs/f.json")
    assert "\n" not in line and "first second line" in line
