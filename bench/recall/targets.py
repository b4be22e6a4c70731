"""Crafted targets of the recall benchmark: the reference model with seeded defects, one module
of factories `(profile) -> model` served by `python -m harness.targets.reference_adapter --model
bench/recall/targets.py:NAME` (docs/adapters.md). Each imitates a defect class that a real
implementation showed (issue 32, "What hides each miss"); `catalogue.py` says which cause each
must be reported under. Not imported by the harness or the tests.
"""

from __future__ import annotations

import json
import time
from typing import Any

from harness.reference import Model, Profile

State = dict[str, Any]


def _has_integral_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_integral_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_integral_float(v) for v in value)
    return isinstance(value, float) and value.is_integer()


def _drop_empty_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_empty_lists(v) for k, v in value.items() if not (isinstance(v, list) and not v)}
    if isinstance(value, list):
        return [_drop_empty_lists(v) for v in value]
    return value


class _Served:
    """The reference model with hooks: `ignore` (action types that are no-ops), `keep` (state
    keys an action never changes), `encode` (how states are written out)."""

    def __init__(self, profile: Profile, *, ignore: frozenset[str] = frozenset(), keep: tuple[str, ...] = (),
                 drop_empty: bool = False) -> None:
        self.model = Model(profile)
        self.ignore = ignore
        self.keep = keep
        self.drop_empty = drop_empty

    def reduce(self, kind: str, state: State, action: Any, now_ms: int) -> State:
        if isinstance(action, dict) and action.get("type") in self.ignore:
            return state
        after = self.model.reduce(kind, state, action, now_ms)
        if self.keep and after is not state and isinstance(after, dict):
            kept = {k: state[k] for k in self.keep if k in state and after.get(k) != state[k]}
            if kept:
                after = {**after, **kept}
        return after

    def encode_state(self, state: Any) -> Any:
        return _drop_empty_lists(state) if self.drop_empty else state


class _IgnoresFloats(_Served):
    """A typed decoder that reads an action holding an integral float (`cols: 80.0`) as an
    unknown action: it neither refuses nor applies it (class 2, "accepted but ignored")."""

    def reduce(self, kind: str, state: State, action: Any, now_ms: int) -> State:
        if _has_integral_float(action):
            return state
        return super().reduce(kind, state, action, now_ms)


class _HangsOnLargeActions(_Served):
    """A decoder that is quadratic in its input: an action over 600 bytes of JSON takes longer
    than the adapter timeout (class 6); beside it, `chat/draftChanged` is ignored — a bug of
    the very kind the hang would retire."""

    def reduce(self, kind: str, state: State, action: Any, now_ms: int) -> State:
        if len(repr(action)) > 600:
            time.sleep(7)
        return super().reduce(kind, state, action, now_ms)


def ignores_integral_floats(profile: Profile) -> Any:
    return _IgnoresFloats(profile)


def is_read_ignored_behind_encoder_loss(profile: Profile) -> Any:
    """`session/isReadChanged` is a no-op, and the encoder drops empty lists (`activeClients: []`):
    the step that shows the ignored action also shows the encoder loss (class 1)."""
    return _Served(profile, ignore=frozenset({"session/isReadChanged"}), drop_empty=True)


def modified_at_never_stamped(profile: Profile) -> Any:
    """A chat's `modifiedAt` is never written by any action, and the encoder drops empty lists:
    the stamp always changes on a step that changes something else too (class 1)."""
    return _Served(profile, keep=("modifiedAt",), drop_empty=True)


def auth_required_ignored(profile: Profile) -> Any:
    """`chat/toolCallAuthRequired` is a no-op: a running MCP tool call to require auth on is a
    state the run rarely reaches (class 5)."""
    return _Served(profile, ignore=frozenset({"chat/toolCallAuthRequired"}))


def content_changed_ignored(profile: Profile) -> Any:
    """`chat/toolCallContentChanged` is a no-op: effective 0–10 times a run before (class 5)."""
    return _Served(profile, ignore=frozenset({"chat/toolCallContentChanged"}))


def hangs_on_large_actions(profile: Profile) -> Any:
    return _HangsOnLargeActions(profile, ignore=frozenset({"chat/draftChanged"}))


def _objects_as_strings(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: (json.dumps(v) if k in keys and isinstance(v, dict) else _objects_as_strings(v, keys))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_objects_as_strings(v, keys) for v in value]
    return value


class _ObjectsAsStrings(_Served):
    """A decoder that keeps open-ended objects (`_meta`, `toolInput`, `config`, `values`) as raw
    JSON text, and writes the text back as a string: one conversion, whatever field and action
    it shows on (issue 32: 4–9 ids for one conversion before)."""

    KEYS = frozenset({"_meta", "toolInput", "values", "structuredContent"})

    def encode_state(self, state: Any) -> Any:
        return _objects_as_strings(state, self.KEYS)


def objects_as_strings(profile: Profile) -> Any:
    return _ObjectsAsStrings(profile)
