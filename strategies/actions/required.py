"""Required payload fields per action type (0.7.0 schema, INV-007-patched, plus 0.8.0's replace).

The state-aware builders always emit these; the adversarial tactics remove one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

#: Required payload fields per action type besides `type` (`chat/toolCallConfirmed` lists the
#: fields common to its approved and denied variants).
REQUIRED_FIELDS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "root/agentsChanged": ("agents",),
        "root/activeSessionsChanged": ("activeSessions",),
        "root/terminalsChanged": ("terminals",),
        "root/configChanged": ("config",),
        "session/ready": (),
        "session/creationFailed": ("error",),
        "session/chatAdded": ("summary",),
        "session/chatRemoved": ("chat",),
        "session/chatUpdated": ("chat", "changes"),
        "session/defaultChatChanged": (),
        "session/titleChanged": ("title",),
        "session/serverToolsChanged": ("tools",),
        "session/activeClientSet": ("activeClient",),
        "session/activeClientRemoved": ("clientId",),
        "session/workingDirectorySet": ("directory",),
        "session/workingDirectoryRemoved": ("directory",),
        "session/workingDirectoryReplaced": ("directory", "replacement"),
        "session/inputNeededSet": ("request",),
        "session/inputNeededRemoved": ("id",),
        "session/customizationsChanged": ("customizations",),
        "session/customizationToggled": ("id", "enabled"),
        "session/customizationUpdated": ("customization",),
        "session/customizationRemoved": ("id",),
        "session/mcpServerStateChanged": ("id", "state"),
        "session/mcpServerStartRequested": ("id",),
        "session/mcpServerStopRequested": ("id",),
        "session/isReadChanged": ("isRead",),
        "session/isArchivedChanged": ("isArchived",),
        "session/activityChanged": (),
        "session/changesetsChanged": (),
        "session/configChanged": ("config",),
        "session/metaChanged": (),
        "chat/turnStarted": ("turnId", "startedAt", "message"),
        "chat/delta": ("turnId", "partId", "content"),
        "chat/responsePart": ("turnId", "part"),
        "chat/toolCallStart": ("turnId", "toolCallId", "toolName", "displayName"),
        "chat/toolCallDelta": ("turnId", "toolCallId"),
        "chat/toolCallReady": ("turnId", "toolCallId", "invocationMessage"),
        "chat/toolCallConfirmed": ("turnId", "toolCallId", "approved"),
        "chat/toolCallComplete": ("turnId", "toolCallId", "result"),
        "chat/toolCallResultConfirmed": ("turnId", "toolCallId", "approved"),
        "chat/toolCallContentChanged": ("turnId", "toolCallId", "content"),
        "chat/toolCallAuthRequired": ("turnId", "toolCallId", "auth"),
        "chat/toolCallAuthResolved": ("turnId", "toolCallId"),
        "chat/turnComplete": ("turnId", "duration"),
        "chat/turnCancelled": ("turnId", "duration"),
        "chat/error": ("turnId", "duration", "error"),
        "chat/activityChanged": (),
        "chat/workingDirectorySet": ("directory",),
        "chat/workingDirectoryRemoved": ("directory",),
        "chat/usage": ("turnId", "usage"),
        "chat/reasoning": ("turnId", "partId", "content"),
        "chat/pendingMessageSet": ("kind", "id", "message"),
        "chat/pendingMessageRemoved": ("kind", "id"),
        "chat/queuedMessagesReordered": ("order",),
        "chat/draftChanged": (),
        "chat/inputRequested": ("request",),
        "chat/inputAnswerChanged": ("requestId", "questionId"),
        "chat/inputCompleted": ("requestId", "response"),
        "chat/truncated": (),
        "chat/turnsLoaded": ("turns",),
        "changeset/statusChanged": ("status",),
        "changeset/fileSet": ("file",),
        "changeset/fileRemoved": ("fileId",),
        "changeset/filesReviewChanged": ("files", "reviewed"),
        "changeset/contentChanged": ("files",),
        "changeset/operationsChanged": (),
        "changeset/operationStatusChanged": ("operationId", "status"),
        "changeset/cleared": (),
        "annotations/set": ("annotation",),
        "annotations/updated": ("annotationId",),
        "annotations/removed": ("annotationId",),
        "annotations/entrySet": ("annotationId", "entry"),
        "annotations/entryRemoved": ("annotationId", "entryId"),
        "terminal/data": ("data",),
        "terminal/input": ("data",),
        "terminal/resized": ("cols", "rows"),
        "terminal/claimed": ("claim",),
        "terminal/titleChanged": ("title",),
        "terminal/cwdChanged": ("cwd",),
        "terminal/exited": (),
        "terminal/cleared": (),
        "terminal/commandDetectionAvailable": (),
        "terminal/commandExecuted": ("commandId", "commandLine", "timestamp"),
        "terminal/commandFinished": ("commandId",),
        "resourceWatch/changed": ("changes",),
    }
)
#: Payload fields whose schema accepts any JSON value (a "wrong type" cannot exist for them).
ANY_TYPED_FIELDS: Final = frozenset({("chat/toolCallConfirmed", "approved")})


def missing_required(action: dict[str, object], action_type: str) -> list[str]:
    """Required fields of `action_type` (plus `type`) that `action` lacks."""
    return [k for k in ("type", *REQUIRED_FIELDS[action_type]) if k not in action]
