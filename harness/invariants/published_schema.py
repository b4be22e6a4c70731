"""A. Schema validity of every produced state (INVARIANTS.md INV-007; REDUCERS.md §11 item 11).

With a spec directory (`--spec DIR` / `$AHP_SPEC_DIR`), each state a target produces is
validated against the spec's *published* `schema/state.schema.json`, with validators built
once per spec directory (jsonschema-rs, Draft 2020-12):

* `INV-007` (violation): starting from a state that is valid and applying an action that is
  valid — both judged with the schema *corrected* for §11 item 11 — the target produced a
  state that breaks the corrected schema. That is a real structural bug.
* `INV-007.published` (known): the produced state breaks the published schema only where
  §11 item 11 says upstream's schema and reducers disagree: a combined `SessionStatus` value
  (33, 40, 56, 97…) outside the published enum `[1, 2, 8, 24, 32, 64]`, or a `usage` the
  reducers leave absent although 0.6.0 marks it required.

The item-11 correction (`SessionStatus` any integer in [0, 2³²); `usage` not required on
`Turn`/`ActiveTurn`; `origin`, `activity`, `_meta`, `changesets`, `operations` not required on
the envelope and their actions) is written here from REDUCERS.md §11 item 11 and INVARIANTS.md
INV-007 — the same list the strategies apply for generation (`strategies/schema.py`), which the
checks do not import.

A state is judged against the spec directory only when the step's profile has the spec's
released version (a 0.6.0 state is not judged by the 0.7.0 schema); a state that already broke
the corrected schema before the step, and an action the corrected schema rejects, are not
judged (the precondition of INV-007). Problems inside a tool call that `chat/toolCallComplete`
overwrote with extra result keys are INV-051's known issue (§11 item 12), not reported here.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from harness.spec.refs import validator_for
from harness.spec.schema_patches import apply_inv007_patches
from harness.spec.specdir import ENV_VAR, SpecDir
from harness.spec.versions import STATE_DEFINITIONS, Version

from ._chat import RESULT_KEYS, active_turn, parts_of, tool_call
from .base import ALL_KINDS, JSONDict, Step, invariant

#: How many recently judged states are remembered (a step's `before` is the last `after`).
_MEMO_SIZE: Final = 8
_MAX_ERRORS: Final = 3


def corrected(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a published schema document with the §11 item 11 correction applied."""
    out = copy.deepcopy(dict(doc))
    apply_inv007_patches(out.get("$defs", {}))
    return out


def _validator(doc: Mapping[str, Any], definition: str) -> Any:
    return validator_for(doc.get("$defs", {}), definition,
                         dialect=doc.get("$schema", "https://json-schema.org/draft/2020-12/schema"))


def _action_definitions(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """Action type -> the definitions whose `type` is that constant (two for toolCallConfirmed)."""
    out: dict[str, list[str]] = {}
    for name, body in doc.get("$defs", {}).items():
        const = (
            body.get("properties", {}).get("type", {}).get("const")
            if isinstance(body, dict)
            else None
        )
        if isinstance(const, str) and name.endswith("Action"):
            out.setdefault(const, []).append(name)
    return out


@dataclass(frozen=True)
class Judgement:
    """What the schemas say about one state."""

    published: frozenset[tuple[str | int, ...]]  # instance paths the published schema rejects
    published_errors: tuple[str, ...]
    corrected_errors: tuple[tuple[tuple[str | int, ...], str], ...]  # (path, message)


_VALID: Final = Judgement(frozenset(), (), ())


def _where(path: tuple[str | int, ...]) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "/"


@dataclass
class PublishedSchemas:
    """The validators of one spec directory, built once, plus a small memo of judged states."""

    version: Version | None
    published: dict[str, Any]
    corrected: dict[str, Any]
    action_docs: Mapping[str, Any] | None
    action_types: dict[str, list[str]]
    _actions: dict[str, list[Any]] = field(default_factory=dict)
    _memo: list[tuple[Any, str, Judgement]] = field(default_factory=list)

    @classmethod
    def load(cls, spec: SpecDir) -> PublishedSchemas | None:
        path = spec.schema_path("state")
        if not path.is_file():
            return None
        docs = spec.schemas
        state = docs["state"]
        fixed = corrected(state)
        defs = state.get("$defs", {})
        kinds = [k for k, d in STATE_DEFINITIONS.items() if d in defs]
        actions = docs.get("actions")
        return cls(
            version=spec.release.released,
            published={k: _validator(state, STATE_DEFINITIONS[k]) for k in kinds},
            corrected={k: _validator(fixed, STATE_DEFINITIONS[k]) for k in kinds},
            action_docs=corrected(actions) if actions is not None else None,
            action_types=_action_definitions(actions) if actions is not None else {},
        )

    def judge(self, kind: str, state: Any) -> Judgement:
        for obj, k, verdict in self._memo:
            if obj is state and k == kind:
                return verdict
        verdict = self._judge(kind, state)
        self._memo.append((state, kind, verdict))
        del self._memo[:-_MEMO_SIZE]
        return verdict

    def _judge(self, kind: str, state: Any) -> Judgement:
        published = self.published[kind]
        if published.is_valid(state):
            return _VALID
        errors = list(published.iter_errors(state))
        fixed = [
            (tuple(e.instance_path), e.message) for e in self.corrected[kind].iter_errors(state)
        ]
        return Judgement(
            frozenset(tuple(e.instance_path) for e in errors),
            tuple(f"at {_where(tuple(e.instance_path))}: {e.message}" for e in errors),
            tuple(fixed),
        )

    def action_valid(self, action: JSONDict) -> bool | None:
        """Whether the corrected action schema accepts `action` (None: no definition here)."""
        t = action.get("type")
        names = self.action_types.get(t) if isinstance(t, str) else None
        if not names or self.action_docs is None:
            return None
        validators = self._actions.get(t)  # type: ignore[arg-type]
        if validators is None:
            validators = [_validator(self.action_docs, n) for n in names]
            self._actions[t] = validators  # type: ignore[index]
        return any(v.is_valid(action) for v in validators)


@lru_cache(maxsize=4)
def _load(path: str) -> PublishedSchemas | None:
    return PublishedSchemas.load(SpecDir(path))


#: Set by `judged_with`: the spec folder to judge with (None: no judging), overriding the
#: environment. Unset: `$AHP_SPEC_DIR`, as every process of a run can read it.
_JUDGE_WITH: ContextVar[tuple[str | None]] = ContextVar("published_schema_judge_with")


@contextlib.contextmanager
def judged_with(spec: SpecDir | None) -> Iterator[None]:
    """Judge steps with `spec`'s schemas (None: not at all) whatever `$AHP_SPEC_DIR` says —
    replay uses the switches recorded in the finding (harness.spec.verdict)."""
    token = _JUDGE_WITH.set((str(spec.path) if spec is not None else None,))
    try:
        yield
    finally:
        _JUDGE_WITH.reset(token)


def schemas_for(step: Step) -> PublishedSchemas | None:
    """The spec directory's validators when `$AHP_SPEC_DIR` (or `judged_with`) names one whose
    released version is the step's protocol version (None otherwise: the step is not judged)."""
    chosen = _JUDGE_WITH.get(None)
    path = chosen[0] if chosen is not None else os.environ.get(ENV_VAR)
    if not path:
        return None
    schemas = _load(path)
    if schemas is None or step.kind not in schemas.published:
        return None
    if schemas.version is not None and schemas.version != step.profile.version:
        return None
    return schemas


def _spread_call_path(step: Step) -> tuple[str | int, ...] | None:
    """Where the tool call a spreading `chat/toolCallComplete` overwrote lives (INV-051)."""
    if step.type != "chat/toolCallComplete":
        return None
    result = step.action.get("result")
    if not isinstance(result, dict) or set(result) <= RESULT_KEYS:
        return None
    for i, part in enumerate(parts_of(active_turn(step.before))):
        tc = tool_call(part)
        if tc is not None and tc.get("toolCallId") == step.action.get("toolCallId"):
            return ("activeTurn", "responseParts", i)
    return ()


def _judged(step: Step) -> tuple[Judgement, Judgement] | None:
    """(before, after) judgements when the step meets INV-007's precondition, else None."""
    if step.after is step.before:
        return None
    schemas = schemas_for(step)
    if schemas is None:
        return None
    before = schemas.judge(step.kind, step.before)
    if before.corrected_errors or schemas.action_valid(step.action) is False:
        return None
    return before, schemas.judge(step.kind, step.after)


@invariant(
    "INV-007",
    "Schema validity is preserved",
    severity="violation",
    source="specification/overview.md §JSON Schema; schema/state.schema.json, corrected for "
    "R§11 item 11 (SessionStatus any integer, usage and five action keys not required)",
    kinds=ALL_KINDS,
    note="Needs a spec directory (--spec DIR / $AHP_SPEC_DIR) whose released version is the "
    "run's profile version; without one the step is not judged. A target state that is not a "
    "JSON object is reported under this id by check_step itself.",
)
def schema_valid(step: Step) -> Iterator[str]:
    """If s is a valid state and a a valid action, R(k, s, a, now) is a valid state ("valid"
    by the published schema corrected for REDUCERS.md §11 item 11)."""
    judged = _judged(step)
    if judged is None or not judged[1].corrected_errors:
        return
    skip = _spread_call_path(step)
    if skip == ():
        return  # the spread target was not found: INV-051 reports the step
    errors = [
        (p, m) for p, m in judged[1].corrected_errors if skip is None or p[: len(skip)] != skip
    ]
    if errors:
        shown = "; ".join(f"at {_where(p)}: {m}" for p, m in errors[:_MAX_ERRORS])
        more = f" (+{len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        yield f"{step.type or '<no type>'} produced a {step.kind} state the schema rejects: {shown}{more}"


@invariant(
    "INV-007.published",
    "Produced states validate against the published schema",
    severity="known",
    source="schema/state.schema.json as published (SessionStatus enum [1, 2, 8, 24, 32, 64]; "
    "0.6.0: Turn/ActiveTurn usage required)",
    kinds={"session", "chat"},  # the states that hold a SessionStatus or a Turn
    known_issue="REDUCERS.md §11 item 11 (the published schema rejects combined SessionStatus "
    "values and absent usage the reducers produce)",
    note="Needs a spec directory, like INV-007. Reported only for rejections the step "
    "introduced and that the item-11 correction accepts.",
)
def published_schema_valid(step: Step) -> Iterator[str]:
    """Every state is described by the published JSON schema ("specification/overview.md
    §JSON Schema"); the reducers produce states it rejects (combined SessionStatus bits)."""
    judged = _judged(step)
    if judged is None:
        return
    before, after = judged
    new = after.published - before.published
    if not new or after.corrected_errors:
        return
    shown = [e for e in after.published_errors if any(e.startswith(f"at {_where(p)}:") for p in new)]
    yield (
        f"{step.type or '<no type>'} produced a {step.kind} state the published schema rejects: "
        + "; ".join(shown[:_MAX_ERRORS])
    )
