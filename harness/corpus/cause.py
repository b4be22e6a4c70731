"""The root-cause signature of a finding: what a run de-duplicates on.

Two findings share a root cause when the same invariant fires on the same action type and the
target's state differs from the reference model's in the same *shape*: the same generalised
paths (`turns[].responseParts[].toolCall.status`, list indices dropped). A difference between
absent and an empty value (`[]`, `{}`, `null`, `""`) is a presence quirk — typically an encoder
that drops empty lists — and is keyed by the kind of change only (`[]→<absent>`), not by where or
on which action: a systemic quirk then makes one signature per invariant, not one per path.

A run keeps at most `cap` findings per signature (`RunConfig.cause_cap`), so one systemic
difference cannot hide the others.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.diff import ABSENT, diff_paths, shape

#: At most this many differing paths enter a signature.
MAX_PATHS = 8


def _class(v: Any) -> str:
    if v is ABSENT:
        return "<absent>"
    if v is None:
        return "null"
    if v == [] or v == {} or v == "":
        return json.dumps(v)
    return ""


def root_cause(invariant: str, kind: str, action: Any, expected: Any, observed: Any) -> str:
    """A 12-hex-digit signature of (invariant, action type, shape of the differing paths)."""
    atype = action.get("type") if isinstance(action, dict) else None
    atype = atype if isinstance(atype, str) else f"<{type(action).__name__}>"
    presence: set[str] = set()
    paths: set[str] = set()
    if isinstance(expected, dict) and isinstance(observed, dict):
        for n, (p, a, b) in enumerate(diff_paths(expected, observed)):
            if n >= 4 * MAX_PATHS:
                break
            ca, cb = _class(a), _class(b)
            if ca and cb and (a is ABSENT or b is ABSENT):
                presence.add(f"{ca}→{cb}")
            else:
                paths.add(shape(p))
    if presence and not paths:
        blob: list[Any] = [invariant, "presence", sorted(presence)]
    else:
        blob = [invariant, kind, atype, sorted(paths)[:MAX_PATHS]]
    return hashlib.sha256(json.dumps(blob, separators=(",", ":")).encode()).hexdigest()[:12]
