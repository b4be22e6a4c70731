"""The spec-coverage matrix: action type × outcome, classified from (before, after) states.

A valid-lane step has one of these outcomes in the reference model:

* `applied` — the state changed;
* `no-op: <guard>` — the reducer returned the state unchanged; the guard that refused is
  named from the action and the state before it (no reducer instrumentation):
  `no active turn`, `stale turn` (the action names another turn than the active one),
  `unknown <field>` (an id-like field of the action names nothing in the state),
  `same value` (a new but equal state: the field already held that value),
  `status guard` (the action addresses an existing tool call, whose status refuses it),
  `guard` (anything else);
* `rejected` — the model raised `MalformedAction` (a schema-invalid payload).

The classifier is a `Recorder.on_step` hook: it returns the label the machine passes to
Hypothesis' `event()`, and counts every label, so new (type, outcome) pairs are what the
`target()` score rewards.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

from harness.invariants.registry import applicable
from harness.spec.versions import Version

APPLIED = "applied"
REJECTED = "rejected"

#: Action fields that name something the state must already hold, most specific first.
_ID_FIELDS: tuple[str, ...] = (
    "toolCallId", "partId", "requestId", "questionId", "messageId", "customizationId",
    "serverId", "clientId", "terminal", "chat", "resource", "directory", "uri", "id",
)
#: Types whose `turnId` names a history turn (or a new one), not the active turn.
_NOT_ACTIVE_TURN = frozenset({"chat/turnStarted", "chat/truncated"})


def _strings(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, str):
        out.add(node)
    elif isinstance(node, dict):
        for v in node.values():
            _strings(v, out)
    elif isinstance(node, list):
        for v in node:
            _strings(v, out)
    return out


class OutcomeMatrix:
    """Counts of (kind, action type, outcome) over a run; callable as a `Recorder.on_step` hook."""

    def __init__(self, version: Version | None = None) -> None:
        self.version = version
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self._strings_of: tuple[int, set[str]] | None = None  # cache for the last no-op state

    # -- the hook -----------------------------------------------------------------------------

    def __call__(self, kind: str, before: Any, action: Any, after: Any, malformed: bool) -> str | None:
        atype = action.get("type") if isinstance(action, dict) else None
        if not isinstance(atype, str):
            return None
        outcome = REJECTED if malformed else self.classify(atype, before, action, after)
        self.counts[(kind, atype, outcome)] += 1
        return f"{atype}: {outcome}"

    def classify(self, atype: str, before: Any, action: dict[str, Any], after: Any) -> str:
        if after is not before and after != before:
            return APPLIED
        if after is not before:
            return "no-op: same value"
        if not isinstance(before, dict):
            return "no-op: guard"
        turn_id = action.get("turnId")
        if turn_id is not None and atype not in _NOT_ACTIVE_TURN and atype.startswith("chat/"):
            active = before.get("activeTurn")
            if not isinstance(active, dict):
                return "no-op: no active turn"
            if active.get("id") != turn_id:
                return "no-op: stale turn"
        for name in _ID_FIELDS:
            value = action.get(name)
            if isinstance(value, str) and value not in self._strings(before):
                return f"no-op: unknown {name}"
        if "toolCallId" in action:
            return "no-op: status guard"
        return "no-op: guard"

    def _strings(self, state: dict[str, Any]) -> set[str]:
        cached = self._strings_of
        if cached is not None and cached[0] == id(state):
            return cached[1]
        found = _strings(state, set())
        self._strings_of = (id(state), found)
        return found

    # -- data ---------------------------------------------------------------------------------

    def to_json(self) -> list[list[Any]]:
        """`[[kind, type, outcome, count], …]`, sorted (the worker → parent wire form)."""
        return [[k, t, o, n] for (k, t, o), n in sorted(self.counts.items())]

    def merge_json(self, rows: list[list[Any]]) -> None:
        for k, t, o, n in rows:
            self.counts[(str(k), str(t), str(o))] += int(n)


def matrix_report(counts: Counter[tuple[str, str, str]], version: Version | None = None) -> dict[str, Any]:
    """The report's `outcomes` section: per action type its outcome counts and the invariants
    its steps exercised; per invariant the number of steps that ran it."""
    types: dict[str, dict[str, Any]] = {}
    per_invariant: Counter[str] = Counter()
    for (kind, atype, outcome), n in sorted(counts.items()):
        row = types.setdefault(atype, {"kinds": [], "outcomes": {}, "steps": 0, "invariants": []})
        if kind not in row["kinds"]:
            row["kinds"].append(kind)
        row["outcomes"][outcome] = row["outcomes"].get(outcome, 0) + n
        row["steps"] += n
        invs = _invariants_for(kind, atype, version)
        for inv in invs:
            per_invariant[inv] += n
        row["invariants"] = sorted(set(row["invariants"]) | set(invs))
    pairs = sum(len(r["outcomes"]) for r in types.values())
    return {
        "types": types,
        "distinctPairs": pairs,
        "distinctOutcomes": sorted({o for _, _, o in counts}),
        "invariantSteps": dict(sorted(per_invariant.items())),
    }


@lru_cache(maxsize=1024)
def _invariants_for(kind: str, atype: str, version: Version | None) -> tuple[str, ...]:
    return tuple(sorted(inv.id for inv in applicable(kind, atype, version)))
