"""Helpers shared by the subcommands: durations, profiles and targets as usage errors."""

from __future__ import annotations

import re
from typing import Any

from harness.errors import UsageError
from harness.reference import Profile

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration(text: str) -> float:
    """`90`, `90s`, `5m`, `1.5h`, `500ms` → seconds."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (e.g. 60s, 5m, 1h)")
    value, unit = float(m.group(1)), m.group(2) or "s"
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


def open_target_or_usage(spec: str, profile: Profile, timeout_s: float, **options: Any) -> Any:
    """`open_target`, with an unknown spelling or a target that cannot start as a usage error."""
    from harness.targets.base import TargetSetupError, open_target

    try:
        return open_target(spec, profile=profile, timeout_s=timeout_s, **options)
    except (ValueError, TargetSetupError) as e:
        raise UsageError(str(e)) from e


def profile_or_usage(name: str) -> Profile:
    try:
        return Profile.named(name)
    except ValueError as e:
        raise UsageError(str(e)) from e
