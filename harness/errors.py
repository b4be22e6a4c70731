"""Error types every layer may raise and the command line turns into exit codes.

Kept apart from `harness.cli` so that the engine, the strategies and the targets can signal a
usage or setup problem without importing the command line (imports flow one way).
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad arguments or environment: printed without a traceback, exit status 2."""
