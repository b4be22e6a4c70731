"""Valid initial states for every state kind (REDUCERS.md §2.1), consistent with 0.7.0 (the
channels 0.9.0 and 1.0.0 added: `strategies/channels.py`; a version's own shapes: `versioned.py`).

"Valid" means schema-valid (0.7.0 with the INV-007 patches) *and* internally consistent the
way a live host would keep it, so invariants that assume a consistent start (INV-010, INV-013,
INV-024, INV-027) do not fire on the initial state itself:

* chat: `status` activity equals the derived activity (§5.1; Error only after an error turn);
  turn ids distinct and different from the active turn's; pending-message ids distinct; the
  queue is absent rather than `[]`; completed turns hold only terminal tool calls;
* session: `inputNeeded` absent or non-empty, ids distinct, status 24 iff an entry counts
  under the profile's rule (§7b row 10); keyed lists (`activeClients`, `chats`,
  `customizations`) unique; `defaultChat` usually a catalog entry;
* changeset: `error` present iff status `error`; annotations: each has >= 1 entry.

Status flags IsRead/IsArchived and unknown high bits (< 2^32) are drawn freely.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from . import attachments, channels, uris
from . import messages as msg
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
    TOOL_CALL_IDS,
    TURN_IDS,
    Json,
    iso_timestamps,
    json_scalars,
    memo,
    meta,
    non_negative_ints,
    obj,
    pool,
    short_text,
)

STATE_KINDS: Final = (
    "root",
    "session",
    "chat",
    "terminal",
    "changeset",
    "annotations",
    "resourceWatch",
    "automation",
    "automationRun",
    "canvas",
)

IDLE, ERROR, IN_PROGRESS, INPUT_NEEDED = 1, 2, 8, 24
IS_READ, IS_ARCHIVED = 32, 64
ACTIVITY_MASK: Final = 31


@memo
def status_flags() -> st.SearchStrategy[int]:
    """IsRead / IsArchived and, now and then, unknown high bits (must survive, INV-008/011): bit
    31 is where int32 bit operations wrap, bit 30 the last one they keep (a status is 32 bits
    wide: engine/fast.py's HIGH_BITS)."""
    high = st.sampled_from((0, 0, 0, 128, 1 << 20, 1 << 30, 1 << 31, 1 << 31))
    return st.builds(
        lambda r, a, h: (IS_READ if r else 0) | (IS_ARCHIVED if a else 0) | h,
        st.booleans(),
        st.booleans(),
        high,
    )


def derived_chat_activity(state: Json) -> int:
    """The activity a recomputing chat action would set (REDUCERS.md §5.1, no forced error)."""
    turn = state.get("activeTurn")
    if not turn:
        return IDLE
    for part in turn.get("responseParts", []):
        if part.get("kind") == "inputRequest" and "response" not in part:
            return INPUT_NEEDED
        if (
            part.get("kind") == "toolCall"
            and part.get("toolCall", {}).get("status") in msg.BLOCKING_TOOL_STATUSES
        ):
            return INPUT_NEEDED
    return IN_PROGRESS


# --- chat ----------------------------------------------------------------------------------------


@memo
def chat_origins() -> st.SearchStrategy[Json]:
    """Every `ChatOrigin`: user, fork, sideChat (with/without selection), tool."""
    return st.one_of(
        st.just({"kind": "user"}),
        st.fixed_dictionaries(
            {"kind": st.just("fork"), "chat": uris.chat_uris(), "turnId": pool(TURN_IDS)}
        ),
        obj(
            {"kind": st.just("sideChat"), "chat": uris.chat_uris(), "turnId": pool(TURN_IDS)},
            {
                "selection": obj(
                    {"text": st.sampled_from(("selected text", "x"))},
                    {"responsePartId": st.just("p1")},
                )
            },
        ),
        st.fixed_dictionaries(
            {"kind": st.just("tool"), "chat": uris.chat_uris(), "toolCallId": pool(TOOL_CALL_IDS)}
        ),
    )


@memo
def directory_subsets(directories: tuple[str, ...] | None) -> st.SearchStrategy[list[str] | None]:
    """A chat's `workingDirectories`: absent (None = inherit all), `[]` (no access), or a
    partial/full subset of `directories` (of the pool when None), order preserved."""
    dirs = list(directories) if directories is not None else list(uris.DIRECTORIES[:4])
    subset = st.lists(st.booleans(), min_size=len(dirs), max_size=len(dirs)).map(
        lambda keep: [d for d, k in zip(dirs, keep, strict=True) if k]
    )
    return st.one_of(st.none(), st.just([]), subset)


@memo
@st.composite
def chat_states(
    draw: st.DrawFn,
    *,
    active: bool | None = None,
    session_directories: tuple[str, ...] | None = None,
    resource: str | None = None,
) -> Json:
    """A valid, consistent `ChatState`.

    `active`: force an active turn (True), none (False) or either (None).
    `session_directories`: the owning session's set, for the chat's subset (absent / empty /
    partial). `resource`: fix the chat URI.
    """
    has_active = draw(st.booleans()) if active is None else active
    state: Json = {
        "resource": resource if resource is not None else draw(uris.chat_uris()),
        "title": draw(st.sampled_from(("New Chat", "Fix tests", "", "Refactor ✨"))),
        "modifiedAt": draw(iso_timestamps()),
    }
    active_turn = draw(msg.active_turns()) if has_active else None
    exclude = (active_turn["id"],) if active_turn else ()
    state["turns"] = draw(msg.turn_lists(exclude=exclude))
    if active_turn is not None:
        state["activeTurn"] = active_turn
    if draw(st.booleans()):
        state["steeringMessage"] = draw(msg.pending_messages(pool(MESSAGE_IDS)))
    queued = draw(
        st.lists(msg.pending_messages(pool(MESSAGE_IDS)), max_size=3, unique_by=lambda m: m["id"])
    )
    if queued:
        state["queuedMessages"] = queued
    optional = draw(
        obj(
            {},
            {
                "draft": msg.user_messages(),
                "origin": chat_origins(),
                "interactivity": st.sampled_from(("full", "read-only", "hidden")),
                "activity": st.sampled_from(("Thinking…", "Running tests", "")),
                "turnsNextCursor": st.sampled_from(("cursor-1", "cursor-2")),
                "_meta": meta(),
            },
        )
    )
    state.update(optional)
    subset = draw(directory_subsets(session_directories))
    if subset is not None:
        state["workingDirectories"] = subset
    activity = derived_chat_activity(state)
    if (
        activity == IDLE
        and state["turns"]
        and state["turns"][-1]["state"] == "error"
        and draw(st.booleans())
    ):
        activity = ERROR
    state["status"] = activity | draw(status_flags())
    return state


@memo
def chat_summaries(resource: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Json]:
    """A valid `ChatSummary` (the session catalog entry)."""
    return obj(
        {
            "resource": resource if resource is not None else uris.chat_uris(),
            "title": st.sampled_from(("New Chat", "Side chat", "")),
            "status": st.builds(
                lambda a, f: a | f,
                st.sampled_from((IDLE, ERROR, IN_PROGRESS, INPUT_NEEDED)),
                status_flags(),
            ),
            "modifiedAt": iso_timestamps(),
        },
        {
            "activity": short_text(10),
            "origin": chat_origins(),
            "interactivity": st.sampled_from(("full", "read-only", "hidden")),
            "workingDirectories": st.lists(uris.directories(), max_size=3, unique=True),
        },
    )


# --- session -------------------------------------------------------------------------------------


@memo
def tool_definitions() -> st.SearchStrategy[Json]:
    schema = obj(
        {"type": st.just("object")},
        {"properties": st.just({"path": {"type": "string"}}), "required": st.just(["path"])},
    )
    return obj(
        {"name": st.sampled_from(("read_file", "search", "run"))},
        {
            "title": short_text(8),
            "inputSchema": schema,
            "outputSchema": schema,
            "annotations": obj(
                {},
                {
                    "title": short_text(5),
                    "readOnlyHint": st.booleans(),
                    "destructiveHint": st.booleans(),
                },
            ),
            "_meta": meta(),
        },
    )


def _customization_common() -> dict[str, Any]:
    return {
        "icons": st.lists(
            obj(
                {"src": st.just("https://example.com/i.png")},
                {"theme": st.sampled_from(("light", "dark"))},
            ),
            max_size=1,
        ),
        "_meta": meta(),
    }


@memo
def mcp_server_states() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.sampled_from(({"kind": "starting"}, {"kind": "ready"}, {"kind": "stopped"})),
        msg.mcp_auth_requirements().map(lambda a: {**a, "kind": "authRequired"}),
        msg.error_infos().map(lambda e: {"kind": "error", "error": e}),
    )


@memo
def mcp_servers(cid: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    return obj(
        {
            "id": cid,
            "uri": st.just("file:///repo-a/.mcp.json"),
            "name": st.sampled_from(("github", "fs")),
            "type": st.just("mcpServer"),
            "enabled": st.booleans(),
            "state": mcp_server_states(),
        },
        {**_customization_common(), "channel": st.just("ahp-mcp:/github")},
    )


@memo
def child_customizations(cid: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    simple = st.sampled_from(("agent", "skill", "prompt", "rule", "hook")).flatmap(
        lambda t: obj(
            {
                "id": cid,
                "uri": st.just(f"file:///repo-a/.github/{t}.md"),
                "name": st.just(t),
                "type": st.just(t),
            },
            {**_customization_common(), "enabled": st.booleans()},
        )
    )
    return st.one_of(simple, mcp_servers(cid))


@memo
def customizations(cid: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Json]:
    """A top-level `Customization`: plugin or directory container (with children), or an MCP server."""
    ids = cid if cid is not None else pool(CUSTOMIZATION_IDS)
    children = st.lists(child_customizations(pool(CUSTOMIZATION_IDS)), max_size=2)
    load = st.sampled_from(
        (
            {"kind": "loading"},
            {"kind": "loaded"},
            {"kind": "degraded", "message": "partial"},
            {"kind": "error", "message": "bad"},
        )
    )
    container_opt = {
        **_customization_common(),
        "clientId": pool(CLIENT_IDS),
        "load": load,
        "children": children,
    }
    plugin = obj(
        {
            "id": ids,
            "uri": st.just("file:///plugins/p"),
            "name": st.just("plugin"),
            "enabled": st.booleans(),
            "type": st.just("plugin"),
        },
        {**container_opt, "version": st.just("1.0.0")},
    )
    directory = obj(
        {
            "id": ids,
            "uri": uris.directories(),
            "name": st.just("dir"),
            "enabled": st.booleans(),
            "type": st.just("directory"),
            "contents": st.sampled_from(("agent", "skill", "prompt", "rule", "hook", "mcpServer")),
            "writable": st.booleans(),
        },
        container_opt,
    )
    return st.one_of(plugin, directory, mcp_servers(ids))


def _all_customization_ids(items: list[Json]) -> list[str]:
    out = []
    for c in items:
        out.append(c["id"])
        out.extend(ch["id"] for ch in c.get("children", []))
    return out


@memo
def customization_lists() -> st.SearchStrategy[list[Json]]:
    """Customizations whose ids (top level and children) are session-unique, as the spec says."""
    return st.lists(customizations(), max_size=3).filter(
        lambda cs: len(_all_customization_ids(cs)) == len(set(_all_customization_ids(cs)))
    )


@memo
def active_clients() -> st.SearchStrategy[Json]:
    plugin = obj(
        {
            "id": pool(CUSTOMIZATION_IDS),
            "uri": st.just("file:///p"),
            "name": st.just("cp"),
            "enabled": st.booleans(),
            "type": st.just("plugin"),
        },
        {"clientId": pool(CLIENT_IDS), "nonce": st.just("n1")},
    )
    return obj(
        {"clientId": pool(CLIENT_IDS), "tools": st.lists(tool_definitions(), max_size=2)},
        {
            "displayName": st.sampled_from(("VS Code", "CLI")),
            "customizations": st.lists(plugin, max_size=1),
        },
    )


@memo
def session_input_requests(
    chat: st.SearchStrategy[str] | None = None, rid: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Json]:
    """Every `SessionInputRequest` kind: chatInput, toolConfirmation, toolClientExecution,
    toolAuthentication."""
    ids = rid if rid is not None else pool(INPUT_NEEDED_IDS)
    chats = chat if chat is not None else uris.chat_uris()
    base = {"id": ids, "chat": chats}
    return st.one_of(
        st.fixed_dictionaries(
            {**base, "kind": st.just("chatInput"), "request": msg.input_requests()}
        ),
        st.fixed_dictionaries(
            {
                **base,
                "kind": st.just("toolConfirmation"),
                "turnId": pool(TURN_IDS),
                "toolCall": st.sampled_from(
                    ("pending-confirmation", "pending-result-confirmation")
                ).flatmap(msg.tool_calls),
            }
        ),
        st.fixed_dictionaries(
            {
                **base,
                "kind": st.just("toolClientExecution"),
                "turnId": pool(TURN_IDS),
                "clientId": pool(CLIENT_IDS),
                "toolCall": msg.tool_calls(),
            }
        ),
        st.fixed_dictionaries(
            {
                **base,
                "kind": st.just("toolAuthentication"),
                "turnId": pool(TURN_IDS),
                "toolCall": msg.tool_calls("auth-required"),
            }
        ),
    )


@memo
def config_property_schemas(depth: int = 1, *, session: bool = False) -> st.SearchStrategy[Json]:
    """A (Session)ConfigPropertySchema, recursive up to `depth` levels. Only the top level of a
    session one is a `SessionConfigPropertySchema` (`sessionMutable`, `enumDynamic`); its `items`
    and nested `properties` are plain `ConfigPropertySchema`s, which do not declare those keys
    (a typed decoder drops them)."""
    extra: dict[str, Any] = (
        {"sessionMutable": st.booleans(), "enumDynamic": st.booleans()} if session else {}
    )
    leaf = obj(
        {"type": st.sampled_from(("string", "number", "boolean")), "title": short_text(8)},
        {
            "default": json_scalars(),
            "enum": st.lists(
                st.one_of(st.text(max_size=3), st.integers(0, 3), st.booleans(), st.none()),
                max_size=3,
            ),
            "readOnly": st.booleans(),
            **extra,
        },
    )
    if depth <= 0:
        return leaf
    inner = config_property_schemas(depth - 1)
    nested = obj(
        {"type": st.sampled_from(("array", "object")), "title": short_text(8)},
        {
            "items": inner,
            "properties": st.dictionaries(st.sampled_from(CONFIG_KEYS), inner, max_size=2),
            **extra,
        },
    )
    return st.one_of(leaf, nested)


@memo
def config_states(*, session: bool) -> st.SearchStrategy[Json]:
    """`{schema, values}` for root (`RootConfigState`) or session (`SessionConfigState`)."""
    schema = obj(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(
                st.sampled_from(CONFIG_KEYS),
                config_property_schemas(1, session=session),
                max_size=3,
            ),
        },
        {"required": st.lists(st.sampled_from(CONFIG_KEYS), max_size=2, unique=True)},
    )
    return st.fixed_dictionaries(
        {
            "schema": schema,
            "values": st.dictionaries(st.sampled_from(CONFIG_KEYS), json_scalars(), max_size=3),
        }
    )


@memo
def changesets() -> st.SearchStrategy[Json]:
    return obj(
        {
            "label": st.sampled_from(("Working tree", "Session")),
            "uriTemplate": st.just("ahp-changeset:/{id}"),
            "changeKind": st.sampled_from(("git", "session")),
        },
        {"capabilities": st.just({"review": {}})},
    )


@memo
@st.composite
def session_states(
    draw: st.DrawFn,
    *,
    directories: tuple[str, ...] | None = None,
    client_execution_blocks: bool = True,
) -> Json:
    """A valid, consistent `SessionState`.

    `directories`: fix `workingDirectories` (e.g. `[]`, or N pooled URIs); None draws absent,
    empty, or 1..4 distinct pooled directories. `client_execution_blocks`: the InputNeeded rule
    of the profile (REDUCERS.md §7b row 10).
    """
    chats = draw(st.lists(chat_summaries(), max_size=3, unique_by=lambda c: c["resource"]))
    state: Json = {
        "provider": draw(st.sampled_from(("copilot", "claude", "local"))),
        "title": draw(st.sampled_from(("Test Session", "", "Multiroot ✨"))),
        "lifecycle": draw(st.sampled_from(("creating", "ready", "ready", "creationFailed"))),
        "activeClients": draw(
            st.lists(active_clients(), max_size=2, unique_by=lambda c: c["clientId"])
        ),
        "chats": chats,
    }
    if state["lifecycle"] == "creationFailed":
        state["creationError"] = draw(msg.error_infos())
    if chats and draw(st.booleans()):
        state["defaultChat"] = draw(st.sampled_from([c["resource"] for c in chats]))
    if directories is not None:
        state["workingDirectories"] = list(directories)
    else:
        wd = draw(
            st.one_of(
                st.none(),
                st.just([]),
                st.lists(uris.directories(), min_size=1, max_size=4, unique=True),
            )
        )
        if wd is not None:
            state["workingDirectories"] = wd
    needed = draw(st.lists(session_input_requests(), max_size=3, unique_by=lambda r: r["id"]))
    if needed:
        state["inputNeeded"] = needed
    counting = [r for r in needed if client_execution_blocks or r["kind"] != "toolClientExecution"]
    activity = INPUT_NEEDED if counting else draw(st.sampled_from((IDLE, ERROR, IN_PROGRESS)))
    state["status"] = activity | draw(status_flags())
    state.update(
        draw(
            obj(
                {},
                {
                    "activity": st.sampled_from(("Working", "")),
                    "project": st.fixed_dictionaries(
                        {"uri": uris.directories(), "displayName": st.just("proj")}
                    ),
                    "annotations": st.fixed_dictionaries(
                        {
                            "resource": uris.session_uris().map(lambda s: s + "/annotations"),
                            "annotationCount": non_negative_ints(5),
                            "entryCount": non_negative_ints(9),
                        }
                    ),
                    "serverTools": st.lists(tool_definitions(), max_size=2),
                    "config": config_states(session=True),
                    "customizations": customization_lists(),
                    "changesets": st.lists(changesets(), max_size=2),
                    "_meta": meta(),
                },
            )
        )
    )
    return state


# --- root ------------------------------------------------------------------------------------------


@memo
def agent_infos() -> st.SearchStrategy[Json]:
    """An `AgentInfo` (note: the 0.7.0 schema *requires* `description` without declaring it)."""
    model = obj(
        {
            "id": st.sampled_from(("gpt-x", "claude-y")),
            "provider": st.just("copilot"),
            "name": st.just("Model"),
        },
        {
            "maxContextWindow": non_negative_ints(200_000),
            "supportsVision": st.booleans(),
            "policyState": st.sampled_from(("enabled", "disabled", "unconfigured")),
        },
    )
    capabilities = obj(
        {},
        {
            "multipleChats": obj({}, {"fork": st.booleans(), "sideChat": st.booleans()}),
            "multipleWorkingDirectories": obj({}, {"immutablePrimary": st.booleans()}),
        },
    )
    return obj(
        {
            "provider": st.sampled_from(("copilot", "claude")),
            "displayName": st.sampled_from(("Copilot", "Claude")),
            "description": short_text(20),
            "models": st.lists(model, max_size=2),
        },
        {
            "capabilities": capabilities,
            "protectedResources": st.lists(msg.protected_resources(), max_size=1),
        },
    )


@memo
def terminal_claims() -> st.SearchStrategy[Json]:
    return st.one_of(
        pool(CLIENT_IDS).map(lambda c: {"kind": "client", "clientId": c}),
        obj(
            {"kind": st.just("session"), "session": uris.session_uris()},
            {"turnId": pool(TURN_IDS), "toolCallId": pool(TOOL_CALL_IDS)},
        ),
    )


@memo
def root_states() -> st.SearchStrategy[Json]:
    """A valid `RootState` (agents with capabilities incl. multiroot; config present or not)."""
    terminal_info = obj(
        {
            "resource": st.sampled_from(uris.TERMINAL_URIS),
            "title": short_text(8),
            "claim": terminal_claims(),
        },
        {"exitCode": st.integers(0, 255)},
    )
    return obj(
        {"agents": st.lists(agent_infos(), max_size=2)},
        {
            "activeSessions": non_negative_ints(10),
            "terminals": st.lists(terminal_info, max_size=2),
            "config": config_states(session=False),
            "_meta": meta(),
        },
    )


# --- terminal, changeset, annotations, resource watch ------------------------------------------


@memo
def terminal_parts() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("unclassified"), "value": short_text(20)}),
        obj(
            {
                "type": st.just("command"),
                "commandId": pool(COMMAND_IDS),
                "commandLine": st.sampled_from(("ls", "npm test")),
                "output": short_text(20),
                "timestamp": non_negative_ints(10**12),
                "isComplete": st.booleans(),
            },
            {"exitCode": st.integers(0, 255), "durationMs": non_negative_ints(10_000)},
        ),
    )


@memo
def terminal_states() -> st.SearchStrategy[Json]:
    """A valid `TerminalState` (content with unclassified and command parts, any claim)."""
    return obj(
        {
            "title": st.sampled_from(("bash", "npm test", "")),
            "content": st.lists(terminal_parts(), max_size=4),
            "claim": terminal_claims(),
        },
        {
            "cwd": uris.directories(),
            "cols": st.integers(1, 300),
            "rows": st.integers(1, 100),
            "exitCode": st.integers(0, 255),
            "supportsCommandDetection": st.booleans(),
            "isPty": st.booleans(),
        },
    )


@memo
def changeset_files() -> st.SearchStrategy[Json]:
    return obj(
        {"id": pool(FILE_IDS), "edit": msg.file_edits()},
        {"reviewed": st.booleans(), "_meta": meta()},
    )


@memo
def changeset_operations() -> st.SearchStrategy[Json]:
    return obj(
        {
            "id": pool(OPERATION_IDS),
            "label": st.sampled_from(("Commit", "Discard")),
            "scopes": st.lists(
                st.sampled_from(("changeset", "resource", "range")), max_size=3, unique=True
            ),
            "status": st.sampled_from(("idle", "running", "disabled")),
        },
        {
            "confirmation": msg.string_or_markdown(),
            "icon": st.just("check"),
            "group": st.just("main"),
        },
    )


@memo
@st.composite
def changeset_states(draw: st.DrawFn) -> Json:
    """A valid `ChangesetState` with `error` present iff status is `error` (INV-050)."""
    status = draw(st.sampled_from(("computing", "ready", "error")))
    state: Json = {
        "status": status,
        "files": draw(st.lists(changeset_files(), max_size=3, unique_by=lambda f: f["id"])),
    }
    if status == "error":
        state["error"] = draw(msg.error_infos())
    ops = draw(
        st.one_of(
            st.none(), st.lists(changeset_operations(), max_size=3, unique_by=lambda o: o["id"])
        )
    )
    if ops is not None:
        state["operations"] = ops
    return state


@memo
def annotation_entries() -> st.SearchStrategy[Json]:
    return obj({"id": pool(ENTRY_IDS), "text": msg.string_or_markdown()}, {"_meta": meta()})


@memo
def annotations(aid: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Json]:
    """An `Annotation` with at least one entry (the spec's MUST) and distinct entry ids."""
    return obj(
        {
            "id": aid if aid is not None else pool(ANNOTATION_IDS),
            "turnId": pool(TURN_IDS),
            "resource": uris.resource_uris(),
            "resolved": st.booleans(),
            "entries": st.lists(
                annotation_entries(), min_size=1, max_size=3, unique_by=lambda e: e["id"]
            ),
        },
        {"range": attachments.text_ranges(), "_meta": meta()},
    )


@memo
def annotations_states() -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries(
        {"annotations": st.lists(annotations(), max_size=3, unique_by=lambda a: a["id"])}
    )


@memo
def resource_watch_states() -> st.SearchStrategy[Json]:
    globs = st.fixed_dictionaries(
        {"items": st.lists(st.sampled_from(("**/node_modules", "*.log", "src/**")), max_size=2)}
    )
    return obj(
        {"root": uris.directories(), "recursive": st.booleans()},
        {"excludes": globs, "includes": globs},
    )


_BY_KIND: Final = MappingProxyType(
    {
        "root": root_states,
        "session": session_states,
        "chat": chat_states,
        "terminal": terminal_states,
        "changeset": changeset_states,
        "annotations": annotations_states,
        "resourceWatch": resource_watch_states,
        "automation": channels.automation_states,
        "automationRun": channels.automation_run_states,
        "canvas": channels.canvas_states,
    }
)


@memo
def states(kind: str) -> st.SearchStrategy[Json]:
    """A valid, consistent initial state of `kind` (one of the seven state kinds)."""
    try:
        return _BY_KIND[kind]()
    except KeyError:
        raise ValueError(
            f"unknown state kind {kind!r} (want one of {', '.join(STATE_KINDS)})"
        ) from None
