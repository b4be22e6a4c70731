"""State-aware builders for the session channel: lifecycle, the chat catalog, clients, working
directories (0.8.0's replace included), input-needed entries, customizations and MCP servers,
flags and config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from .. import messages as msg
from .. import states as sts
from .. import uris
from .._common import (
    CLIENT_IDS,
    CONFIG_KEYS,
    CUSTOMIZATION_IDS,
    INPUT_NEEDED_IDS,
    Json,
    id_from,
    iso_timestamps,
    json_scalars,
    meta,
    obj,
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
    flag,
    fresh_id,
    ids,
)


def simple(type_: str, weight: float = HOT * 0.5, **fields: st.SearchStrategy[Any]) -> Builder:
    """A builder whose strategy does not depend on the state (built once)."""
    strat = st.fixed_dictionaries(act(type_, **fields))
    return lambda s, ctx: (weight, lambda: strat)


def optional(type_: str, weight: float = HOT * 0.5, **fields: st.SearchStrategy[Any]) -> Builder:
    """Like `simple`, every field optional."""
    strat = obj(act(type_), fields)
    return lambda s, ctx: (weight, lambda: strat)


def _chat_resources(s: Json) -> list[str]:
    chats = s.get("chats")
    return ids(chats, "resource") if isinstance(chats, list) else []


def _all_customization_ids(customizations: Sequence[Any]) -> list[str]:
    out = []
    for c in customizations:
        if isinstance(c, dict):
            out.append(c["id"])
            out.extend(ch["id"] for ch in c.get("children") or [] if isinstance(ch, dict))
    return out


def _ready(s: Json, ctx: ActionContext) -> Offer:
    return (HOT if s.get("lifecycle") != "ready" else COLD), lambda: st.just({"type": "session/ready"})


def _chat_added(s: Json, ctx: ActionContext) -> Offer:
    present = _chat_resources(s)

    def make() -> st.SearchStrategy[Json]:
        res = weighted(
            [
                (0.75, fresh_id(present, uris.CHAT_URIS, ctx)),
                (0.25, id_from(present, uris.CHAT_URIS, stale=ctx.stale)),
            ]
        )
        return st.fixed_dictionaries(act("session/chatAdded", summary=sts.chat_summaries(res)))

    return HOT * 0.7, make


def _chat_removed(s: Json, ctx: ActionContext) -> Offer:
    present = _chat_resources(s)
    return (HOT * 0.5 if present else COLD), lambda: st.fixed_dictionaries(
        act("session/chatRemoved", chat=id_from(present, uris.CHAT_URIS, stale=ctx.stale))
    )


_CHAT_CHANGES: Final = obj(
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


def _chat_updated(s: Json, ctx: ActionContext) -> Offer:
    present = _chat_resources(s)
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act(
            "session/chatUpdated",
            chat=id_from(present, uris.CHAT_URIS, stale=ctx.stale),
            changes=_CHAT_CHANGES,
        )
    )


def _default_chat(s: Json, ctx: ActionContext) -> Offer:
    present = [c for c in _chat_resources(s) if c != s.get("defaultChat")]
    return HOT * 0.5, lambda: obj(
        act("session/defaultChatChanged"),
        {"defaultChat": id_from(present, uris.CHAT_URIS, stale=ctx.stale)},
    )


def _client_removed(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("activeClients") or [], "clientId")
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("session/activeClientRemoved", clientId=id_from(present, CLIENT_IDS, stale=ctx.stale))
    )


def _session_dir(type_: str, *, remove: bool) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        present = list(s.get("workingDirectories") or [])
        weight = HOT if (present or not remove) else COLD
        if not remove and len(present) < 3:
            weight *= 1.3  # multi-directory sessions are where the multiroot rules bite
        return weight * 0.8, lambda: st.fixed_dictionaries(
            act(
                type_,
                directory=directory_choice(present, uris.DIRECTORIES, ctx, want_present=remove),
            )
        )

    return build


def _dir_replaced(s: Json, ctx: ActionContext) -> Offer:
    present = list(s.get("workingDirectories") or [])

    def make() -> st.SearchStrategy[Json]:
        plain = st.fixed_dictionaries(
            act(
                "session/workingDirectoryReplaced",
                directory=directory_choice(present, uris.DIRECTORIES, ctx, want_present=True),
                replacement=st.one_of(
                    # an existing entry (the dedup path), or a new directory
                    st.sampled_from(tuple(present) if present else uris.DIRECTORIES),
                    directory_choice(present, uris.DIRECTORIES, ctx, want_present=False),
                ),
            )
        )
        if len(present) < 2:
            return plain
        # Replace a later entry by an earlier one (the primary included): the draft rule that
        # keeps the earlier position and never moves index 0 (0.8.0) is decided here.
        pairs = [(present[i], present[j]) for i in range(len(present)) for j in range(i)]
        earlier = st.sampled_from(pairs).map(
            lambda p: {"type": "session/workingDirectoryReplaced", "directory": p[0], "replacement": p[1]}
        )
        return weighted([(0.6, plain), (0.4, earlier)])

    return (HOT if present else COLD), make


def _input_needed_set(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("inputNeeded") or [], "id")
    chats = _chat_resources(s)

    def make() -> st.SearchStrategy[Json]:
        rid = weighted(
            [
                (0.7, fresh_id(present, INPUT_NEEDED_IDS, ctx)),
                (0.3, id_from(present, INPUT_NEEDED_IDS, stale=ctx.stale)),
            ]
        )
        chat = st.sampled_from(tuple(chats)) if chats else uris.chat_uris()
        return st.fixed_dictionaries(
            act("session/inputNeededSet", request=sts.session_input_requests(chat, rid))
        )

    return HOT * 0.7, make


def _input_needed_removed(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("inputNeeded") or [], "id")
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("session/inputNeededRemoved", id=id_from(present, INPUT_NEEDED_IDS, stale=ctx.stale))
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


def enablements() -> st.SearchStrategy[list[Json]]:
    """0.8.0 `CustomizationEnablement[]`: scoped decisions (global, workspace, session), at most
    one per scope; `[]` restores the default."""
    one = st.one_of(
        st.fixed_dictionaries({"kind": st.just("global"), "enabled": st.booleans()}),
        st.fixed_dictionaries(
            {"kind": st.just("workspace"), "uri": uris.directories(), "enabled": st.booleans()}
        ),
        st.fixed_dictionaries({"kind": st.just("session"), "enabled": st.booleans()}),
    )
    return st.lists(one, max_size=3, unique_by=lambda e: e["kind"])


def _cust_toggled(s: Json, ctx: ActionContext) -> Offer:
    enabled = _enabled_by_id(s.get("customizations") or [])

    def one(cid: str) -> st.SearchStrategy[Json]:
        if ctx.profile.customization_enablement:  # 0.8.0: the whole decision set; [] = default
            return st.fixed_dictionaries(
                act("session/customizationToggled", id=st.just(cid), enablement=enablements())
            )
        flip = st.just(enabled.get(cid) is not True)  # usually the opposite of the current value
        value = weighted([(0.85, flip), (0.15, st.booleans())])
        return st.fixed_dictionaries(
            act("session/customizationToggled", id=st.just(cid), enabled=value)
        )

    return (HOT if enabled else COLD), lambda: id_from(
        list(enabled), CUSTOMIZATION_IDS, stale=ctx.stale
    ).flatmap(one)


def _cust_updated(s: Json, ctx: ActionContext) -> Offer:
    current = [c for c in s.get("customizations") or [] if isinstance(c, dict)]
    present = ids(current, "id")
    every_id = _all_customization_ids(current)

    def make() -> st.SearchStrategy[Json]:
        # Customization ids are session-unique (guide/customizations.md), children included: a
        # new top-level id is one no entry uses at any level, and the drawn entry's children
        # drop ids that another entry (or the entry itself) already uses.
        unused = [i for i in CUSTOMIZATION_IDS if i not in every_id]
        fresh = (
            st.sampled_from(unused)
            if unused
            else st.integers(5, 99).map(lambda n: f"{CUSTOMIZATION_IDS[0]}-{n}")
        )
        known = id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale).filter(
            lambda i: i in present or i not in every_id
        )
        cid = weighted([(0.5, fresh), (0.5, known)])
        return st.fixed_dictionaries(
            act(
                "session/customizationUpdated",
                customization=sts.customizations(cid).map(lambda c: _unique_children(c, current)),
            )
        )

    return HOT * 0.7, make


def _unique_children(customization: Json, current: Sequence[Json]) -> Json:
    """`customization` with the children whose ids collide with the session's other entries
    (the entry it replaces aside), with its own id or with an earlier child removed."""
    children = customization.get("children")
    if not isinstance(children, list):
        return customization
    taken = {customization["id"]}
    for entry in current:
        if entry.get("id") != customization["id"]:
            taken.update(_all_customization_ids([entry]))
    kept = []
    for child in children:
        if isinstance(child, dict) and child.get("id") not in taken:
            taken.add(child["id"])
            kept.append(child)
    return {**customization, "children": kept} if len(kept) != len(children) else customization


def _cust_removed(s: Json, ctx: ActionContext) -> Offer:
    present = _all_customization_ids(s.get("customizations") or [])
    return (HOT * 0.5 if present else COLD), lambda: st.fixed_dictionaries(
        act("session/customizationRemoved", id=id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale))
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
    def build(s: Json, ctx: ActionContext) -> Offer:
        servers = _mcp_servers(s.get("customizations") or [])
        present = ids(servers, "id")
        target = _MCP_TARGET_KIND.get(type_)
        if target is not None:
            movable = [
                m["id"]
                for m in servers
                if (m.get("state") or {}).get("kind") != target or "channel" in m
            ]
            # Only requests that move a server: a server already in the requested state is a
            # no-op target, left to the stale share.
            present = movable
        optional_fields = (
            {"channel": st.just("ahp-mcp:/github")}
            if type_ == "session/mcpServerStateChanged"
            else {}
        )
        return (HOT if present else COLD), lambda: obj(
            act(type_, id=id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale), **extra),
            optional_fields,
        )

    return build


def _background(s: Json, ctx: ActionContext) -> Offer:
    """1.0.0 `session/mcpServerBackgroundRequested`: a server that is starting and blocking
    (the only one it changes), else any server (a no-op)."""
    servers = _mcp_servers(s.get("customizations") or [])
    blocking = [
        m["id"] for m in servers
        if isinstance(m.get("id"), str) and (m.get("state") or {}).get("kind") == "starting"
        and (m.get("state") or {}).get("blocking") is True
    ]
    present = blocking or ids(servers, "id")
    return (HOT if blocking else COLD), lambda: st.fixed_dictionaries(
        act("session/mcpServerBackgroundRequested", id=id_from(present, CUSTOMIZATION_IDS, stale=ctx.stale))
    )


def _chats_reordered(s: Json, ctx: ActionContext) -> Offer:
    """1.0.0 `session/chatsReordered`: mostly a permutation of the whole catalogue (the host's
    authoritative order); a stale share is incomplete, has a duplicate or an unknown URI (a
    no-op the reducer must ignore)."""
    present = _chat_resources(s)
    if not present:
        return COLD, lambda: st.fixed_dictionaries(act("session/chatsReordered", chats=st.just([])))

    def make() -> st.SearchStrategy[Json]:
        # a complete order that moves something (the identity is a no-op, half the draws of two):
        # the identity becomes a rotation (a map, not a filter: a catalogue that names one chat
        # twice has no other order)
        whole = st.permutations(present).map(lambda p: list(p) if list(p) != present else [*present[1:], present[0]])
        broken = st.one_of(
            whole.map(lambda p: p[:-1]),
            whole.map(lambda p: [*p, p[0]]),
            whole.map(lambda p: [*p[:-1], "ahp-chat:/unknown"]),
        )
        order = weighted([(1.0 - ctx.stale, whole.map(list)), (ctx.stale, broken)])
        return st.fixed_dictionaries(act("session/chatsReordered", chats=order))

    return (HOT if len(present) > 1 else COLD), make


def _flag_toggle(type_: str, key: str, bit: int) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        want = not flag(s.get("status"), bit)
        return HOT * 0.6, lambda: st.fixed_dictionaries(
            act(type_, **{key: weighted([(0.85, st.just(want)), (0.15, st.just(not want))])})
        )

    return build


def config_changed(type_: str) -> Builder:
    strat = obj(
        act(
            type_,
            config=st.dictionaries(
                st.sampled_from(CONFIG_KEYS), json_scalars(), min_size=1, max_size=3
            ),
        ),
        {"replace": st.booleans()},
    )

    def build(s: Json, ctx: ActionContext) -> Offer:
        return (HOT * 0.6 if isinstance(s.get("config"), dict) else COLD), lambda: strat

    return build


SESSION_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "session/ready": _ready,
        "session/creationFailed": simple(
            "session/creationFailed", HOT * 0.2, error=msg.error_infos()
        ),
        "session/chatAdded": _chat_added,
        "session/chatRemoved": _chat_removed,
        "session/chatUpdated": _chat_updated,
        "session/defaultChatChanged": _default_chat,
        "session/titleChanged": simple(
            "session/titleChanged", title=st.sampled_from(("Renamed", "Session ✨", ""))
        ),
        "session/serverToolsChanged": simple(
            "session/serverToolsChanged",
            tools=st.lists(sts.tool_definitions(), min_size=1, max_size=2),
        ),
        "session/activeClientSet": simple(
            "session/activeClientSet", activeClient=sts.active_clients()
        ),
        "session/activeClientRemoved": _client_removed,
        "session/workingDirectorySet": _session_dir("session/workingDirectorySet", remove=False),
        "session/workingDirectoryRemoved": _session_dir(
            "session/workingDirectoryRemoved", remove=True
        ),
        "session/workingDirectoryReplaced": _dir_replaced,
        "session/inputNeededSet": _input_needed_set,
        "session/inputNeededRemoved": _input_needed_removed,
        "session/customizationsChanged": simple(
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
        "session/mcpServerBackgroundRequested": _background,
        "session/chatsReordered": _chats_reordered,
        "session/isReadChanged": _flag_toggle("session/isReadChanged", "isRead", sts.IS_READ),
        "session/isArchivedChanged": _flag_toggle(
            "session/isArchivedChanged", "isArchived", sts.IS_ARCHIVED
        ),
        "session/activityChanged": optional(
            "session/activityChanged", activity=st.sampled_from(("Working", "Idle", ""))
        ),
        "session/changesetsChanged": optional(
            "session/changesetsChanged", changesets=st.lists(sts.changesets(), max_size=2)
        ),
        "session/configChanged": config_changed("session/configChanged"),
        "session/metaChanged": optional("session/metaChanged", _meta=meta()),
    }
)
