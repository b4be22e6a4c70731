"""Terminal channel reducer (`ahp-terminal:/<id>`, REDUCERS.md §6.1)."""

from __future__ import annotations

from typing import Any

from .keyed import field_handler, set_or_clear
from .profile import Action, Ctx, Handler, State, no_state_effect


def data(state: State, action: Action, ctx: Ctx) -> State:
    """Append output to the last part when it can take it; else start an unclassified part."""
    content: list[Any] = state.get("content", [])
    text = action["data"]
    last = content[-1] if content else None
    if isinstance(last, dict) and last.get("type") == "command" and not last.get("isComplete"):
        new_last = {**last, "output": last.get("output", "") + text}
    elif isinstance(last, dict) and last.get("type") == "unclassified":
        new_last = {**last, "value": last.get("value", "") + text}
    else:
        return {**state, "content": [*content, {"type": "unclassified", "value": text}]}
    return {**state, "content": [*content[:-1], new_last]}


@no_state_effect
def input_(state: State, action: Action, ctx: Ctx) -> State:
    return state  # a side effect for the host (keystrokes), nothing is stored


def resized(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, "cols": action["cols"], "rows": action["rows"]}



def cleared(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, "content": []}


def command_detection_available(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, "supportsCommandDetection": True}


def command_executed(state: State, action: Action, ctx: Ctx) -> State:
    part = {
        "type": "command",
        "commandId": action["commandId"],
        "commandLine": action["commandLine"],
        "output": "",
        "timestamp": action["timestamp"],
        "isComplete": False,
    }
    return {**state, "content": [*state.get("content", []), part], "supportsCommandDetection": True}


def command_finished(state: State, action: Action, ctx: Ctx) -> State:
    """Every command part with that id is completed (exitCode/durationMs cleared when omitted)."""
    cid = action["commandId"]
    content: list[Any] = state.get("content", [])
    result = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "command" and part.get("commandId") == cid:
            part = {**part, "isComplete": True}
            part = set_or_clear(part, "exitCode", action.get("exitCode"))
            part = set_or_clear(part, "durationMs", action.get("durationMs"))
        result.append(part)
    return {**state, "content": result}


def exited_lifecycle(state: State, action: Action, ctx: Ctx) -> State:
    """0.9.0: `terminal/exited {exitCode?}` sets `lifecycle := {status: exited, exitCode?}` —
    an exit without a code is kept as an exit (top-level `exitCode` is gone)."""
    lifecycle: dict[str, Any] = {"status": "exited"}
    if action.get("exitCode") is not None:
        lifecycle["exitCode"] = action["exitCode"]
    return {**state, "lifecycle": lifecycle}


HANDLERS: dict[str, Handler] = {
    "terminal/data": data,
    "terminal/input": input_,
    "terminal/resized": resized,
    "terminal/claimed": field_handler("claim"),
    "terminal/titleChanged": field_handler("title"),
    "terminal/cwdChanged": field_handler("cwd"),
    "terminal/exited": field_handler("exitCode", clear_if_absent=True),
    "terminal/cleared": cleared,
    "terminal/commandDetectionAvailable": command_detection_available,
    "terminal/commandExecuted": command_executed,
    "terminal/commandFinished": command_finished,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("terminal_lifecycle", True): {"terminal/exited": exited_lifecycle},
}
