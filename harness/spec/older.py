"""What versions without rules here did differently, as data (issue 33): the stand-in's gaps.

A live host that speaks a version ahp-fuzz has no rules for (0.3.0, 0.4.0, 0.5.0) is fuzzed with
the nearest rules standing in (harness/live/versions.py). Where the host then does exactly what its
own version documents and the stand-in rules do otherwise, the difference is the stand-in's, not
the host's: a PROFILE note of the run, never a finding. Each `OlderRule` names such a documented
difference, the versions it holds for, the state paths and action types it shows at, and its
source; `older_rules(version)` lists those that hold for a negotiated version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from .versions import Version, parse_version


@dataclass(frozen=True)
class OlderRule:
    """A documented behaviour of versions older than `before` that the stand-in rules lack."""

    name: str
    #: The versions it holds for: every version older than this one.
    before: Version
    #: What those versions do, in a note's words.
    says: str
    source: str
    #: The channel scheme it shows on (`ahp-session:`).
    scheme: str
    #: State paths (a check's message names them: `.summary`, `.title`) and action types.
    paths: tuple[str, ...] = ()
    action_types: tuple[str, ...] = ()

    def explains(self, message: str) -> bool:
        """The check's message shows this difference: a path or an action type of the rule, on a
        channel of its scheme."""
        if self.scheme not in message:
            return False
        if any(t in message for t in self.action_types):
            return True
        return any(re.search(rf"(?<![\w.])\.{re.escape(p)}\b", message) for p in self.paths)


OLDER_RULES: Final = (
    OlderRule(
        "session-title-in-summary", (0, 4, 0),
        "the session's title lives in `summary.title`: session/titleChanged writes it there",
        "0.3.0's session reducer and its fixture 030 (SessionState.summary: SessionSummary); "
        "0.4.0 and later: SessionState.title (0.7.0 fixture 030)",
        "ahp-session:", paths=("summary", "title"), action_types=("session/titleChanged",),
    ),
    OlderRule(
        "turns-on-the-session-channel", (0, 4, 0),
        "turns live on the session channel (the session/turnStarted family); there is no chat channel",
        "0.4.0 CHANGELOG: `ahp-chat:` channels and chat/* turn actions replace SessionState.turns, "
        "activeTurn, steeringMessage, queuedMessages and inputRequests",
        "ahp-session:", paths=("turns", "activeTurn", "steeringMessage", "queuedMessages", "inputRequests"),
    ),
)


def older_rules(version: str | None) -> tuple[OlderRule, ...]:
    """The documented differences that hold for a host speaking `version` (none for a version
    with rules, or no version)."""
    if version is None:
        return ()
    try:
        v = parse_version(version)
    except ValueError:
        return ()
    return tuple(r for r in OLDER_RULES if v < r.before)
