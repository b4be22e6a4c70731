"""Changeset targets with one quirk a baseline accepts and one defect it does not
(tests/test_baseline_holds.py). Each factory `(profile) -> Model` can be served over the adapter
protocol: `python -m harness.targets.reference_adapter --model tests/baseline_targets.py:NAME`.
"""

from __future__ import annotations

from typing import Any

from harness.reference import Model, Profile
from harness.reference.dispatch import TABLES
from harness.reference.profile import Action, Ctx, Handler, State


def _ignored(state: State, action: Action, ctx: Ctx) -> State:
    return state


def _keeps_error(real: Handler) -> Handler:
    """contentChanged without an `error` keeps the one the changeset had (the reference deletes
    it): on a `ready` changeset that breaks INV-050.contentChanged in a way upstream does not."""

    def h(state: State, action: Action, ctx: Ctx) -> State:
        after = real(state, action, ctx)
        if "error" not in action and "error" in state:
            after = {**after, "error": state["error"]}
        return after

    return h


def clear_ignored(profile: Profile) -> Model:
    """`changeset/cleared` is a no-op (the quirk a baseline accepts)."""
    return Model(profile, overrides={"changeset/cleared": _ignored})


def clear_and_status_ignored(profile: Profile) -> Model:
    """`changeset/cleared` (the accepted quirk) and `changeset/statusChanged` (a real defect) are no-ops."""
    return Model(profile, overrides={"changeset/cleared": _ignored, "changeset/statusChanged": _ignored})


def status_and_remove_ignored(profile: Profile) -> Model:
    """Two real defects of one invariant (INV-D01), two root causes: `statusChanged` and
    `fileRemoved` are no-ops."""
    return Model(profile, overrides={"changeset/statusChanged": _ignored, "changeset/fileRemoved": _ignored})


def content_changed_keeps_error(profile: Profile) -> Model:
    real = TABLES["changeset"]["changeset/contentChanged"]
    return Model(profile, overrides={"changeset/contentChanged": _keeps_error(real)})


def drop_empty(value: Any) -> Any:
    """A typed client's encoder: every empty list is left out."""
    if isinstance(value, dict):
        return {k: drop_empty(v) for k, v in value.items() if not (isinstance(v, list) and not v)}
    if isinstance(value, list):
        return [drop_empty(v) for v in value]
    return value
