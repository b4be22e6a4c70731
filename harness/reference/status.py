"""The SessionStatus bitset (REDUCERS.md §2.5) shared by sessions and chats."""

from __future__ import annotations

from typing import Final

IDLE: Final = 1
ERROR: Final = 2
IN_PROGRESS: Final = 8
INPUT_NEEDED: Final = 24  # bits 3+4: implies InProgress
IS_READ: Final = 32
IS_ARCHIVED: Final = 64

ACTIVITY_MASK: Final = 31  # bits 0-4
INPUT_BIT: Final = 16  # bit 4 alone
ACTIVITIES: Final = frozenset({IDLE, ERROR, IN_PROGRESS, INPUT_NEEDED})


def with_activity(status: int, activity: int) -> int:
    """Clear bits 0-4, then set `activity`; flags and unknown high bits are kept."""
    return (status & ~ACTIVITY_MASK) | activity


def set_flag(status: int, flag: int, on: bool) -> int:
    return status | flag if on else status & ~flag


def activity_of(status: int) -> int:
    return status & ACTIVITY_MASK
