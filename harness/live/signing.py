"""Signing live violations with their cause (issue 33): the words for what the host was sent
(`op_trigger`), which cause a violation witnesses (`sign`), in harness/causes' vocabulary, and
which differences only the stand-in rules explain (`stand_in`: a PROFILE note, not a finding).

A check that fires about a client whose connection the host closed earlier in the run is that
close's consequence, not a cause of its own: the host broadcasts, the client was gone (INV-045's
"never received" on a closed client). `sign` attributes it to the close (`LiveRun.closed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from harness.causes.live import (
    ECHO_CHECKS,
    MISATTRIBUTED,
    UNAPPLIED_ANY,
    closed_cause,
    frame_trigger,
    live_cause,
)
from harness.causes.transformation import Cause
from harness.invariants.base import Violation
from harness.spec.older import OlderRule, older_rules

#: The clients a live check's message is about: `client 2: …`, `clients 0 and 1 …`,
#: `client 1 (maxLatencyMs 0) and client 2 …`.
_CLIENTS: Final = re.compile(r"\bclients? (\d+)(?: and (\d+))?")


def op_trigger(op: dict[str, Any], kinds: dict[str, str]) -> str:
    """What the host was sent in `op`, as a cause names it (`kinds`: the channels the run knows
    before the op, so that a dispatch to a channel nobody created is told apart)."""
    name = op.get("op")
    if name == "garbage":
        return frame_trigger(str(op.get("frame", "")))
    if name == "handshake":
        return f"the handshake probe {op.get('probe')}"
    if name == "dispatch":
        channel = op.get("channel")
        if channel not in kinds:
            return "a dispatch to an unknown channel"
        action = op.get("action")
        t = action.get("type") if isinstance(action, dict) else None
        return f"a dispatch of {t}" if isinstance(t, str) else "a dispatch of a malformed action"
    if name == "command":
        return f"the {op.get('method')} command"
    if name == "connect":
        return "connect and initialize"
    return f"a {name}" if isinstance(name, str) else "an op"


def sign(v: Violation, trigger: str, closed: dict[int, str],
         misattributed: Callable[[], str | None] | None = None, applied_seen: bool = True) -> Cause:
    """The cause `v` (seen on the op `trigger` names) witnesses; `closed`: client index -> the
    trigger on which the host closed that client's connection earlier in the run;
    `misattributed` (asked only for an echo check): whether the host echoed an action under
    another dispatch's origin in this run (`LiveObservation.misattributed`) — that one cause;
    `applied_seen` False: no snapshot of the campaign has shown an accepted client action
    (`LiveObservation.applied_seen`), so an action never applied is the host applying none."""
    own = live_cause(v.invariant, v.message, trigger)
    if own.transformation in ("connection-closed", "host-died"):
        return own
    if own.key[0] == "unapplied-accepted" and not applied_seen:
        return UNAPPLIED_ANY
    for m in _CLIENTS.finditer(v.message[:80]) if closed else ():
        for g in m.groups():
            if g is not None and int(g) in closed:
                return closed_cause(closed[int(g)])
    if v.invariant in ECHO_CHECKS and misattributed is not None and misattributed() is not None:
        return MISATTRIBUTED
    return own


#: The checks that compare the host's state with the stand-in rules' fold.
STATE_CHECKS: Final = frozenset({"INV-042", "INV-043", "INV-045", "INV-048", "INV-H07"})
#: The pseudo-invariant a stand-in note is counted under (a `known` item: reported, not failing).
PROFILE: Final = "PROFILE"


def stand_in(v: Violation, versions: dict[int, str | None]) -> tuple[str, OlderRule] | None:
    """(version, rule) when `v` is a state check's difference that a documented behaviour of the
    version its client negotiated explains (`harness.spec.older`): the stand-in rules' difference,
    not the host's. `versions`: client index -> negotiated version."""
    if v.invariant not in STATE_CHECKS:
        return None
    named = [int(g) for m in _CLIENTS.finditer(v.message[:80]) for g in m.groups() if g is not None]
    for i in named or list(versions):
        version = versions.get(i)
        for rule in older_rules(version):
            if rule.explains(v.message):
                return str(version), rule
    return None


def profile_note(version: str, rule: OlderRule) -> Violation:
    """The note a stand-in difference is reported as (one per documented difference)."""
    return Violation(f"{PROFILE}:{rule.name}", "known",
                     f"the host speaks {version}, where {rule.says} ({rule.source}); the stand-in rules do "
                     "otherwise: a PROFILE note, not a finding")
