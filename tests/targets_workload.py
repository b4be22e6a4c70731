"""Deterministic action mixes for the target tests (chat and terminal), written for this suite.

`chat_actions(seed, n)` yields a plausible-then-adversarial mix: turns with markdown/reasoning
parts and streaming, tool calls through their lifecycle, pending messages, drafts, truncation,
unknown and foreign types, stale ids, and a few schema-invalid payloads (missing fields) that
the reference model rejects with MalformedAction.
"""

from __future__ import annotations

import random
from typing import Any

State = dict[str, Any]


def chat_state() -> State:
    return {
        "resource": "ahp-chat:/c1",
        "title": "Chat",
        "status": 1,
        "modifiedAt": "1970-01-01T00:00:00.000Z",
        "turns": [],
    }


def terminal_state() -> State:
    return {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c1"}}


def _message(rng: random.Random) -> dict[str, Any]:
    return {"text": rng.choice(["hi", "do it", "ünïcødé ✓", ""]), "origin": {"kind": "user"}}


def chat_actions(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    turn = 0
    parts: list[str] = []
    tools: list[str] = []
    queued: list[str] = []
    done_turns: list[str] = []
    ended = True
    while len(out) < n:
        tid = f"t{turn}"
        r = rng.random()
        if r < 0.05 or (ended and rng.random() < 0.8):
            ended = False
            turn += 1
            tid = f"t{turn}"
            parts, tools = [], []
            a: dict[str, Any] = {"type": "chat/turnStarted", "turnId": tid, "startedAt": "1970-01-01T00:00:01.000Z", "message": _message(rng)}
            if queued and rng.random() < 0.3:
                a["queuedMessageId"] = queued.pop(0)
            out.append(a)
        elif r < 0.16:
            pid = f"p{len(parts)}"
            parts.append(pid)
            kind = rng.choice(["markdown", "markdown", "reasoning"])
            out.append({"type": "chat/responsePart", "turnId": tid, "part": {"kind": kind, "id": pid, "content": ""}})
        elif r < 0.45:
            pid = rng.choice(parts) if parts and rng.random() < 0.9 else "nope"
            typ = "chat/delta" if rng.random() < 0.8 else "chat/reasoning"
            out.append({"type": typ, "turnId": tid, "partId": pid, "content": rng.choice(["a", "bc", " ", "δ", "x" * 40])})
        elif r < 0.52:
            cid = f"tc{turn}-{len(tools)}"
            tools.append(cid)
            out.append({"type": "chat/toolCallStart", "turnId": tid, "toolCallId": cid, "toolName": "run", "displayName": "Run"})
        elif r < 0.62 and tools:
            cid = rng.choice(tools)
            out.append(
                rng.choice(
                    [
                        {"type": "chat/toolCallDelta", "turnId": tid, "toolCallId": cid, "content": "{"},
                        {"type": "chat/toolCallReady", "turnId": tid, "toolCallId": cid, "invocationMessage": "run", "toolInput": "{}"},
                        {"type": "chat/toolCallReady", "turnId": tid, "toolCallId": cid, "invocationMessage": "run", "toolInput": "{}", "confirmed": "not-needed"},
                        {"type": "chat/toolCallConfirmed", "turnId": tid, "toolCallId": cid, "approved": True, "confirmed": "user-action"},
                        {"type": "chat/toolCallConfirmed", "turnId": tid, "toolCallId": cid, "approved": False, "reason": "denied"},
                        {"type": "chat/toolCallComplete", "turnId": tid, "toolCallId": cid, "result": {"success": True, "pastTenseMessage": "ran"}},
                        {"type": "chat/toolCallContentChanged", "turnId": tid, "toolCallId": cid, "content": []},
                    ]
                )
            )
        elif r < 0.68:
            out.append({"type": "chat/usage", "turnId": tid, "usage": {"inputTokens": rng.randrange(100), "outputTokens": 3}})
        elif r < 0.74:
            kind = rng.choice(["steering", "queued", "queued"])
            mid = f"m{rng.randrange(4)}"
            if kind == "queued" and mid not in queued:
                queued.append(mid)
            if rng.random() < 0.7:
                out.append({"type": "chat/pendingMessageSet", "kind": kind, "id": mid, "message": _message(rng)})
            else:
                out.append({"type": "chat/pendingMessageRemoved", "kind": kind, "id": mid})
                if mid in queued:
                    queued.remove(mid)
        elif r < 0.78:
            out.append({"type": "chat/draftChanged", **({"draft": _message(rng)} if rng.random() < 0.6 else {})})
        elif r < 0.86:
            end = rng.choice(["chat/turnComplete", "chat/turnComplete", "chat/turnCancelled", "chat/error"])
            a = {"type": end, "turnId": tid if rng.random() < 0.9 else "stale", "duration": rng.randrange(-5, 500)}
            if end == "chat/error":
                a["error"] = {"errorType": "boom", "message": "failed"}
            out.append(a)
            done_turns.append(tid)
            ended = True
        elif r < 0.88 and done_turns:
            out.append({"type": "chat/truncated", **({"turnId": rng.choice(done_turns)} if rng.random() < 0.7 else {})})
        elif r < 0.91:
            out.append({"type": "chat/titleChanged", "title": "T"})  # not a chat action: unknown, no-op
        elif r < 0.94:
            out.append({"type": "session/titleChanged", "title": "foreign"})
        elif r < 0.97:
            out.append({"type": "chat/delta", "partId": "p0", "content": "x"})  # no turnId
        else:
            out.append({"type": "chat/turnStarted"})  # schema-invalid: no turnId
    return out


def terminal_actions(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    cmd = 0
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            out.append({"type": "terminal/data", "data": rng.choice(["ls\r\n", "a", "ü"])})
        elif r < 0.5:
            cmd += 1
            out.append({"type": "terminal/commandExecuted", "commandId": f"c{cmd}", "commandLine": "ls", "timestamp": 5})
        elif r < 0.6:
            out.append({"type": "terminal/commandFinished", "commandId": f"c{rng.randrange(cmd + 1)}", "exitCode": 0})
        elif r < 0.7:
            out.append({"type": "terminal/resized", "cols": rng.randrange(1, 200), "rows": 40})
        elif r < 0.8:
            out.append({"type": "terminal/titleChanged", "title": rng.choice(["a", "b"])})
        elif r < 0.85:
            out.append({"type": "terminal/cleared"})
        elif r < 0.9:
            out.append({"type": "terminal/exited", **({"exitCode": 1} if rng.random() < 0.5 else {})})
        else:
            out.append({"type": "terminal/unknownThing"})
    return out
