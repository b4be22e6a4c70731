"""The scripted agent: answers each user turn with server-originated actions, deterministically.

A turn's script is a list of steps drawn from a `random.Random` seeded with
`(seed, turn ordinal in its chat, message text)` — never the clock, never a URI or id — so the
same conversation always gets the same answers, whatever names the client picked:
a markdown part with deltas, sometimes a reasoning part, sometimes a tool call that needs the
user's confirmation, sometimes an input request, then usage and `chat/turnComplete`.

Determinism rule: the host runs a script synchronously right after the client action that
started or resumed it, up to the next point where the agent waits for a client (a tool-call
confirmation or an input answer) or the end of the turn. Nothing happens between frames; there
are no timers. So once a client has the answer to any request sent after its dispatch, every
server action that dispatch caused has already been sent to every subscriber.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Action = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Wait:
    """Pause until the client answers: `kind` is "toolCall" (by id), "input" (request id) or
    "resume" (a `chat/turnResume` of the turn id, after a resumable error)."""

    kind: str
    key: str


@dataclass(frozen=True, slots=True)
class IfApproved:
    """An action that only runs when the tool call it follows was approved."""

    action: Action


@dataclass(frozen=True, slots=True)
class OnSession:
    """An action for the chat's session channel (the host fills in the chat's URI as `chat`)."""

    action: Action


Step = Action | Wait | IfApproved | OnSession
#: When a 1.0.0 script's background shell started (a fixed time: scripts never read the clock).
STARTED_AT = "2026-10-02T09:00:00.000Z"


@dataclass
class Script:
    turn_id: str
    steps: list[Step]
    pos: int = 0
    approved: bool = True
    waiting: Wait | None = field(default=None)


def build_script(seed: int, ordinal: int, turn_id: str, text: str, v100: bool = False) -> Script:
    """The script of a chat's `ordinal`-th turn (0-based). The choices depend on the seed, the
    ordinal and the message text only — never on URIs or ids, which a client may randomise per
    run — so replaying the same conversation under other names gives the same answers.

    `v100` (a 1.0.0 host) adds, drawn from a generator of their own (the 0.7.0 scripts stay as
    they were): a background shell started and updated by id, the chat's change counts in its
    session's catalogue, and a resumable turn error that waits for `chat/turnResume`."""
    rng = random.Random(f"{seed}|{ordinal}|{text}")
    t = turn_id
    md = f"{t}.md"
    steps: list[Step] = [
        {"type": "chat/responsePart", "turnId": t, "part": {"kind": "markdown", "id": md, "content": ""}},
        {"type": "chat/delta", "turnId": t, "partId": md, "content": "You said: "},
        {"type": "chat/delta", "turnId": t, "partId": md, "content": text[:64]},
    ]
    if rng.random() < 0.5:
        rs = f"{t}.reasoning"
        steps += [
            {"type": "chat/responsePart", "turnId": t, "part": {"kind": "reasoning", "id": rs, "content": ""}},
            {"type": "chat/reasoning", "turnId": t, "partId": rs, "content": "Considering the request."},
        ]
    lowered = text.lower()
    roll = rng.random()
    if "tool" in lowered or ("ask" not in lowered and roll < 0.4):
        tc = f"{t}.tool"
        steps += [
            {"type": "chat/toolCallStart", "turnId": t, "toolCallId": tc, "toolName": "read_file", "displayName": "Read file"},
            {
                "type": "chat/toolCallReady",
                "turnId": t,
                "toolCallId": tc,
                "invocationMessage": "Reading README.md",
                "toolInput": '{"path":"README.md"}',
            },
            Wait("toolCall", tc),
            IfApproved(
                {
                    "type": "chat/toolCallComplete",
                    "turnId": t,
                    "toolCallId": tc,
                    "result": {"success": True, "pastTenseMessage": "Read README.md"},
                }
            ),
        ]
    elif "ask" in lowered or roll < 0.6:
        rq = f"{t}.input"
        steps += [
            {
                "type": "chat/inputRequested",
                "request": {
                    "id": rq,
                    "message": "Proceed?",
                    "questions": [{"id": "q1", "kind": "boolean", "message": "Proceed?", "required": True}],
                },
            },
            Wait("input", rq),
        ]
    ending: list[Step] = [
        {"type": "chat/delta", "turnId": t, "partId": md, "content": " Done."},
        {
            "type": "chat/usage",
            "turnId": t,
            "usage": {"inputTokens": len(text.split()), "outputTokens": 3 + rng.randrange(20), "model": "scripted-1"},
        },
        {"type": "chat/turnComplete", "turnId": t, "duration": 10 + rng.randrange(90)},
    ]
    if v100:
        steps += _v100_steps(random.Random(f"{seed}|{ordinal}|{text}|1.0.0"), t, ending)
    else:
        steps += ending
    return Script(t, steps)


def _v100_steps(rng: random.Random, t: str, ending: list[Step]) -> list[Step]:
    """What a 1.0.0 agent adds before and around the end of a turn (see `build_script`)."""
    steps: list[Step] = []
    if rng.random() < 0.4:
        shell = {"kind": "shell", "id": f"{t}.shell", "label": "watch", "startedAt": STARTED_AT,
                 "command": "npm run watch"}
        steps += [{"type": "chat/backgroundWorkSet", "work": shell},
                  {"type": "chat/backgroundWorkSet", "work": {**shell, "label": "watch (rebuilt)"}}]
    if rng.random() < 0.4:
        counts = {"additions": 1 + rng.randrange(40), "deletions": rng.randrange(9), "files": 1 + rng.randrange(3)}
        steps.append(OnSession({"type": "session/chatUpdated", "changes": {"changes": counts}}))
    if rng.random() < 0.3:
        error = {"kind": "error", "resumable": True,
                 "error": {"errorType": "rateLimited", "message": "Rate limited: resume to retry"}}
        steps += [{"type": "chat/error", "turnId": t, "duration": 5 + rng.randrange(20), "part": error},
                  Wait("resume", t)]
    return steps + ending


class Agent:
    """Per-chat scripts; the host asks for the next actions after each accepted client action."""

    def __init__(self, seed: int = 0, v100: bool = False):
        self.seed = seed
        #: A 1.0.0 host's agent (`build_script`'s `v100`).
        self.v100 = v100
        self._scripts: dict[str, Script] = {}

    def on_client_action(self, chat: str, action: Mapping[str, Any], ordinal: int = 0) -> None:
        """Start, resume or drop the chat's script in reaction to an accepted client action
        (`ordinal`: how many turns the chat had before this one, for `chat/turnStarted`)."""
        t = action.get("type")
        script = self._scripts.get(chat)
        if t == "chat/turnStarted":
            message = action.get("message")
            text = message.get("text", "") if isinstance(message, Mapping) else ""
            self._scripts[chat] = build_script(self.seed, ordinal, str(action.get("turnId")), str(text), self.v100)
        elif script is None:
            return
        elif t == "chat/turnCancelled" or t == "chat/truncated":
            self._scripts.pop(chat, None)
        elif script.waiting is not None:
            w = script.waiting
            if w.kind == "toolCall" and t == "chat/toolCallConfirmed" and action.get("toolCallId") == w.key:
                script.approved = bool(action.get("approved"))
                script.waiting = None
            elif (w.kind, t, action.get("requestId" if w.kind == "input" else "turnId")) in (
                ("input", "chat/inputCompleted", w.key), ("resume", "chat/turnResume", w.key)):
                script.waiting = None

    def next_actions(self, chat: str) -> list[Action | OnSession]:
        """The server actions to run now: up to the next wait or the end of the turn."""
        script = self._scripts.get(chat)
        if script is None or script.waiting is not None:
            return []
        out: list[Action | OnSession] = []
        while script.pos < len(script.steps):
            step = script.steps[script.pos]
            script.pos += 1
            if isinstance(step, Wait):
                script.waiting = step
                return out
            if isinstance(step, IfApproved):
                if script.approved:
                    out.append(step.action)
                continue
            out.append(step)
        del self._scripts[chat]
        return out

    def forget(self, chat: str) -> None:
        self._scripts.pop(chat, None)
