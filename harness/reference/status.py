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


def bits(status: int | float) -> int:
    """The bitset as an int. JSON Schema's `integer` admits integral floats (8.0), which the
    codec keeps as floats; the TypeScript reducers treat them as numbers, so the model does too.
    A non-integral value is not a bitset and raises TypeError (a malformed state)."""
    if isinstance(status, float):
        if not status.is_integer():
            raise TypeError(f"status {status!r} is not an integer")
        return int(status)
    return status


def with_activity(status: int | float, activity: int) -> int:
    """Clear bits 0-4, then set `activity`; flags and unknown high bits are kept."""
    return (bits(status) & ~ACTIVITY_MASK) | activity


def set_flag(status: int | float, flag: int, on: bool) -> int:
    return bits(status) | flag if on else bits(status) & ~flag


def activity_of(status: int | float) -> int:
    return bits(status) & ACTIVITY_MASK
