"""State-aware builders for the terminal channel (data, size, claim, command detection)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from .. import states as sts
from .. import uris
from .._common import COMMAND_IDS, Json, id_from, non_negative_ints, obj
from ._base import COLD, HOT, ActionContext, Builder, Offer, act, fresh_id
from .session import optional, simple


def _command_ids(s: Json) -> list[str]:
    content = s.get("content")
    return [
        p["commandId"]
        for p in (content if isinstance(content, list) else [])
        if isinstance(p, dict) and p.get("type") == "command"
    ]


def _command_executed(s: Json, ctx: ActionContext) -> Offer:
    present = _command_ids(s)
    return HOT, lambda: st.fixed_dictionaries(
        act(
            "terminal/commandExecuted",
            commandId=fresh_id(present, COMMAND_IDS, ctx),
            commandLine=st.sampled_from(("ls", "npm test")),
            timestamp=non_negative_ints(10**12),
        )
    )


def _command_finished(s: Json, ctx: ActionContext) -> Offer:
    present = _command_ids(s)
    return (HOT if present else COLD), lambda: obj(
        act("terminal/commandFinished", commandId=id_from(present, COMMAND_IDS, stale=ctx.stale)),
        {"exitCode": st.integers(0, 255), "durationMs": non_negative_ints(10_000)},
    )


def cleared(type_: str, key: str) -> Builder:
    strat = st.just({"type": type_})
    return lambda s, ctx: ((HOT * 0.4 if s.get(key) else COLD), lambda: strat)


_DETECTION: Final = st.just({"type": "terminal/commandDetectionAvailable"})


def _detection(s: Json, ctx: ActionContext) -> Offer:
    return (COLD if s.get("supportsCommandDetection") is True else HOT * 0.3), lambda: _DETECTION


TERMINAL_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "terminal/data": simple(
            "terminal/data", HOT, data=st.sampled_from(("$ ", "ls\r\n", "\x1b[31mred\x1b[0m", "🙂"))
        ),
        "terminal/input": simple(
            "terminal/input", COLD, data=st.sampled_from(("l", "s", "\r"))
        ),  # side effect only
        "terminal/resized": simple(
            "terminal/resized", cols=st.integers(1, 300), rows=st.integers(1, 100)
        ),
        "terminal/claimed": simple("terminal/claimed", claim=sts.terminal_claims()),
        "terminal/titleChanged": simple(
            "terminal/titleChanged", title=st.sampled_from(("bash", "zsh", "npm test"))
        ),
        "terminal/cwdChanged": simple("terminal/cwdChanged", cwd=uris.directories()),
        "terminal/exited": optional("terminal/exited", exitCode=st.integers(0, 255)),
        "terminal/cleared": cleared("terminal/cleared", "content"),
        "terminal/commandDetectionAvailable": _detection,
        "terminal/commandExecuted": _command_executed,
        "terminal/commandFinished": _command_finished,
    }
)
