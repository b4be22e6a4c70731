"""The console consumer: a progress line on long runs, each finding as it is confirmed, and a
closing summary."""

from __future__ import annotations

import sys
import time

from rich.console import Console

from harness.engine.events import Event, FindingFound, KnownSeen, Progress, RunFinished, RunStarted


class ConsoleReporter:
    def __init__(self, console: Console | None = None, *, every_s: float = 5.0, quiet: bool = False):
        self.console = console or Console(stderr=True, highlight=False)
        self.every_s = every_s
        self.quiet = quiet
        self._last = 0.0

    def __call__(self, event: Event) -> None:
        c = self.console
        if isinstance(event, RunStarted):
            budget = f"{event.budget_s:g}s" if event.budget_s is not None else "fixed"
            c.print(
                f"ahp-fuzz run: target [b]{event.target}[/b], profile {event.profile}, "
                f"seed {event.seed}, budget {budget}, kinds {', '.join(event.kinds)}"
            )
        elif isinstance(event, Progress):
            now = time.monotonic()
            if not self.quiet and now - self._last >= self.every_s:
                self._last = now
                rate = event.steps / event.elapsed_s if event.elapsed_s else 0.0
                c.print(
                    f"  {event.elapsed_s:6.1f}s  {event.examples} runs  {event.steps} steps "
                    f"({rate:,.0f}/s)  findings {event.findings}  known {event.known}"
                )
        elif isinstance(event, FindingFound):
            f = event.finding
            state = "reproduced" if event.reproduced else "[yellow]did not reproduce on replay[/yellow]"
            c.print(
                f"[red]FINDING[/red] {f.invariant} [{f.severity}] on {f.kind} after "
                f"{f.failing_step + 1} steps ({state})"
            )
            c.print(f"    {f.message}", markup=False)
        elif isinstance(event, KnownSeen):
            if not self.quiet:
                c.print(
                    f"  known: {event.invariant} on {event.kind} ({event.known_issue or 'upstream issue'})",
                    markup=False,
                )
        elif isinstance(event, RunFinished):
            rate = event.steps / event.elapsed_s if event.elapsed_s else 0.0
            known = sum(event.known_counts.values())
            verdict = "[red]FOUND[/red]" if event.findings else "[green]clean[/green]"
            c.print(
                f"{verdict}: {len(event.findings)} finding(s), {known} known-issue hit(s) in "
                f"{event.examples} runs / {event.steps} steps, {event.elapsed_s:.1f}s ({rate:,.0f} steps/s); "
                f"stopped: {event.stopped_because}"
            )
        sys.stderr.flush()
