"""Shared helpers for the invariant tests: build steps with the reference model, describe cases.

A `Case` names one invariant and one step (plus, for probe checks, the reducer the probe calls).
Each `tests/test_invariants_*.py` module lists its `FAILING` cases (crafted counterexamples the
check must report) and `PASSING` cases (correct steps it must accept); `test_invariants_registry`
asserts every checkable invariant has at least one of each.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from harness.invariants import REGISTRY, Reducer, Step, Violation, check_step
from harness.reference import Model, Profile
from harness.reference.profile import DEFAULT_PROFILE

NOW = 9999
JSON = dict[str, Any]

MSG: JSON = {"text": "Hello", "origin": {"kind": "user"}}


def chat(**extra: Any) -> JSON:
    state: JSON = {
        "resource": "ahp-chat:/c1",
        "title": "Chat",
        "status": 1,
        "modifiedAt": "2026-01-01T00:00:00.000Z",
        "turns": [],
    }
    state.update(extra)
    return state


def session(**extra: Any) -> JSON:
    state: JSON = {
        "provider": "copilot",
        "title": "Session",
        "status": 1,
        "lifecycle": "ready",
        "activeClients": [],
        "chats": [],
    }
    state.update(extra)
    return state


def turn(turn_id: str = "t1", *parts: JSON, **extra: Any) -> JSON:
    value: JSON = {
        "id": turn_id,
        "startedAt": "2026-01-01T00:00:01.000Z",
        "message": MSG,
        "responseParts": list(parts),
    }
    value.update(extra)
    return value


def tool_part(tool_call_id: str = "tc1", status: str = "running", **extra: Any) -> JSON:
    tc: JSON = {
        "status": status,
        "toolCallId": tool_call_id,
        "toolName": "bash",
        "displayName": "Run",
        "invocationMessage": "running",
    }
    tc.update(extra)
    return {"kind": "toolCall", "toolCall": tc}


def input_part(request_id: str = "r1", response: str | None = None, **request: Any) -> JSON:
    part: JSON = {"kind": "inputRequest", "request": {"id": request_id, "message": "?", **request}}
    if response is not None:
        part["response"] = response
    return part


def md(part_id: str = "p1", content: str = "") -> JSON:
    return {"kind": "markdown", "id": part_id, "content": content}


def model(profile: Profile = DEFAULT_PROFILE) -> Model:
    return Model(profile)


def step(
    kind: str,
    before: JSON,
    action: JSON,
    *,
    now: int = NOW,
    profile: Profile = DEFAULT_PROFILE,
    **extra: Any,
) -> Step:
    """A step whose `after` the reference model computed (a correct step, modulo known issues)."""
    after = Model(profile).reduce(kind, copy.deepcopy(before), copy.deepcopy(action), now)
    return Step(kind, before, action, after, now, profile, **extra)


def with_after(s: Step, change: Callable[[JSON], None] | JSON) -> Step:
    """`s` with a tampered `after`: a dict replaces it, a function edits a deep copy in place."""
    if isinstance(change, dict):
        return replace(s, after=change)
    after = copy.deepcopy(s.after)
    change(after)
    return replace(s, after=after)


@dataclass(frozen=True)
class Case:
    id: str
    step: Step
    label: str
    reducer: Reducer | None = None

    def __str__(self) -> str:
        return f"{self.id}:{self.label}"


def case_id(case: Case) -> str:
    return str(case)


def run(case: Case) -> list[Violation]:
    return check_step(case.step, reducer=case.reducer, only={case.id})


def assert_fails(case: Case) -> list[Violation]:
    found = run(case)
    assert found, f"{case}: the check did not report the counterexample"
    inv = REGISTRY[case.id]
    for v in found:
        assert v.invariant == case.id
        assert v.severity == inv.severity
        assert v.message.strip()
    return found


def assert_passes(case: Case) -> None:
    found = run(case)
    assert found == [], f"{case}: a correct step was reported: {found}"


class Faulty:
    """The reference reducer with a defect injected by `hook(kind, state, action, now, result)`.

    Used as the target reducer of probe counterexamples. Holds its own call counter (no global
    state) for defects that depend on how often it was called.
    """

    def __init__(
        self,
        hook: Callable[[str, JSON, JSON, int, JSON, int], JSON],
        profile: Profile = DEFAULT_PROFILE,
    ) -> None:
        self.model = Model(profile)
        self.hook = hook
        self.calls = 0

    def __call__(self, kind: str, state: JSON, action: JSON, now_ms: int) -> JSON:
        self.calls += 1
        result = self.model.reduce(kind, state, action, now_ms)
        return self.hook(kind, state, action, now_ms, result, self.calls)


def step_with(
    reducer: Reducer,
    kind: str,
    before: JSON,
    action: JSON,
    *,
    now: int = NOW,
    profile: Profile = DEFAULT_PROFILE,
) -> Step:
    """A step whose `after` `reducer` computed (for probe counterexamples)."""
    after = reducer(kind, copy.deepcopy(before), copy.deepcopy(action), now)
    return Step(kind, before, action, after, now, profile)
