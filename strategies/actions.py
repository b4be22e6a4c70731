"""Actions: a valid strategy for every action type, state-aware strategies, adversarial ones.

* **Valid** (`valid_actions`, `action_of_type`): every 0.7.0 action type (and 0.8.0's
  `session/workingDirectoryReplaced`), schema-valid, ids from small pools.
* **State-aware** (`actions_for(kind, state, profile)`): actions that *refer to what is in the
  state* — the active turn id, markdown/reasoning part ids, tool-call ids in the status each
  action needs, open input-request ids and their question ids, pending-message ids, completed
  turn ids, chat URIs of the catalog, directories of the set, customization/MCP ids, file,
  operation, annotation, entry and command ids. Types whose guard is satisfied by the state are
  weighted up, so far more actions change state than with schema-only generation (the point of
  the issue: random actions mostly name ids that do not exist). A small share (`stale`, per id
  field) is deliberately stale or a near miss (case, whitespace, look-alike), and directories
  are sometimes an equivalent-but-different spelling (INV-034).
* **Adversarial** (`adversarial_actions(kind)` and the named strategies below): unknown and
  near-miss types (INV-004), foreign-family actions (INV-005), missing and extra fields, wrong
  JSON types, actions from a later version (INV-046), oversized strings, deep nesting, tool
  results with extra keys that override tool-call fields (INV-051).

Every strategy returns plain JSON dicts (bare `StateAction` payloads, no envelope).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from harness.reference import DEFAULT_PROFILE, Profile
from harness.spec.versions import (
    ACTION_INTRODUCED_IN,
    KIND_PREFIX,
    KINDS,
    action_types,
    is_known_to,
    kind_of,
)

from . import attachments, uris
from . import messages as msg
from . import states as sts
from ._common import (
    ANNOTATION_IDS,
    CLIENT_IDS,
    COMMAND_IDS,
    CONFIG_KEYS,
    CUSTOMIZATION_IDS,
    ENTRY_IDS,
    FILE_IDS,
    INPUT_NEEDED_IDS,
    MESSAGE_IDS,
    OPERATION_IDS,
    PART_IDS,
    QUESTION_IDS,
    REQUEST_IDS,
    TOOL_CALL_IDS,
    TURN_IDS,
    Json,
    id_from,
    iso_timestamps,
    json_scalars,
    meta,
    non_negative_ints,
    obj,
    pool,
    short_text,
    weighted,
)

#: Required payload fields per action type besides `type` (0.7.0 schema, INV-007-patched;
#: `chat/toolCallConfirmed` lists the fields common to its approved and denied variants).
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

STALE: Final = 0.07  # per id field


@dataclass(frozen=True)
class ActionContext:
    """What a state-aware strategy may know beyond the state itself.

    `stale`: probability that an id field is stale or a near miss. `session_directories`: the
    owning session's set, for chat directory actions (a chat state alone does not know it).
    `equivalent_spellings`: probability that a directory is an equivalence variant (INV-034).
    """

    profile: Profile = DEFAULT_PROFILE
    stale: float = STALE
    session_directories: tuple[str, ...] | None = None
    equivalent_spellings: float = 0.12


Builder = Callable[[Json, ActionContext], tuple[float, st.SearchStrategy[Json]]]
HOT, COLD = 1.0, 0.08  # weights: the action's guard holds / the action is a certain no-op


def _act(type_: str, **fields: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {"type": st.just(type_), **fields}


def fresh_id(
    present: Sequence[str], pool_ids: Sequence[str], ctx: ActionContext
) -> st.SearchStrategy[str]:
    """An id not in `present` (from the pool, else a new one); now and then an existing one."""
    unused = [i for i in pool_ids if i not in present]
    new = (
        st.sampled_from(unused)
        if unused
        else st.integers(5, 99).map(lambda n: f"{pool_ids[0]}-{n}")
    )
    if present and ctx.stale > 0:
        return weighted([(1 - ctx.stale, new), (ctx.stale, st.sampled_from(tuple(present)))])
    return new


def _ids(items: Sequence[Any], key: str) -> list[str]:
    return [x[key] for x in items if isinstance(x, dict) and isinstance(x.get(key), str)]


def _flag(status: Any, bit: int) -> bool:
    return isinstance(status, int) and bool(status & bit)


# ============================================================================================
# chat
# ============================================================================================


class _Chat:
    """Ids a chat action can refer to, read once from a `ChatState`."""

    def __init__(self, s: Json) -> None:
        t = s.get("activeTurn")
        self.active: Json | None = t if isinstance(t, dict) else None
        self.turn_id: str | None = self.active.get("id") if self.active else None
        parts = self.active.get("responseParts", []) if self.active else []
        self.parts: list[Json] = [p for p in parts if isinstance(p, dict)]
        self.markdown = _ids([p for p in self.parts if p.get("kind") == "markdown"], "id")
        self.reasoning = _ids([p for p in self.parts if p.get("kind") == "reasoning"], "id")
        self.tool_calls: list[Json] = [
            p["toolCall"]
            for p in self.parts
            if p.get("kind") == "toolCall" and isinstance(p.get("toolCall"), dict)
        ]
        self.open_requests: list[Json] = [
            p["request"]
            for p in self.parts
            if p.get("kind") == "inputRequest"
            and "response" not in p
            and isinstance(p.get("request"), dict)
        ]
        self.turns = _ids(s.get("turns", []), "id")
        # Without an active turn, "late" actions name the last completed turn and its tool
        # calls (a client acting on a turn that just ended; INV-015 strict variant).
        last = s.get("turns", [])[-1] if s.get("turns") else None
        self.last_turn_id: str | None = last.get("id") if isinstance(last, dict) else None
        self.late_calls: list[str] = (
            [
                p["toolCall"]["toolCallId"]
                for p in last.get("responseParts", [])
                if isinstance(p, dict)
                and p.get("kind") == "toolCall"
                and isinstance(p.get("toolCall"), dict)
            ]
            if isinstance(last, dict) and self.active is None
            else []
        )
        steering = s.get("steeringMessage")
        self.steering: str | None = steering.get("id") if isinstance(steering, dict) else None
        self.queued = _ids(s.get("queuedMessages") or [], "id")
        self.directories: list[str] | None = s.get("workingDirectories")

    def calls(self, *statuses: str, mcp: bool = False) -> list[str]:
        out = []
        for tc in self.tool_calls:
            if tc.get("status") in statuses:
                if mcp and (tc.get("contributor") or {}).get("kind") != "mcp":
                    continue
                out.append(tc["toolCallId"])
        return out

    def call(self, tool_call_id: str) -> Json | None:
        return next((tc for tc in self.tool_calls if tc.get("toolCallId") == tool_call_id), None)


def _turn_id(c: _Chat, ctx: ActionContext) -> st.SearchStrategy[str]:
    if c.turn_id is None and c.last_turn_id is not None and ctx.stale < 1:
        return weighted([(0.5, st.just(c.last_turn_id)), (0.5, pool(TURN_IDS))])  # late action
    return id_from([c.turn_id] if c.turn_id else [], TURN_IDS, stale=ctx.stale)


def _tool_action(
    type_: str,
    statuses: tuple[str, ...],
    extra: Callable[[_Chat, str], dict[str, st.SearchStrategy[Any]]] | None = None,
    optional: dict[str, st.SearchStrategy[Any]] | None = None,
    *,
    mcp: bool = False,
) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        c = _Chat(s)
        targets = c.calls(*statuses, mcp=mcp)
        tc_id = id_from(targets or c.late_calls, TOOL_CALL_IDS, stale=ctx.stale)

        def make(tid: str) -> st.SearchStrategy[Json]:
            fields = _act(type_, turnId=_turn_id(c, ctx), toolCallId=st.just(tid))
            if extra is not None:
                fields |= extra(c, tid)
            return obj(fields, {"_meta": meta(), **(optional or {})})

        return (HOT if targets else COLD), tc_id.flatmap(make)

    return build


def _ready_extra(c: _Chat, tid: str) -> dict[str, st.SearchStrategy[Any]]:
    return {"invocationMessage": msg.string_or_markdown()}


_READY_OPTIONAL: dict[str, st.SearchStrategy[Any]] = {
    "toolInput": msg.tool_inputs(),
    "confirmed": st.sampled_from(("not-needed", "user-action", "setting")),
    "confirmationTitle": msg.string_or_markdown(),
    "riskAssessment": msg.risk_assessments(),
    "edits": st.fixed_dictionaries({"items": st.lists(msg.file_edits(), max_size=1)}),
    "editable": st.booleans(),
    "options": st.lists(msg.confirmation_options(), max_size=3, unique_by=lambda o: o["id"]),
    "intention": short_text(8),
    "contributor": msg.contributors(),
}


def _confirmed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    targets = c.calls("pending-confirmation")
    tc_id = id_from(targets, TOOL_CALL_IDS, stale=ctx.stale)

    def make(tid: str) -> st.SearchStrategy[Json]:
        call = c.call(tid) or {}
        option_ids = _ids(call.get("options") or [], "id")
        option = id_from(option_ids, ("o1", "o2", "o3"), stale=ctx.stale)
        base = {
            "type": st.just("chat/toolCallConfirmed"),
            "turnId": _turn_id(c, ctx),
            "toolCallId": st.just(tid),
        }
        common_opt: dict[str, st.SearchStrategy[Any]] = {
            "_meta": meta(),
            "selectedOptionId": option,
        }
        approved = obj(
            {
                **base,
                "approved": st.just(True),
                "confirmed": st.sampled_from(("user-action", "setting", "not-needed")),
            },
            {**common_opt, "editedToolInput": st.sampled_from(('{"cmd":"ls -la"}', ""))},
        )
        denied = obj(
            {**base, "approved": st.just(False), "reason": st.sampled_from(("denied", "skipped"))},
            {
                **common_opt,
                "userSuggestion": msg.user_messages(),
                "reasonMessage": msg.string_or_markdown(),
            },
        )
        return st.one_of(approved, denied)

    return (HOT if targets else COLD), tc_id.flatmap(make)


def _complete(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    targets = c.calls("running", "pending-confirmation", "auth-required")
    tc_id = id_from(targets, TOOL_CALL_IDS, stale=ctx.stale)

    def make(tid: str) -> st.SearchStrategy[Json]:
        call = c.call(tid) or {}
        result = msg.tool_call_results()
        if call.get("status") == "auth-required":  # a successful completion would be a no-op
            result = result.map(lambda r: {**r, "success": False})
        return obj(
            _act(
                "chat/toolCallComplete",
                turnId=_turn_id(c, ctx),
                toolCallId=st.just(tid),
                result=result,
            ),
            {"_meta": meta(), "requiresResultConfirmation": st.booleans()},
        )

    return (HOT if targets else COLD), tc_id.flatmap(make)


def _tool_start(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    existing = [tc["toolCallId"] for tc in c.tool_calls]
    return (HOT if c.active else COLD), obj(
        _act(
            "chat/toolCallStart",
            turnId=_turn_id(c, ctx),
            toolCallId=fresh_id(existing, TOOL_CALL_IDS, ctx),
            toolName=st.sampled_from(("bash", "read_file", "edit")),
            displayName=st.sampled_from(("Run Command", "Read File", "Edit")),
        ),
        {"intention": short_text(8), "contributor": msg.contributors(), "_meta": meta()},
    )


def _turn_started(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    pending = ([c.steering] if c.steering else []) + c.queued
    optional: dict[str, st.SearchStrategy[Any]] = {"_meta": meta()}
    if pending:
        optional["queuedMessageId"] = id_from(pending, MESSAGE_IDS, stale=ctx.stale)
    taken = [*c.turns, *([c.turn_id] if c.turn_id else [])]
    return (HOT * 1.5 if not c.active else HOT * 0.3), obj(
        _act(
            "chat/turnStarted",
            turnId=fresh_id(taken, TURN_IDS, ctx),
            startedAt=iso_timestamps(),
            message=msg.user_messages(),
        ),
        optional,
    )


def _stream(type_: str, attr: str) -> Builder:
    kind = "markdown" if attr == "markdown" else "reasoning"

    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        c = _Chat(s)
        ids = getattr(c, attr)
        # The reducer appends to the *first* part with that identifier, and only when it has the
        # action's kind (REDUCERS.md §5.3); an id shadowed by an earlier part of another kind is
        # a no-op target, drawn now and then on purpose.
        first: dict[str, str] = {}
        for p in c.parts:
            ident = msg.part_identifier(p)
            if ident is not None:
                first.setdefault(ident, p.get("kind", ""))
        live = [i for i in ids if first.get(i) == kind]
        shadowed = [i for i in ids if first.get(i) != kind]
        part_id = id_from(live or ids, PART_IDS, stale=ctx.stale)
        if live and shadowed:
            part_id = weighted([(0.85, part_id), (0.15, st.sampled_from(shadowed))])
        return (HOT if live else COLD), obj(
            _act(
                type_,
                turnId=_turn_id(c, ctx),
                partId=part_id,
                content=st.sampled_from(("a", " more", "🙂", "\n")),
            ),
            {"_meta": meta()},
        )

    return build


_BLOCKING_PART_STATUSES: Final = ("streaming", "pending-confirmation", "running", "auth-required")


def _response_part(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    # Mostly streamable parts (later deltas target them); a quarter are tool calls with a new id
    # or open input requests, which leave the chat status stale (INV-012 strong variant).
    taken_calls = [tc["toolCallId"] for tc in c.tool_calls]
    tool_part = st.builds(
        lambda tc, tid: {"kind": "toolCall", "toolCall": {**tc, "toolCallId": tid}},
        st.sampled_from(_BLOCKING_PART_STATUSES).flatmap(msg.tool_calls),
        fresh_id(taken_calls, TOOL_CALL_IDS, ctx),
    )
    request_part = msg.input_requests(fresh_id(_ids(c.open_requests, "id"), REQUEST_IDS, ctx)).map(
        lambda r: {"kind": "inputRequest", "request": r}
    )
    part = weighted(
        [
            (
                0.75,
                msg.response_parts(("markdown", "reasoning", "contentRef", "systemNotification")),
            ),
            (0.25, st.one_of(tool_part, request_part)),
        ]
    )
    return (HOT if c.active else COLD), obj(
        _act("chat/responsePart", turnId=_turn_id(c, ctx), part=part), {"_meta": meta()}
    )


def _turn_end(type_: str) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        c = _Chat(s)
        fields = _act(
            type_,
            turnId=_turn_id(c, ctx),
            duration=st.one_of(non_negative_ints(600_000), st.just(-5)),
        )
        if type_ == "chat/error":
            fields["error"] = msg.error_infos()
        # Turns should live long enough to accumulate parts and tool calls: the three turn-ending
        # types together weigh less than one ordinary applicable type.
        return (HOT * 0.25 if c.active else COLD), obj(fields, {"_meta": meta()})

    return build


def _usage(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    return (HOT if c.active else COLD), obj(
        _act("chat/usage", turnId=_turn_id(c, ctx), usage=msg.usage_infos()), {"_meta": meta()}
    )


def _chat_activity(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    return HOT * 0.5, obj(
        _act("chat/activityChanged"),
        {"activity": st.sampled_from(("Thinking…", "Reading files", ""))},
    )


def _directory_choice(
    present: Sequence[str], universe: Sequence[str], ctx: ActionContext, *, want_present: bool
) -> st.SearchStrategy[str]:
    """A directory to set (absent from `present`) or to remove (in `present`), with a share of
    equivalent spellings of present entries and stale picks."""
    absent = [d for d in universe if d not in present] or list(uris.DIRECTORIES)
    main = (
        st.sampled_from(tuple(present))
        if (want_present and present)
        else st.sampled_from(tuple(absent))
    )
    choices: list[tuple[float, st.SearchStrategy[str]]] = [
        (1.0 - ctx.stale - ctx.equivalent_spellings, main)
    ]
    if present:
        base = st.sampled_from(tuple(present))
        choices.append(
            (
                ctx.equivalent_spellings,
                base.flatmap(lambda b: uris.uri_variants(base=b)).map(lambda v: v.variant),
            )
        )
    choices.append(
        (
            ctx.stale,
            st.sampled_from(tuple(present) if (not want_present and present) else uris.DIRECTORIES),
        )
    )
    return weighted(choices)


def _chat_dir(type_: str, *, remove: bool) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        present = list(s.get("workingDirectories") or [])
        universe = (
            list(ctx.session_directories)
            if ctx.session_directories is not None
            else list(uris.DIRECTORIES[:4])
        )
        weight = HOT if (present if remove else [d for d in universe if d not in present]) else COLD
        if remove and "workingDirectories" not in s:
            weight = COLD
        return weight * 0.7, st.fixed_dictionaries(
            _act(type_, directory=_directory_choice(present, universe, ctx, want_present=remove))
        )

    return build


def _pending_set(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    existing = ([c.steering] if c.steering else []) + c.queued
    return HOT * 0.7, st.fixed_dictionaries(
        _act(
            "chat/pendingMessageSet",
            kind=st.sampled_from(("steering", "queued")),
            id=fresh_id(existing, MESSAGE_IDS, ctx),
            message=msg.user_messages(),
        )
    )


def _pending_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    options: list[st.SearchStrategy[Json]] = []
    if c.steering:
        options.append(
            st.fixed_dictionaries(
                _act(
                    "chat/pendingMessageRemoved",
                    kind=st.just("steering"),
                    id=id_from([c.steering], MESSAGE_IDS, stale=ctx.stale),
                )
            )
        )
    if c.queued:
        options.append(
            st.fixed_dictionaries(
                _act(
                    "chat/pendingMessageRemoved",
                    kind=st.just("queued"),
                    id=id_from(c.queued, MESSAGE_IDS, stale=ctx.stale),
                )
            )
        )
    if not options:
        return COLD, st.fixed_dictionaries(
            _act(
                "chat/pendingMessageRemoved",
                kind=st.sampled_from(("steering", "queued")),
                id=pool(MESSAGE_IDS),
            )
        )
    return HOT, st.one_of(options)


def _reordered(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    """A full permutation (half the time), or what a client with a *stale view* sends: a
    permutation of only some of the queued ids, or an order with duplicates and unknown ids
    (INV-024(c): the result must still be a permutation of the queue)."""
    c = _Chat(s)
    noisy = st.lists(st.sampled_from((*c.queued, *MESSAGE_IDS, "gone")), max_size=5)
    if len(c.queued) < 2:
        return COLD, st.fixed_dictionaries(_act("chat/queuedMessagesReordered", order=noisy))
    full = st.permutations(c.queued).filter(lambda p: list(p) != c.queued).map(list)
    partial = st.permutations(c.queued).flatmap(
        lambda p: st.integers(1, len(p) - 1).map(lambda k: list(p[:k]))
    )
    order = weighted([(0.5, full), (0.35, partial), (0.15, noisy)])
    return HOT, st.fixed_dictionaries(_act("chat/queuedMessagesReordered", order=order))


def _draft(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    return HOT * 0.5, obj(_act("chat/draftChanged"), {"draft": msg.user_messages()})


def _input_requested(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    rid = weighted(
        [
            (0.7, fresh_id(_ids(c.open_requests, "id"), REQUEST_IDS, ctx)),
            (0.3, id_from(_ids(c.open_requests, "id"), REQUEST_IDS, stale=ctx.stale)),
        ]
    )
    return (HOT if c.active else COLD), st.fixed_dictionaries(
        _act("chat/inputRequested", request=msg.input_requests(rid))
    )


def _answer_changed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    rids = _ids(c.open_requests, "id")

    def make(rid: str) -> st.SearchStrategy[Json]:
        req = next((r for r in c.open_requests if r.get("id") == rid), {})
        qids = [*_ids(req.get("questions") or [], "id"), *(req.get("answers") or {})]
        return obj(
            _act(
                "chat/inputAnswerChanged",
                requestId=st.just(rid),
                questionId=id_from(qids, QUESTION_IDS, stale=ctx.stale),
            ),
            {"answer": msg.input_answers()},
        )

    return (HOT if rids else COLD), id_from(rids, REQUEST_IDS, stale=ctx.stale).flatmap(make)


def _input_completed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    rids = _ids(c.open_requests, "id")
    return (HOT if rids else COLD), obj(
        _act(
            "chat/inputCompleted",
            requestId=id_from(rids, REQUEST_IDS, stale=ctx.stale),
            response=st.sampled_from(("accept", "decline", "cancel")),
        ),
        {"answers": st.dictionaries(pool(QUESTION_IDS), msg.input_answers(), max_size=2)},
    )


def _truncated(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    useful = bool(c.turns or c.active or "turnsNextCursor" in s)
    return (HOT * 0.4 if useful else COLD), obj(
        _act("chat/truncated"), {"turnId": id_from(c.turns, TURN_IDS, stale=ctx.stale)}
    )


def _turns_loaded(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    c = _Chat(s)
    taken = (*c.turns, *([c.turn_id] if c.turn_id else ()))
    return HOT * 0.4, obj(
        _act("chat/turnsLoaded", turns=msg.turn_lists(3, exclude=taken)),
        {"turnsNextCursor": st.sampled_from(("cursor-1", "cursor-2", "cursor-3"))},
    )


def _content_changed_extra(c: _Chat, tid: str) -> dict[str, st.SearchStrategy[Any]]:
    return {"content": st.lists(msg.tool_result_contents(), max_size=2)}


CHAT_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "chat/turnStarted": _turn_started,
        "chat/delta": _stream("chat/delta", "markdown"),
        "chat/reasoning": _stream("chat/reasoning", "reasoning"),
        "chat/responsePart": _response_part,
        "chat/toolCallStart": _tool_start,
        "chat/toolCallDelta": _tool_action(
            "chat/toolCallDelta",
            ("streaming",),
            lambda c, t: {"content": st.sampled_from(('{"c', 'md":', '"ls"}'))},
            {"invocationMessage": msg.string_or_markdown()},
        ),
        "chat/toolCallReady": _tool_action(
            "chat/toolCallReady",
            ("streaming", "running", "pending-confirmation"),
            _ready_extra,
            _READY_OPTIONAL,
        ),
        "chat/toolCallConfirmed": _confirmed,
        "chat/toolCallComplete": _complete,
        "chat/toolCallResultConfirmed": _tool_action(
            "chat/toolCallResultConfirmed",
            ("pending-result-confirmation",),
            lambda c, t: {"approved": st.booleans()},
        ),
        "chat/toolCallContentChanged": _tool_action(
            "chat/toolCallContentChanged", ("running",), _content_changed_extra
        ),
        "chat/toolCallAuthRequired": _tool_action(
            "chat/toolCallAuthRequired",
            ("running",),
            lambda c, t: {"auth": msg.mcp_auth_requirements()},
            mcp=True,
        ),
        "chat/toolCallAuthResolved": _tool_action("chat/toolCallAuthResolved", ("auth-required",)),
        "chat/turnComplete": _turn_end("chat/turnComplete"),
        "chat/turnCancelled": _turn_end("chat/turnCancelled"),
        "chat/error": _turn_end("chat/error"),
        "chat/activityChanged": _chat_activity,
        "chat/workingDirectorySet": _chat_dir("chat/workingDirectorySet", remove=False),
        "chat/workingDirectoryRemoved": _chat_dir("chat/workingDirectoryRemoved", remove=True),
        "chat/usage": _usage,
        "chat/pendingMessageSet": _pending_set,
        "chat/pendingMessageRemoved": _pending_removed,
        "chat/queuedMessagesReordered": _reordered,
        "chat/draftChanged": _draft,
        "chat/inputRequested": _input_requested,
        "chat/inputAnswerChanged": _answer_changed,
        "chat/inputCompleted": _input_completed,
        "chat/truncated": _truncated,
        "chat/turnsLoaded": _turns_loaded,
    }
)


# ============================================================================================
# session
# ============================================================================================


def _simple(type_: str, weight: float = HOT * 0.5, **fields: st.SearchStrategy[Any]) -> Builder:
    strat = st.fixed_dictionaries(_act(type_, **fields))
    return lambda s, ctx: (weight, strat)


def _optional(type_: str, weight: float = HOT * 0.5, **fields: st.SearchStrategy[Any]) -> Builder:
    strat = obj(_act(type_), fields)
    return lambda s, ctx: (weight, strat)


def _mcp_ids(customizations: Sequence[Any]) -> list[str]:
    out = []
    for c in customizations:
        if not isinstance(c, dict):
            continue
        if c.get("type") == "mcpServer":
            out.append(c["id"])
        else:
            out.extend(
                ch["id"]
                for ch in c.get("children") or []
                if isinstance(ch, dict) and ch.get("type") == "mcpServer"
            )
    return out


def _all_customization_ids(customizations: Sequence[Any]) -> list[str]:
    out = []
    for c in customizations:
        if isinstance(c, dict):
            out.append(c["id"])
            out.extend(ch["id"] for ch in c.get("children") or [] if isinstance(ch, dict))
    return out


def _ready(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    return (HOT if s.get("lifecycle") != "ready" else COLD), st.just({"type": "session/ready"})


def _chat_added(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("chats", []), "resource")
    res = weighted(
        [
            (0.75, fresh_id(present, uris.CHAT_URIS, ctx)),
            (0.25, id_from(present, uris.CHAT_URIS, stale=ctx.stale)),
        ]
    )
    return HOT * 0.7, st.fixed_dictionaries(
        _act("session/chatAdded", summary=sts.chat_summaries(res))
    )


def _chat_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("chats", []), "resource")
    chat = id_from(present, uris.CHAT_URIS, stale=ctx.stale)
    return (HOT * 0.5 if present else COLD), st.fixed_dictionaries(
        _act("session/chatRemoved", chat=chat)
    )


def _chat_updated(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("chats", []), "resource")
    changes = obj(
        {"title": st.sampled_from(("Renamed", "Chat ✨", "x"))},
        {
            "status": st.sampled_from((1, 2, 8, 24, 33, 97)),
            "activity": short_text(6),
            "modifiedAt": iso_timestamps(),
            "interactivity": st.sampled_from(("full", "read-only", "hidden")),
            "workingDirectories": st.lists(uris.directories(), max_size=2, unique=True),
            "resource": uris.chat_uris(),  # ignored by the reducer (identity field)
        },
    )
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act(
            "session/chatUpdated",
            chat=id_from(present, uris.CHAT_URIS, stale=ctx.stale),
            changes=changes,
        )
    )


def _default_chat(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = [c for c in _ids(s.get("chats", []), "resource") if c != s.get("defaultChat")]
    return HOT * 0.5, obj(
        _act("session/defaultChatChanged"),
        {"defaultChat": id_from(present, uris.CHAT_URIS, stale=ctx.stale)},
    )


def _client_set(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    return HOT * 0.5, st.fixed_dictionaries(
        _act("session/activeClientSet", activeClient=sts.active_clients())
    )


def _client_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("activeClients", []), "clientId")
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act("session/activeClientRemoved", clientId=id_from(present, CLIENT_IDS, stale=ctx.stale))
    )


def _session_dir(type_: str, *, remove: bool) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        present = list(s.get("workingDirectories") or [])
        weight = HOT if (present or not remove) else COLD
        return weight * 0.8, st.fixed_dictionaries(
            _act(
                type_,
                directory=_directory_choice(present, uris.DIRECTORIES, ctx, want_present=remove),
            )
        )

    return build


def _dir_replaced(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = list(s.get("workingDirectories") or [])
    directory = _directory_choice(present, uris.DIRECTORIES, ctx, want_present=True)
    replacement = st.one_of(
        st.sampled_from(
            tuple(present) if present else uris.DIRECTORIES
        ),  # an existing entry: dedup path
        _directory_choice(present, uris.DIRECTORIES, ctx, want_present=False),
    )
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act("session/workingDirectoryReplaced", directory=directory, replacement=replacement)
    )


def _input_needed_set(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("inputNeeded") or [], "id")
    rid = weighted(
        [
            (0.7, fresh_id(present, INPUT_NEEDED_IDS, ctx)),
            (0.3, id_from(present, INPUT_NEEDED_IDS, stale=ctx.stale)),
        ]
    )
    chats = _ids(s.get("chats", []), "resource")
    chat = st.sampled_from(tuple(chats)) if chats else uris.chat_uris()
    return HOT * 0.7, st.fixed_dictionaries(
        _act("session/inputNeededSet", request=sts.session_input_requests(chat, rid))
    )


def _input_needed_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("inputNeeded") or [], "id")
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act("session/inputNeededRemoved", id=id_from(present, INPUT_NEEDED_IDS, stale=ctx.stale))
    )


def _enabled_by_id(customizations: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in customizations:
        if isinstance(c, dict):
            out.setdefault(c["id"], c.get("enabled"))
            for ch in c.get("children") or []:
                if isinstance(ch, dict):
                    out.setdefault(ch["id"], ch.get("enabled"))
    return out


def _cust_toggled(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    enabled = _enabled_by_id(s.get("customizations") or [])

    def make(cid: str) -> st.SearchStrategy[Json]:
        flip = st.just(enabled.get(cid) is not True)  # usually the opposite of the current value
        value = weighted([(0.85, flip), (0.15, st.booleans())])
        return st.fixed_dictionaries(
            _act("session/customizationToggled", id=st.just(cid), enabled=value)
        )

    cid = id_from(list(enabled), CUSTOMIZATION_IDS, stale=ctx.stale)
    return (HOT if enabled else COLD), cid.flatmap(make)


def _cust_updated(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("customizations") or [], "id")
    cid = weighted(
        [
            (0.5, fresh_id(present, CUSTOMIZATION_IDS, ctx)),
            (0.5, id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale)),
        ]
    )
    return HOT * 0.7, st.fixed_dictionaries(
        _act("session/customizationUpdated", customization=sts.customizations(cid))
    )


def _cust_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _all_customization_ids(s.get("customizations") or [])
    return (HOT * 0.5 if present else COLD), st.fixed_dictionaries(
        _act(
            "session/customizationRemoved", id=id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale)
        )
    )


#: The state kind a start/stop request sets: a server already in it (without a channel) is a
#: no-op target, so those are drawn less often.
_MCP_TARGET_KIND: Final = MappingProxyType(
    {"session/mcpServerStartRequested": "starting", "session/mcpServerStopRequested": "stopped"}
)


def _mcp_servers(customizations: Sequence[Any]) -> list[Json]:
    out: list[Json] = []
    for c in customizations:
        if not isinstance(c, dict):
            continue
        if c.get("type") == "mcpServer":
            out.append(c)
        else:
            out.extend(
                ch
                for ch in c.get("children") or []
                if isinstance(ch, dict) and ch.get("type") == "mcpServer"
            )
    return out


def _mcp(type_: str, **extra: st.SearchStrategy[Any]) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        present = _mcp_ids(s.get("customizations") or [])
        target = _MCP_TARGET_KIND.get(type_)
        if target is not None:
            movable = [
                m["id"]
                for m in _mcp_servers(s.get("customizations") or [])
                if (m.get("state") or {}).get("kind") != target or "channel" in m
            ]
            present = (
                movable + [i for i in present if i not in movable][: max(0, len(movable) // 3)]
                if movable
                else present
            )
        optional = (
            {"channel": st.just("ahp-mcp:/github")}
            if type_ == "session/mcpServerStateChanged"
            else {}
        )
        return (HOT if present else COLD), obj(
            _act(type_, id=id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale), **extra), optional
        )

    return build


def _flag_toggle(type_: str, key: str, bit: int) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        want = not _flag(s.get("status"), bit)
        value = weighted([(0.85, st.just(want)), (0.15, st.just(not want))])
        return HOT * 0.6, st.fixed_dictionaries(_act(type_, **{key: value}))

    return build


def _config_changed(type_: str) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        return (HOT * 0.6 if isinstance(s.get("config"), dict) else COLD), obj(
            _act(
                type_,
                config=st.dictionaries(
                    st.sampled_from(CONFIG_KEYS), json_scalars(), min_size=1, max_size=3
                ),
            ),
            {"replace": st.booleans()},
        )

    return build


SESSION_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "session/ready": _ready,
        "session/creationFailed": _simple(
            "session/creationFailed", HOT * 0.2, error=msg.error_infos()
        ),
        "session/chatAdded": _chat_added,
        "session/chatRemoved": _chat_removed,
        "session/chatUpdated": _chat_updated,
        "session/defaultChatChanged": _default_chat,
        "session/titleChanged": _simple(
            "session/titleChanged", title=st.sampled_from(("Renamed", "Session ✨", ""))
        ),
        "session/serverToolsChanged": _simple(
            "session/serverToolsChanged",
            tools=st.lists(sts.tool_definitions(), min_size=1, max_size=2),
        ),
        "session/activeClientSet": _client_set,
        "session/activeClientRemoved": _client_removed,
        "session/workingDirectorySet": _session_dir("session/workingDirectorySet", remove=False),
        "session/workingDirectoryRemoved": _session_dir(
            "session/workingDirectoryRemoved", remove=True
        ),
        "session/workingDirectoryReplaced": _dir_replaced,
        "session/inputNeededSet": _input_needed_set,
        "session/inputNeededRemoved": _input_needed_removed,
        "session/customizationsChanged": _simple(
            "session/customizationsChanged", HOT * 0.3, customizations=sts.customization_lists()
        ),
        "session/customizationToggled": _cust_toggled,
        "session/customizationUpdated": _cust_updated,
        "session/customizationRemoved": _cust_removed,
        "session/mcpServerStateChanged": _mcp(
            "session/mcpServerStateChanged", state=sts.mcp_server_states()
        ),
        "session/mcpServerStartRequested": _mcp("session/mcpServerStartRequested"),
        "session/mcpServerStopRequested": _mcp("session/mcpServerStopRequested"),
        "session/isReadChanged": _flag_toggle("session/isReadChanged", "isRead", sts.IS_READ),
        "session/isArchivedChanged": _flag_toggle(
            "session/isArchivedChanged", "isArchived", sts.IS_ARCHIVED
        ),
        "session/activityChanged": _optional(
            "session/activityChanged", activity=st.sampled_from(("Working", "Idle", ""))
        ),
        "session/changesetsChanged": _optional(
            "session/changesetsChanged", changesets=st.lists(sts.changesets(), max_size=2)
        ),
        "session/configChanged": _config_changed("session/configChanged"),
        "session/metaChanged": _optional("session/metaChanged", _meta=meta()),
    }
)


# ============================================================================================
# root, terminal, changeset, annotations, resource watch
# ============================================================================================

ROOT_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "root/agentsChanged": _simple(
            "root/agentsChanged", agents=st.lists(sts.agent_infos(), max_size=2)
        ),
        "root/activeSessionsChanged": _simple(
            "root/activeSessionsChanged", activeSessions=non_negative_ints(20)
        ),
        "root/terminalsChanged": _simple(
            "root/terminalsChanged",
            terminals=st.lists(
                obj(
                    {
                        "resource": st.sampled_from(uris.TERMINAL_URIS),
                        "title": short_text(6),
                        "claim": sts.terminal_claims(),
                    },
                    {"exitCode": st.integers(0, 2)},
                ),
                max_size=2,
            ),
        ),
        "root/configChanged": _config_changed("root/configChanged"),
    }
)


def _command_ids(s: Json) -> list[str]:
    return [
        p["commandId"]
        for p in s.get("content", [])
        if isinstance(p, dict) and p.get("type") == "command"
    ]


def _command_finished(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _command_ids(s)
    return (HOT if present else COLD), obj(
        _act("terminal/commandFinished", commandId=id_from(present, COMMAND_IDS, stale=ctx.stale)),
        {"exitCode": st.integers(0, 255), "durationMs": non_negative_ints(10_000)},
    )


def _cleared(type_: str, key: str) -> Builder:
    return lambda s, ctx: ((HOT * 0.4 if s.get(key) else COLD), st.just({"type": type_}))


TERMINAL_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "terminal/data": _simple(
            "terminal/data", HOT, data=st.sampled_from(("$ ", "ls\r\n", "\x1b[31mred\x1b[0m", "🙂"))
        ),
        "terminal/input": _simple(
            "terminal/input", COLD, data=st.sampled_from(("l", "s", "\r"))
        ),  # side effect only
        "terminal/resized": _simple(
            "terminal/resized", cols=st.integers(1, 300), rows=st.integers(1, 100)
        ),
        "terminal/claimed": _simple("terminal/claimed", claim=sts.terminal_claims()),
        "terminal/titleChanged": _simple(
            "terminal/titleChanged", title=st.sampled_from(("bash", "zsh", "npm test"))
        ),
        "terminal/cwdChanged": _simple("terminal/cwdChanged", cwd=uris.directories()),
        "terminal/exited": _optional("terminal/exited", exitCode=st.integers(0, 255)),
        "terminal/cleared": _cleared("terminal/cleared", "content"),
        "terminal/commandDetectionAvailable": lambda s, ctx: (
            (COLD if s.get("supportsCommandDetection") is True else HOT * 0.3),
            st.just({"type": "terminal/commandDetectionAvailable"}),
        ),
        "terminal/commandExecuted": lambda s, ctx: (
            HOT,
            st.fixed_dictionaries(
                _act(
                    "terminal/commandExecuted",
                    commandId=fresh_id(_command_ids(s), COMMAND_IDS, ctx),
                    commandLine=st.sampled_from(("ls", "npm test")),
                    timestamp=non_negative_ints(10**12),
                )
            ),
        ),
        "terminal/commandFinished": _command_finished,
    }
)


def _files_review(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("files", []), "id")
    files = st.lists(id_from(present, FILE_IDS, stale=ctx.stale), min_size=1, max_size=3)
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act("changeset/filesReviewChanged", files=files, reviewed=st.booleans())
    )


def _file_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("files", []), "id")
    return (HOT if present else COLD), st.fixed_dictionaries(
        _act("changeset/fileRemoved", fileId=id_from(present, FILE_IDS, stale=ctx.stale))
    )


def _op_status(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    present = _ids(s.get("operations") or [], "id")
    return (HOT if present else COLD), obj(
        _act(
            "changeset/operationStatusChanged",
            operationId=id_from(present, OPERATION_IDS, stale=ctx.stale),
            status=st.sampled_from(("idle", "running", "error", "disabled")),
        ),
        {"error": msg.error_infos()},
    )


CHANGESET_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "changeset/statusChanged": lambda s, ctx: (
            HOT * 0.6,
            obj(
                _act(
                    "changeset/statusChanged",
                    status=st.sampled_from(("computing", "ready", "error")),
                ),
                {"error": msg.error_infos()},
            ),
        ),
        "changeset/fileSet": lambda s, ctx: (
            HOT,
            st.fixed_dictionaries(_act("changeset/fileSet", file=sts.changeset_files())),
        ),
        "changeset/fileRemoved": _file_removed,
        "changeset/filesReviewChanged": _files_review,
        "changeset/contentChanged": lambda s, ctx: (
            HOT * 0.5,
            obj(
                _act(
                    "changeset/contentChanged",
                    files=st.lists(sts.changeset_files(), max_size=2, unique_by=lambda f: f["id"]),
                ),
                {
                    "operations": st.lists(
                        sts.changeset_operations(), max_size=2, unique_by=lambda o: o["id"]
                    ),
                    "error": msg.error_infos(),
                },
            ),
        ),
        "changeset/operationsChanged": _optional(
            "changeset/operationsChanged",
            operations=st.lists(
                sts.changeset_operations(), max_size=2, unique_by=lambda o: o["id"]
            ),
        ),
        "changeset/operationStatusChanged": _op_status,
        "changeset/cleared": _cleared("changeset/cleared", "files"),
    }
)


def _annotation_ids(s: Json) -> list[str]:
    return _ids(s.get("annotations", []), "id")


def _ann_ref(type_: str, **extra: st.SearchStrategy[Any]) -> Builder:
    def build(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
        present = _annotation_ids(s)
        optional: dict[str, st.SearchStrategy[Any]] = {}
        if type_ == "annotations/updated":
            optional = {
                "turnId": pool(TURN_IDS),
                "resource": uris.resource_uris(),
                "range": attachments.text_ranges(),
                "resolved": st.booleans(),
            }
        return (HOT if present else COLD), obj(
            _act(type_, annotationId=id_from(present, ANNOTATION_IDS, stale=ctx.stale), **extra),
            optional,
        )

    return build


def _entry_removed(s: Json, ctx: ActionContext) -> tuple[float, st.SearchStrategy[Json]]:
    anns = [a for a in s.get("annotations", []) if isinstance(a, dict)]
    if not anns:
        return COLD, st.fixed_dictionaries(
            _act(
                "annotations/entryRemoved",
                annotationId=pool(ANNOTATION_IDS),
                entryId=pool(ENTRY_IDS),
            )
        )

    def make(a: Json) -> st.SearchStrategy[Json]:
        entries = _ids(a.get("entries", []), "id")
        return st.fixed_dictionaries(
            _act(
                "annotations/entryRemoved",
                annotationId=st.just(a["id"]),
                entryId=id_from(entries, ENTRY_IDS, stale=ctx.stale),
            )
        )

    return HOT, st.sampled_from(anns).flatmap(make)


ANNOTATIONS_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "annotations/set": lambda s, ctx: (
            HOT,
            st.fixed_dictionaries(_act("annotations/set", annotation=sts.annotations())),
        ),
        "annotations/updated": _ann_ref("annotations/updated"),
        "annotations/removed": _ann_ref("annotations/removed"),
        "annotations/entrySet": _ann_ref("annotations/entrySet", entry=sts.annotation_entries()),
        "annotations/entryRemoved": _entry_removed,
    }
)

RESOURCE_WATCH_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "resourceWatch/changed": lambda s, ctx: (
            COLD,  # events are consumed from the stream, never stored (a no-op by design)
            st.fixed_dictionaries(
                _act(
                    "resourceWatch/changed",
                    changes=st.fixed_dictionaries(
                        {
                            "items": st.lists(
                                st.fixed_dictionaries(
                                    {
                                        "uri": uris.resource_uris(),
                                        "type": st.sampled_from(("added", "updated", "deleted")),
                                    }
                                ),
                                min_size=1,
                                max_size=3,
                            )
                        }
                    ),
                )
            ),
        ),
    }
)

BUILDERS: Final[Mapping[str, Mapping[str, Builder]]] = MappingProxyType(
    {
        "root": ROOT_BUILDERS,
        "session": SESSION_BUILDERS,
        "chat": CHAT_BUILDERS,
        "terminal": TERMINAL_BUILDERS,
        "changeset": CHANGESET_BUILDERS,
        "annotations": ANNOTATIONS_BUILDERS,
        "resourceWatch": RESOURCE_WATCH_BUILDERS,
    }
)

_EMPTY: Final[Json] = {}


def _builder(action_type: str) -> Builder:
    kind = kind_of(action_type)
    table = BUILDERS.get(kind or "", {})
    if action_type not in table:
        raise KeyError(f"no strategy for action type {action_type!r}")
    return table[action_type]


# ============================================================================================
# public: valid and state-aware
# ============================================================================================


def action_of_type(
    action_type: str, state: Json | None = None, context: ActionContext | None = None
) -> st.SearchStrategy[Json]:
    """A valid action of one type; state-aware when `state` is given (ids from it)."""
    ctx = context or ActionContext()
    return _builder(action_type)(state if state is not None else _EMPTY, ctx)[1]


def valid_actions(kind: str | None = None, version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Any valid action of `kind` (every kind when None) known to `version` (state-free)."""
    types = action_types(version, kind)
    return st.sampled_from(types).flatmap(lambda t: action_of_type(t))


def actions_for(
    kind: str,
    state: Json,
    profile: Profile = DEFAULT_PROFILE,
    *,
    types: Sequence[str] | None = None,
    context: ActionContext | None = None,
) -> st.SearchStrategy[Json]:
    """A valid action of `kind` that refers to what is in `state` (the engine's main entry).

    Only types known to `profile.version` are drawn (0.8.0's replace needs a 0.8.0 profile).
    Types whose guard the state satisfies are weighted up; `types` restricts the choice (the
    benchmark measures one type at a time). Use inside a stateful machine via `data.draw`.
    """
    if kind not in BUILDERS:
        raise ValueError(f"unknown state kind {kind!r} (want one of {', '.join(KINDS)})")
    ctx = context if context is not None else ActionContext(profile=profile)
    table = BUILDERS[kind]
    chosen = [
        t
        for t in (types if types is not None else table)
        if t in table and is_known_to(t, ctx.profile.version)
    ]
    if not chosen:
        raise ValueError(f"no {kind} action type known to {ctx.profile.label} among {types}")
    built = [(t, *table[t](state, ctx)) for t in chosen]
    # Hypothesis draws the first branch far more often than its weight says (zero-extended and
    # mutated examples), so put the applicable types first, in an order that varies with the
    # state but is stable across runs (crc32, not the salted `hash`).
    fingerprint = _fingerprint(state)
    built.sort(key=lambda b: (-b[1], zlib.crc32(f"{b[0]}|{fingerprint}".encode())))
    return weighted([(w, s) for _, w, s in built])


def _fingerprint(state: Json) -> str:
    return ",".join(
        f"{k}{len(v) if isinstance(v, (list, dict, str)) else v}" for k, v in sorted(state.items())
    )


def stale_actions_for(
    kind: str, state: Json, profile: Profile = DEFAULT_PROFILE
) -> st.SearchStrategy[Json]:
    """Adversarial: every id field is stale or a near miss (INV-015, no-op paths)."""
    return actions_for(
        kind,
        state,
        profile,
        context=ActionContext(profile=profile, stale=1.0, equivalent_spellings=0.0),
    )


# ============================================================================================
# adversarial
# ============================================================================================

FUTURE_TYPES: Final = (
    "future/newAction",
    "chat/nonExistentAction",
    "session/nonExistentAction",
    "canvas/updated",
    "automation/runStarted",
)


def unknown_action_types(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial (INV-004): a type no version defines, with plausible payload fields."""
    prefix = KIND_PREFIX[kind] if kind else ""
    names = st.one_of(
        st.sampled_from(FUTURE_TYPES),
        st.sampled_from(("nonExistentAction", "x", "", "turnStarted2")).map(lambda n: prefix + n),
        st.text(max_size=12).map(lambda n: prefix + n),
    ).filter(lambda t: t not in ACTION_INTRODUCED_IN)
    return st.builds(
        lambda t, extra: {"type": t, **extra},
        names,
        st.dictionaries(st.sampled_from(("turnId", "id", "data")), short_text(4), max_size=2),
    )


def near_miss_types(action_type: str) -> list[str]:
    """Spellings close to `action_type` that are not action types (case, slashes, spaces,
    another family's prefix)."""
    family, _, name = action_type.partition("/")
    others = [p.rstrip("/") for p in KIND_PREFIX.values() if p.rstrip("/") != family]
    candidates = [
        action_type.upper(),
        family + "/" + name[:1].upper() + name[1:],
        family.capitalize() + "/" + name,
        action_type + "/",
        "/" + action_type,
        action_type + " ",
        " " + action_type,
        family + "//" + name,
        family + "." + name,
        family + ":" + name,
        *(o + "/" + name for o in others),
        action_type + "\u200b",
        action_type.replace("/", "\u2215"),
    ]
    return [
        c for c in dict.fromkeys(candidates) if c not in ACTION_INTRODUCED_IN and c != action_type
    ]


def near_miss_type_actions(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial (INV-004): a valid action whose `type` is a near miss of a real type."""
    return valid_actions(kind).flatmap(
        lambda a: st.sampled_from(near_miss_types(a["type"])).map(lambda t: {**a, "type": t})
    )


def foreign_family_actions(kind: str) -> st.SearchStrategy[Json]:
    """Adversarial (INV-005): a valid action of another family handed to `kind`'s reducer."""
    others = [k for k in KINDS if k != kind]
    return st.sampled_from(others).flatmap(valid_actions)


def missing_field_actions(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one required field removed (`type` itself when the
    type has no other required field). `missing_required` tells which one is missing."""

    def drop(a: Json) -> st.SearchStrategy[Json]:
        req = REQUIRED_FIELDS.get(a["type"], ())
        names = [k for k in req if k in a] or ["type"]
        return st.sampled_from(names).map(lambda k: {n: v for n, v in a.items() if n != k})

    return valid_actions(kind).flatmap(drop)


def missing_required(action: Json, action_type: str) -> list[str]:
    """Required fields of `action_type` (plus `type`) that `action` lacks."""
    return [k for k in ("type", *REQUIRED_FIELDS[action_type]) if k not in action]


EXTRA_FIELD_NAMES: Final = (
    "unknownField",
    "x-extra",
    "__proto__",
    "constructor",
    "Type",
    "turnID",
    "channel",
    "serverSeq",
)


def extra_field_actions(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action plus keys no action declares (the schemas allow them; a
    reducer must ignore them — INV-051 is the place where the reference reducer does not)."""
    return st.builds(
        lambda a, extra: {**a, **{k: v for k, v in extra.items() if k not in a}},
        valid_actions(kind),
        st.dictionaries(st.sampled_from(EXTRA_FIELD_NAMES), json_scalars(), min_size=1, max_size=3),
    ).filter(lambda a: any(k in a for k in EXTRA_FIELD_NAMES))


def _wrong_values(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return ["true", 1, None, []]
    if isinstance(value, (int, float)):
        return [str(value), None, [], {"n": value}, True]
    if isinstance(value, str):
        return [123, None, [], {"s": value}, True]
    if isinstance(value, list):
        return [{}, "x", 1, None]
    if isinstance(value, dict):
        return [[], "x", 1, None]
    return ["x", 1]


def wrong_type_actions(kind: str | None = None) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one payload field replaced by a value of another JSON
    type (string <-> number, object <-> array, boolean -> string, null)."""

    def swap(a: Json) -> st.SearchStrategy[Json]:
        names = [k for k in a if k != "type" and (a["type"], k) not in ANY_TYPED_FIELDS]
        if not names:
            return st.just({**a, "type": 42})
        return st.sampled_from(names).flatmap(
            lambda k: st.sampled_from(_wrong_values(a[k])).map(lambda v: {**a, k: v})
        )

    return valid_actions(kind).flatmap(swap)


def later_version_actions(version: str = "0.7.0") -> st.SearchStrategy[Json]:
    """Adversarial (INV-046): a valid action of a type introduced *after* `version`."""
    later = sorted(t for t in ACTION_INTRODUCED_IN if not is_known_to(t, version))
    if not later:
        raise ValueError(f"no known action type is newer than {version}")
    return st.sampled_from(later).flatmap(lambda t: action_of_type(t))


STRING_FIELDS: Final = (
    "title",
    "data",
    "content",
    "directory",
    "activity",
    "clientId",
    "id",
    "turnId",
    "chat",
)


def oversized_string_actions(
    kind: str | None = None, min_size: int = 65_536, max_size: int = 1_048_576
) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action with one string field (or a new `_meta` string) made
    64 KiB–1 MiB long."""

    def grow(a: Json, n: int, ch: str) -> Json:
        target = next((k for k in STRING_FIELDS if isinstance(a.get(k), str)), None)
        big = ch * n
        if target is None:
            return {**a, "_meta": {"blob": big}}
        return {**a, target: big}

    return st.builds(
        grow,
        valid_actions(kind),
        st.integers(min_size, max_size),
        st.sampled_from(("a", "é", "🙂", "\x00")),
    )


def nested_value(depth: int, leaf: Any = 0) -> Any:
    """A JSON value nested `depth` levels deep (alternating objects and arrays)."""
    v = leaf
    for i in range(depth):
        v = {"n": v} if i % 2 else [v]
    return v


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value (scalars are 0); iterative, safe for deep values."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            best = max(best, d + 1)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            best = max(best, d + 1)
            stack.extend((x, d + 1) for x in v)
    return best


def deeply_nested_actions(
    kind: str | None = None, min_depth: int = 64, max_depth: int = 400
) -> st.SearchStrategy[Json]:
    """Adversarial: a valid action carrying a value nested `min_depth..max_depth` deep in
    `_meta` (which every schema allows to hold any JSON)."""
    return st.builds(
        lambda a, d: {**a, "_meta": {"deep": nested_value(d)}},
        valid_actions(kind),
        st.integers(min_depth, max_depth),
    )


RESULT_OVERRIDE_KEYS: Final = (
    "status",
    "toolCallId",
    "toolName",
    "confirmed",
    "invocationMessage",
    "contributor",
)


def tool_results_with_extra_keys() -> st.SearchStrategy[Json]:
    """Adversarial (INV-051): `chat/toolCallComplete` whose schema-valid `result` carries keys
    that overwrite tool-call fields when spread (`status`, `toolCallId`, …)."""
    extra = st.dictionaries(
        st.sampled_from(RESULT_OVERRIDE_KEYS),
        st.sampled_from(("running", "tc-other", "pending-confirmation", "hijacked")),
        min_size=1,
        max_size=3,
    )
    return st.builds(
        lambda a, e: {**a, "result": {**a["result"], **e}},
        action_of_type("chat/toolCallComplete"),
        extra,
    )


def adversarial_actions(kind: str, profile: Profile = DEFAULT_PROFILE) -> st.SearchStrategy[Json]:
    """Any adversarial action for a reducer of `kind` (the union of the tactics above)."""
    later = [t for t in ACTION_INTRODUCED_IN if not is_known_to(t, profile.version)]
    tactics = [
        unknown_action_types(kind),
        near_miss_type_actions(kind),
        foreign_family_actions(kind),
        missing_field_actions(kind),
        extra_field_actions(kind),
        wrong_type_actions(kind),
        oversized_string_actions(kind, min_size=4_096, max_size=65_536),
        deeply_nested_actions(kind, min_depth=16, max_depth=128),
    ]
    if later:
        tactics.append(st.sampled_from(sorted(later)).flatmap(lambda t: action_of_type(t)))
    if kind == "chat":
        tactics.append(tool_results_with_extra_keys())
    return st.one_of(tactics)
