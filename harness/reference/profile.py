"""What a reducer run is configured by: the negotiated version and the version-gated rules."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.spec.versions import (
    KNOWN_VERSIONS,
    PINNED_VERSION,
    Version,
    format_version,
    parse_version,
)

JSON = Any
State = dict[str, Any]
Action = Mapping[str, Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PINNED: Version = parse_version(PINNED_VERSION)


@dataclass(frozen=True)
class Profile:
    """The reducer behaviour to model.

    `version` is the negotiated protocol version: an action type introduced later is unknown
    (a no-op). `client_execution_blocks` selects the session InputNeeded rule (REDUCERS.md §7b
    row 10): True for 0.6.0 and released 0.7.0 (every `inputNeeded` entry raises InputNeeded),
    False for 0.8.0 and for upstream main after the 0.7.0 release (entries of kind
    `toolClientExecution` do not count).
    """

    version: Version = _PINNED
    client_execution_blocks: bool = True
    #: `session/workingDirectoryReplaced` when `replacement` already sits before `directory`:
    #: True = released 0.8.0 (the earlier entry keeps its place, so index 0 cannot move);
    #: False = the pre-release draft at proposal commit c840a57 (fixture 270: the replacement
    #: takes the target's position and the earlier entry is removed).
    replace_keeps_earlier: bool = True

    @classmethod
    def for_version(cls, version: str | Version) -> Profile:
        v = parse_version(version) if isinstance(version, str) else version
        return cls(version=v, client_execution_blocks=v < (0, 8, 0))

    @classmethod
    def named(cls, name: str) -> Profile:
        """A profile by name: one of `NAMED_PROFILES` (`0.7.0`, `0.7.0-main`, …). A version the
        harness has no rules for (`9.9.9`, `0.5.0`) is a ValueError naming the ones it has: never
        a silent profile (issue 23)."""
        if name in NAMED_PROFILES:
            return NAMED_PROFILES[name]
        raise ValueError(unknown_profile(name))

    @property
    def label(self) -> str:
        for name, p in NAMED_PROFILES.items():
            if p == self:
                return name
        text = format_version(self.version)
        if self.client_execution_blocks != (self.version < (0, 8, 0)):
            text += "+exec-rule-0.8" if not self.client_execution_blocks else "+exec-rule-0.7"
        if not self.replace_keeps_earlier:
            text += "+replace-draft"
        return text

    def at_least(self, version: str) -> bool:
        return self.version >= parse_version(version)


DEFAULT_PROFILE = Profile.for_version(PINNED_VERSION)

#: Named profiles: the released versions, plus two snapshots the spec data comes from.
NAMED_PROFILES: dict[str, Profile] = {
    **{v: Profile.for_version(v) for v in KNOWN_VERSIONS},
    # Upstream main just after the 0.7.0 release (the 0.7.0 spec folder): 0.7.0 plus the
    # queued 0.8.0 InputNeeded rule (REDUCERS.md §7b row 10).
    "0.7.0-main": Profile(version=parse_version("0.7.0"), client_execution_blocks=False),
    # The 0.8.0 draft at proposal commit c840a57 (fixture 270), before the released fix.
    "0.8.0-c840a57": Profile(
        version=parse_version("0.8.0"), client_execution_blocks=False, replace_keeps_earlier=False
    ),
}



def unknown_profile(name: str, what: str = "profile") -> str:
    """The one line for a profile or version without rules here (`what`: where it came from)."""
    try:
        parse_version(name)
        kind = "a version ahp-fuzz has no reducer rules for"
    except ValueError:
        kind = "not a version or profile name"
    return (f"unknown {what} {name!r} ({kind}): the versions with rules are {', '.join(KNOWN_VERSIONS)} "
            f"(named profiles also {', '.join(n for n in NAMED_PROFILES if n not in KNOWN_VERSIONS)})")


_log = logging.getLogger("harness.reference")


@dataclass(frozen=True, slots=True)
class Ctx:
    """Everything a reducer may read besides state and action: the injected clock and profile."""

    now_ms: int
    profile: Profile = DEFAULT_PROFILE
    warn: Callable[[str], None] = field(default=_log.debug)

    @property
    def now_iso(self) -> str:
        return iso_ms(self.now_ms)


def iso_ms(now_ms: int) -> str:
    """ISO-8601 UTC with exactly three fractional digits and `Z` (e.g. 1970-01-01T00:00:09.999Z)."""
    t = _EPOCH + timedelta(milliseconds=now_ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


Handler = Callable[[State, Action, Ctx], State]
