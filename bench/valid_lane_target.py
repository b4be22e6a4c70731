"""A model the reference adapter serves with three seeded causes (issue 15's "done when"):
status >= 2^31 wrapped to int32 on chat/session steps that change state, `chat/reasoning`
ignored, empty lists and objects dropped on encode. Used by bench/results/valid-lane.md:

    ahp-fuzz run --target "adapter:python -m harness.targets.reference_adapter \
        --model bench/valid_lane_target.py:ThreeCauses" --budget 90s --seed 11
"""

from __future__ import annotations

from typing import Any

from harness.reference import Model, Profile


def _wrap(v: Any) -> Any:
    return v - 2**32 if isinstance(v, int) and v >= 2**31 else v


def _drop_empty(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _drop_empty(v) for k, v in x.items() if v != [] and v != {}}
    if isinstance(x, list):
        return [_drop_empty(v) for v in x]
    return x


class ThreeCauses:
    def __init__(self, profile: Profile) -> None:
        self.model = Model(profile)

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        if isinstance(action, dict) and action.get("type") == "chat/reasoning":
            return state
        out = self.model.reduce(kind, state, action, now_ms)
        if out is not state and kind in ("chat", "session") and "status" in out:
            out = {**out, "status": _wrap(out["status"])}
        return out

    def encode_state(self, state: dict[str, Any]) -> Any:
        return _drop_empty(state)
