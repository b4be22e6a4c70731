"""The console consumer: progress for people watching, results for people (and logs) reading.

* stderr: the run's configuration, a progress line every `every_s` seconds, notices, each known
  upstream issue the first time it fires, and "shrinking …" when a failure was caught;
* stdout: each finding as it is confirmed, led by its root cause, and the closing verdict
  followed by one line per cause: what the target did, who witnessed it, the replay command
  (the command line adds the report path after it).

Data (targets, messages, invariant titles) is never read as rich markup, and lines are never
wrapped by the console (`soft_wrap`): a log keeps each line whole whatever the terminal width.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from harness.corpus.finding import Finding
from harness.engine.events import (
    Event,
    FindingFound,
    KnownSeen,
    Notice,
    Progress,
    RunFinished,
    RunStarted,
    Shrinking,
)

from .writers import describe_witnesses


def make_console(*, stderr: bool) -> Console:
    """A console that prints data as it is: no markup, no highlighting, no hard wrapping."""
    return Console(stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=True)


#: The width a table is laid out in when stdout is not a terminal: wide enough for any row on
#: one line (a table is only as wide as its content needs).
UNWRAPPED_WIDTH = 10_000


def table_console(*, min_width: int = 0) -> Console:
    """A console for a table on stdout: on a terminal, the terminal's width (at least
    `min_width`); piped or redirected, no wrapping at all — every row on one line, so that
    `ahp-fuzz invariants | grep INV-007` finds whole rows."""
    probe = Console()
    if not probe.is_terminal:
        return Console(width=UNWRAPPED_WIDTH)
    return Console(width=max(min_width, probe.width)) if min_width else probe


class ConsoleReporter:
    def __init__(
        self,
        console: Console | None = None,
        *,
        out: Console | None = None,
        every_s: float = 5.0,
        quiet: bool = False,
        replay_for: Callable[[Finding], str] | None = None,
    ):
        self.console = console or make_console(stderr=True)  # progress
        self.out = out or make_console(stderr=False)  # results
        self.every_s = every_s
        self.quiet = quiet
        #: The replay command of a saved finding (the command line knows where it was saved).
        self.replay_for = replay_for or (lambda f: f.replay_command())
        self._last = time.monotonic()

    def __call__(self, event: Event) -> None:
        err, out = self.console, self.out
        if isinstance(event, RunStarted):
            budget = f"{event.budget_s:g}s" if event.budget_s is not None else "fixed"
            # A live host: the version spoken to it, once (the profile was only the first offer).
            spoken = f"profile {event.profile}"
            if event.speaking and event.speaking == event.profile.split("-")[0]:
                spoken += f" (speaking {event.speaking})"
            elif event.speaking:
                spoken = f"speaking {event.speaking}"
            err.print(
                f"ahp-fuzz run: target {event.target}, {spoken}, "
                f"seed {event.seed}, budget {budget}, kinds {', '.join(event.kinds)}",
                markup=False,
            )
        elif isinstance(event, Progress):
            now = time.monotonic()
            if not self.quiet and now - self._last >= self.every_s:
                self._last = now
                rate = event.steps / event.elapsed_s if event.elapsed_s else 0.0
                err.print(
                    f"  {event.elapsed_s:6.1f}s  {event.examples} runs  {event.steps} steps "
                    f"({rate:,.0f}/s)  findings {event.findings}  known {event.known}",
                    markup=False,
                )
        elif isinstance(event, Notice):
            if event.headline:
                out.print(Text(f"note: {event.message}"))
            err.print(Text(f"  note: {event.message}", style="yellow"))
        elif isinstance(event, Shrinking):
            if not self.quiet:
                err.print(
                    f"  caught {event.invariant} on {event.kind} after {event.steps} steps; shrinking…",
                    markup=False,
                )
        elif isinstance(event, FindingFound):
            f = event.finding
            line = Text()
            line.append("FINDING", style="bold red")
            line.append(f" {f.invariant} [{f.severity}] on {where(f)} after {f.failing_step + 1} steps (")
            if event.reproduced:
                line.append("reproduced")
            elif f.extra.get("confirmed") is False:
                line.append("not replayed: the run ended first", style="yellow")
            else:
                line.append("did not reproduce on replay", style="yellow")
            line.append(")")
            out.print(line)
            if f.cause is not None:  # what the target did, before what the check said
                out.print(Text(f"    cause: {f.cause.get('summary', '')}"))
            out.print(Text(f"    {f.message}"))
        elif isinstance(event, KnownSeen):
            if not self.quiet:
                err.print(
                    f"  known: {event.invariant} on {event.kind} ({event.known_issue or 'upstream issue'})",
                    markup=False,
                )
        elif isinstance(event, RunFinished):
            rate = event.steps / event.elapsed_s if event.elapsed_s else 0.0
            known = sum(event.known_counts.values())
            line = Text()
            if event.status == "interrupted":
                line.append(f"interrupted ({event.stopped_because})", style="yellow")
            elif event.status == "error":
                line.append("internal error", style="bold red")
            elif event.findings:
                line.append("FOUND", style="red")
            elif not event.steps:  # nothing was tested: never "clean" (the command line says why)
                line.append("untested", style="yellow")
            else:
                line.append("clean", style="green")
            line.append(
                f": {len(event.findings)} finding(s), {known} known-issue hit(s) in "
                f"{event.examples} runs / {event.steps} steps, {event.elapsed_s:.1f}s ({rate:,.0f} steps/s); "
                f"stopped: {event.stopped_because}"
            )
            out.print(line)
            for f in by_severity(list(event.findings)):
                out.print(Text(cause_line(f, self.replay_for(f))))
            if event.error:
                err.print(f"  {event.error}", markup=False)


def where(f: Finding) -> str:
    """What a finding is on: its kind, and for a command finding the command that failed."""
    steps = getattr(f, "steps", None)
    method = getattr(steps[f.failing_step], "method", None) if steps and 0 <= f.failing_step < len(steps) else None
    return f"{method} ({f.kind})" if isinstance(method, str) else f.kind


SEVERITY_ORDER = {"violation": 0, "divergence": 1, "warning": 2}


def by_severity(findings: list[Finding]) -> list[Finding]:
    """Violations first, then divergences, then warnings (stable within each)."""
    return sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 0))


def cause_line(f: Finding, replay: str) -> str:
    """One line per finding of a finished run: the cause, its witnesses, the replay command."""
    if f.cause is None:
        return f"  {f.invariant} [{f.severity}] on {where(f)}: {' '.join(f.message.split())[:120]} | replay: {replay}"
    w = f.cause.get("witnesses") or {}
    return f"  cause {f.cause.get('id')}: {f.cause.get('summary')} | {describe_witnesses(w)} | replay: {replay}"
