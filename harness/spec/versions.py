"""Protocol versions, the action registry and the client-dispatchable set.

Facts from REDUCERS.md §2.4, §2.4.1, §2.6 and §2.6.1: which version introduced each action type,
and which types a client may dispatch. The pinned target of this harness is spec 0.7.0; 0.8.0,
0.9.0 and 1.0.0 are full profiles (their action types from the CHANGELOG entries and the 1.0.0
schema, `ahp-spec/DELTA-1.0.0.md`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

Version = tuple[int, int, int]

PINNED_VERSION: Final = "0.7.0"
#: Versions the harness can model, oldest first.
KNOWN_VERSIONS: Final = ("0.5.1", "0.5.2", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "1.0.0")

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_version(text: str) -> Version:
    """Parse `MAJOR.MINOR.PATCH`; raise ValueError with the offending text otherwise (a string's
    answer is cached: the live checks ask it of the same few versions for every envelope)."""
    return _parse_str(text) if type(text) is str else _parse(text)


@lru_cache(maxsize=256)
def _parse_str(text: str) -> Version:
    return _parse(text)


def _parse(text: str) -> Version:
    m = _SEMVER.match(text.strip())
    if not m:
        raise ValueError(f"not a protocol version (want MAJOR.MINOR.PATCH): {text!r}")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def format_version(v: Version) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}"


_TERMINAL = (
    "data input resized claimed titleChanged cwdChanged exited cleared "
    "commandDetectionAvailable commandExecuted commandFinished"
)
_CHAT_0_4 = (
    "turnStarted delta responsePart turnComplete turnCancelled error usage reasoning "
    "toolCallStart toolCallDelta toolCallReady toolCallConfirmed toolCallComplete "
    "toolCallResultConfirmed toolCallContentChanged pendingMessageSet pendingMessageRemoved "
    "queuedMessagesReordered inputRequested inputAnswerChanged inputCompleted truncated"
)


def _family(prefix: str, names: str) -> list[str]:
    return [f"{prefix}/{n}" for n in names.split()]


_INTRODUCED: dict[str, list[str]] = {
    "0.1.0": [
        *_family("root", "agentsChanged activeSessionsChanged terminalsChanged configChanged"),
        *_family(
            "session",
            "ready creationFailed titleChanged serverToolsChanged customizationsChanged "
            "customizationToggled customizationUpdated isReadChanged isArchivedChanged "
            "activityChanged configChanged metaChanged",
        ),
        *_family("terminal", _TERMINAL),
    ],
    "0.2.0": [
        "session/customizationRemoved",
        "session/changesetsChanged",
        *_family("changeset", "statusChanged fileSet fileRemoved operationsChanged cleared"),
        "resourceWatch/changed",
    ],
    "0.3.0": ["session/mcpServerStateChanged", "changeset/operationStatusChanged"],
    "0.4.0": [
        *_family("session", "chatAdded chatRemoved chatUpdated defaultChatChanged"),
        "changeset/contentChanged",
        *_family("annotations", "set updated removed entrySet entryRemoved"),
        *_family("chat", _CHAT_0_4),
    ],
    "0.5.0": [
        "session/activeClientSet",
        "session/activeClientRemoved",
        "chat/activityChanged",
        "chat/draftChanged",
    ],
    "0.5.1": ["session/inputNeededSet", "session/inputNeededRemoved", "chat/turnsLoaded"],
    "0.5.2": ["session/mcpServerStartRequested", "session/mcpServerStopRequested"],
    "0.6.0": ["chat/toolCallAuthRequired", "chat/toolCallAuthResolved", "changeset/filesReviewChanged"],
    "0.7.0": [
        "session/workingDirectorySet",
        "session/workingDirectoryRemoved",
        "chat/workingDirectorySet",
        "chat/workingDirectoryRemoved",
    ],
    "0.8.0": ["session/workingDirectoryReplaced"],
    "0.9.0": [
        "chat/turnResume",
        *_family("automation", "createRequested updateRequested set removed"),
        *_family(
            "automationRun",
            "lifecycleChanged sessionSet sessionRemoved primarySessionChanged cancelRequested",
        ),
    ],
    "1.0.0": [
        *_family(
            "chat",
            "isReadChanged isArchivedChanged changesetsChanged movableChanged "
            "backgroundWorkSet backgroundWorkRemoved canvasesChanged",
        ),
        "session/chatsReordered",
        "session/mcpServerBackgroundRequested",
        "canvas/stateChanged",
    ],
}

#: action type -> the version that introduced it.
ACTION_INTRODUCED_IN: Final[dict[str, Version]] = {
    t: parse_version(v) for v, types in _INTRODUCED.items() for t in types
}

_CLIENT_DISPATCHABLE = [
    "root/configChanged",
    *_family(
        "session",
        "titleChanged activeClientSet activeClientRemoved customizationToggled "
        "mcpServerStartRequested mcpServerStopRequested isReadChanged isArchivedChanged "
        "configChanged workingDirectorySet workingDirectoryRemoved workingDirectoryReplaced "
        "mcpServerBackgroundRequested",
    ),
    *_family(
        "chat",
        "turnStarted toolCallConfirmed toolCallComplete toolCallResultConfirmed "
        "toolCallContentChanged turnCancelled pendingMessageSet pendingMessageRemoved "
        "queuedMessagesReordered draftChanged inputAnswerChanged inputCompleted truncated "
        "workingDirectorySet workingDirectoryRemoved turnResume isReadChanged isArchivedChanged",
    ),
    "changeset/filesReviewChanged",
    *_family("automation", "createRequested updateRequested removed"),
    "automationRun/cancelRequested",
    *_family("annotations", "set updated removed entrySet entryRemoved"),
    *_family("terminal", "input resized claimed titleChanged cleared"),
]
#: Types a client may dispatch (any version); a host SHOULD reject every other client dispatch.
CLIENT_DISPATCHABLE: Final = frozenset(_CLIENT_DISPATCHABLE)

#: State kinds and the action-type prefix each one owns.
KIND_PREFIX: Final = {
    "root": "root/",
    "session": "session/",
    "chat": "chat/",
    "terminal": "terminal/",
    "changeset": "changeset/",
    "annotations": "annotations/",
    "resourceWatch": "resourceWatch/",
    "automation": "automation/",
    "automationRun": "automationRun/",
    "canvas": "canvas/",
}
#: State kinds newer than the first release, and the version that introduced each (a profile
#: older than that has no such channel).
KIND_INTRODUCED_IN: Final[dict[str, Version]] = {
    "automation": (0, 9, 0),
    "automationRun": (0, 9, 0),
    "canvas": (1, 0, 0),
}
KINDS: Final = tuple(KIND_PREFIX)

#: State kind -> the schema definition of its state type (REDUCERS.md §2.1).
STATE_DEFINITIONS: Final = {
    "root": "RootState",
    "session": "SessionState",
    "chat": "ChatState",
    "terminal": "TerminalState",
    "changeset": "ChangesetState",
    "annotations": "AnnotationsState",
    "resourceWatch": "ResourceWatchState",
    "automation": "AutomationState",
    "automationRun": "AutomationRunState",
    "canvas": "CanvasState",
}


def kinds_of(version: Version | str) -> tuple[str, ...]:
    """The state kinds protocol `version` has (its channels), in `KINDS` order."""
    v = parse_version(version) if isinstance(version, str) else version
    return tuple(k for k in KINDS if KIND_INTRODUCED_IN.get(k, (0, 0, 0)) <= v)


def introduced_in(action_type: str) -> Version | None:
    """The version that introduced `action_type`, or None when the type is unknown."""
    return ACTION_INTRODUCED_IN.get(action_type)


def is_known_to(action_type: str, version: Version | str) -> bool:
    """True when `action_type` exists in protocol `version` (introduced at or before it)."""
    v = parse_version(version) if isinstance(version, str) else version
    intro = ACTION_INTRODUCED_IN.get(action_type)
    return intro is not None and intro <= v


def is_newer_than(action_type: str, version: Version | str) -> bool:
    """True when `action_type` is known and was introduced after `version`: a peer that
    negotiated `version` MUST NOT receive it (INV-046)."""
    v = parse_version(version) if isinstance(version, str) else version
    intro = ACTION_INTRODUCED_IN.get(action_type)
    return intro is not None and intro > v


def action_types(version: Version | str = PINNED_VERSION, kind: str | None = None) -> list[str]:
    """Every action type known to `version`, optionally only those of state kind `kind`."""
    v = parse_version(version) if isinstance(version, str) else version
    prefix = KIND_PREFIX[kind] if kind is not None else ""
    return sorted(t for t, i in ACTION_INTRODUCED_IN.items() if i <= v and t.startswith(prefix))


def kind_of(action_type: str) -> str | None:
    """The state kind whose reducer owns `action_type` (by prefix), or None."""
    for kind, prefix in KIND_PREFIX.items():
        if action_type.startswith(prefix):
            return kind
    return None


def is_client_dispatchable(action_type: str, version: Version | str = PINNED_VERSION) -> bool:
    return action_type in CLIENT_DISPATCHABLE and is_known_to(action_type, version)
