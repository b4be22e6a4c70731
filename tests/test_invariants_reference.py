"""The catalogue against the real reference model.

* Hand-built sequences covering every channel: the model may trip only `known` invariants.
* Every `known` invariant: a sequence on which the model really does trip it (upstream's own
  spec violations, REDUCERS.md §11, reproduced faithfully by the model).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from harness.invariants import REGISTRY, Step, Violation, check_step
from harness.reference import Model, Profile
from harness.spec.specdir import ENV_VAR
from tests.invariant_cases import MSG, chat, input_part, session

JSON = dict[str, Any]
P070 = Profile.for_version("0.7.0")
P080 = Profile.for_version("0.8.0")


def run_sequence(
    kind: str,
    initial: JSON,
    actions: Sequence[JSON],
    *,
    profile: Profile = P070,
    owning_session: JSON | None = None,
) -> list[Violation]:
    """Apply `actions` with the reference model, checking every step with probes on."""
    model = Model(profile)
    state = initial
    found: list[Violation] = []
    for i, action in enumerate(actions):
        now = 10_000 + i * 1_000
        after = model.reduce(kind, state, action, now)
        found += check_step(
            Step(kind, state, action, after, now, profile, session=owning_session),
            reducer=model.reduce,
        )
        state = after
    return found


def ids(found: list[Violation]) -> set[str]:
    return {v.invariant for v in found}


def not_known(found: list[Violation]) -> list[Violation]:
    return [v for v in found if v.severity != "known"]


#: Known-issue probes that ask every reachable state of some shape (any chat with an active
#: turn shows §11 items 1, 12, 14 and 15; a chat whose status is Error, item 18): a correct
#: sequence trips them as soon as it reaches such a state.
AMBIENT = frozenset(
    {
        "INV-002.wallclock",
        "INV-015.strict-probe",
        "INV-020.active-probe",
        "INV-022.probe",
        "INV-051.probe",
    }
)
#: With a spec directory: combined SessionStatus values break the published enum (§11 item 11).
PUBLISHED = frozenset({"INV-007.published"} if os.environ.get(ENV_VAR) else ())


OPTIONS = [
    {"id": "allow", "label": "Allow", "kind": "approve"},
    {"id": "deny", "label": "Deny", "kind": "deny"},
]
MCP = {"kind": "mcp", "customizationId": "m1"}
CLIENT = {"kind": "client", "clientId": "c1"}
T1 = {"turnId": "t1"}
COLLECTION_MSG = {
    **MSG,
    "attachments": [
        {
            "type": "collection",
            "label": "ctx",
            "_meta": {"g": 1},
            "attachments": [
                {"type": "simple", "label": "a", "modelRepresentation": "a", "_meta": {"m": 1}}
            ],
        }
    ],
}

CHAT_LIFECYCLE: list[JSON] = [
    {"type": "chat/pendingMessageSet", "kind": "queued", "id": "q1", "message": MSG},
    {"type": "chat/pendingMessageSet", "kind": "queued", "id": "q2", "message": COLLECTION_MSG},
    {"type": "chat/queuedMessagesReordered", "order": ["q2", "zz", "q2"]},
    {
        "type": "chat/turnStarted",
        **T1,
        "startedAt": "2026-01-01T00:00:01.000Z",
        "message": COLLECTION_MSG,
        "queuedMessageId": "q2",
    },
    {"type": "chat/responsePart", **T1, "part": {"kind": "markdown", "id": "p1", "content": ""}},
    {"type": "chat/delta", **T1, "partId": "p1", "content": "Hello"},
    {"type": "chat/delta", "turnId": "t0", "partId": "p1", "content": "lost"},
    {
        "type": "chat/toolCallStart",
        **T1,
        "toolCallId": "tc1",
        "toolName": "bash",
        "displayName": "Run",
        "contributor": CLIENT,
    },
    {"type": "chat/toolCallDelta", **T1, "toolCallId": "tc1", "content": '{"cmd":'},
    {
        "type": "chat/toolCallReady",
        **T1,
        "toolCallId": "tc1",
        "invocationMessage": "Run ls",
        "toolInput": "ls",
        "options": OPTIONS,
    },
    {
        "type": "chat/toolCallConfirmed",
        **T1,
        "toolCallId": "tc1",
        "approved": True,
        "confirmed": "user-action",
        "selectedOptionId": "allow",
    },
    {
        "type": "chat/toolCallContentChanged",
        **T1,
        "toolCallId": "tc1",
        "content": [{"type": "text", "text": "partial"}],
    },
    {
        "type": "chat/toolCallComplete",
        **T1,
        "toolCallId": "tc1",
        "result": {"success": True, "pastTenseMessage": "Ran ls"},
        "requiresResultConfirmation": True,
    },
    {"type": "chat/toolCallResultConfirmed", **T1, "toolCallId": "tc1", "approved": True},
    {"type": "chat/inputRequested", "request": {"id": "r1", "message": "Name?"}},
    {
        "type": "chat/inputAnswerChanged",
        "requestId": "r1",
        "questionId": "q",
        "answer": {"state": "draft", "value": {"kind": "text", "value": "A"}},
    },
    {"type": "chat/inputAnswerChanged", "requestId": "r1", "questionId": "q"},
    {
        "type": "chat/inputCompleted",
        "requestId": "r1",
        "response": "accept",
        "answers": {"q": {"state": "submitted", "value": {"kind": "text", "value": "B"}}},
    },
    {
        "type": "chat/toolCallStart",
        **T1,
        "toolCallId": "tc2",
        "toolName": "grep",
        "displayName": "Grep",
    },
    {"type": "chat/usage", **T1, "usage": {"inputTokens": 1, "outputTokens": 2}},
    {"type": "chat/turnComplete", **T1, "duration": 1234},
    {
        "type": "chat/turnStarted",
        "turnId": "t2",
        "startedAt": "2026-01-01T00:00:05.000Z",
        "message": MSG,
        "queuedMessageId": "q1",
    },
    {"type": "chat/reasoning", "turnId": "t2", "partId": "p9", "content": "hmm"},
    {"type": "chat/error", "turnId": "t2", "duration": -5, "error": {"message": "boom"}},
    {"type": "chat/draftChanged", "draft": COLLECTION_MSG},
    {"type": "chat/activityChanged", "activity": "thinking"},
    {
        "type": "chat/turnsLoaded",
        "turns": [{"id": "t0", "message": MSG, "responseParts": [], "state": "complete"}],
        "turnsNextCursor": "older",
    },
    {"type": "chat/truncated", "turnId": "t1"},
    {"type": "chat/workingDirectorySet", "directory": "file:///a"},
    {"type": "chat/workingDirectorySet", "directory": "file:///a/"},
    {"type": "chat/workingDirectoryRemoved", "directory": "file:///a"},
    {"type": "chat/truncated"},
    {"type": "session/titleChanged", "title": "foreign"},
    {"type": "future/newAction"},
]

MCP_AUTH: list[JSON] = [
    {"type": "chat/turnStarted", **T1, "startedAt": "2026-01-01T00:00:01.000Z", "message": MSG},
    {
        "type": "chat/toolCallStart",
        **T1,
        "toolCallId": "m1",
        "toolName": "search",
        "displayName": "Search",
        "contributor": MCP,
    },
    {
        "type": "chat/toolCallReady",
        **T1,
        "toolCallId": "m1",
        "invocationMessage": "Search",
        "toolInput": "{}",
        "confirmed": "not-needed",
    },
    {
        "type": "chat/toolCallAuthRequired",
        **T1,
        "toolCallId": "m1",
        "auth": {"resource": "https://mcp.example"},
    },
    {
        "type": "chat/toolCallComplete",
        **T1,
        "toolCallId": "m1",
        "result": {"success": True, "pastTenseMessage": "nope"},
    },
    {"type": "chat/toolCallAuthResolved", **T1, "toolCallId": "m1"},
    {
        "type": "chat/toolCallAuthRequired",
        **T1,
        "toolCallId": "m1",
        "auth": {"resource": "https://mcp.example"},
    },
    {
        "type": "chat/toolCallComplete",
        **T1,
        "toolCallId": "m1",
        "result": {"success": False, "pastTenseMessage": "gave up"},
        "requiresResultConfirmation": True,
    },
    {
        "type": "chat/toolCallStart",
        **T1,
        "toolCallId": "c2",
        "toolName": "x",
        "displayName": "X",
        "contributor": CLIENT,
    },
    {
        "type": "chat/toolCallReady",
        **T1,
        "toolCallId": "c2",
        "invocationMessage": "X",
        "options": OPTIONS,
    },
    {
        "type": "chat/toolCallConfirmed",
        **T1,
        "toolCallId": "c2",
        "approved": False,
        "reason": "denied",
        "selectedOptionId": "deny",
        "userSuggestion": COLLECTION_MSG,
    },
    {"type": "chat/toolCallStart", **T1, "toolCallId": "c3", "toolName": "y", "displayName": "Y"},
    {"type": "chat/turnCancelled", **T1, "duration": 3},
]

REQUEST = {"id": "n1", "chat": "ahp-chat:/c1", "kind": "chatInput", "request": {"id": "r1"}}
SUMMARY = {
    "resource": "ahp-chat:/c1",
    "title": "one",
    "status": 1,
    "modifiedAt": "2026-01-01T00:00:00.000Z",
}
SESSION_LIFECYCLE: list[JSON] = [
    {"type": "session/chatAdded", "summary": SUMMARY},
    {"type": "session/chatAdded", "summary": {**SUMMARY, "resource": "ahp-chat:/c2"}},
    {"type": "session/chatAdded", "summary": {**SUMMARY, "resource": "ahp-chat:/c2/"}},
    {"type": "session/defaultChatChanged", "defaultChat": "ahp-chat:/c1"},
    {
        "type": "session/chatUpdated",
        "chat": "ahp-chat:/c1",
        "changes": {"resource": "ahp-chat:/x", "title": "renamed"},
    },
    {"type": "session/chatRemoved", "chat": "ahp-chat:/c1"},
    {"type": "session/activeClientSet", "activeClient": {"clientId": "c1", "tools": []}},
    {
        "type": "session/activeClientSet",
        "activeClient": {"clientId": "c1", "tools": [{"name": "t"}]},
    },
    {"type": "session/activeClientRemoved", "clientId": "c1"},
    {"type": "session/inputNeededSet", "request": {**REQUEST, "id": "n0"}},
    {"type": "session/isReadChanged", "isRead": True},
    {"type": "session/isArchivedChanged", "isArchived": True},
    {"type": "session/inputNeededRemoved", "id": "n0"},
    {
        "type": "session/customizationUpdated",
        "customization": {"id": "p1", "type": "plugin", "enabled": True, "children": []},
    },
    # `enabled` for 0.7.0, `enablement` for 0.8.0 on (each profile reads its own field)
    {"type": "session/customizationToggled", "id": "p1", "enabled": False,
     "enablement": [{"kind": "global", "enabled": False}]},
    {"type": "session/customizationRemoved", "id": "p1"},
    {"type": "session/workingDirectorySet", "directory": "file:///a"},
    {"type": "session/workingDirectorySet", "directory": "file:///b"},
    {"type": "session/workingDirectorySet", "directory": "file:///c"},
    {
        "type": "session/workingDirectoryReplaced",
        "directory": "file:///c",
        "replacement": "file:///a",
    },
    {
        "type": "session/workingDirectoryReplaced",
        "directory": "file:///b",
        "replacement": "file:///d",
    },
    {"type": "session/workingDirectoryRemoved", "directory": "file:///a"},
    {"type": "session/workingDirectoryRemoved", "directory": "file:///d"},
    {"type": "session/titleChanged", "title": "done"},
    {"type": "session/ready"},
    {"type": "chat/delta", **T1, "partId": "p", "content": "foreign"},
]

OTHER_CHANNELS: list[tuple[str, JSON, list[JSON]]] = [
    (
        "root",
        {"agents": [], "config": {"schema": {}, "values": {"a": 1}}},
        [
            {"type": "root/agentsChanged", "agents": [{"provider": "x"}]},
            {"type": "root/configChanged", "config": {"b": 2}},
            {"type": "root/configChanged", "config": {"c": 3}, "replace": True},
            {"type": "root/activeSessionsChanged", "activeSessions": 2},
        ],
    ),
    (
        "terminal",
        {"title": "sh", "content": [], "claim": CLIENT},
        [
            {"type": "terminal/data", "data": "hi"},
            {
                "type": "terminal/commandExecuted",
                "commandId": "k1",
                "commandLine": "ls",
                "timestamp": 1,
            },
            {"type": "terminal/data", "data": "out"},
            {"type": "terminal/commandFinished", "commandId": "k1", "exitCode": 0},
            {"type": "terminal/claimed", "claim": {"kind": "client", "clientId": "c2"}},
            {"type": "terminal/resized", "cols": 80, "rows": 24},
            {"type": "terminal/cleared"},
            {"type": "terminal/exited", "exitCode": 1},
        ],
    ),
    (
        "changeset",
        {"status": "computing", "files": []},
        [
            {"type": "changeset/fileSet", "file": {"id": "f1", "uri": "file:///x"}},
            {"type": "changeset/filesReviewChanged", "files": ["f1"], "reviewed": True},
            {"type": "changeset/statusChanged", "status": "error", "error": {"message": "x"}},
            {"type": "changeset/statusChanged", "status": "ready"},
            {
                "type": "changeset/operationsChanged",
                "operations": [{"id": "o1", "label": "Apply", "scopes": ["all"], "status": "idle"}],
            },
            {
                "type": "changeset/operationStatusChanged",
                "operationId": "o1",
                "status": "error",
                "error": {"message": "e"},
            },
            {"type": "changeset/operationStatusChanged", "operationId": "o1", "status": "idle"},
            {"type": "changeset/fileRemoved", "fileId": "f1"},
            {"type": "changeset/cleared"},
        ],
    ),
    (
        "annotations",
        {"annotations": []},
        [
            {
                "type": "annotations/set",
                "annotation": {
                    "id": "a1",
                    "turnId": "t1",
                    "resource": "file:///x",
                    "resolved": False,
                    "entries": [{"id": "e1", "text": "hi"}],
                },
            },
            {
                "type": "annotations/entrySet",
                "annotationId": "a1",
                "entry": {"id": "e2", "text": "more"},
            },
            {"type": "annotations/updated", "annotationId": "a1", "resolved": True},
            {"type": "annotations/entryRemoved", "annotationId": "a1", "entryId": "e1"},
            {"type": "annotations/removed", "annotationId": "a1"},
        ],
    ),
    (
        "resourceWatch",
        {"root": "file:///r", "recursive": False},
        [
            {
                "type": "resourceWatch/changed",
                "changes": {"items": [{"uri": "file:///r/a", "type": "created"}]},
            },
        ],
    ),
]


def test_chat_lifecycle_trips_nothing_but_known_issues() -> None:
    found = run_sequence("chat", chat(), CHAT_LIFECYCLE)
    assert not_known(found) == []
    assert ids(found) <= {"INV-030.chat-absent"} | AMBIENT


def test_mcp_auth_lifecycle_is_clean() -> None:
    found = run_sequence("chat", chat(), MCP_AUTH)
    assert not_known(found) == [] and ids(found) <= AMBIENT


@pytest.mark.parametrize("profile", [P070, P080], ids=lambda p: p.label)
def test_session_lifecycle_trips_only_the_input_needed_round_trip(profile: Profile) -> None:
    actions = [
        a
        for a in SESSION_LIFECYCLE
        if profile.at_least("0.8.0") or not a["type"].endswith("Replaced")
    ]
    found = run_sequence("session", session(), actions, profile=profile)
    assert not_known(found) == []
    assert {"INV-014"} <= ids(found) <= {"INV-014"} | PUBLISHED


@pytest.mark.parametrize(
    ("kind", "initial", "actions"), OTHER_CHANNELS, ids=[k for k, _, _ in OTHER_CHANNELS]
)
def test_other_channels_are_clean(kind: str, initial: JSON, actions: list[JSON]) -> None:
    assert run_sequence(kind, initial, actions) == []


def test_060_profile_ignores_the_multiroot_actions_cleanly() -> None:
    found = run_sequence("chat", chat(), CHAT_LIFECYCLE, profile=Profile.for_version("0.6.0"))
    assert not_known(found) == [] and ids(found) <= AMBIENT


# --- the known upstream issues, reproduced by the reference model --------------------------

TURN = {"type": "chat/turnStarted", **T1, "startedAt": "2026-01-01T00:00:01.000Z", "message": MSG}

KNOWN_SEQUENCES: dict[str, tuple[str, JSON, list[JSON], JSON | None]] = {
    "INV-012.strong": (
        "chat",
        chat(),
        [TURN, {"type": "chat/responsePart", **T1, "part": input_part("r1")}],
        None,
    ),
    "INV-014": (
        "session",
        session(),
        [{"type": "session/inputNeededSet", "request": REQUEST}],
        None,
    ),
    "INV-015.strict": (
        "chat",
        chat(),
        [
            TURN,
            {
                "type": "chat/toolCallStart",
                **T1,
                "toolCallId": "tc1",
                "toolName": "x",
                "displayName": "X",
            },
            {"type": "chat/error", **T1, "duration": 1, "error": {"message": "boom"}},
            {
                "type": "chat/toolCallConfirmed",
                **T1,
                "toolCallId": "tc1",
                "approved": True,
                "confirmed": "user-action",
            },
        ],
        None,
    ),
    "INV-030.chat-absent": (
        "chat",
        chat(),
        [{"type": "chat/workingDirectorySet", "directory": "file:///a"}],
        None,
    ),
    "INV-031.reducer": (
        "chat",
        chat(),
        [{"type": "chat/workingDirectorySet", "directory": "file:///elsewhere"}],
        session(workingDirectories=["file:///a"]),
    ),
    "INV-049.reducer": (
        "annotations",
        {"annotations": []},
        [
            {
                "type": "annotations/set",
                "annotation": {
                    "id": "a1",
                    "turnId": "t1",
                    "resource": "file:///x",
                    "resolved": False,
                    "entries": [{"id": "e1", "text": "hi"}],
                },
            },
            {"type": "annotations/entryRemoved", "annotationId": "a1", "entryId": "e1"},
        ],
        None,
    ),
    "INV-050.contentChanged": (
        "changeset",
        {"status": "ready", "files": []},
        [
            {"type": "changeset/contentChanged", "files": [], "error": {"message": "stale"}},
        ],
        None,
    ),
    "INV-051": (
        "chat",
        chat(),
        [
            TURN,
            {
                "type": "chat/toolCallStart",
                **T1,
                "toolCallId": "tc1",
                "toolName": "x",
                "displayName": "X",
            },
            {
                "type": "chat/toolCallReady",
                **T1,
                "toolCallId": "tc1",
                "invocationMessage": "X",
                "confirmed": "not-needed",
            },
            {
                "type": "chat/toolCallComplete",
                **T1,
                "toolCallId": "tc1",
                "result": {
                    "success": True,
                    "pastTenseMessage": "ok",
                    "status": "running",
                    "displayName": "Hijacked",
                },
            },
        ],
        None,
    ),
}


TURN_2 = {**TURN, "turnId": "t2"}
# The sequences of the entries above that reach the states the known probes ask about.
KNOWN_SEQUENCES |= {
    "INV-002.wallclock": ("chat", chat(), [TURN], None),
    "INV-007.published": (
        "session", session(), [{"type": "session/isReadChanged", "isRead": True}], None
    ),
    "INV-015.strict-probe": KNOWN_SEQUENCES["INV-015.strict"],
    "INV-020.active": ("chat", chat(), [TURN, {"type": "chat/truncated", "turnId": "nope"}], None),
    "INV-020.active-probe": ("chat", chat(), [TURN, TURN_2], None),
    "INV-022.reducer": ("chat", chat(), [TURN, TURN_2], None),
    "INV-022.probe": ("chat", chat(), [TURN, TURN_2], None),
    "INV-051.probe": KNOWN_SEQUENCES["INV-051"],
}


def test_every_known_issue_has_a_reproduction() -> None:
    known = {i for i, inv in REGISTRY.items() if inv.severity == "known"}
    assert known == set(KNOWN_SEQUENCES)


@pytest.mark.parametrize("inv_id", sorted(KNOWN_SEQUENCES))
def test_reference_model_reproduces_the_known_issue(inv_id: str) -> None:
    if inv_id in {"INV-007.published"} and not os.environ.get(ENV_VAR):
        pytest.skip(f"{ENV_VAR} not set: the published schema comes from the spec directory")
    kind, initial, actions, owning = KNOWN_SEQUENCES[inv_id]
    found = run_sequence(kind, initial, actions, owning_session=owning)
    assert inv_id in ids(found), f"the reference model no longer trips {inv_id}: {found}"
    assert all(v.severity == "known" for v in found), not_known(found)
