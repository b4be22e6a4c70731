"""Which action payloads the model accepts: the required fields of each type, nested ones included.

The spec leaves reducer behaviour on a schema-invalid payload unspecified (REDUCERS.md §2.3 item
4), so the model refuses one with `MalformedAction` before a handler sees it, and the engine
treats the step as a probe. `REQUIRED` lists, per action type, the fields the 0.7.0 action schema
requires, one level deep (`x` at the top; `x.y` — when `x` is present it is an object with `y`;
`x[].y` — `x` is a list whose items are objects with `y`), plus 0.8.0's
`session/workingDirectoryReplaced`. It states facts of the schema, not the schema: a test derives
the same table from `actions.schema.json` (`harness.spec.action_schema.required_paths`) and
keeps the two equal. With a spec directory the engine validates the full schema too (types,
enums, deeper levels).

JSON `null` counts as absent (REDUCERS.md §7).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Final

from harness.spec import payload_shapes

_T = tuple[str, ...]

_ERROR = ("error.errorType", "error.message")
_MESSAGE = ("message.origin", "message.text")
_OPERATIONS = ("operations[].id", "operations[].label", "operations[].scopes", "operations[].status")
_CUSTOMIZATION = ("enabled", "id", "name", "type", "uri")

#: action type -> required payload paths (besides `type`).
REQUIRED: Final[Mapping[str, _T]] = MappingProxyType(
    {
        "root/agentsChanged": ("agents", "agents[].description", "agents[].displayName", "agents[].models", "agents[].provider"),
        "root/activeSessionsChanged": ("activeSessions",),
        "root/terminalsChanged": ("terminals", "terminals[].claim", "terminals[].resource", "terminals[].title"),
        "root/configChanged": ("config",),
        "session/creationFailed": ("error", *_ERROR),
        "session/chatAdded": ("summary", "summary.modifiedAt", "summary.resource", "summary.status", "summary.title"),
        "session/chatRemoved": ("chat",),
        "session/chatUpdated": ("changes", "chat"),
        "session/titleChanged": ("title",),
        "session/isReadChanged": ("isRead",),
        "session/isArchivedChanged": ("isArchived",),
        "session/changesetsChanged": ("changesets[].changeKind", "changesets[].label", "changesets[].uriTemplate"),
        "session/serverToolsChanged": ("tools", "tools[].name"),
        "session/activeClientSet": ("activeClient", "activeClient.clientId", "activeClient.tools"),
        "session/activeClientRemoved": ("clientId",),
        "session/workingDirectorySet": ("directory",),
        "session/workingDirectoryRemoved": ("directory",),
        "session/workingDirectoryReplaced": ("directory", "replacement"),  # 0.8.0
        "session/inputNeededSet": ("request", "request.chat", "request.id", "request.kind"),
        "session/inputNeededRemoved": ("id",),
        "session/customizationsChanged": ("customizations", *(f"customizations[].{f}" for f in _CUSTOMIZATION)),
        "session/customizationToggled": ("enabled", "id"),
        "session/customizationUpdated": ("customization", *(f"customization.{f}" for f in _CUSTOMIZATION)),
        "session/customizationRemoved": ("id",),
        "session/mcpServerStateChanged": ("id", "state", "state.kind"),
        "session/mcpServerStartRequested": ("id",),
        "session/mcpServerStopRequested": ("id",),
        "session/configChanged": ("config",),
        "chat/turnStarted": ("message", *_MESSAGE, "startedAt", "turnId"),
        "chat/delta": ("content", "partId", "turnId"),
        "chat/responsePart": ("part", "part.kind", "turnId"),
        "chat/toolCallStart": ("contributor.kind", "displayName", "toolCallId", "toolName", "turnId"),
        "chat/toolCallDelta": ("toolCallId", "turnId"),
        "chat/toolCallReady": (
            "contributor.kind", "edits.items", "invocationMessage", "options[].id", "options[].kind",
            "options[].label", "riskAssessment.kind", "riskAssessment.status", "toolCallId", "turnId",
        ),
        "chat/toolCallConfirmed": (
            "approved", "toolCallId", "turnId", "userSuggestion.origin", "userSuggestion.text",
        ),
        "chat/toolCallComplete": ("result", "result.pastTenseMessage", "result.success", "toolCallId", "turnId"),
        "chat/toolCallResultConfirmed": ("approved", "toolCallId", "turnId"),
        "chat/toolCallContentChanged": ("content", "content[].type", "toolCallId", "turnId"),
        "chat/toolCallAuthRequired": ("auth", "auth.reason", "auth.resource", "toolCallId", "turnId"),
        "chat/toolCallAuthResolved": ("toolCallId", "turnId"),
        "chat/turnComplete": ("duration", "turnId"),
        "chat/turnCancelled": ("duration", "turnId"),
        "chat/error": ("duration", "error", *_ERROR, "turnId"),
        "chat/workingDirectorySet": ("directory",),
        "chat/workingDirectoryRemoved": ("directory",),
        "chat/usage": ("turnId", "usage"),
        "chat/reasoning": ("content", "partId", "turnId"),
        "chat/turnsLoaded": ("turns", "turns[].id", "turns[].message", "turns[].responseParts", "turns[].state"),
        "chat/pendingMessageSet": ("id", "kind", "message", *_MESSAGE),
        "chat/pendingMessageRemoved": ("id", "kind"),
        "chat/queuedMessagesReordered": ("order",),
        "chat/draftChanged": ("draft.origin", "draft.text"),
        "chat/inputRequested": ("request", "request.id"),
        "chat/inputAnswerChanged": ("answer.state", "questionId", "requestId"),
        "chat/inputCompleted": ("requestId", "response"),
        "terminal/data": ("data",),
        "terminal/input": ("data",),
        "terminal/resized": ("cols", "rows"),
        "terminal/claimed": ("claim", "claim.kind"),
        "terminal/titleChanged": ("title",),
        "terminal/cwdChanged": ("cwd",),
        "terminal/commandExecuted": ("commandId", "commandLine", "timestamp"),
        "terminal/commandFinished": ("commandId",),
        "changeset/statusChanged": (*_ERROR, "status"),
        "changeset/fileSet": ("file", "file.edit", "file.id"),
        "changeset/fileRemoved": ("fileId",),
        "changeset/filesReviewChanged": ("files", "reviewed"),
        "changeset/contentChanged": (*_ERROR, "files", "files[].edit", "files[].id", *_OPERATIONS),
        "changeset/operationsChanged": _OPERATIONS,
        "changeset/operationStatusChanged": (*_ERROR, "operationId", "status"),
        "annotations/set": (
            "annotation", "annotation.entries", "annotation.id", "annotation.resolved",
            "annotation.resource", "annotation.turnId",
        ),
        "annotations/updated": ("annotationId", "range.end", "range.start"),
        "annotations/removed": ("annotationId",),
        "annotations/entrySet": ("annotationId", "entry", "entry.id", "entry.text"),
        "annotations/entryRemoved": ("annotationId", "entryId"),
        "resourceWatch/changed": ("changes", "changes.items"),
    }
)


_C8 = ("id", "name", "type", "uri")
_NEVER = (99, 0, 0)
Version = tuple[int, int, int]

#: What later (and earlier) versions require differently, as data: (from, before, type -> paths)
#: holds in versions `from <= v < before`, laid over `REQUIRED` (the 0.7.0 facts). The 0.8.0 and
#: 0.9.0/1.0.0 rows are the 1.0.0 actions schema's difference from 0.7.0's (CHANGELOG 0.8.0 for
#: the customization rows; no 0.9.0 schema was recovered, so 0.9.0 takes 1.0.0's facts — a type
#: new in 1.0.0 never reaches the check under 0.9.0); `tests/test_payload_versions.py` re-derives them.
REQUIRED_CHANGES: Final[tuple[tuple[Version, Version, Mapping[str, _T]], ...]] = (
    # 0.6.0 requires a tool-call delta's `content` (docs/profiles.md decision 3).
    ((0, 0, 0), (0, 7, 0), {"chat/toolCallDelta": ("content", "toolCallId", "turnId")}),
    ((0, 8, 0), _NEVER, {
        "session/customizationToggled": ("enablement", "enablement[].enabled", "enablement[].kind", "id"),
        "session/customizationUpdated": ("customization", *(f"customization.{f}" for f in _C8)),
        "session/customizationsChanged": ("customizations", *(f"customizations[].{f}" for f in _C8)),
    }),
    ((0, 9, 0), _NEVER, {
        "annotations/set": (
            "annotation", "annotation.entries", "annotation.id", "annotation.origin",
            "annotation.resolved", "annotation.resource",
        ),
        "annotations/updated": ("annotationId", "origin.session", "range.end", "range.start"),
        "automation/createRequested": (
            "definition", "definition.enabled", "definition.message", "definition.session",
            "definition.title", "definition.triggers", "resource",
        ),
        "automation/removed": ("resource",),
        "automation/set": (
            "automation", "automation.createdAt", "automation.definition", "automation.modifiedAt",
            "automation.operations", "automation.resource", "automation.runs",
        ),
        "automation/updateRequested": ("changes", "resource"),
        "automationRun/lifecycleChanged": ("lifecycle", "lifecycle.createdAt", "lifecycle.status"),
        "automationRun/sessionRemoved": ("session",),
        "automationRun/sessionSet": ("session",),
        "canvas/stateChanged": ("canvas", "canvas.canvasId", "canvas.extensionId", "canvas.instanceId"),
        "changeset/contentChanged": ("files", "files[].edit", "files[].id", *_OPERATIONS),
        "chat/backgroundWorkRemoved": ("id",),
        "chat/backgroundWorkSet": ("work", "work.id", "work.kind", "work.label", "work.startedAt"),
        "chat/canvasesChanged": ("canvases[].resource",),
        "chat/changesetsChanged": ("changesets[].changeKind", "changesets[].label", "changesets[].uriTemplate"),
        "chat/error": ("duration", "part", "part.error", "part.kind", "turnId"),
        "chat/isArchivedChanged": ("isArchived",),
        "chat/isReadChanged": ("isRead",),
        "chat/movableChanged": ("movable",),
        "chat/turnResume": ("turnId",),
        "root/terminalsChanged": (
            "terminals", "terminals[].claim", "terminals[].lifecycle", "terminals[].resource", "terminals[].title",
        ),
        "session/chatsReordered": ("chats",),
        "session/mcpServerBackgroundRequested": ("id",),
    }),
)


def required_for(version: Version) -> Mapping[str, _T]:
    """The required payload paths of every action type in protocol `version`."""
    return _required_for(version)[0]


@lru_cache(maxsize=16)
def _required_for(version: Version) -> tuple[Mapping[str, _T], Mapping[str, Any]]:
    table = dict(REQUIRED)
    for lo, hi, changes in REQUIRED_CHANGES:
        if lo <= version < hi:
            table.update(changes)
    return MappingProxyType(table), {t: _compile(p) for t, p in table.items()}


def _compile(paths: _T) -> tuple[tuple[str, str | None, bool], ...]:
    """`x` -> (x, None, False); `x.y` -> (x, y, False); `x[].y` -> (x, y, True)."""
    out = []
    for p in paths:
        head, _, tail = p.partition(".")
        listed = head.endswith("[]")
        out.append((head.removesuffix("[]"), tail or None, listed))
    return tuple(out)


_CHECKS: Final = {t: _compile(p) for t, p in REQUIRED.items()}


def problem(action: Mapping[str, Any], version: Version | None = None) -> str | None:
    """Why `action` (a known type, an object) lacks a field its schema requires in protocol
    `version` (None: the 0.7.0 facts), or None: the first level (`REQUIRED` with
    `REQUIRED_CHANGES`, with its type checks of parents), then every depth and the union
    variants (`harness.spec.payload_shapes`)."""
    return _first_level(action, version) or payload_shapes.problem(action, version)


def _first_level(action: Mapping[str, Any], version: Version | None = None) -> str | None:
    table = _CHECKS if version is None else _required_for(version)[1]
    checks = table.get(action.get("type"))  # type: ignore[arg-type]
    if not checks:
        return None
    for key, sub, listed in checks:
        value = action.get(key)
        if sub is None:
            if value is None:
                return f"required field {key} is absent"
            continue
        if value is None:
            continue  # an optional parent, absent
        if listed:
            if not isinstance(value, list):
                return f"{key} must be a list, not {_json_kind(value)}"
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    return f"{key}[{i}] must be an object, not {_json_kind(item)}"
                if item.get(sub) is None:
                    return f"required field {key}[{i}].{sub} is absent"
        elif not isinstance(value, dict):
            return f"{key} must be an object, not {_json_kind(value)}"
        elif value.get(sub) is None:
            return f"required field {key}.{sub} is absent"
    return None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
