"""State-aware builders for the chat channel: turns, parts, the tool-call state machine, input
requests, pending messages, directories, truncation and paging.

Each builder reads a `ChatView` (computed once per state) and returns `(weight, make)`; `make`
builds the strategy only when the type is chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from .. import messages as msg
from .. import uris
from .._common import (
    MESSAGE_IDS,
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
from ._base import (
    COLD,
    HOT,
    ActionContext,
    Builder,
    Offer,
    act,
    directory_choice,
    fresh_id,
    ids,
    view,
)

#: Tool-call statuses (all seven), for the "wrong status" share of tool-call actions.
TOOL_STATUSES: Final = (
    "streaming",
    "pending-confirmation",
    "running",
    "pending-result-confirmation",
    "auth-required",
    "completed",
    "cancelled",
)
#: Share of tool-call actions aimed at a call in another status than the guard needs (a client
#: acting on a stale view; the reducer must leave it alone — where guard bugs live).
WRONG_STATUS: Final = 0.12
#: Weight of a tool-call action when the active turn holds calls, none in the needed status.
WRONG_CALL: Final = 0.2


class ChatView:
    """Ids a chat action can refer to, read once from a `ChatState`."""

    def __init__(self, s: Json) -> None:
        t = s.get("activeTurn")
        self.active: Json | None = t if isinstance(t, dict) else None
        self.turn_id: str | None = self.active.get("id") if self.active else None
        parts = self.active.get("responseParts", []) if self.active else []
        self.parts: list[Json] = [p for p in parts if isinstance(p, dict)]
        self.markdown = ids([p for p in self.parts if p.get("kind") == "markdown"], "id")
        self.reasoning = ids([p for p in self.parts if p.get("kind") == "reasoning"], "id")
        self.tool_calls: list[Json] = [
            p["toolCall"]
            for p in self.parts
            if p.get("kind") == "toolCall" and isinstance(p.get("toolCall"), dict)
        ]
        self.tool_call_ids: list[str] = ids(self.tool_calls, "toolCallId")
        self.open_requests: list[Json] = [
            p["request"]
            for p in self.parts
            if p.get("kind") == "inputRequest"
            and "response" not in p
            and isinstance(p.get("request"), dict)
        ]
        self.open_request_ids = ids(self.open_requests, "id")
        turns = s.get("turns") if isinstance(s.get("turns"), list) else []
        self.turns = ids(turns, "id")
        # Without an active turn, "late" actions name the last completed turn and its tool
        # calls (a client acting on a turn that just ended; INV-015 strict variant).
        last = turns[-1] if turns else None
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
        self.queued = ids(s.get("queuedMessages") or [], "id")
        self.directories: list[str] | None = s.get("workingDirectories")
        self.has_cursor = "turnsNextCursor" in s

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


def chat_view(s: Json) -> ChatView:
    return view(s, ChatView)


#: With an active turn, the share of turn-scoped actions that name the *previous* turn (a client
#: that has not seen the new turn start yet): the reducer must ignore them (INV-015).
PREVIOUS_TURN: Final = 0.08


def _turn_id(c: ChatView, ctx: ActionContext) -> st.SearchStrategy[str]:
    if c.turn_id is None and c.last_turn_id is not None and ctx.stale < 1:
        return weighted([(0.5, st.just(c.last_turn_id)), (0.5, pool(TURN_IDS))])  # late action
    current = id_from([c.turn_id] if c.turn_id else [], TURN_IDS, stale=ctx.stale)
    if c.turn_id is not None and c.last_turn_id is not None and 0 < ctx.stale < 1:
        return weighted([(1 - PREVIOUS_TURN, current), (PREVIOUS_TURN, st.just(c.last_turn_id))])
    return current


def _call_id(c: ChatView, targets: list[str], ctx: ActionContext) -> st.SearchStrategy[str]:
    """A tool-call id in the status the action needs; a share names a call in another status
    (all of them when no call is in the needed status: the guard must turn the action away)."""
    others = [i for i in c.tool_call_ids if i not in targets]
    real = id_from(targets or others or c.late_calls, TOOL_CALL_IDS, stale=ctx.stale)
    if targets and others and ctx.stale < 1:
        return weighted([(1 - WRONG_STATUS, real), (WRONG_STATUS, st.sampled_from(others))])
    return real


def _tool_weight(c: ChatView, targets: list[str]) -> float:
    """HOT with a call in the needed status; with calls only in other statuses, a guard probe
    worth more than a certain no-op (a missing status guard shows only there)."""
    return HOT if targets else (WRONG_CALL if c.tool_call_ids else COLD)


def _tool_action(
    type_: str,
    statuses: tuple[str, ...],
    extra: Callable[[ChatView, str], dict[str, st.SearchStrategy[Any]]] | None = None,
    optional: dict[str, st.SearchStrategy[Any]] | None = None,
    *,
    mcp: bool = False,
) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        c = chat_view(s)
        targets = c.calls(*statuses, mcp=mcp)

        def make() -> st.SearchStrategy[Json]:
            def one(tid: str) -> st.SearchStrategy[Json]:
                fields = act(type_, turnId=_turn_id(c, ctx), toolCallId=st.just(tid))
                if extra is not None:
                    fields |= extra(c, tid)
                rest = {k: v for k, v in (optional or {}).items() if k not in fields}  # extra decides those
                return obj(fields, {"_meta": meta(), **rest})

            return _call_id(c, targets, ctx).flatmap(one)

        return _tool_weight(c, targets), make

    return build


def _ready_extra(c: ChatView, tid: str) -> dict[str, st.SearchStrategy[Any]]:
    out: dict[str, st.SearchStrategy[Any]] = {"invocationMessage": msg.string_or_markdown()}
    owner = (c.call(tid) or {}).get("contributor")
    if isinstance(owner, dict) and owner.get("kind") == "client":
        # A client-owned call keeps its owner (REDUCERS.md §7b.2): a ready naming another
        # contributor is the branch worth sending, not 1 in 16 of independent optional draws
        # (issue 32's mutation sample: a survivor for want of it).
        out["contributor"] = st.one_of(msg.contributors(), st.just(owner))
    return out


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


def _confirmed(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    targets = c.calls("pending-confirmation")

    def one(tid: str) -> st.SearchStrategy[Json]:
        call = c.call(tid) or {}
        option = id_from(ids(call.get("options") or [], "id"), ("o1", "o2", "o3"), stale=ctx.stale)
        base = {
            "type": st.just("chat/toolCallConfirmed"),
            "turnId": _turn_id(c, ctx),
            "toolCallId": st.just(tid),
        }
        common_opt: dict[str, st.SearchStrategy[Any]] = {"_meta": meta(), "selectedOptionId": option}
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

    return _tool_weight(c, targets), lambda: _call_id(c, targets, ctx).flatmap(one)


#: Keys no tool-call field has: a result may carry them (the schema allows extra keys), and a
#: reducer that spreads the result into the tool call copies them (INV-051's harmless side).
EXTRA_RESULT_KEYS: Final = ("telemetry", "x-extra", "durationMs")
_RESULTS: Final = weighted(
    [
        (0.85, msg.tool_call_results()),
        (
            0.15,
            st.builds(
                lambda r, extra: {**r, **extra},
                msg.tool_call_results(),
                st.dictionaries(st.sampled_from(EXTRA_RESULT_KEYS), json_scalars(), min_size=1, max_size=2),
            ),
        ),
    ]
)


def _complete(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    targets = c.calls("running", "pending-confirmation", "auth-required")

    def one(tid: str) -> st.SearchStrategy[Json]:
        call = c.call(tid) or {}
        result = _RESULTS
        if call.get("status") == "auth-required":  # a successful completion would be a no-op
            result = result.map(lambda r: {**r, "success": False})
        return obj(
            act(
                "chat/toolCallComplete",
                turnId=_turn_id(c, ctx),
                toolCallId=st.just(tid),
                result=result,
            ),
            {"_meta": meta(), "requiresResultConfirmation": st.booleans()},
        )

    return _tool_weight(c, targets), lambda: _call_id(c, targets, ctx).flatmap(one)


def _tool_start(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    return (HOT if c.active else COLD), lambda: obj(
        act(
            "chat/toolCallStart",
            turnId=_turn_id(c, ctx),
            toolCallId=fresh_id(c.tool_call_ids, TOOL_CALL_IDS, ctx),
            toolName=st.sampled_from(("bash", "read_file", "edit")),
            displayName=st.sampled_from(("Run Command", "Read File", "Edit")),
        ),
        {"intention": short_text(8), "contributor": msg.contributors(), "_meta": meta()},
    )


def _turn_started(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)

    def make() -> st.SearchStrategy[Json]:
        pending = ([c.steering] if c.steering else []) + c.queued
        optional: dict[str, st.SearchStrategy[Any]] = {"_meta": meta()}
        if pending:
            optional["queuedMessageId"] = id_from(pending, MESSAGE_IDS, stale=ctx.stale)
        # A new turn's id names no finished turn: a turn started under a history id is a state
        # no host makes (two turns of one id once it ends; engine/mutation.py `id_repeats`).
        # The stale pick names the active turn only.
        taken = [*c.turns, *([c.turn_id] if c.turn_id else [])]
        turn_id = fresh_id(taken, TURN_IDS, replace(ctx, stale=0.0))
        if c.turn_id and ctx.stale > 0:
            turn_id = weighted([(1 - ctx.stale, turn_id), (ctx.stale, st.just(c.turn_id))])
        return obj(
            act(
                "chat/turnStarted",
                turnId=turn_id,
                startedAt=iso_timestamps(),
                message=msg.user_messages(),
            ),
            optional,
        )

    return (HOT * 1.5 if not c.active else HOT * 0.3), make


def _stream(type_: str, attr: str) -> Builder:
    kind = "markdown" if attr == "markdown" else "reasoning"

    def build(s: Json, ctx: ActionContext) -> Offer:
        c = chat_view(s)
        part_ids = getattr(c, attr)
        # The reducer appends to the *first* part with that identifier, and only when it has the
        # action's kind (REDUCERS.md §5.3); an id shadowed by an earlier part of another kind is
        # a no-op target, drawn now and then on purpose.
        first: dict[str, str] = {}
        for p in c.parts:
            ident = msg.part_identifier(p)
            if ident is not None:
                first.setdefault(ident, p.get("kind", ""))
        live = [i for i in part_ids if first.get(i) == kind]
        shadowed = [i for i in part_ids if first.get(i) != kind]
        # the identifier of a part of another kind (a tool call's, a reasoning part's for a delta):
        # the reducer's kind check is what such an action meets (a no-op)
        foreign = [i for i, k in first.items() if k != kind and i not in shadowed]

        def make() -> st.SearchStrategy[Json]:
            part_id = id_from(live or part_ids, PART_IDS, stale=ctx.stale)
            if live and shadowed:
                part_id = weighted([(0.85, part_id), (0.15, st.sampled_from(shadowed))])
            if foreign:
                part_id = weighted([(0.88, part_id), (0.12, st.sampled_from(foreign))])
            return obj(
                act(
                    type_,
                    turnId=_turn_id(c, ctx),
                    partId=part_id,
                    content=st.sampled_from(("a", " more", "🙂", "\n")),
                ),
                {"_meta": meta()},
            )

        return (HOT if live else COLD), make

    return build


#: Statuses a tool call added by `chat/responsePart` starts in: every non-terminal one, so that
#: the actions that need a call in a given status find one (the state machine alone reaches
#: pending-result-confirmation and auth-required only through several lucky steps).
_BLOCKING_PART_STATUSES: Final = (
    "streaming",
    "pending-confirmation",
    "running",
    "pending-result-confirmation",
    "auth-required",
)


#: 0.9.0 and later: the share of `chat/responsePart` draws whose part is an error part.
ERROR_PART: Final = 0.05


def _response_part(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)

    def make() -> st.SearchStrategy[Json]:
        # Mostly streamable parts (later deltas target them); 40% are tool calls with a new id
        # in a non-terminal status or open input requests, which leave the chat status stale
        # (INV-012 strong variant) and put tool calls in every status within reach.
        tool_part = st.builds(
            lambda tc, tid: {"kind": "toolCall", "toolCall": {**tc, "toolCallId": tid}},
            st.sampled_from(_BLOCKING_PART_STATUSES).flatmap(msg.tool_calls),
            fresh_id(c.tool_call_ids, TOOL_CALL_IDS, ctx),
        )
        request_part = msg.input_requests(fresh_id(c.open_request_ids, REQUEST_IDS, ctx)).map(
            lambda r: {"kind": "inputRequest", "request": r}
        )
        shares = [
            (0.6, msg.response_parts(("markdown", "reasoning", "contentRef", "systemNotification"))),
            (0.28, tool_part),
            (0.12, request_part),
        ]
        if ctx.profile.durable_turn_errors:
            # 0.9.0: an error enters a turn only through `chat/error`; a responsePart carrying
            # one is a schema-valid no-op (fixture 270-chat), a guard no draw reached before.
            shares.append((ERROR_PART, error_parts()))
        part = weighted(shares)
        return obj(act("chat/responsePart", turnId=_turn_id(c, ctx), part=part), {"_meta": meta()})

    return (HOT if c.active else COLD), make


def error_parts() -> st.SearchStrategy[Json]:
    """0.9.0 `ErrorResponsePart {kind: error, error, resumable?}` (resumable often, so that
    `chat/turnResume` has turns to reopen)."""
    return obj({"kind": st.just("error"), "error": msg.error_infos()}, {"resumable": st.booleans()})


def _turn_end(type_: str) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        c = chat_view(s)

        def make() -> st.SearchStrategy[Json]:
            fields = act(
                type_,
                turnId=_turn_id(c, ctx),
                duration=st.one_of(non_negative_ints(600_000), st.just(-5)),
            )
            if type_ == "chat/error" and ctx.profile.durable_turn_errors:
                fields["part"] = error_parts()  # 0.9.0: a durable ErrorResponsePart
            elif type_ == "chat/error":
                fields["error"] = msg.error_infos()
            return obj(fields, {"_meta": meta()})

        # Turns should live long enough to accumulate parts and tool calls: the three
        # turn-ending types together weigh less than one ordinary applicable type.
        return (HOT * 0.25 if c.active else COLD), make

    return build


def _usage(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    return (HOT if c.active else COLD), lambda: obj(
        act("chat/usage", turnId=_turn_id(c, ctx), usage=msg.usage_infos()), {"_meta": meta()}
    )


_CHAT_ACTIVITY: Final = obj(
    act("chat/activityChanged"), {"activity": st.sampled_from(("Thinking…", "Reading files", ""))}
)


def _chat_activity(s: Json, ctx: ActionContext) -> Offer:
    return HOT * 0.5, lambda: _CHAT_ACTIVITY


def _chat_dir(type_: str, *, remove: bool) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        present = list(s.get("workingDirectories") or [])
        universe = (
            list(ctx.session_directories)
            if ctx.session_directories is not None
            else list(uris.DIRECTORIES[:4])
        )
        weight = HOT if (present if remove else [d for d in universe if d not in present]) else COLD
        if remove and "workingDirectories" not in s:
            weight = COLD
        return weight * 0.7, lambda: st.fixed_dictionaries(
            act(type_, directory=directory_choice(present, universe, ctx, want_present=remove))
        )

    return build


def _pending_set(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    existing = ([c.steering] if c.steering else []) + c.queued
    # Queues of several messages are where reordering and removal bugs live: while fewer than
    # three are queued, a new queued message is worth more.
    weight = HOT * (1.2 if len(c.queued) < 3 else 0.5)
    return weight, lambda: st.fixed_dictionaries(
        act(
            "chat/pendingMessageSet",
            kind=weighted([(0.35, st.just("steering")), (0.65, st.just("queued"))]),
            id=fresh_id(existing, MESSAGE_IDS, ctx),
            message=msg.user_messages(),
        )
    )


def _pending_removed(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)

    def make() -> st.SearchStrategy[Json]:
        options: list[st.SearchStrategy[Json]] = []
        if c.steering:
            options.append(
                st.fixed_dictionaries(
                    act(
                        "chat/pendingMessageRemoved",
                        kind=st.just("steering"),
                        id=id_from([c.steering], MESSAGE_IDS, stale=ctx.stale),
                    )
                )
            )
        if c.queued:
            options.append(
                st.fixed_dictionaries(
                    act(
                        "chat/pendingMessageRemoved",
                        kind=st.just("queued"),
                        id=id_from(c.queued, MESSAGE_IDS, stale=ctx.stale),
                    )
                )
            )
        if not options:
            return st.fixed_dictionaries(
                act(
                    "chat/pendingMessageRemoved",
                    kind=st.sampled_from(("steering", "queued")),
                    id=pool(MESSAGE_IDS),
                )
            )
        return st.one_of(options)

    return (HOT * 0.6 if (c.steering or c.queued) else COLD), make


def _reordered(s: Json, ctx: ActionContext) -> Offer:
    """A full permutation (half the time), or what a client with a *stale view* sends: a
    permutation of only some of the queued ids, or an order with duplicates and unknown ids
    (INV-024(c): the result must still be a permutation of the queue)."""
    c = chat_view(s)
    queued = c.queued

    def make() -> st.SearchStrategy[Json]:
        noisy = st.lists(st.sampled_from((*queued, *MESSAGE_IDS, "gone")), max_size=5)
        if len(queued) < 2:
            return st.fixed_dictionaries(act("chat/queuedMessagesReordered", order=noisy))
        full = st.permutations(queued).filter(lambda p: list(p) != queued).map(list)
        # A partial order that still moves something: its first id is not the queue's first.
        partial = st.permutations(queued).flatmap(
            lambda p: st.integers(1, len(p) - 1).map(lambda k: list(p[:k]))
        ).filter(lambda o: o[0] != queued[0])
        order = weighted([(0.5, full), (0.35, partial), (0.15, noisy)])
        return st.fixed_dictionaries(act("chat/queuedMessagesReordered", order=order))

    return (HOT * 1.2 if len(queued) >= 2 else COLD), make


_DRAFT: Final = obj(act("chat/draftChanged"), {"draft": msg.user_messages()})


def _draft(s: Json, ctx: ActionContext) -> Offer:
    return HOT * 0.5, lambda: _DRAFT


def _input_requested(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)

    def make() -> st.SearchStrategy[Json]:
        rid = weighted(
            [
                (0.7, fresh_id(c.open_request_ids, REQUEST_IDS, ctx)),
                (0.3, id_from(c.open_request_ids, REQUEST_IDS, stale=ctx.stale)),
            ]
        )
        return st.fixed_dictionaries(act("chat/inputRequested", request=msg.input_requests(rid)))

    return (HOT if c.active else COLD), make


def _answer_changed(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    rids = c.open_request_ids

    def one(rid: str) -> st.SearchStrategy[Json]:
        req = next((r for r in c.open_requests if r.get("id") == rid), {})
        qids = [*ids(req.get("questions") or [], "id"), *(req.get("answers") or {})]
        return obj(
            act(
                "chat/inputAnswerChanged",
                requestId=st.just(rid),
                questionId=id_from(qids, QUESTION_IDS, stale=ctx.stale),
            ),
            {"answer": msg.input_answers()},
        )

    return (HOT if rids else COLD), lambda: id_from(rids, REQUEST_IDS, stale=ctx.stale).flatmap(one)


def _input_completed(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    rids = c.open_request_ids
    return (HOT if rids else COLD), lambda: obj(
        act(
            "chat/inputCompleted",
            requestId=id_from(rids, REQUEST_IDS, stale=ctx.stale),
            response=st.sampled_from(("accept", "decline", "cancel")),
        ),
        {"answers": st.dictionaries(pool(QUESTION_IDS), msg.input_answers(), max_size=2)},
    )


def _truncated(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    useful = bool(c.turns or c.active or c.has_cursor)
    return (HOT * 0.4 if useful else COLD), lambda: obj(
        act("chat/truncated"), {"turnId": id_from(c.turns, TURN_IDS, stale=ctx.stale)}
    )


def _turns_loaded(s: Json, ctx: ActionContext) -> Offer:
    c = chat_view(s)
    taken = (*c.turns, *([c.turn_id] if c.turn_id else ()))
    return HOT * 0.4, lambda: obj(
        act("chat/turnsLoaded", turns=msg.turn_lists(3, exclude=taken)),
        {"turnsNextCursor": st.sampled_from(("cursor-1", "cursor-2", "cursor-3"))},
    )


#: From 0.7.0 a tool-call delta's `content` is optional and an absent one appends nothing (§7b
#: row 4): the share of deltas drawn without it. Code that concatenates whatever is there appends
#: "undefined" or "null"; 0.6.0 requires the field, so its lane always has it.
DELTA_WITHOUT_CONTENT: Final = 0.2

_TOOL_DELTA: Final = _tool_action(
    "chat/toolCallDelta",
    ("streaming",),
    lambda c, t: {"content": st.sampled_from(('{"c', 'md":', '"ls"}'))},
    {"invocationMessage": msg.string_or_markdown()},
)


def _tool_delta(s: Json, ctx: ActionContext) -> Offer:
    weight, make = _TOOL_DELTA(s, ctx)
    if not ctx.profile.at_least("0.7.0"):
        return weight, make

    def maybe_without_content() -> st.SearchStrategy[Json]:
        drawn = make()
        bare = drawn.map(lambda a: {k: v for k, v in a.items() if k != "content"})
        return weighted([(1 - DELTA_WITHOUT_CONTENT, drawn), (DELTA_WITHOUT_CONTENT, bare)])

    return weight, maybe_without_content


def _content_changed_extra(c: ChatView, tid: str) -> dict[str, st.SearchStrategy[Any]]:
    return {"content": st.lists(msg.tool_result_contents(), max_size=2)}


CHAT_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "chat/turnStarted": _turn_started,
        "chat/delta": _stream("chat/delta", "markdown"),
        "chat/reasoning": _stream("chat/reasoning", "reasoning"),
        "chat/responsePart": _response_part,
        "chat/toolCallStart": _tool_start,
        "chat/toolCallDelta": _tool_delta,
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
