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
import re
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


def _diffs(expected: Any, observed: Any) -> list[tuple[Any, Any, Any]]:
    if not (isinstance(expected, dict) and isinstance(observed, dict)):
        return []
    out = []
    for n, d in enumerate(diff_paths(expected, observed)):
        if n >= 4 * MAX_PATHS:
            break
        out.append(d)
    return out


def _key(d: tuple[Any, Any, Any]) -> str:
    p, a, b = d
    return json.dumps([list(p), repr(a) if a is ABSENT else a, repr(b) if b is ABSENT else b], sort_keys=True, default=repr)


def root_cause(
    invariant: str,
    kind: str,
    action: Any,
    expected: Any,
    observed: Any,
    *,
    before: tuple[Any, Any] | None = None,
    message: str = "",
) -> str:
    """A 12-hex-digit signature of (invariant, action type, shape of the differing paths).

    `before` — (reference, target) states before the step — lets the signature keep only the
    differences this step made: a difference carried over unchanged from an earlier step is
    that step's root cause, not this one's (a trace that already diverged is signed by the
    shapes it inherited, without the action type).
    """
    atype = action.get("type") if isinstance(action, dict) else None
    atype = atype if isinstance(atype, str) else f"<{type(action).__name__}>"
    diffs = _diffs(expected, observed)
    if before is not None and diffs:
        prior = {_key(d) for d in _diffs(*before)}
        fresh = [d for d in diffs if _key(d) not in prior]
        if not fresh:
            return _sign(invariant, kind, "inherited", diffs, message)
        diffs = fresh
    return _sign(invariant, kind, atype, diffs, message)


#: What varies between two reports of one cause, in a message: values and names.
_VARYING = (
    (re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''), "S"),  # quoted strings
    (re.compile(r"\b[a-zA-Z]+/[a-zA-Z]+\b"), "T"),  # action types
    (re.compile(r"[A-Za-z_][\w]*(?:(?:\.[A-Za-z_]\w*)|(?:\[-?\d*\]))+"), "P"),  # paths
    (re.compile(r"\b[A-Za-z_]\w*(?=: )"), "P"),  # a name before a colon: a path
    (re.compile(r"-?\d+(?:\.\d+)?"), "N"),  # numbers
)


def message_shape(message: str) -> str:
    """A message with its values, names and paths replaced by placeholders; the classes that
    matter (`<absent>`, `null`, `[]`, `{}`) stay."""
    for pattern, placeholder in _VARYING:
        message = pattern.sub(placeholder, message)
    return message


def _sign(invariant: str, kind: str, atype: str, diffs: list[tuple[Any, Any, Any]], message: str) -> str:
    if not diffs:  # the states agree: the message (a probe's re-run, an invariant) says what broke
        blob1 = [invariant, kind, "message", message_shape(message)]
        return hashlib.sha256(json.dumps(blob1, separators=(",", ":")).encode()).hexdigest()[:12]
    presence: set[str] = set()
    paths: set[str] = set()
    for p, a, b in diffs:
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


def finding_cause(finding: Any) -> str:
    """The signature of a (shrunk) finding, from its failing step."""
    steps = finding.steps
    action = steps[finding.failing_step].action if 0 <= finding.failing_step < len(steps) else None
    return root_cause(
        finding.invariant, finding.kind, action, finding.expected, finding.observed, message=finding.message
    )
