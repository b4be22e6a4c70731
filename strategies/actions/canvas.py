"""State-aware builders for the canvas channel (1.0.0, experimental): a new authoritative
canvas state, often the same instance with changed presentation fields."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from .. import channels as chs
from .._common import Json
from ._base import HOT, ActionContext, Builder, Offer, act


def _state_changed(s: Json, ctx: ActionContext) -> Offer:
    same = {k: st.just(s[k]) for k in ("instanceId", "extensionId", "canvasId") if isinstance(s.get(k), str)}

    def make() -> st.SearchStrategy[Json]:
        canvas = chs.canvas_states()
        if len(same) == 3:  # mostly an update of this canvas: its identity kept
            canvas = st.one_of(canvas.map(lambda c: {**c, **{k: s[k] for k in same}}), canvas)
        return st.fixed_dictionaries(act("canvas/stateChanged", canvas=canvas))

    return HOT, make


CANVAS_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType({"canvas/stateChanged": _state_changed})
