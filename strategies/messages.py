"""Messages, response parts, tool calls in every lifecycle status, input requests, turns.

Targets the chat reducer's data (REDUCERS.md §5): `Message` (stored verbatim by
`chat/turnStarted`, `chat/pendingMessageSet`, `chat/draftChanged`, `chat/turnsLoaded`, denial
`userSuggestion`), the six `ResponsePart` kinds, the seven tool-call statuses of the state
machine (§5.4, INV-017..019), input requests (§5.8, INV-023), `Turn` and `ActiveTurn`. Every
output validates against the 0.7.0 schema (INV-007 patches applied).

Id fields come from the small pools of `_common` so parts, tool calls and requests collide.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

from . import attachments as att
from . import uris
from ._common import (
    CLIENT_IDS,
    CUSTOMIZATION_IDS,
    OPTION_IDS,
    PART_IDS,
    QUESTION_IDS,
    REQUEST_IDS,
    TOOL_CALL_IDS,
    TURN_IDS,
    Json,
    iso_timestamps,
    memo,
    meta,
    non_negative_ints,
    obj,
    pool,
    short_text,
)

MESSAGE_KINDS: Final = ("user", "agent", "tool", "systemNotification")
TOOL_CALL_STATUSES: Final = (
    "streaming",
    "pending-confirmation",
    "running",
    "auth-required",
    "pending-result-confirmation",
    "completed",
    "cancelled",
)
TERMINAL_TOOL_STATUSES: Final = frozenset({"completed", "cancelled"})
#: Statuses that make the chat's derived activity InputNeeded (REDUCERS.md §5.1).
BLOCKING_TOOL_STATUSES: Final = frozenset(
    {"pending-confirmation", "pending-result-confirmation", "auth-required"}
)
PART_KINDS: Final = (
    "markdown",
    "reasoning",
    "contentRef",
    "toolCall",
    "systemNotification",
    "inputRequest",
)


# --- messages ----------------------------------------------------------------------------------


@memo
def message_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(("Hello", "fix the failing test", "", "line one\nline two", "résumé 🙂")),
        short_text(30),
    )


@memo
def messages(
    *,
    origins: tuple[str, ...] = MESSAGE_KINDS,
    attachment_items: st.SearchStrategy[Json] | None = None,
) -> st.SearchStrategy[Json]:
    """A valid 0.7.0 `Message` (text, origin; optional attachments, model, agent, `_meta`).

    `origins=("user",)` gives what a client may send. `attachment_items` overrides the
    attachment strategy (e.g. collections from `attachments.collection_attachments`).
    """
    items = attachment_items if attachment_items is not None else att.attachments()
    return obj(
        {"text": message_texts(), "origin": st.sampled_from(origins).map(lambda k: {"kind": k})},
        {
            "attachments": st.lists(items, max_size=3),
            "model": obj(
                {"id": st.sampled_from(("gpt-x", "claude-y", "local"))},
                {
                    "config": st.dictionaries(
                        st.sampled_from(("temperature", "effort")),
                        st.one_of(st.booleans(), st.integers(0, 3), st.none()),
                        max_size=2,
                    )
                },
            ),
            "agent": st.fixed_dictionaries(
                {"uri": st.sampled_from(("agent:/default", "agent:/reviewer"))}
            ),
            "_meta": meta(),
        },
    )


@memo
def user_messages() -> st.SearchStrategy[Json]:
    """A message a client may dispatch (`origin.kind == "user"`)."""
    return messages(origins=("user",))


@memo
def messages_with_collections() -> st.SearchStrategy[Json]:
    """Draft: a message whose attachments include at least one valid one-level collection,
    with the collection's range inside the message text (the draft's SHOULD)."""

    def place(msg: Json, collection: Json, rng: Json, i: int) -> Json:
        c = {**collection, "range": rng}
        others = list(msg.get("attachments", []))
        return {
            **msg,
            "attachments": [*others[: i % (len(others) + 1)], c, *others[i % (len(others) + 1) :]],
        }

    return user_messages().flatmap(
        lambda m: st.builds(
            place,
            st.just(m),
            att.collection_attachments(),
            att.ranges_within(m["text"]),
            st.integers(0, 3),
        )
    )


@memo
def messages_with_out_of_range_members() -> st.SearchStrategy[Json]:
    """Adversarial (draft): a collection member whose `range` lies outside the message text."""

    def place(msg: Json, collection: Json, rng: Json) -> Json:
        members = [dict(m) for m in collection["attachments"]]
        members[0]["range"] = rng
        return {**msg, "attachments": [{**collection, "attachments": members}]}

    return user_messages().flatmap(
        lambda m: st.builds(
            place, st.just(m), att.collection_attachments(), att.ranges_outside(m["text"])
        )
    )


# --- small shared shapes -----------------------------------------------------------------------


@memo
def string_or_markdown() -> st.SearchStrategy[Any]:
    return st.one_of(short_text(20), short_text(20).map(lambda s: {"markdown": s}))


@memo
def content_refs() -> st.SearchStrategy[Json]:
    return obj(
        {
            "uri": st.sampled_from(
                ("ahp-content:/blob-1", "ahp-content:/blob-2", "file:///tmp/input.json")
            )
        },
        {
            "sizeHint": st.integers(0, 10**7),
            "contentType": st.just("application/json"),
            "nonce": st.just("n1"),
        },
    )


@memo
def tool_inputs() -> st.SearchStrategy[Any]:
    """`ToolInput`: an inline string or a lazy `ContentRef` (0.7.0)."""
    return st.one_of(st.sampled_from(('{"cmd":"ls"}', "{}", "")), content_refs())


@memo
def error_infos() -> st.SearchStrategy[Json]:
    return obj(
        {
            "errorType": st.sampled_from(("internal", "rateLimit", "auth")),
            "message": short_text(20),
        },
        {"stack": short_text(20), "_meta": meta()},
    )


@memo
def contributors(kind: str | None = None) -> st.SearchStrategy[Json]:
    client = pool(CLIENT_IDS).map(lambda c: {"kind": "client", "clientId": c})
    mcp = pool(CUSTOMIZATION_IDS).map(lambda c: {"kind": "mcp", "customizationId": c})
    return {"client": client, "mcp": mcp}.get(kind or "", st.one_of(client, mcp))


@memo
def confirmation_options() -> st.SearchStrategy[Json]:
    return obj(
        {
            "id": pool(OPTION_IDS),
            "label": st.sampled_from(("Allow", "Allow always", "Deny")),
            "kind": st.sampled_from(("approve", "deny")),
        },
        {"group": st.integers(0, 3)},
    )


@memo
def _file_side() -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries({"uri": uris.resource_uris(), "content": content_refs()})


@memo
def file_edits() -> st.SearchStrategy[Json]:
    return obj(
        {},
        {
            "before": _file_side(),
            "after": _file_side(),
            "diff": obj({}, {"added": non_negative_ints(500), "removed": non_negative_ints(500)}),
        },
    )


@memo
def tool_result_contents() -> st.SearchStrategy[Json]:
    """Every 0.7.0 `ToolResultContent` kind (text, embeddedResource, resource, fileEdit,
    terminal with `isPty`/`result`, subagent)."""
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": short_text(20)}),
        st.fixed_dictionaries(
            {
                "type": st.just("embeddedResource"),
                "data": st.just("aGk="),
                "contentType": st.just("text/plain"),
            }
        ),
        obj(
            {"type": st.just("resource"), "uri": uris.resource_uris()},
            {"sizeHint": non_negative_ints(), "contentType": st.just("text/plain")},
        ),
        file_edits().map(lambda e: {"type": "fileEdit", **e}),
        obj(
            {
                "type": st.just("terminal"),
                "resource": st.sampled_from(uris.TERMINAL_URIS),
                "title": short_text(10),
            },
            {
                "isPty": st.booleans(),
                "result": obj(
                    {},
                    {
                        "exitCode": st.integers(-1, 255),
                        "preview": short_text(20),
                        "truncated": st.booleans(),
                    },
                ),
            },
        ),
        obj(
            {"type": st.just("subagent"), "resource": uris.chat_uris(), "title": short_text(10)},
            {"agentName": short_text(8)},
        ),
    )


@memo
def tool_call_results() -> st.SearchStrategy[Json]:
    """A schema-valid `ToolCallResult` (only declared keys; see `actions` for extra keys)."""
    return obj(
        {"success": st.booleans(), "pastTenseMessage": string_or_markdown()},
        {
            "content": st.lists(tool_result_contents(), max_size=2),
            "structuredContent": st.dictionaries(
                st.sampled_from(("files", "count")), st.integers(0, 9), max_size=2
            ),
            "error": obj({"message": short_text(10)}, {"code": st.sampled_from(("E1", "ENOENT"))}),
        },
    )


@memo
def protected_resources() -> st.SearchStrategy[Json]:
    return obj(
        {"resource": st.sampled_from(("https://mcp.example.com", "https://api.example.com/mcp"))},
        {
            "resource_name": short_text(10),
            "authorization_servers": st.lists(st.just("https://auth.example.com"), max_size=1),
            "scopes_supported": st.lists(st.sampled_from(("read", "write")), max_size=2),
        },
    )


@memo
def mcp_auth_requirements() -> st.SearchStrategy[Json]:
    return obj(
        {
            "reason": st.sampled_from(("required", "expired", "insufficientScope")),
            "resource": protected_resources(),
        },
        {
            "oauthClient": obj(
                {"clientId": st.just("oauth-client")}, {"clientSecret": st.just("s3cret")}
            ),
            "requiredScopes": st.lists(st.sampled_from(("read", "write")), max_size=2),
        },
    )


@memo
def risk_assessments() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.just({"kind": "judge", "status": "loading"}),
        st.fixed_dictionaries(
            {
                "kind": st.just("judge"),
                "status": st.just("complete"),
                "reason": string_or_markdown(),
                "safety": st.integers(0, 100),
            }
        ),
    )


# --- tool calls --------------------------------------------------------------------------------


def _tool_base(
    contributor: st.SearchStrategy[Json] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    required = {
        "toolCallId": pool(TOOL_CALL_IDS),
        "toolName": st.sampled_from(("bash", "read_file", "edit", "search")),
        "displayName": st.sampled_from(("Run Command", "Read File", "Edit", "Search")),
    }
    optional: dict[str, Any] = {"intention": short_text(12), "_meta": meta()}
    if contributor is not None:
        required["contributor"] = contributor
    else:
        optional["contributor"] = contributors()
    return required, optional


@memo
def tool_calls(status: str | None = None) -> st.SearchStrategy[Json]:
    """A valid `ToolCallState` in `status` (any of the seven when None)."""
    if status is None:
        return st.sampled_from(TOOL_CALL_STATUSES).flatmap(tool_calls)
    if status not in TOOL_CALL_STATUSES:
        raise ValueError(f"unknown tool-call status {status!r}")
    contributor = contributors("mcp") if status == "auth-required" else None
    req, opt = _tool_base(contributor)
    req["status"] = st.just(status)
    confirmed = st.sampled_from(("not-needed", "user-action", "setting"))
    if status == "streaming":
        opt |= {
            "partialInput": st.sampled_from(('{"cm', "", '{"cmd":"l')),
            "invocationMessage": string_or_markdown(),
        }
    else:
        req["invocationMessage"] = string_or_markdown()
        opt["toolInput"] = tool_inputs()
    if status == "pending-confirmation":
        opt |= {
            "confirmationTitle": string_or_markdown(),
            "riskAssessment": risk_assessments(),
            "edits": st.fixed_dictionaries({"items": st.lists(file_edits(), max_size=2)}),
            "editable": st.booleans(),
            "options": st.lists(confirmation_options(), max_size=3, unique_by=lambda o: o["id"]),
        }
    if status in ("running", "auth-required", "pending-result-confirmation", "completed"):
        req["confirmed"] = confirmed
        opt["selectedOption"] = confirmation_options()
    if status in ("running", "auth-required"):
        opt["content"] = st.lists(tool_result_contents(), max_size=2)
    if status == "auth-required":
        req["auth"] = mcp_auth_requirements()
    if status in ("pending-result-confirmation", "completed"):
        req |= {"success": st.booleans(), "pastTenseMessage": string_or_markdown()}
        opt |= {
            "content": st.lists(tool_result_contents(), max_size=2),
            "structuredContent": st.dictionaries(st.just("n"), st.integers(0, 9), max_size=1),
            "error": obj({"message": short_text(10)}, {"code": st.just("E1")}),
        }
    if status == "cancelled":
        req["reason"] = st.sampled_from(("denied", "skipped", "result-denied"))
        opt |= {
            "reasonMessage": string_or_markdown(),
            "userSuggestion": user_messages(),
            "selectedOption": confirmation_options(),
        }
    return obj(req, opt)


# --- input requests ----------------------------------------------------------------------------


@memo
def input_questions() -> st.SearchStrategy[Json]:
    """Every `ChatInputQuestion` kind: text, number/integer, boolean, single- and multi-select."""
    base = {"id": pool(QUESTION_IDS), "message": short_text(20)}
    common = {"title": short_text(10), "required": st.booleans()}
    options = st.lists(
        obj({"id": pool(OPTION_IDS), "label": short_text(8)}, {"recommended": st.booleans()}),
        min_size=1,
        max_size=3,
        unique_by=lambda o: o["id"],
    )
    return st.one_of(
        obj(
            {**base, "kind": st.just("text")},
            {
                **common,
                "format": st.just("email"),
                "min": st.just(0),
                "max": st.just(100),
                "defaultValue": short_text(5),
            },
        ),
        obj(
            {**base, "kind": st.sampled_from(("number", "integer"))},
            {**common, "min": st.just(0), "max": st.just(10), "defaultValue": st.integers(0, 10)},
        ),
        obj({**base, "kind": st.just("boolean")}, {**common, "defaultValue": st.booleans()}),
        obj(
            {**base, "kind": st.just("single-select"), "options": options},
            {**common, "allowFreeformInput": st.booleans()},
        ),
        obj(
            {**base, "kind": st.just("multi-select"), "options": options},
            {**common, "allowFreeformInput": st.booleans(), "min": st.just(0), "max": st.just(3)},
        ),
    )


@memo
def input_answer_values() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.fixed_dictionaries({"kind": st.just("text"), "value": short_text(10)}),
        st.fixed_dictionaries({"kind": st.just("number"), "value": st.integers(-5, 50)}),
        st.fixed_dictionaries({"kind": st.just("boolean"), "value": st.booleans()}),
        obj(
            {"kind": st.just("selected"), "value": pool(OPTION_IDS)},
            {"freeformValues": st.lists(short_text(5), max_size=2)},
        ),
        obj(
            {"kind": st.just("selected-many"), "value": st.lists(pool(OPTION_IDS), max_size=3)},
            {"freeformValues": st.lists(short_text(5), max_size=2)},
        ),
    )


@memo
def input_answers() -> st.SearchStrategy[Json]:
    """A `ChatInputAnswer`: answered (draft or submitted) or skipped."""
    return st.one_of(
        st.fixed_dictionaries(
            {"state": st.sampled_from(("draft", "submitted")), "value": input_answer_values()}
        ),
        obj({"state": st.just("skipped")}, {"freeformValues": st.lists(short_text(5), max_size=2)}),
    )


@memo
def input_requests(request_id: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Json]:
    """A `ChatInputRequest` (id; optional message, url, questions, answers)."""
    return obj(
        {"id": request_id if request_id is not None else pool(REQUEST_IDS)},
        {
            "message": short_text(20),
            "url": st.just("https://example.com/consent"),
            "questions": st.lists(input_questions(), max_size=3, unique_by=lambda q: q["id"]),
            "answers": st.dictionaries(pool(QUESTION_IDS), input_answers(), min_size=1, max_size=2),
        },
    )


# --- response parts ----------------------------------------------------------------------------


@memo
def response_parts(
    kinds: tuple[str, ...] = PART_KINDS,
    *,
    tool_statuses: tuple[str, ...] = TOOL_CALL_STATUSES,
    open_requests: bool = True,
) -> st.SearchStrategy[Json]:
    """A valid `ResponsePart` of one of `kinds`.

    `tool_statuses` restricts the tool calls inside `toolCall` parts (a completed turn holds
    only terminal ones); `open_requests=False` gives input requests that carry a `response`.
    """
    options: list[st.SearchStrategy[Json]] = []
    if "markdown" in kinds:
        options.append(
            st.fixed_dictionaries(
                {"kind": st.just("markdown"), "id": pool(PART_IDS), "content": short_text(20)}
            )
        )
    if "reasoning" in kinds:
        options.append(
            st.fixed_dictionaries(
                {"kind": st.just("reasoning"), "id": pool(PART_IDS), "content": short_text(20)}
            )
        )
    if "contentRef" in kinds:
        options.append(
            obj(
                {"kind": st.just("contentRef"), "uri": uris.resource_uris()},
                {"sizeHint": non_negative_ints(), "contentType": st.just("text/plain")},
            )
        )
    if "toolCall" in kinds:
        options.append(
            st.sampled_from(tool_statuses)
            .flatmap(tool_calls)
            .map(lambda tc: {"kind": "toolCall", "toolCall": tc})
        )
    if "systemNotification" in kinds:
        options.append(
            obj(
                {"kind": st.just("systemNotification"), "content": string_or_markdown()},
                {"_meta": meta()},
            )
        )
    if "inputRequest" in kinds:
        response = st.sampled_from(("accept", "decline", "cancel"))
        req: dict[str, Any] = {"kind": st.just("inputRequest"), "request": input_requests()}
        if open_requests:
            options.append(obj(req, {"response": response}))
        else:
            options.append(obj({**req, "response": response}))
    return st.one_of(options)


def part_identifier(part: Json) -> str | None:
    """The identifier `chat/delta` & co. look up (§5.3): toolCallId, else a top-level id."""
    if part.get("kind") == "toolCall":
        tc = part.get("toolCall")
        return tc.get("toolCallId") if isinstance(tc, dict) else None
    pid = part.get("id")
    return pid if isinstance(pid, str) else None


def _unique_tool_calls(parts: list[Json]) -> bool:
    ids = [p["toolCall"]["toolCallId"] for p in parts if p.get("kind") == "toolCall"]
    reqs = [
        p["request"]["id"] for p in parts if p.get("kind") == "inputRequest" and "response" not in p
    ]
    return len(ids) == len(set(ids)) and len(reqs) == len(set(reqs))


@memo
def active_turns(
    turn_id: st.SearchStrategy[str] | None = None, *, max_parts: int = 5
) -> st.SearchStrategy[Json]:
    """A valid `ActiveTurn`: any part kinds, tool calls in any status; tool-call ids and open
    request ids unique within the turn (duplicates are reached through actions instead)."""
    return obj(
        {
            "id": turn_id if turn_id is not None else pool(TURN_IDS),
            "startedAt": iso_timestamps(),
            "message": messages(),
            "responseParts": st.lists(response_parts(), max_size=max_parts).filter(
                _unique_tool_calls
            ),
        },
        {"usage": usage_infos()},
    )


@memo
def usage_infos() -> st.SearchStrategy[Json]:
    return obj(
        {},
        {
            "inputTokens": non_negative_ints(100_000),
            "outputTokens": non_negative_ints(100_000),
            "model": st.sampled_from(("gpt-x", "claude-y")),
            "cacheReadTokens": non_negative_ints(1000),
            "_meta": meta(),
        },
    )


@memo
def turns(
    turn_id: st.SearchStrategy[str] | None = None, *, max_parts: int = 4
) -> st.SearchStrategy[Json]:
    """A valid completed `Turn` (state complete/cancelled/error; tool calls only in terminal
    statuses, as the end-of-turn force-cancel leaves them; `error` only for state error)."""

    def fix(t: Json) -> Json:
        if t["state"] != "error":
            t = {k: v for k, v in t.items() if k != "error"}
        return t

    return obj(
        {
            "id": turn_id if turn_id is not None else pool(TURN_IDS),
            "message": messages(),
            "responseParts": st.lists(
                response_parts(tool_statuses=("completed", "cancelled")), max_size=max_parts
            ),
            "state": st.sampled_from(("complete", "cancelled", "error")),
        },
        {
            "startedAt": iso_timestamps(),
            "duration": non_negative_ints(600_000),
            "usage": usage_infos(),
            "error": error_infos(),
        },
    ).map(fix)


@memo
def turn_lists(
    max_size: int = 4, *, exclude: tuple[str, ...] = ()
) -> st.SearchStrategy[list[Json]]:
    """Completed turns with pairwise distinct ids (none of them in `exclude`)."""
    ids = tuple(t for t in TURN_IDS if t not in exclude) or ("t-extra",)
    return st.lists(turns(pool(ids)), max_size=min(max_size, len(ids)), unique_by=lambda t: t["id"])


@memo
def pending_messages(message_id: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries({"id": message_id, "message": user_messages()})
