"""The payload facts of the actions schema that changed after 0.7.0, as data per version.

Derived from the 1.0.0 actions schema (`harness.spec.action_schema.payload_shapes`) by its
difference from the 0.7.0 tables of `payload_shapes.py`; no spec folder is read at run time.
`SINCE_0_8_0` holds what 0.8.0 changed (customization enablement, the replace action); the
0.9.0 schema was not recovered, so `SINCE_0_9_0` holds every other 1.0.0 difference — a type
1.0.0 introduced never reaches the check under 0.9.0 (the profile does not know it), and the
shapes 1.0.0 only renamed (`FileEditSide`, `FileEditCollection`) have the same JSON in 0.9.0.
`BackgroundWork` is a nonexhaustive union (fixture 283-chat keeps an unknown kind; the schema's
`oneOf` does not say so — docs/profiles.md decision 10). `ToolCallRunningState` and `ToolCallAuthRequiredState` keep their 0.7.0 facts: the 1.0.0
derivation reaches them outside their union first and so drops their `status` constant.
`tests/test_payload_versions.py` re-derives both from the 1.0.0 schema and keeps them equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .shape import Shape

# fmt: off
SHAPES_SINCE_0_8_0: Final[Mapping[str, Shape]] = {
    'ClientPluginCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'childEnablement': 'ClientPluginCustomization.childEnablement', 'children': 'ChildCustomization[]', 'enablement': 'CustomizationEnablement[]', 'icons': 'Icon[]', 'load': 'CustomizationLoadState', 'range': 'TextRange'}, consts={}, variants=(), values=None),
    'ClientPluginCustomization.childEnablement': Shape(required=(), fields={}, consts={}, variants=(), values='CustomizationEnablement[]'),
    'CustomizationEnablement': Shape(required=(), fields={}, consts={}, variants=('CustomizationEnablement|0', 'CustomizationEnablement|1', 'CustomizationEnablement|2'), values=None),
    'CustomizationEnablement|0': Shape(required=('enabled', 'kind'), fields={}, consts={'kind': 'global'}, variants=(), values=None),
    'CustomizationEnablement|1': Shape(required=('enabled', 'kind', 'uri'), fields={}, consts={'kind': 'workspace'}, variants=(), values=None),
    'CustomizationEnablement|2': Shape(required=('enabled', 'kind'), fields={}, consts={'kind': 'session'}, variants=(), values=None),
    'McpServerCustomization': Shape(required=('id', 'name', 'state', 'type', 'uri'), fields={'enablement': 'CustomizationEnablement[]', 'icons': 'Icon[]', 'mcpApp': 'McpServerCustomizationApps', 'range': 'TextRange', 'state': 'McpServerState'}, consts={'type': 'mcpServer'}, variants=(), values=None),
    'PluginCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'children': 'ChildCustomization[]', 'enablement': 'CustomizationEnablement[]', 'icons': 'Icon[]', 'load': 'CustomizationLoadState', 'range': 'TextRange'}, consts={'type': 'plugin'}, variants=(), values=None),
    'SessionCustomizationToggledAction': Shape(required=('enablement', 'id'), fields={'enablement': 'CustomizationEnablement[]'}, consts={}, variants=(), values=None),
    'SessionWorkingDirectoryReplacedAction': Shape(required=('directory', 'replacement'), fields={}, consts={}, variants=(), values=None),
}
ACTIONS_SINCE_0_8_0: Final[Mapping[str, str]] = {
    'session/workingDirectoryReplaced': 'SessionWorkingDirectoryReplacedAction',
}
SHAPES_SINCE_0_9_0: Final[Mapping[str, Shape]] = {
    'Annotation': Shape(required=('entries', 'id', 'origin', 'resolved', 'resource'), fields={'entries': 'AnnotationEntry[]', 'origin': 'AnnotationOrigin', 'range': 'TextRange'}, consts={}, variants=(), values=None),
    'AnnotationOrigin': Shape(required=('session',), fields={}, consts={}, variants=(), values=None),
    'AnnotationsUpdatedAction': Shape(required=('annotationId',), fields={'origin': 'AnnotationOrigin', 'range': 'TextRange'}, consts={}, variants=(), values=None),
    'AutomationAfterDateCondition': Shape(required=('date', 'kind'), fields={}, consts={'kind': 'afterDate'}, variants=(), values=None),
    'AutomationAfterRunsCondition': Shape(required=('kind', 'max'), fields={}, consts={'kind': 'afterRuns'}, variants=(), values=None),
    'AutomationCancelledRunLifecycle': Shape(required=('completedAt', 'createdAt', 'status'), fields={}, consts={'status': 'cancelled'}, variants=(), values=None),
    'AutomationCompletedRunLifecycle': Shape(required=('completedAt', 'createdAt', 'startedAt', 'status'), fields={}, consts={'status': 'completed'}, variants=(), values=None),
    'AutomationCreateRequestedAction': Shape(required=('definition', 'resource'), fields={'definition': 'AutomationDefinition'}, consts={}, variants=(), values=None),
    'AutomationDefinition': Shape(required=('enabled', 'message', 'session', 'title', 'triggers'), fields={'disableConditions': 'AutomationDisableCondition[]', 'message': 'Message', 'session': 'AutomationSessionTemplate', 'triggers': 'AutomationTrigger[]'}, consts={}, variants=(), values=None),
    'AutomationDefinitionPatch': Shape(required=(), fields={'disableConditions': 'AutomationDisableCondition[]', 'message': 'Message', 'session': 'AutomationSessionTemplate', 'triggers': 'AutomationTrigger[]'}, consts={}, variants=(), values=None),
    'AutomationDisableCondition': Shape(required=(), fields={}, consts={}, variants=('AutomationAfterRunsCondition', 'AutomationAfterDateCondition'), values=None),
    'AutomationEntry': Shape(required=('createdAt', 'definition', 'modifiedAt', 'operations', 'resource', 'runs'), fields={'customizations': 'PluginCustomization[]', 'definition': 'AutomationDefinition', 'runs': 'AutomationRunSummary[]'}, consts={}, variants=(), values=None),
    'AutomationEventTrigger': Shape(required=('events', 'id', 'kind', 'title', 'type'), fields={'events': 'AutomationTriggerEventDefinition[]'}, consts={'kind': 'event'}, variants=(), values=None),
    'AutomationFailedRunLifecycle': Shape(required=('completedAt', 'createdAt', 'error', 'status'), fields={'error': 'ErrorInfo'}, consts={'status': 'failed'}, variants=(), values=None),
    'AutomationManualRunOrigin': Shape(required=('kind',), fields={}, consts={'kind': 'manual'}, variants=(), values=None),
    'AutomationPendingRunLifecycle': Shape(required=('createdAt', 'status'), fields={}, consts={'status': 'pending'}, variants=(), values=None),
    'AutomationRemovedAction': Shape(required=('resource',), fields={}, consts={}, variants=(), values=None),
    'AutomationRunCancelRequestedAction': Shape(),
    'AutomationRunLifecycle': Shape(required=(), fields={}, consts={}, variants=('AutomationPendingRunLifecycle', 'AutomationRunningRunLifecycle', 'AutomationCompletedRunLifecycle', 'AutomationFailedRunLifecycle', 'AutomationCancelledRunLifecycle'), values=None),
    'AutomationRunLifecycleChangedAction': Shape(required=('lifecycle',), fields={'lifecycle': 'AutomationRunLifecycle'}, consts={}, variants=(), values=None),
    'AutomationRunOrigin': Shape(required=(), fields={}, consts={}, variants=('AutomationManualRunOrigin', 'AutomationTriggeredRunOrigin'), values=None),
    'AutomationRunPrimarySessionChangedAction': Shape(),
    'AutomationRunSessionRemovedAction': Shape(required=('session',), fields={}, consts={}, variants=(), values=None),
    'AutomationRunSessionSetAction': Shape(required=('session',), fields={}, consts={}, variants=(), values=None),
    'AutomationRunSummary': Shape(required=('automation', 'lifecycle', 'origin', 'resource', 'sessionCount'), fields={'lifecycle': 'AutomationRunLifecycle', 'origin': 'AutomationRunOrigin'}, consts={}, variants=(), values=None),
    'AutomationRunningRunLifecycle': Shape(required=('createdAt', 'startedAt', 'status'), fields={}, consts={'status': 'running'}, variants=(), values=None),
    'AutomationSchedule': Shape(required=('expression', 'timeZone'), fields={}, consts={}, variants=(), values=None),
    'AutomationScheduleTrigger': Shape(required=('id', 'kind', 'schedule'), fields={'schedule': 'AutomationSchedule'}, consts={'kind': 'schedule'}, variants=(), values=None),
    'AutomationSessionTemplate': Shape(required=(), fields={'agent': 'AgentSelection', 'customizations': 'ClientPluginCustomization[]', 'model': 'ModelSelection'}, consts={}, variants=(), values=None),
    'AutomationSetAction': Shape(required=('automation',), fields={'automation': 'AutomationEntry'}, consts={}, variants=(), values=None),
    'AutomationTrigger': Shape(required=(), fields={}, consts={}, variants=('AutomationScheduleTrigger', 'AutomationEventTrigger'), values=None),
    'AutomationTriggerEventDefinition': Shape(required=('id', 'title'), fields={}, consts={}, variants=(), values=None),
    'AutomationTriggeredRunOrigin': Shape(required=('kind', 'triggerId'), fields={}, consts={'kind': 'trigger'}, variants=(), values=None),
    'AutomationUpdateRequestedAction': Shape(required=('changes', 'resource'), fields={'changes': 'AutomationDefinitionPatch'}, consts={}, variants=(), values=None),
    'BackgroundShellWork': Shape(required=('command', 'id', 'kind', 'label', 'startedAt'), fields={}, consts={'kind': 'shell'}, variants=(), values=None),
    'BackgroundSubagentWork': Shape(required=('chat', 'id', 'kind', 'label', 'startedAt'), fields={}, consts={'kind': 'subagent'}, variants=(), values=None),
    'BackgroundWork': Shape(variants=('BackgroundShellWork', 'BackgroundSubagentWork'), open=True),
    'CanvasReference': Shape(required=('resource',), fields={}, consts={}, variants=(), values=None),
    'CanvasState': Shape(required=('canvasId', 'extensionId', 'instanceId'), fields={}, consts={}, variants=(), values=None),
    'CanvasStateChangedAction': Shape(required=('canvas',), fields={'canvas': 'CanvasState'}, consts={}, variants=(), values=None),
    'ChangesetContentChangedAction': Shape(required=('files',), fields={'files': 'ChangesetFile[]', 'operations': 'ChangesetOperation[]'}, consts={}, variants=(), values=None),
    'ChatBackgroundWorkRemovedAction': Shape(required=('id',), fields={}, consts={}, variants=(), values=None),
    'ChatBackgroundWorkSetAction': Shape(required=('work',), fields={'work': 'BackgroundWork'}, consts={}, variants=(), values=None),
    'ChatCanvasesChangedAction': Shape(required=(), fields={'canvases': 'CanvasReference[]'}, consts={}, variants=(), values=None),
    'ChatChangesetsChangedAction': Shape(required=(), fields={'changesets': 'Changeset[]'}, consts={}, variants=(), values=None),
    'ChatErrorAction': Shape(required=('duration', 'part', 'turnId'), fields={'part': 'ErrorResponsePart'}, consts={}, variants=(), values=None),
    'ChatIsArchivedChangedAction': Shape(required=('isArchived',), fields={}, consts={}, variants=(), values=None),
    'ChatIsReadChangedAction': Shape(required=('isRead',), fields={}, consts={}, variants=(), values=None),
    'ChatMovableChangedAction': Shape(required=('movable',), fields={}, consts={}, variants=(), values=None),
    'ChatToolCallReadyAction': Shape(required=('invocationMessage', 'toolCallId', 'turnId'), fields={'confirmationTitle': 'StringOrMarkdown', 'contributor': 'ToolCallContributor', 'edits': 'FileEditCollection', 'invocationMessage': 'StringOrMarkdown', 'options': 'ConfirmationOption[]', 'riskAssessment': 'ToolCallRiskAssessment', 'toolInput': 'ToolInput'}, consts={}, variants=(), values=None),
    'ChatTurnResumeAction': Shape(required=('turnId',), fields={}, consts={}, variants=(), values=None),
    'ErrorResponsePart': Shape(required=('error', 'kind'), fields={'error': 'ErrorInfo'}, consts={'kind': 'error'}, variants=(), values=None),
    'FileEdit': Shape(required=(), fields={'after': 'FileEditSide', 'before': 'FileEditSide'}, consts={}, variants=(), values=None),
    'FileEditCollection': Shape(required=('items',), fields={'items': 'FileEdit[]'}, consts={}, variants=(), values=None),
    'FileEditSide': Shape(required=('content', 'uri'), fields={'content': 'ContentRef'}, consts={}, variants=(), values=None),
    'ResponsePart': Shape(required=(), fields={}, consts={}, variants=('MarkdownResponsePart', 'ResourceResponsePart', 'ToolCallResponsePart', 'ReasoningResponsePart', 'SystemNotificationResponsePart', 'InputRequestResponsePart', 'ErrorResponsePart'), values=None),
    'SessionChatsReorderedAction': Shape(required=('chats',), fields={}, consts={}, variants=(), values=None),
    'SessionMcpServerBackgroundRequestedAction': Shape(required=('id',), fields={}, consts={}, variants=(), values=None),
    'SessionToolClientExecutionRequest': Shape(required=('chat', 'clientId', 'id', 'kind', 'toolCall', 'turnId'), fields={'toolCall': 'ToolCallRunningState'}, consts={'kind': 'toolClientExecution'}, variants=(), values=None),
    'TerminalExitedLifecycleState': Shape(required=('status',), fields={}, consts={'status': 'exited'}, variants=(), values=None),
    'TerminalInfo': Shape(required=('claim', 'lifecycle', 'resource', 'title'), fields={'claim': 'TerminalClaim', 'lifecycle': 'TerminalLifecycleState'}, consts={}, variants=(), values=None),
    'TerminalLifecycleState': Shape(required=(), fields={}, consts={}, variants=('TerminalRunningLifecycleState', 'TerminalExitedLifecycleState'), values=None),
    'TerminalRunningLifecycleState': Shape(required=('status',), fields={}, consts={'status': 'running'}, variants=(), values=None),
    'TerminalSessionClaim': Shape(required=('chat', 'kind', 'session'), fields={}, consts={'kind': 'session'}, variants=(), values=None),
    'ToolCallPendingConfirmationState': Shape(required=('displayName', 'invocationMessage', 'status', 'toolCallId', 'toolName'), fields={'confirmationTitle': 'StringOrMarkdown', 'contributor': 'ToolCallContributor', 'edits': 'FileEditCollection', 'invocationMessage': 'StringOrMarkdown', 'options': 'ConfirmationOption[]', 'riskAssessment': 'ToolCallRiskAssessment', 'toolInput': 'ToolInput'}, consts={'status': 'pending-confirmation'}, variants=(), values=None),
    'ToolResultFileEditContent': Shape(required=('type',), fields={'after': 'FileEditSide', 'before': 'FileEditSide'}, consts={'type': 'fileEdit'}, variants=(), values=None),
    'Turn': Shape(required=('id', 'message', 'responseParts', 'state'), fields={'message': 'Message', 'responseParts': 'ResponsePart[]'}, consts={}, variants=(), values=None),
}
ACTIONS_SINCE_0_9_0: Final[Mapping[str, str]] = {
    'automation/createRequested': 'AutomationCreateRequestedAction',
    'automation/removed': 'AutomationRemovedAction',
    'automation/set': 'AutomationSetAction',
    'automation/updateRequested': 'AutomationUpdateRequestedAction',
    'automationRun/cancelRequested': 'AutomationRunCancelRequestedAction',
    'automationRun/lifecycleChanged': 'AutomationRunLifecycleChangedAction',
    'automationRun/primarySessionChanged': 'AutomationRunPrimarySessionChangedAction',
    'automationRun/sessionRemoved': 'AutomationRunSessionRemovedAction',
    'automationRun/sessionSet': 'AutomationRunSessionSetAction',
    'canvas/stateChanged': 'CanvasStateChangedAction',
    'chat/backgroundWorkRemoved': 'ChatBackgroundWorkRemovedAction',
    'chat/backgroundWorkSet': 'ChatBackgroundWorkSetAction',
    'chat/canvasesChanged': 'ChatCanvasesChangedAction',
    'chat/changesetsChanged': 'ChatChangesetsChangedAction',
    'chat/isArchivedChanged': 'ChatIsArchivedChangedAction',
    'chat/isReadChanged': 'ChatIsReadChangedAction',
    'chat/movableChanged': 'ChatMovableChangedAction',
    'chat/turnResume': 'ChatTurnResumeAction',
    'session/chatsReordered': 'SessionChatsReorderedAction',
    'session/mcpServerBackgroundRequested': 'SessionMcpServerBackgroundRequestedAction',
}
# fmt: on
