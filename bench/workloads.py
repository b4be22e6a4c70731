"""Realistic action workloads for benchmarks: a chat conversation with streaming and tool calls,
session bookkeeping and terminal output. Deterministic (seeded)."""

from __future__ import annotations

import random
from typing import Any

State = dict[str, Any]
Step = tuple[str, dict[str, Any]]


def initial_states() -> dict[str, State]:
    return {
        "chat": {
            "resource": "ahp-chat:/bench",
            "title": "Bench",
            "status": 1,
            "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": [],
        },
        "session": {
            "provider": "bench",
            "title": "Bench",
            "status": 1,
            "lifecycle": "ready",
            "activeClients": [],
            "chats": [],
        },
        "terminal": {"title": "sh", "content": [], "claim": {"kind": "session", "session": "ahp-session:/b"}},
    }


def chat_turn(n: int, rng: random.Random) -> list[Step]:
    """One turn: start, markdown part streamed in deltas, reasoning, a confirmed tool call, end."""
    tid = f"turn-{n}"
    steps: list[Step] = [
        ("chat", {"type": "chat/turnStarted", "turnId": tid, "startedAt": "2026-01-01T00:00:00.000Z",
                  "message": {"text": f"question {n}", "origin": {"kind": "user"}}}),
        ("chat", {"type": "chat/responsePart", "turnId": tid, "part": {"kind": "reasoning", "id": f"r{n}", "content": ""}}),
        ("chat", {"type": "chat/reasoning", "turnId": tid, "partId": f"r{n}", "content": "thinking "}),
        ("chat", {"type": "chat/responsePart", "turnId": tid, "part": {"kind": "markdown", "id": f"m{n}", "content": ""}}),
    ]
    steps += [
        ("chat", {"type": "chat/delta", "turnId": tid, "partId": f"m{n}", "content": "word " * rng.randint(1, 8)})
        for _ in range(rng.randint(4, 12))
    ]
    call = f"call-{n}"
    steps += [
        ("chat", {"type": "chat/toolCallStart", "turnId": tid, "toolCallId": call, "toolName": "read", "displayName": "Read"}),
        ("chat", {"type": "chat/toolCallDelta", "turnId": tid, "toolCallId": call, "content": '{"path":'}),
        ("chat", {"type": "chat/toolCallReady", "turnId": tid, "toolCallId": call, "invocationMessage": "Reading",
                  "toolInput": '{"path":"a"}'}),
        ("chat", {"type": "chat/toolCallConfirmed", "turnId": tid, "toolCallId": call, "approved": True,
                  "confirmed": "user-action"}),
        ("chat", {"type": "chat/toolCallComplete", "turnId": tid, "toolCallId": call,
                  "result": {"success": True, "pastTenseMessage": "Read a"}}),
        ("chat", {"type": "chat/usage", "turnId": tid, "usage": {"inputTokens": 100, "outputTokens": 20}}),
        ("session", {"type": "session/activityChanged", "activity": f"turn {n}"}),
        ("terminal", {"type": "terminal/data", "data": "output line\n"}),
        ("chat", {"type": "chat/turnComplete", "turnId": tid, "duration": 1200}),
    ]
    return steps


def mixed(turns: int, seed: int = 1) -> list[Step]:
    rng = random.Random(seed)
    out: list[Step] = []
    for n in range(turns):
        out += chat_turn(n, rng)
    return out
