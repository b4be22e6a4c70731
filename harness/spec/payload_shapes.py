"""Which keys an action payload must carry, at every depth, and which variant of a union it is.

The reference model refuses a payload that lacks a key its schema requires (the step becomes a
probe, REDUCERS.md §2.3 item 4). Without a spec folder that refusal is all that keeps the valid
lane schema-valid: the trace shrinker deletes keys and list items of a finding's actions and
keeps a candidate the model still accepts. Knowing only the first level let through
`message.origin: {}` (an origin needs `kind`), a denied `chat/toolCallConfirmed` without
`reason`, a `session/inputNeededSet` request without its kind's fields, `invocationMessage: {}`
(the object form needs `markdown`), annotation entries without `id`, …

This module states those facts of the 0.7.0 actions schema (with the REDUCERS.md §11 item 11
corrections) without reading any spec folder:

* `SHAPES`: shape name -> `Shape` — the keys required (absent and `null` alike are missing),
  the constants of a union member (`approved: false`, `kind: "fork"`; a tuple: one of these
  values), the fields that hold another shape, the members of a union (an object must be one
  of them), and the shape of an object's values; an inline object or union member is named
  after where it sits (`ChatOrigin|1`, `ChatInputRequest.answers`);
* `ACTIONS`: action type -> the shape of its payload.

A field reference is `Name` (an object), `Name[]` (a list of them), `Name[N]` (a list of at
least N of them; `[N]` when the items have no facts) or `Name{}` (an object whose values are
`Name`s). Types are not judged: the generators emit the right ones and the shrinker only deletes.
`tests/test_valid_lane.py` derives the same tables from the 0.7.0 schema
(`harness.spec.action_schema.payload_shapes`) and keeps them equal, and checks against both the
0.6.0 and 0.7.0 schemas that what the model accepts is valid. When a spec release changes the
schema, regenerate the tables from that derivation (the test prints the shapes that differ).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from . import payload_shapes_later as later
from .shape import Shape

__all__ = ["ACTIONS", "SHAPES", "Shape", "facts_for", "problem", "shape_name"]


_REF = re.compile(r"^(?P<name>[^\[\]{}]*)(?:\[(?P<least>\d*)\]|(?P<map>\{\}))?$")


@lru_cache(maxsize=1024)
def _parse(ref: str) -> tuple[str, str, int]:
    """`Name` -> (Name, "object", 0); `Name[2]` -> (Name, "list", 2); `Name{}` -> (Name, "map", 0)."""
    m = _REF.match(ref)
    if m is None:
        raise ValueError(f"not a shape reference: {ref!r}")
    if m.group("map"):
        return m.group("name"), "map", 0
    if m.group("least") is not None or ref.endswith("[]"):
        return m.group("name"), "list", int(m.group("least") or 0)
    return m.group("name"), "object", 0


def shape_name(ref: str) -> str:
    return _parse(ref)[0]


Version = tuple[int, int, int]


def problem(action: Mapping[str, Any], version: Version | None = None) -> str | None:
    """Why `action` lacks a key its type's schema requires at some depth (or is none of a union's
    variants) in protocol `version` (None: 0.7.0's facts), or None. The facts per version are
    `facts_for`: 0.6.0 also requires `chat/toolCallDelta.content`; 0.8.0 and 0.9.0 changed the
    shapes of `payload_shapes_later.py`."""
    t = action.get("type")
    if not isinstance(t, str):
        return None
    shapes, actions = facts_for(version) if version is not None else (SHAPES, ACTIONS)
    ref = actions.get(t)
    return _check(action, ref, "", shapes) if ref is not None else None


@lru_cache(maxsize=16)
def facts_for(version: Version) -> tuple[Mapping[str, Shape], Mapping[str, str]]:
    """(shapes, action type -> shape) of protocol `version`: the 0.7.0 tables with the changes
    of each version up to `version` laid over them (`VERSION_CHANGES`)."""
    shapes, actions = dict(SHAPES), dict(ACTIONS)
    for lo, hi, more_shapes, more_actions in _version_changes():
        if lo <= version < hi:
            shapes.update(more_shapes)
            actions.update(more_actions)
    return shapes, actions


def _version_changes() -> tuple[tuple[Version, Version, Mapping[str, Shape], Mapping[str, str]], ...]:
    """(from, before, shapes, actions): the facts that hold in versions `from <= v < before`."""
    never: Version = (99, 0, 0)
    return (
        # 0.6.0's schema requires a tool-call delta's `content` (0.7.0 made it optional).
        ((0, 0, 0), (0, 7, 0), {"ChatToolCallDeltaAction": Shape(
            required=("content", "toolCallId", "turnId"), fields={"invocationMessage": "StringOrMarkdown"},
        )}, {}),
        ((0, 8, 0), never, later.SHAPES_SINCE_0_8_0, later.ACTIONS_SINCE_0_8_0),
        ((0, 9, 0), never, later.SHAPES_SINCE_0_9_0, later.ACTIONS_SINCE_0_9_0),
    )


def _check(value: Any, ref: str, path: str, shapes: Mapping[str, Shape] | None = None) -> str | None:
    shapes = SHAPES if shapes is None else shapes
    name, form, least = _parse(ref)
    if form == "list":
        if not isinstance(value, list):
            return None
        if len(value) < least:
            return f"{path} needs at least {least} item(s)"
        if name:
            for i, item in enumerate(value):
                bad = _object(item, name, f"{path}[{i}]", shapes)
                if bad:
                    return bad
        return None
    if form == "map":
        if isinstance(value, dict):
            for k, item in value.items():
                bad = _object(item, name, f"{path}.{k}", shapes)
                if bad:
                    return bad
        return None
    return _object(value, name, path, shapes)


def _object(value: Any, name: str, path: str, shapes: Mapping[str, Shape]) -> str | None:
    shape = shapes.get(name)
    if shape is None or not isinstance(value, dict):
        return None  # no facts, or not an object (types are not judged here)
    if shape.variants:
        problems = [_object(value, v, path, shapes) for v in shape.variants]
        if any(p is None for p in problems):
            return None
        if shape.open and not any(_claims(value, v, shapes) for v in shape.variants):
            return None
        # name the variant the object claims to be (its constants match), else the first
        claimed = next(
            (p for v, p in zip(shape.variants, problems, strict=True) if _claims(value, v, shapes)),
            problems[0],
        )
        return claimed
    for k in shape.required:
        if value.get(k) is None:
            return f"required field {(path + '.' if path else '')}{k} is absent"
    for k, c in shape.consts.items():
        if not _is(value.get(k), c):
            return f"{(path + '.' if path else '')}{k} is not {' or '.join(map(repr, c)) if isinstance(c, tuple) else repr(c)}"
    for k, ref in shape.fields.items():
        if value.get(k) is not None:
            bad = _check(value[k], ref, f"{path}.{k}" if path else k, shapes)
            if bad:
                return bad
    if shape.values is not None:
        for k, item in value.items():
            bad = _check(item, shape.values, f"{path}.{k}" if path else k, shapes)
            if bad:
                return bad
    return None


def _claims(value: Mapping[str, Any], name: str, shapes: Mapping[str, Shape]) -> bool:
    shape = shapes.get(name)
    return shape is not None and bool(shape.consts) and all(
        _is(value[k], c) for k, c in shape.consts.items() if k in value
    )


def _is(value: Any, const: Any) -> bool:
    """`value` is the constant (a tuple: one of the allowed values); `True` is not `1`."""
    if isinstance(const, tuple):
        return any(_is(value, c) for c in const)
    return value == const and type(value) is type(const)


#: Facts of the protocol's types that the schema does not state: `approved` is the literal
#: `true` / `false` that tells the two `chat/toolCallConfirmed` variants apart (the schema
#: accepts any value there), so a denial (`approved: false`) needs `reason`.
FROM_TYPES: Final[Mapping[str, Mapping[str, Any]]] = {
    "ChatToolCallApprovedAction": {"approved": True},
    "ChatToolCallDeniedAction": {"approved": False},
}

# The tables below are facts of the 0.7.0 actions schema (item-11 corrected); keep them equal to
# `payload_shapes(actions.schema.json)` (tests/test_valid_lane.py names the shapes that differ).
# fmt: off
SCHEMA_SHAPES: Final[Mapping[str, Shape]] = {
    'AgentCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'icons': 'Icon[]', 'range': 'TextRange'}, consts={'type': 'agent'}),
    'AgentInfo': Shape(required=('description', 'displayName', 'models', 'provider'), fields={'customizations': 'Customization[]', 'models': 'SessionModelInfo[]', 'protectedResources': 'ProtectedResourceMetadata[]'}),
    'AgentSelection': Shape(required=('uri',)),
    'Annotation': Shape(required=('entries', 'id', 'resolved', 'resource', 'turnId'), fields={'entries': 'AnnotationEntry[]', 'range': 'TextRange'}),
    'AnnotationEntry': Shape(required=('id', 'text'), fields={'text': 'StringOrMarkdown'}),
    'AnnotationsEntryRemovedAction': Shape(required=('annotationId', 'entryId')),
    'AnnotationsEntrySetAction': Shape(required=('annotationId', 'entry'), fields={'entry': 'AnnotationEntry'}),
    'AnnotationsRemovedAction': Shape(required=('annotationId',)),
    'AnnotationsSetAction': Shape(required=('annotation',), fields={'annotation': 'Annotation'}),
    'AnnotationsUpdatedAction': Shape(required=('annotationId',), fields={'range': 'TextRange'}),
    'Changeset': Shape(required=('changeKind', 'label', 'uriTemplate')),
    'ChangesetClearedAction': Shape(),
    'ChangesetContentChangedAction': Shape(required=('files',), fields={'error': 'ErrorInfo', 'files': 'ChangesetFile[]', 'operations': 'ChangesetOperation[]'}),
    'ChangesetFile': Shape(required=('edit', 'id'), fields={'edit': 'FileEdit'}),
    'ChangesetFileRemovedAction': Shape(required=('fileId',)),
    'ChangesetFileSetAction': Shape(required=('file',), fields={'file': 'ChangesetFile'}),
    'ChangesetFilesReviewChangedAction': Shape(required=('files', 'reviewed')),
    'ChangesetOperation': Shape(required=('id', 'label', 'scopes', 'status'), fields={'confirmation': 'StringOrMarkdown', 'error': 'ErrorInfo'}),
    'ChangesetOperationStatusChangedAction': Shape(required=('operationId', 'status'), fields={'error': 'ErrorInfo'}),
    'ChangesetOperationsChangedAction': Shape(fields={'operations': 'ChangesetOperation[]'}),
    'ChangesetStatusChangedAction': Shape(required=('status',), fields={'error': 'ErrorInfo'}),
    'ChatActivityChangedAction': Shape(),
    'ChatDeltaAction': Shape(required=('content', 'partId', 'turnId')),
    'ChatDraftChangedAction': Shape(fields={'draft': 'Message'}),
    'ChatErrorAction': Shape(required=('duration', 'error', 'turnId'), fields={'error': 'ErrorInfo'}),
    'ChatInputAnswer': Shape(variants=('ChatInputAnswered', 'ChatInputSkipped')),
    'ChatInputAnswerChangedAction': Shape(required=('questionId', 'requestId'), fields={'answer': 'ChatInputAnswer'}),
    'ChatInputAnswerValue': Shape(variants=('ChatInputTextAnswerValue', 'ChatInputNumberAnswerValue', 'ChatInputBooleanAnswerValue', 'ChatInputSelectedAnswerValue', 'ChatInputSelectedManyAnswerValue')),
    'ChatInputAnswered': Shape(required=('state', 'value'), fields={'value': 'ChatInputAnswerValue'}, consts={'state': ('draft', 'submitted')}),
    'ChatInputBooleanAnswerValue': Shape(required=('kind', 'value'), consts={'kind': 'boolean'}),
    'ChatInputBooleanQuestion': Shape(required=('id', 'kind', 'message'), consts={'kind': 'boolean'}),
    'ChatInputCompletedAction': Shape(required=('requestId', 'response'), fields={'answers': 'ChatInputCompletedAction.answers'}),
    'ChatInputCompletedAction.answers': Shape(values='ChatInputAnswer'),
    'ChatInputMultiSelectQuestion': Shape(required=('id', 'kind', 'message', 'options'), fields={'options': 'ChatInputOption[]'}, consts={'kind': 'multi-select'}),
    'ChatInputNumberAnswerValue': Shape(required=('kind', 'value'), consts={'kind': 'number'}),
    'ChatInputNumberQuestion': Shape(required=('id', 'kind', 'message'), consts={'kind': ('number', 'integer')}),
    'ChatInputOption': Shape(required=('id', 'label')),
    'ChatInputQuestion': Shape(variants=('ChatInputTextQuestion', 'ChatInputNumberQuestion', 'ChatInputBooleanQuestion', 'ChatInputSingleSelectQuestion', 'ChatInputMultiSelectQuestion')),
    'ChatInputRequest': Shape(required=('id',), fields={'answers': 'ChatInputRequest.answers', 'questions': 'ChatInputQuestion[]'}),
    'ChatInputRequest.answers': Shape(values='ChatInputAnswer'),
    'ChatInputRequestedAction': Shape(required=('request',), fields={'request': 'ChatInputRequest'}),
    'ChatInputSelectedAnswerValue': Shape(required=('kind', 'value'), consts={'kind': 'selected'}),
    'ChatInputSelectedManyAnswerValue': Shape(required=('kind', 'value'), consts={'kind': 'selected-many'}),
    'ChatInputSingleSelectQuestion': Shape(required=('id', 'kind', 'message', 'options'), fields={'options': 'ChatInputOption[]'}, consts={'kind': 'single-select'}),
    'ChatInputSkipped': Shape(required=('state',), consts={'state': 'skipped'}),
    'ChatInputTextAnswerValue': Shape(required=('kind', 'value'), consts={'kind': 'text'}),
    'ChatInputTextQuestion': Shape(required=('id', 'kind', 'message'), consts={'kind': 'text'}),
    'ChatOrigin': Shape(variants=('ChatOrigin|0', 'ChatOrigin|1', 'ChatOrigin|2', 'ChatOrigin|3')),
    'ChatOrigin|0': Shape(required=('kind',), consts={'kind': 'user'}),
    'ChatOrigin|1': Shape(required=('chat', 'kind', 'turnId'), consts={'kind': 'fork'}),
    'ChatOrigin|2': Shape(required=('chat', 'kind', 'turnId'), fields={'selection': 'SideChatSelection'}, consts={'kind': 'sideChat'}),
    'ChatOrigin|3': Shape(required=('chat', 'kind', 'toolCallId'), consts={'kind': 'tool'}),
    'ChatPendingMessageRemovedAction': Shape(required=('id', 'kind')),
    'ChatPendingMessageSetAction': Shape(required=('id', 'kind', 'message'), fields={'message': 'Message'}),
    'ChatQueuedMessagesReorderedAction': Shape(required=('order',)),
    'ChatReasoningAction': Shape(required=('content', 'partId', 'turnId')),
    'ChatResponsePartAction': Shape(required=('part', 'turnId'), fields={'part': 'ResponsePart'}),
    'ChatSummary': Shape(required=('modifiedAt', 'resource', 'status', 'title'), fields={'origin': 'ChatOrigin'}),
    'ChatToolCallApprovedAction': Shape(required=('approved', 'confirmed', 'toolCallId', 'turnId')),
    'ChatToolCallApprovedAction|ChatToolCallDeniedAction': Shape(variants=('ChatToolCallApprovedAction', 'ChatToolCallDeniedAction')),
    'ChatToolCallAuthRequiredAction': Shape(required=('auth', 'toolCallId', 'turnId'), fields={'auth': 'McpAuthRequirement'}),
    'ChatToolCallAuthResolvedAction': Shape(required=('toolCallId', 'turnId')),
    'ChatToolCallCompleteAction': Shape(required=('result', 'toolCallId', 'turnId'), fields={'result': 'ToolCallResult'}),
    'ChatToolCallContentChangedAction': Shape(required=('content', 'toolCallId', 'turnId'), fields={'content': 'ToolResultContent[]'}),
    'ChatToolCallDeltaAction': Shape(required=('toolCallId', 'turnId'), fields={'invocationMessage': 'StringOrMarkdown'}),
    'ChatToolCallDeniedAction': Shape(required=('approved', 'reason', 'toolCallId', 'turnId'), fields={'reasonMessage': 'StringOrMarkdown', 'userSuggestion': 'Message'}, consts={'reason': ('denied', 'skipped')}),
    'ChatToolCallReadyAction': Shape(required=('invocationMessage', 'toolCallId', 'turnId'), fields={'confirmationTitle': 'StringOrMarkdown', 'contributor': 'ToolCallContributor', 'edits': 'ChatToolCallReadyAction.edits', 'invocationMessage': 'StringOrMarkdown', 'options': 'ConfirmationOption[]', 'riskAssessment': 'ToolCallRiskAssessment', 'toolInput': 'ToolInput'}),
    'ChatToolCallReadyAction.edits': Shape(required=('items',), fields={'items': 'FileEdit[]'}),
    'ChatToolCallResultConfirmedAction': Shape(required=('approved', 'toolCallId', 'turnId')),
    'ChatToolCallStartAction': Shape(required=('displayName', 'toolCallId', 'toolName', 'turnId'), fields={'contributor': 'ToolCallContributor'}),
    'ChatTruncatedAction': Shape(),
    'ChatTurnCancelledAction': Shape(required=('duration', 'turnId')),
    'ChatTurnCompleteAction': Shape(required=('duration', 'turnId')),
    'ChatTurnStartedAction': Shape(required=('message', 'startedAt', 'turnId'), fields={'message': 'Message'}),
    'ChatTurnsLoadedAction': Shape(required=('turns',), fields={'turns': 'Turn[]'}),
    'ChatUsageAction': Shape(required=('turnId', 'usage')),
    'ChatWorkingDirectoryRemovedAction': Shape(required=('directory',)),
    'ChatWorkingDirectorySetAction': Shape(required=('directory',)),
    'ChildCustomization': Shape(variants=('AgentCustomization', 'SkillCustomization', 'PromptCustomization', 'RuleCustomization', 'HookCustomization', 'McpServerCustomization')),
    'ClientPluginCustomization': Shape(required=('enabled', 'id', 'name', 'type', 'uri'), fields={'children': 'ChildCustomization[]', 'icons': 'Icon[]', 'load': 'CustomizationLoadState', 'range': 'TextRange'}),
    'ConfigPropertySchema': Shape(required=('title', 'type'), fields={'additionalProperties': 'ConfigPropertySchema', 'items': 'ConfigPropertySchema', 'properties': 'ConfigPropertySchema.properties'}),
    'ConfigPropertySchema.properties': Shape(values='ConfigPropertySchema'),
    'ConfigSchema': Shape(required=('properties', 'type'), fields={'properties': 'ConfigSchema.properties'}),
    'ConfigSchema.properties': Shape(values='ConfigPropertySchema'),
    'ConfirmationOption': Shape(required=('id', 'kind', 'label')),
    'ContentRef': Shape(required=('uri',)),
    'Customization': Shape(variants=('PluginCustomization', 'DirectoryCustomization', 'McpServerCustomization')),
    'CustomizationDegradedState': Shape(required=('kind', 'message'), consts={'kind': 'degraded'}),
    'CustomizationErrorState': Shape(required=('kind', 'message'), consts={'kind': 'error'}),
    'CustomizationLoadState': Shape(variants=('CustomizationLoadingState', 'CustomizationLoadedState', 'CustomizationDegradedState', 'CustomizationErrorState')),
    'CustomizationLoadedState': Shape(required=('kind',), consts={'kind': 'loaded'}),
    'CustomizationLoadingState': Shape(required=('kind',), consts={'kind': 'loading'}),
    'DirectoryCustomization': Shape(required=('contents', 'enabled', 'id', 'name', 'type', 'uri', 'writable'), fields={'children': 'ChildCustomization[]', 'icons': 'Icon[]', 'load': 'CustomizationLoadState', 'range': 'TextRange'}, consts={'type': 'directory'}),
    'ErrorInfo': Shape(required=('errorType', 'message')),
    'FileEdit': Shape(fields={'after': 'FileEdit.after', 'before': 'FileEdit.before'}),
    'FileEdit.after': Shape(required=('content', 'uri'), fields={'content': 'ContentRef'}),
    'FileEdit.before': Shape(required=('content', 'uri'), fields={'content': 'ContentRef'}),
    'HookCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'icons': 'Icon[]', 'range': 'TextRange'}, consts={'type': 'hook'}),
    'Icon': Shape(required=('src',)),
    'InputRequestResponsePart': Shape(required=('kind', 'request'), fields={'request': 'ChatInputRequest'}, consts={'kind': 'inputRequest'}),
    'MarkdownResponsePart': Shape(required=('content', 'id', 'kind'), consts={'kind': 'markdown'}),
    'McpAuthRequirement': Shape(required=('reason', 'resource'), fields={'oauthClient': 'McpOAuthClient', 'resource': 'ProtectedResourceMetadata'}),
    'McpOAuthClient': Shape(required=('clientId',)),
    'McpServerAuthRequiredState': Shape(required=('kind', 'reason', 'resource'), fields={'oauthClient': 'McpOAuthClient', 'resource': 'ProtectedResourceMetadata'}, consts={'kind': 'authRequired'}),
    'McpServerCustomization': Shape(required=('enabled', 'id', 'name', 'state', 'type', 'uri'), fields={'icons': 'Icon[]', 'mcpApp': 'McpServerCustomizationApps', 'range': 'TextRange', 'state': 'McpServerState'}, consts={'type': 'mcpServer'}),
    'McpServerCustomizationApps': Shape(required=('capabilities',)),
    'McpServerErrorState': Shape(required=('error', 'kind'), fields={'error': 'ErrorInfo'}, consts={'kind': 'error'}),
    'McpServerReadyState': Shape(required=('kind',), consts={'kind': 'ready'}),
    'McpServerStartingState': Shape(required=('kind',), consts={'kind': 'starting'}),
    'McpServerState': Shape(variants=('McpServerStartingState', 'McpServerReadyState', 'McpServerAuthRequiredState', 'McpServerErrorState', 'McpServerStoppedState')),
    'McpServerStoppedState': Shape(required=('kind',), consts={'kind': 'stopped'}),
    'Message': Shape(required=('origin', 'text'), fields={'agent': 'AgentSelection', 'attachments': 'MessageAttachment[]', 'model': 'ModelSelection', 'origin': 'MessageOrigin'}),
    'MessageAnnotationsAttachment': Shape(required=('label', 'resource', 'type'), fields={'range': 'TextRange'}, consts={'type': 'annotations'}),
    'MessageAttachment': Shape(variants=('SimpleMessageAttachment', 'MessageEmbeddedResourceAttachment', 'MessageResourceAttachment', 'MessageAnnotationsAttachment', 'MessageChatAttachment')),
    'MessageChatAttachment': Shape(required=('label', 'resource', 'type'), fields={'range': 'TextRange'}, consts={'type': 'chat'}),
    'MessageEmbeddedResourceAttachment': Shape(required=('contentType', 'data', 'label', 'type'), fields={'range': 'TextRange', 'selection': 'TextSelection'}, consts={'type': 'embeddedResource'}),
    'MessageOrigin': Shape(required=('kind',)),
    'MessageResourceAttachment': Shape(required=('label', 'type', 'uri'), fields={'range': 'TextRange', 'selection': 'TextSelection'}, consts={'type': 'resource'}),
    'ModelSelection': Shape(required=('id',)),
    'PluginCustomization': Shape(required=('enabled', 'id', 'name', 'type', 'uri'), fields={'children': 'ChildCustomization[]', 'icons': 'Icon[]', 'load': 'CustomizationLoadState', 'range': 'TextRange'}, consts={'type': 'plugin'}),
    'PromptCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'icons': 'Icon[]', 'range': 'TextRange'}, consts={'type': 'prompt'}),
    'ProtectedResourceMetadata': Shape(required=('resource',)),
    'ReasoningResponsePart': Shape(required=('content', 'id', 'kind'), consts={'kind': 'reasoning'}),
    'ResourceChange': Shape(required=('type', 'uri')),
    'ResourceResponsePart': Shape(required=('kind', 'uri'), consts={'kind': 'contentRef'}),
    'ResourceWatchChangedAction': Shape(required=('changes',), fields={'changes': 'ResourceWatchChangedAction.changes'}),
    'ResourceWatchChangedAction.changes': Shape(required=('items',), fields={'items': 'ResourceChange[]'}),
    'ResponsePart': Shape(variants=('MarkdownResponsePart', 'ResourceResponsePart', 'ToolCallResponsePart', 'ReasoningResponsePart', 'SystemNotificationResponsePart', 'InputRequestResponsePart')),
    'RootActiveSessionsChangedAction': Shape(required=('activeSessions',)),
    'RootAgentsChangedAction': Shape(required=('agents',), fields={'agents': 'AgentInfo[]'}),
    'RootConfigChangedAction': Shape(required=('config',)),
    'RootTerminalsChangedAction': Shape(required=('terminals',), fields={'terminals': 'TerminalInfo[]'}),
    'RuleCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'icons': 'Icon[]', 'range': 'TextRange'}, consts={'type': 'rule'}),
    'SessionActiveClient': Shape(required=('clientId', 'tools'), fields={'customizations': 'ClientPluginCustomization[]', 'tools': 'ToolDefinition[]'}),
    'SessionActiveClientRemovedAction': Shape(required=('clientId',)),
    'SessionActiveClientSetAction': Shape(required=('activeClient',), fields={'activeClient': 'SessionActiveClient'}),
    'SessionActivityChangedAction': Shape(),
    'SessionChangesetsChangedAction': Shape(fields={'changesets': 'Changeset[]'}),
    'SessionChatAddedAction': Shape(required=('summary',), fields={'summary': 'ChatSummary'}),
    'SessionChatInputRequest': Shape(required=('chat', 'id', 'kind', 'request'), fields={'request': 'ChatInputRequest'}, consts={'kind': 'chatInput'}),
    'SessionChatRemovedAction': Shape(required=('chat',)),
    'SessionChatUpdatedAction': Shape(required=('changes', 'chat'), fields={'changes': 'SessionChatUpdatedAction.changes'}),
    'SessionChatUpdatedAction.changes': Shape(fields={'origin': 'ChatOrigin'}),
    'SessionConfigChangedAction': Shape(required=('config',)),
    'SessionCreationFailedAction': Shape(required=('error',), fields={'error': 'ErrorInfo'}),
    'SessionCustomizationRemovedAction': Shape(required=('id',)),
    'SessionCustomizationToggledAction': Shape(required=('enabled', 'id')),
    'SessionCustomizationUpdatedAction': Shape(required=('customization',), fields={'customization': 'Customization'}),
    'SessionCustomizationsChangedAction': Shape(required=('customizations',), fields={'customizations': 'Customization[]'}),
    'SessionDefaultChatChangedAction': Shape(),
    'SessionInputNeededRemovedAction': Shape(required=('id',)),
    'SessionInputNeededSetAction': Shape(required=('request',), fields={'request': 'SessionInputRequest'}),
    'SessionInputRequest': Shape(variants=('SessionChatInputRequest', 'SessionToolConfirmationRequest', 'SessionToolClientExecutionRequest', 'SessionToolAuthenticationRequest')),
    'SessionIsArchivedChangedAction': Shape(required=('isArchived',)),
    'SessionIsReadChangedAction': Shape(required=('isRead',)),
    'SessionMcpServerStartRequestedAction': Shape(required=('id',)),
    'SessionMcpServerStateChangedAction': Shape(required=('id', 'state'), fields={'state': 'McpServerState'}),
    'SessionMcpServerStopRequestedAction': Shape(required=('id',)),
    'SessionMetaChangedAction': Shape(),
    'SessionModelInfo': Shape(required=('id', 'name', 'provider'), fields={'configSchema': 'ConfigSchema'}),
    'SessionReadyAction': Shape(),
    'SessionServerToolsChangedAction': Shape(required=('tools',), fields={'tools': 'ToolDefinition[]'}),
    'SessionTitleChangedAction': Shape(required=('title',)),
    'SessionToolAuthenticationRequest': Shape(required=('chat', 'id', 'kind', 'toolCall', 'turnId'), fields={'toolCall': 'ToolCallAuthRequiredState'}, consts={'kind': 'toolAuthentication'}),
    'SessionToolClientExecutionRequest': Shape(required=('chat', 'clientId', 'id', 'kind', 'toolCall', 'turnId'), fields={'toolCall': 'ToolCallState'}, consts={'kind': 'toolClientExecution'}),
    'SessionToolConfirmationRequest': Shape(required=('chat', 'id', 'kind', 'toolCall', 'turnId'), fields={'toolCall': 'ToolCallConfirmationState'}, consts={'kind': 'toolConfirmation'}),
    'SessionWorkingDirectoryRemovedAction': Shape(required=('directory',)),
    'SessionWorkingDirectorySetAction': Shape(required=('directory',)),
    'SideChatSelection': Shape(required=('text',)),
    'SimpleMessageAttachment': Shape(required=('label', 'type'), fields={'range': 'TextRange'}, consts={'type': 'simple'}),
    'SkillCustomization': Shape(required=('id', 'name', 'type', 'uri'), fields={'icons': 'Icon[]', 'range': 'TextRange'}, consts={'type': 'skill'}),
    'StringOrMarkdown': Shape(variants=('StringOrMarkdown|1',)),
    'StringOrMarkdown|1': Shape(required=('markdown',)),
    'SystemNotificationResponsePart': Shape(required=('content', 'kind'), fields={'content': 'StringOrMarkdown'}, consts={'kind': 'systemNotification'}),
    'TerminalClaim': Shape(variants=('TerminalClientClaim', 'TerminalSessionClaim')),
    'TerminalClaimedAction': Shape(required=('claim',), fields={'claim': 'TerminalClaim'}),
    'TerminalClearedAction': Shape(),
    'TerminalClientClaim': Shape(required=('clientId', 'kind'), consts={'kind': 'client'}),
    'TerminalCommandDetectionAvailableAction': Shape(),
    'TerminalCommandExecutedAction': Shape(required=('commandId', 'commandLine', 'timestamp')),
    'TerminalCommandFinishedAction': Shape(required=('commandId',)),
    'TerminalCwdChangedAction': Shape(required=('cwd',)),
    'TerminalDataAction': Shape(required=('data',)),
    'TerminalExitedAction': Shape(),
    'TerminalInfo': Shape(required=('claim', 'resource', 'title'), fields={'claim': 'TerminalClaim'}),
    'TerminalInputAction': Shape(required=('data',)),
    'TerminalResizedAction': Shape(required=('cols', 'rows')),
    'TerminalSessionClaim': Shape(required=('kind', 'session'), consts={'kind': 'session'}),
    'TerminalTitleChangedAction': Shape(required=('title',)),
    'TextPosition': Shape(required=('character', 'line')),
    'TextRange': Shape(required=('end', 'start'), fields={'end': 'TextPosition', 'start': 'TextPosition'}),
    'TextSelection': Shape(required=('range',), fields={'range': 'TextRange'}),
    'ToolCallAuthRequiredState': Shape(required=('auth', 'confirmed', 'contributor', 'displayName', 'invocationMessage', 'status', 'toolCallId', 'toolName'), fields={'auth': 'McpAuthRequirement', 'content': 'ToolResultContent[]', 'contributor': 'ToolCallMcpContributor', 'invocationMessage': 'StringOrMarkdown', 'selectedOption': 'ConfirmationOption', 'toolInput': 'ToolInput'}, consts={'status': 'auth-required'}),
    'ToolCallCancelledState': Shape(required=('displayName', 'invocationMessage', 'reason', 'status', 'toolCallId', 'toolName'), fields={'contributor': 'ToolCallContributor', 'invocationMessage': 'StringOrMarkdown', 'reasonMessage': 'StringOrMarkdown', 'selectedOption': 'ConfirmationOption', 'toolInput': 'ToolInput', 'userSuggestion': 'Message'}, consts={'status': 'cancelled'}),
    'ToolCallClientContributor': Shape(required=('clientId', 'kind'), consts={'kind': 'client'}),
    'ToolCallCompletedState': Shape(required=('confirmed', 'displayName', 'invocationMessage', 'pastTenseMessage', 'status', 'success', 'toolCallId', 'toolName'), fields={'content': 'ToolResultContent[]', 'contributor': 'ToolCallContributor', 'error': 'ToolCallCompletedState.error', 'invocationMessage': 'StringOrMarkdown', 'pastTenseMessage': 'StringOrMarkdown', 'selectedOption': 'ConfirmationOption', 'toolInput': 'ToolInput'}, consts={'status': 'completed'}),
    'ToolCallCompletedState.error': Shape(required=('message',)),
    'ToolCallConfirmationState': Shape(variants=('ToolCallPendingConfirmationState', 'ToolCallPendingResultConfirmationState')),
    'ToolCallContributor': Shape(variants=('ToolCallClientContributor', 'ToolCallMcpContributor')),
    'ToolCallMcpContributor': Shape(required=('customizationId', 'kind'), consts={'kind': 'mcp'}),
    'ToolCallPendingConfirmationState': Shape(required=('displayName', 'invocationMessage', 'status', 'toolCallId', 'toolName'), fields={'confirmationTitle': 'StringOrMarkdown', 'contributor': 'ToolCallContributor', 'edits': 'ToolCallPendingConfirmationState.edits', 'invocationMessage': 'StringOrMarkdown', 'options': 'ConfirmationOption[]', 'riskAssessment': 'ToolCallRiskAssessment', 'toolInput': 'ToolInput'}, consts={'status': 'pending-confirmation'}),
    'ToolCallPendingConfirmationState.edits': Shape(required=('items',), fields={'items': 'FileEdit[]'}),
    'ToolCallPendingResultConfirmationState': Shape(required=('confirmed', 'displayName', 'invocationMessage', 'pastTenseMessage', 'status', 'success', 'toolCallId', 'toolName'), fields={'content': 'ToolResultContent[]', 'contributor': 'ToolCallContributor', 'error': 'ToolCallPendingResultConfirmationState.error', 'invocationMessage': 'StringOrMarkdown', 'pastTenseMessage': 'StringOrMarkdown', 'selectedOption': 'ConfirmationOption', 'toolInput': 'ToolInput'}, consts={'status': 'pending-result-confirmation'}),
    'ToolCallPendingResultConfirmationState.error': Shape(required=('message',)),
    'ToolCallResponsePart': Shape(required=('kind', 'toolCall'), fields={'toolCall': 'ToolCallState'}, consts={'kind': 'toolCall'}),
    'ToolCallResult': Shape(required=('pastTenseMessage', 'success'), fields={'content': 'ToolResultContent[]', 'error': 'ToolCallResult.error', 'pastTenseMessage': 'StringOrMarkdown'}),
    'ToolCallResult.error': Shape(required=('message',)),
    'ToolCallRiskAssessment': Shape(variants=('ToolCallRiskAssessmentLoadingState', 'ToolCallRiskAssessmentCompleteState')),
    'ToolCallRiskAssessmentCompleteState': Shape(required=('kind', 'reason', 'safety', 'status'), fields={'reason': 'StringOrMarkdown'}, consts={'status': 'complete'}),
    'ToolCallRiskAssessmentLoadingState': Shape(required=('kind', 'status'), consts={'status': 'loading'}),
    'ToolCallRunningState': Shape(required=('confirmed', 'displayName', 'invocationMessage', 'status', 'toolCallId', 'toolName'), fields={'content': 'ToolResultContent[]', 'contributor': 'ToolCallContributor', 'invocationMessage': 'StringOrMarkdown', 'selectedOption': 'ConfirmationOption', 'toolInput': 'ToolInput'}, consts={'status': 'running'}),
    'ToolCallState': Shape(variants=('ToolCallStreamingState', 'ToolCallPendingConfirmationState', 'ToolCallRunningState', 'ToolCallAuthRequiredState', 'ToolCallPendingResultConfirmationState', 'ToolCallCompletedState', 'ToolCallCancelledState')),
    'ToolCallStreamingState': Shape(required=('displayName', 'status', 'toolCallId', 'toolName'), fields={'contributor': 'ToolCallContributor', 'invocationMessage': 'StringOrMarkdown'}, consts={'status': 'streaming'}),
    'ToolDefinition': Shape(required=('name',), fields={'inputSchema': 'ToolDefinition.inputSchema', 'outputSchema': 'ToolDefinition.outputSchema'}),
    'ToolDefinition.inputSchema': Shape(required=('type',)),
    'ToolDefinition.outputSchema': Shape(required=('type',)),
    'ToolInput': Shape(variants=('ContentRef',)),
    'ToolResultContent': Shape(variants=('ToolResultTextContent', 'ToolResultEmbeddedResourceContent', 'ToolResultResourceContent', 'ToolResultFileEditContent', 'ToolResultTerminalContent', 'ToolResultSubagentContent')),
    'ToolResultEmbeddedResourceContent': Shape(required=('contentType', 'data', 'type'), consts={'type': 'embeddedResource'}),
    'ToolResultFileEditContent': Shape(required=('type',), fields={'after': 'ToolResultFileEditContent.after', 'before': 'ToolResultFileEditContent.before'}, consts={'type': 'fileEdit'}),
    'ToolResultFileEditContent.after': Shape(required=('content', 'uri'), fields={'content': 'ContentRef'}),
    'ToolResultFileEditContent.before': Shape(required=('content', 'uri'), fields={'content': 'ContentRef'}),
    'ToolResultResourceContent': Shape(required=('type', 'uri'), consts={'type': 'resource'}),
    'ToolResultSubagentContent': Shape(required=('resource', 'title', 'type'), consts={'type': 'subagent'}),
    'ToolResultTerminalContent': Shape(required=('resource', 'title', 'type'), consts={'type': 'terminal'}),
    'ToolResultTextContent': Shape(required=('text', 'type'), consts={'type': 'text'}),
    'Turn': Shape(required=('id', 'message', 'responseParts', 'state'), fields={'error': 'ErrorInfo', 'message': 'Message', 'responseParts': 'ResponsePart[]'}),
}
ACTIONS: Final[Mapping[str, str]] = {
    'annotations/entryRemoved': 'AnnotationsEntryRemovedAction',
    'annotations/entrySet': 'AnnotationsEntrySetAction',
    'annotations/removed': 'AnnotationsRemovedAction',
    'annotations/set': 'AnnotationsSetAction',
    'annotations/updated': 'AnnotationsUpdatedAction',
    'changeset/cleared': 'ChangesetClearedAction',
    'changeset/contentChanged': 'ChangesetContentChangedAction',
    'changeset/fileRemoved': 'ChangesetFileRemovedAction',
    'changeset/fileSet': 'ChangesetFileSetAction',
    'changeset/filesReviewChanged': 'ChangesetFilesReviewChangedAction',
    'changeset/operationStatusChanged': 'ChangesetOperationStatusChangedAction',
    'changeset/operationsChanged': 'ChangesetOperationsChangedAction',
    'changeset/statusChanged': 'ChangesetStatusChangedAction',
    'chat/activityChanged': 'ChatActivityChangedAction',
    'chat/delta': 'ChatDeltaAction',
    'chat/draftChanged': 'ChatDraftChangedAction',
    'chat/error': 'ChatErrorAction',
    'chat/inputAnswerChanged': 'ChatInputAnswerChangedAction',
    'chat/inputCompleted': 'ChatInputCompletedAction',
    'chat/inputRequested': 'ChatInputRequestedAction',
    'chat/pendingMessageRemoved': 'ChatPendingMessageRemovedAction',
    'chat/pendingMessageSet': 'ChatPendingMessageSetAction',
    'chat/queuedMessagesReordered': 'ChatQueuedMessagesReorderedAction',
    'chat/reasoning': 'ChatReasoningAction',
    'chat/responsePart': 'ChatResponsePartAction',
    'chat/toolCallAuthRequired': 'ChatToolCallAuthRequiredAction',
    'chat/toolCallAuthResolved': 'ChatToolCallAuthResolvedAction',
    'chat/toolCallComplete': 'ChatToolCallCompleteAction',
    'chat/toolCallConfirmed': 'ChatToolCallApprovedAction|ChatToolCallDeniedAction',
    'chat/toolCallContentChanged': 'ChatToolCallContentChangedAction',
    'chat/toolCallDelta': 'ChatToolCallDeltaAction',
    'chat/toolCallReady': 'ChatToolCallReadyAction',
    'chat/toolCallResultConfirmed': 'ChatToolCallResultConfirmedAction',
    'chat/toolCallStart': 'ChatToolCallStartAction',
    'chat/truncated': 'ChatTruncatedAction',
    'chat/turnCancelled': 'ChatTurnCancelledAction',
    'chat/turnComplete': 'ChatTurnCompleteAction',
    'chat/turnStarted': 'ChatTurnStartedAction',
    'chat/turnsLoaded': 'ChatTurnsLoadedAction',
    'chat/usage': 'ChatUsageAction',
    'chat/workingDirectoryRemoved': 'ChatWorkingDirectoryRemovedAction',
    'chat/workingDirectorySet': 'ChatWorkingDirectorySetAction',
    'resourceWatch/changed': 'ResourceWatchChangedAction',
    'root/activeSessionsChanged': 'RootActiveSessionsChangedAction',
    'root/agentsChanged': 'RootAgentsChangedAction',
    'root/configChanged': 'RootConfigChangedAction',
    'root/terminalsChanged': 'RootTerminalsChangedAction',
    'session/activeClientRemoved': 'SessionActiveClientRemovedAction',
    'session/activeClientSet': 'SessionActiveClientSetAction',
    'session/activityChanged': 'SessionActivityChangedAction',
    'session/changesetsChanged': 'SessionChangesetsChangedAction',
    'session/chatAdded': 'SessionChatAddedAction',
    'session/chatRemoved': 'SessionChatRemovedAction',
    'session/chatUpdated': 'SessionChatUpdatedAction',
    'session/configChanged': 'SessionConfigChangedAction',
    'session/creationFailed': 'SessionCreationFailedAction',
    'session/customizationRemoved': 'SessionCustomizationRemovedAction',
    'session/customizationToggled': 'SessionCustomizationToggledAction',
    'session/customizationUpdated': 'SessionCustomizationUpdatedAction',
    'session/customizationsChanged': 'SessionCustomizationsChangedAction',
    'session/defaultChatChanged': 'SessionDefaultChatChangedAction',
    'session/inputNeededRemoved': 'SessionInputNeededRemovedAction',
    'session/inputNeededSet': 'SessionInputNeededSetAction',
    'session/isArchivedChanged': 'SessionIsArchivedChangedAction',
    'session/isReadChanged': 'SessionIsReadChangedAction',
    'session/mcpServerStartRequested': 'SessionMcpServerStartRequestedAction',
    'session/mcpServerStateChanged': 'SessionMcpServerStateChangedAction',
    'session/mcpServerStopRequested': 'SessionMcpServerStopRequestedAction',
    'session/metaChanged': 'SessionMetaChangedAction',
    'session/ready': 'SessionReadyAction',
    'session/serverToolsChanged': 'SessionServerToolsChangedAction',
    'session/titleChanged': 'SessionTitleChangedAction',
    'session/workingDirectoryRemoved': 'SessionWorkingDirectoryRemovedAction',
    'session/workingDirectorySet': 'SessionWorkingDirectorySetAction',
    'terminal/claimed': 'TerminalClaimedAction',
    'terminal/cleared': 'TerminalClearedAction',
    'terminal/commandDetectionAvailable': 'TerminalCommandDetectionAvailableAction',
    'terminal/commandExecuted': 'TerminalCommandExecutedAction',
    'terminal/commandFinished': 'TerminalCommandFinishedAction',
    'terminal/cwdChanged': 'TerminalCwdChangedAction',
    'terminal/data': 'TerminalDataAction',
    'terminal/exited': 'TerminalExitedAction',
    'terminal/input': 'TerminalInputAction',
    'terminal/resized': 'TerminalResizedAction',
    'terminal/titleChanged': 'TerminalTitleChangedAction',
}
# fmt: on

#: `SCHEMA_SHAPES` with the `FROM_TYPES` constants.
SHAPES: Final[Mapping[str, Shape]] = {
    name: s._replace(consts={**s.consts, **FROM_TYPES[name]}) if name in FROM_TYPES else s
    for name, s in SCHEMA_SHAPES.items()
}
