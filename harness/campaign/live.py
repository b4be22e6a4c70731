"""The campaign's progress display: a rich `Live` table on a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from .supervisor import CampaignState


def _line(st: CampaignState) -> dict[str, Any]:
    el = st.elapsed
    pairs = len({(t, o) for (_, t, o) in st.matrix().counts})
    return {
        "elapsed": el,
        "steps": st.steps,
        "rate": st.steps / el if el else 0.0,
        "findings": len(st.findings),
        "branches": f"{st.branches['percentBranches']:.1f}%" if st.branches else "–",
        "pairs": pairs,
        "alive": sum(1 for s in st.slots if s.proc is not None and not s.done),
        "restarts": st.restarts,
    }


class Display:
    """Call `update(state)` as often as you like; it redraws at most every `every_s`."""

    def __init__(self, console: Console | None = None, *, every_s: float | None = None, quiet: bool = False) -> None:
        self.console = console or Console(
            stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True
        )
        self.live_mode = self.console.is_terminal and not quiet
        self.quiet = quiet
        self.every_s = every_s if every_s is not None else (0.5 if self.live_mode else 10.0)
        self._last = 0.0
        self._live: Live | None = None

    def __enter__(self) -> Display:
        if self.live_mode:
            self._live = Live(console=self.console, auto_refresh=False, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def update(self, st: CampaignState, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every_s:
            return
        self._last = now
        d = _line(st)
        if self._live is not None:
            table = Table(title="ahp-fuzz campaign", show_header=True, header_style="bold")
            for col in ("elapsed", "steps", "steps/s", "findings", "branch coverage", "(type, outcome) pairs",
                        "workers", "restarts"):
                table.add_column(col, justify="right")
            table.add_row(f"{d['elapsed']:.0f}s", f"{d['steps']:,}", f"{d['rate']:,.0f}", str(d["findings"]),
                          d["branches"], str(d["pairs"]), str(d["alive"]), str(d["restarts"]))
            self._live.update(table, refresh=True)
        elif not self.quiet:
            self.console.print(
                f"  {d['elapsed']:6.0f}s  {d['steps']:,} steps ({d['rate']:,.0f}/s)  findings {d['findings']}  "
                f"branches {d['branches']}  outcome pairs {d['pairs']}  workers {d['alive']}  restarts {d['restarts']}",
                markup=False,
            )
