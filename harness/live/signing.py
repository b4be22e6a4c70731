"""Signing live violations with their cause (issue 33): the words for what the host was sent
(`op_trigger`), and which cause a violation witnesses (`sign`), in harness/causes' vocabulary.

A check that fires about a client whose connection the host closed earlier in the run is that
close's consequence, not a cause of its own: the host broadcasts, the client was gone (INV-045's
"never received" on a closed client). `sign` attributes it to the close (`LiveRun.closed`).
"""

from __future__ import annotations

import re
from typing import Any, Final

from harness.causes.live import closed_cause, frame_trigger, live_cause
from harness.causes.transformation import Cause
from harness.invariants.base import Violation

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


def sign(v: Violation, trigger: str, closed: dict[int, str]) -> Cause:
    """The cause `v` (seen on the op `trigger` names) witnesses; `closed`: client index -> the
    trigger on which the host closed that client's connection earlier in the run."""
    own = live_cause(v.invariant, v.message, trigger)
    if own.transformation in ("connection-closed", "host-died") or not closed:
        return own
    for m in _CLIENTS.finditer(v.message[:80]):
        for g in m.groups():
            if g is not None and int(g) in closed:
                return closed_cause(closed[int(g)])
    return own

