"""Error types every layer may raise and the command line turns into exit codes.

Kept apart from `harness.cli` so that the engine, the strategies and the targets can signal a
usage or setup problem without importing the command line (imports flow one way).

Exit codes (harness/cli/__init__.py): 0 clean, 1 something was found, 2 usage or setup error
(`UsageError`), 3 internal error (a bug in ahp-fuzz: short message, traceback saved to a file),
130 / 143 interrupted by SIGINT / SIGTERM (the report is finalized as `"interrupted"`).
"""

from __future__ import annotations

EXIT_CLEAN = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class UsageError(Exception):
    """Bad arguments or environment: printed without a traceback, exit status 2."""


class RunStopped(KeyboardInterrupt):
    """The run must end now: its wall-clock budget ran out, or a signal asked it to stop.

    A `KeyboardInterrupt` so that no `except Exception` mistakes it for a failure of the code
    under test, and so that Hypothesis lets it through untouched (it neither records nor
    replays an interrupted test case). `reason` is `"budget"` or the signal's name (`"SIGINT"`,
    `"SIGTERM"`). Catch it before any `except KeyboardInterrupt`.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def interrupted(self) -> bool:
        """True when a signal (not the budget) ended the run."""
        return self.reason != "budget"
