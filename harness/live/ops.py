"""What the live machine tries: scenario generators that draw the next ops from the run's state.

Each scenario reads the clients' confirmed states (through `LiveRun`) and draws a short list of
ops (`live/run.py` lists the op shapes) through a `Draws` (`live/draws.py`): Hypothesis in the
Hypothesis live lane, pools and a seeded PRNG in the fast lane (`live/fast.py`). The valid lane is the project's
state-aware action strategies (`strategies.actions.actions_for`) over a client's optimistic
state, restricted to the types that client may dispatch; the other scenarios are the seed
scenarios of INVARIANTS.md §E/§F and the wire probes. A scenario that does not apply to the
current state returns no ops.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.causes.live import frame_type
from harness.reference import Profile
from harness.spec.older import older_rules
from harness.spec.versions import action_types, is_client_dispatchable, is_known_to, parse_version
from strategies import attachments as gen_att
from strategies import uris as gen_uris
from strategies.actions import BUILDERS, ActionContext

from .client import ClientSpec, SimClient
from .draws import Draws
from .run import LiveRun

Op = dict[str, Any]
Scenario = Callable[[Draws, LiveRun], list[Op]]

#: Working directories of generated sessions (from the strategies' pool: each has variants).
DIRECTORIES = gen_uris.DIRECTORIES[:4]
STARTED_AT = "2026-07-21T10:00:05.000Z"
WD_TYPES = frozenset({"session/workingDirectorySet", "session/workingDirectoryRemoved",
                      "session/workingDirectoryReplaced", "chat/workingDirectorySet",
                      "chat/workingDirectoryRemoved"})
ACTION_KINDS = ("root", "session", "chat", "terminal")
#: Malformed frames for the parse-error probe (WIRE.md §10).
GARBAGE = ('{"jsonrpc": "2.0", "id": 7, "method": "ping"', "not json at all", "{]", '"unterminated')
#: Frames that are JSON but not a request object (JSON-RPC -32600, INV-H09): bare values and
#: batches — hosts in the wild die on a bare `null` (issue 16).
BARE_VALUES = ("null", "42", '"x"', "true", "[]", "1e400",
               '[{"jsonrpc":"2.0","id":9,"method":"ping","params":{"channel":"ahp-root://"}}]')


def _pick_client(data: Draws, run: LiveRun, pred: Callable[[SimClient], bool] = lambda c: True,
                 label: str = "client") -> SimClient | None:
    options = [c for c in run.ready_clients() if pred(c)]
    if not options:
        return None
    return data.choice(options, label)


def _client_and_chat(data: Draws, run: LiveRun, pred: Callable[[SimClient], bool] = lambda c: True,
                     ) -> tuple[SimClient, str] | None:
    """A ready client (`pred`) and one of the chat channels it is subscribed to, drawn in that
    order; None when there is no such client or it has no chat."""
    c = _pick_client(data, run, pred)
    if c is None:
        return None
    chats = [ch for ch in run.channels("chat") if ch in c.view.subscribed]
    if not chats:
        return None
    return c, data.choice(chats, "chat")


def _modern(c: SimClient) -> bool:
    return c.modern


def _profile(c: SimClient) -> Profile:
    return Profile.for_version(c.speaks)


def _n(run: LiveRun) -> int:
    return len(run.ops)


# -- setup --------------------------------------------------------------------------------------


def setup_ops(clients: tuple[ClientSpec, ...]) -> list[Op]:
    """Connect every client (sessions follow with `session_ops`, once the clients are ready)."""
    return [spec.op(i) for i, spec in enumerate(clients)]


def session_ops(data: Draws, run: LiveRun, index: int) -> list[Op]:
    provider = run.provider()
    if provider is None:
        return []
    uri = f"ahp-session:/fz-{run.token}-s{index}"
    params: dict[str, Any] = {"channel": uri, "provider": provider}
    mode = data.choice(("several", "one", "absent"), "session directories")
    if mode != "absent":
        n = 1 if mode == "one" or "multipleWorkingDirectories" not in run.agent_caps() else data.integer(2, 3, "pick")
        params["workingDirectories"] = data.permutation(DIRECTORIES, "dirs")[:n]
    ops: list[Op] = [{"op": "command", "client": 0, "method": "createSession", "params": params}]
    ops += [{"op": "subscribe", "client": c.view.index, "channel": uri} for c in run.ready_clients()]
    return ops


# -- the valid lane -----------------------------------------------------------------------------


def _session_dirs(run: LiveRun, c: SimClient, chat: str) -> tuple[str, ...] | None:
    s = c.view.confirmed.get(run.session_of(chat) or "") or {}
    dirs = s.get("workingDirectories")
    return tuple(dirs) if isinstance(dirs, list) else None


def _pick_watched_channel(
    data: Draws, run: LiveRun
) -> tuple[SimClient, str, str, str] | None:
    """A client, one of the action channels it watches, that channel's kind and the client's
    negotiated version (None when no client watches any)."""
    c = _pick_client(data, run)
    if c is None:
        return None
    channels = [ch for ch in sorted(c.view.subscribed) if run.kinds.get(ch) in ACTION_KINDS]
    if not channels:
        return None
    ch = data.choice(channels, "channel")
    return c, ch, run.kinds[ch], c.speaks


def valid_action(data: Draws, run: LiveRun) -> list[Op]:
    """A state-aware client-dispatchable action on a channel the client watches."""
    picked = _pick_watched_channel(data, run)
    if picked is None:
        return []
    c, ch, kind, version = picked
    wd_ok = "multipleWorkingDirectories" in run.agent_caps()
    types = [t for t in action_types(version, kind)
             if t in BUILDERS[kind] and is_client_dispatchable(t, version) and (wd_ok or t not in WD_TYPES)]
    state = c.optimistic(ch)
    if not types or state is None:
        return []
    ctx = ActionContext(profile=_profile(c),
                        session_directories=_session_dirs(run, c, ch) if kind == "chat" else None)
    action = data.action(kind, state, types, ctx, "action")
    return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": action}]


def server_only(data: Draws, run: LiveRun) -> list[Op]:
    """A server-only action type from a client: the host must reject it (INV-044, INV-053)."""
    picked = _pick_watched_channel(data, run)
    if picked is None:
        return []
    c, ch, kind, version = picked
    types = [t for t in action_types(version, kind) if t in BUILDERS[kind] and not is_client_dispatchable(t, version)]
    if not types:
        return []
    t = data.choice(types, "server-only type")
    action = data.typed_action(t, c.view.confirmed.get(ch), "action")
    return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": action}]


# -- multiroot (INVARIANTS.md §E) ---------------------------------------------------------------


def _sessions(run: LiveRun, c: SimClient) -> list[str]:
    return [s for s in run.channels("session") if s in c.view.subscribed]


def _variant(data: Draws, base: str) -> str | None:
    classes = [cls for cls in gen_uris.applicable_classes(base) if cls is not gen_uris.UriClass.SAME]
    if not classes:
        return None
    cls = data.choice(classes, "variant class")
    v = gen_uris.make_variant(base, cls, data.integer(0, 3, "k"))
    return v.variant if v is not None and v.variant != base else None


def _pick_session(data: Draws, run: LiveRun) -> tuple[SimClient, str, list[str]] | None:
    """A 0.7.0 client, one of its sessions and that session's directories as the client folded
    them (None: no such client or session)."""
    c = _pick_client(data, run, _modern)
    if c is None or not _sessions(run, c):
        return None
    s = data.choice(_sessions(run, c), "session")
    return c, s, (c.view.confirmed.get(s) or {}).get("workingDirectories") or []


def create_chat(data: Draws, run: LiveRun) -> list[Op]:
    """createChat with workingDirectories absent, [], a subset, an outsider, or another spelling
    of a member (INV-031, INV-033, INV-034)."""
    if "multipleChats" not in run.agent_caps():
        return []
    picked = _pick_session(data, run)
    if picked is None:
        return []
    c, s, dirs = picked
    params: dict[str, Any] = {"channel": s, "chat": f"ahp-chat:/fz-{run.token}-c{_n(run)}"}
    mode = data.choice(("absent", "empty", "subset", "outside", "variant"), "subset")
    if mode == "empty":
        params["workingDirectories"] = []
    elif mode == "subset" and dirs:
        params["workingDirectories"] = data.subset(dirs, "pick")
    elif mode == "outside":
        others = [d for d in DIRECTORIES + gen_uris.DIRECTORIES[4:] if d not in dirs]
        params["workingDirectories"] = [*dirs[:1], data.choice(others, "outsider")]
    elif mode == "variant" and dirs:
        v = _variant(data, data.choice(dirs, "pick"))
        if v is not None:
            params["workingDirectories"] = [v]
    return [{"op": "command", "client": c.view.index, "method": "createChat", "params": params}]


def session_directories(data: Draws, run: LiveRun) -> list[Op]:
    """Add a directory, another spelling of a member, remove the primary or another one."""
    if "multipleWorkingDirectories" not in run.agent_caps():
        return []
    picked = _pick_session(data, run)
    if picked is None:
        return []
    c, s, dirs = picked
    mode = data.choice(("set", "variant", "remove-primary", "remove"), "mode")
    if mode == "set":
        action = {"type": "session/workingDirectorySet", "directory": data.choice(DIRECTORIES, "pick")}
    elif mode == "variant" and dirs:
        v = _variant(data, data.choice(dirs, "pick"))
        if v is None:
            return []
        action = {"type": "session/workingDirectorySet", "directory": v}
    elif mode == "remove-primary" and dirs:
        action = {"type": "session/workingDirectoryRemoved", "directory": dirs[0]}
    elif mode == "remove" and dirs:
        action = {"type": "session/workingDirectoryRemoved", "directory": data.choice(dirs, "pick")}
    else:
        return []
    return [{"op": "dispatch", "client": c.view.index, "channel": s, "action": action}]


def chat_directories(data: Draws, run: LiveRun) -> list[Op]:
    """chat/workingDirectorySet of a member, an outsider or another spelling; Remove (INV-031)."""
    if "multipleWorkingDirectories" not in run.agent_caps():
        return []
    c = _pick_client(data, run, _modern)
    if c is None:
        return []
    chats = [ch for ch in run.channels("chat") if ch in c.view.subscribed and run.session_of(ch)]
    if not chats:
        return []
    ch = data.choice(chats, "chat")
    dirs = list(_session_dirs(run, c, ch) or ())
    mode = data.choice(("member", "outside", "variant", "remove"), "mode")
    if mode == "member" and dirs:
        d = data.choice(dirs, "pick")
    elif mode == "outside":
        d = data.choice([x for x in gen_uris.DIRECTORIES if x not in dirs] or list(DIRECTORIES), "pick")
    elif mode == "variant" and dirs:
        v = _variant(data, data.choice(dirs, "pick"))
        if v is None:
            return []
        d = v
    elif mode == "remove":
        mine = (c.view.confirmed.get(ch) or {}).get("workingDirectories") or dirs
        if not mine:
            return []
        return [{"op": "dispatch", "client": c.view.index, "channel": ch,
                 "action": {"type": "chat/workingDirectoryRemoved", "directory": data.choice(mine, "pick")}}]
    else:
        return []
    return [{"op": "dispatch", "client": c.view.index, "channel": ch,
             "action": {"type": "chat/workingDirectorySet", "directory": d}}]


# -- attachments (INVARIANTS.md §F, 0.7.0 chat attachments) -------------------------------------


def _chat_attachment(data: Draws, run: LiveRun, here: str) -> dict[str, Any]:
    chats = [ch for ch in run.channels("chat") if ch != here] or [here]
    ref = data.choice([*chats, f"ahp-chat:/fz-{run.token}-nowhere"], "referenced chat")
    att: dict[str, Any] = {"type": "chat", "label": "earlier chat", "resource": ref}
    mode = data.choice(("none", "latest", "first", "bogus"), "endTurn")
    done = run.completed_turns(ref) or []
    if mode == "latest" and done:
        att["endTurn"] = done[-1]
    elif mode == "first" and done:
        att["endTurn"] = done[0]
    elif mode == "bogus":
        att["endTurn"] = "no-such-turn"
    return att


def _collection(data: Draws, run: LiveRun, here: str) -> dict[str, Any]:
    mode = data.choice(("valid", "valid", "shared-meta", "nested", "empty", "with-chat"), "collection")
    if mode == "shared-meta":
        return data.value("collections_with_shared_meta", gen_att.collections_with_shared_meta(), "pick")
    if mode == "nested":
        return data.value("nested_collections", gen_att.nested_collections(2, 3), "pick")
    if mode == "empty":
        return data.value("empty_collections", gen_att.empty_collections(), "pick")
    col = data.value("collection_attachments", gen_att.collection_attachments(gen_att.simple_attachments()), "pick")
    if mode == "with-chat":
        col = {**col, "attachments": [*col["attachments"], _chat_attachment(data, run, here)]}
    return col


def turn_with_attachments(data: Draws, run: LiveRun) -> list[Op]:
    """chat/turnStarted carrying chat attachments (with and without endTurn, across sessions)
    and collections (valid, nested, empty, shared _meta) — INV-036…040, INV-X05."""
    c = _pick_client(data, run, _modern)
    if c is None:
        return []
    chats = [ch for ch in run.channels("chat") if ch in c.view.subscribed
             and "activeTurn" not in (c.view.confirmed.get(ch) or {"activeTurn": 1})]
    if not chats:
        return []
    ch = data.choice(chats, "chat")
    items: list[dict[str, Any]] = []
    for _ in range(data.integer(1, 3, "attachments")):
        if c.view.collections is True and data.boolean("collection?"):
            items.append(_collection(data, run, ch))
        else:
            items.append(_chat_attachment(data, run, ch))
    action = {"type": "chat/turnStarted", "turnId": f"fz-t{_n(run)}", "startedAt": STARTED_AT,
              "message": {"text": "please summarise", "origin": {"kind": "user"}, "attachments": items}}
    return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": action}]


def plain_turn(data: Draws, run: LiveRun) -> list[Op]:
    """A plain user turn, so chats get completed turns (to attach) and the agent runs."""
    c = _pick_client(data, run)
    if c is None:
        return []
    chats = [ch for ch in run.channels("chat") if ch in c.view.subscribed
             and "activeTurn" not in (c.view.confirmed.get(ch) or {"activeTurn": 1})]
    if not chats:
        return []
    ch = data.choice(chats, "chat")
    text = data.choice(("hello", "ask me", "use a tool", "thanks"), "text")
    return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": {
        "type": "chat/turnStarted", "turnId": f"fz-t{_n(run)}", "startedAt": STARTED_AT,
        "message": {"text": text, "origin": {"kind": "user"}}}}]


def answer(data: Draws, run: LiveRun) -> list[Op]:
    """Answer what the agent waits for (a tool-call confirmation, an input request), so turns
    complete and chats get completed turns to attach."""
    c = _pick_client(data, run)
    if c is None:
        return []
    # the optimistic state, as a client would: a dispatch still pending (one the host never
    # echoed to it, say) may have ended the turn already
    states = {ch: c.optimistic(ch) or {} for ch in run.channels("chat") if ch in c.view.subscribed}
    waiting = [ch for ch, s in states.items() if isinstance(s.get("activeTurn"), dict)]
    if not waiting:
        return []
    ch = data.choice(waiting, "chat")
    state = states[ch]
    for part in state["activeTurn"].get("responseParts") or []:
        tc = part.get("toolCall") if isinstance(part, dict) else None
        if isinstance(tc, dict) and tc.get("status") == "pending-confirmation":
            approved = data.boolean("approve")
            action: Op = {"type": "chat/toolCallConfirmed", "turnId": state["activeTurn"]["id"],
                          "toolCallId": tc["toolCallId"], "approved": approved}
            action.update({"confirmed": "user-action"} if approved else {"reason": "denied"})
            return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": action}]
        request = part.get("request") if isinstance(part, dict) and part.get("kind") == "inputRequest" else None
        if isinstance(request, dict) and part.get("response") is None:
            answers = {q["id"]: {"state": "submitted", "value": {"kind": "boolean", "value": True}}
                       for q in request.get("questions") or [] if isinstance(q, dict) and "id" in q}
            return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": {
                "type": "chat/inputCompleted", "requestId": request.get("id"), "response": "accept",
                "answers": answers}}]
    return [{"op": "dispatch", "client": c.view.index, "channel": ch, "action": {
        "type": "chat/turnCancelled", "turnId": state["activeTurn"].get("id"), "duration": 1}}]


def cancel_without_turn(data: Draws, run: LiveRun) -> list[Op]:
    """chat/turnCancelled naming no active turn: MUST be rejected (INV-044)."""
    picked = _client_and_chat(data, run)
    if picked is None:
        return []
    c, ch = picked
    return [{"op": "dispatch", "client": c.view.index, "channel": ch,
             "action": {"type": "chat/turnCancelled", "turnId": f"fz-gone{_n(run)}", "duration": 0}}]


def resume(data: Draws, run: LiveRun) -> list[Op]:
    """chat/turnResume of a chat's latest turn, or of an earlier one (0.9.0): it reopens a turn
    that ended in a resumable error — the 1.0.0 host's agent waits for it — and MUST be rejected
    when it names no such latest turn or a turn is active (INV-X07)."""
    picked = _client_and_chat(data, run, lambda x: is_known_to("chat/turnResume", x.speaks))
    if picked is None:
        return []
    c, ch = picked
    turns = (c.optimistic(ch) or {}).get("turns") or []
    ids = [t["id"] for t in turns if isinstance(t, dict) and isinstance(t.get("id"), str)]
    if not ids:
        return []
    turn = ids[-1] if len(ids) == 1 or data.boolean("latest") else data.choice(ids[:-1], "earlier turn")
    return [{"op": "dispatch", "client": c.view.index, "channel": ch,
             "action": {"type": "chat/turnResume", "turnId": turn}}]


def move_chat(data: Draws, run: LiveRun) -> list[Op]:
    """moveChat (1.0.0) of a chat within its own session, after another chat of the catalogue or
    first: the host places it there (INV-X11); a chat that is not movable is refused."""
    c = _pick_client(data, run, lambda x: parse_version(x.speaks) >= (1, 0, 0))
    if c is None or not _sessions(run, c):
        return []
    s = data.choice(_sessions(run, c), "session")
    state = c.view.confirmed.get(s) or {}
    order = [e["resource"] for e in state.get("chats") or [] if isinstance(e, dict) and isinstance(e.get("resource"), str)]
    movable = [u for u in order if u != state.get("defaultChat")]
    if not movable:
        return []
    chat = data.choice(movable, "chat")
    others = [u for u in order if u != chat]
    dest: dict[str, Any] = {"kind": "session", "session": s}
    if others and data.boolean("anchor"):
        dest["after"] = data.choice(others, "after")
    return [{"op": "command", "client": c.view.index, "method": "moveChat",
             "params": {"channel": chat, "destination": dest}}]


def race(data: Draws, run: LiveRun) -> list[Op]:
    """Two or three clients write the same channel at once, each from its own optimistic state
    (two turnCancelled, competing claims, two spellings of a directory): INV-045."""
    clients = [c for c in run.ready_clients() if _modern(c)]
    if len(clients) < 2:
        return []
    shared = sorted(set.intersection(*(c.view.subscribed for c in clients)) - {"ahp-root://"})
    shared = [ch for ch in shared if run.kinds.get(ch) in ("session", "chat", "terminal")]
    if not shared:
        return []
    ch = data.choice(shared, "channel")
    kind = run.kinds[ch]
    n = data.integer(2, min(3, len(clients)), "racers")
    racers = data.permutation(clients, "order")[:n]
    wd_ok = "multipleWorkingDirectories" in run.agent_caps()
    ops: list[Op] = []
    for c in racers:
        version = c.speaks
        types = [t for t in action_types(version, kind)
                 if t in BUILDERS[kind] and is_client_dispatchable(t, version) and (wd_ok or t not in WD_TYPES)]
        state = c.optimistic(ch)
        if not types or state is None:
            continue
        ctx = ActionContext(profile=_profile(c),
                            session_directories=_session_dirs(run, c, ch) if kind == "chat" else None)
        action = data.action(kind, state, types, ctx, "action")
        ops.append({"op": "dispatch", "client": c.view.index, "channel": ch, "action": action})
    return [{"op": "race", "ops": ops}] if len(ops) >= 2 else []


def why_empty(name: str, run: LiveRun) -> str | None:
    """The precondition scenario `name` found missing in `run` when it drew no op (None: none
    known — it drew nothing for a reason of the moment, an active turn, say): report.json
    `liveNeverRan` names it instead of "no channel, client or turn it needs"."""
    caps = run.agent_caps()
    if name in ("session-dirs", "chat-dirs") and "multipleWorkingDirectories" not in caps:
        return "the agent announces no multipleWorkingDirectories"
    if name == "create-chat" and "multipleChats" not in caps:
        return "the agent announces no multipleChats"
    if name in ("race", "attachments") and sum(1 for c in run.ready_clients() if c.modern) < (2 if name == "race" else 1):
        return "no client negotiated 0.7.0 or later" if name == "attachments" else "fewer than two clients negotiated 0.7.0 or later"
    if name in ("turn", "answer", "attachments", "cancel", "chat-dirs") and not run.channels("chat"):
        return "no chat channel"
    return None


#: The scenarios that start a turn: a campaign in which none ran says why (`why_no_chat`).
TURN_SCENARIOS = ("turn", "attachments")


def why_no_chat(run: LiveRun) -> tuple[str, ...]:
    """Why `run` has no chat channel to start a turn on, by each way a host offers one (issue 33:
    a session's chat catalog — its default chat —, `createChat`, the session channel of a version
    whose turns live there); empty when it has one, or when it never got as far as a session."""
    if run.channels("chat"):
        return ()
    cmds = [cmd for c in run.clients.values() for cmd in c.view.commands]
    why: list[str] = []
    sessions = run.channels("session")
    if not sessions:
        errors = sorted({str(cmd.error.get("code")) for cmd in cmds
                         if cmd.method == "createSession" and cmd.error is not None})
        if not errors:
            return ()  # no session asked for yet (an example that ended early): nothing to say
        return (f"no session was created: createSession answered error {', '.join(errors)}",)
    catalogs = [s.get("chats") for s in (run.state(u) for u in sessions) if isinstance(s, dict)]
    named = [e.get("resource") for cat in catalogs if isinstance(cat, list) for e in cat if isinstance(e, dict)]
    if any(isinstance(u, str) and u in sessions for u in named):
        why.append("each session's chat catalog names the session channel itself as its chat (its snapshot is "
                   "a session state: no chat state to start a turn on)")
    elif not named:
        why.append("the sessions' chat catalogs name no chat (no default chat)")
    if "multipleChats" not in run.agent_caps():
        why.append("createChat is not offered (the agent announces no multipleChats)")
    else:
        errors = sorted({str(cmd.error.get("code")) for cmd in cmds if cmd.method == "createChat" and cmd.error})
        if errors:
            why.append(f"createChat answered error {', '.join(errors)}")
    for c in run.ready_clients():
        for rule in older_rules(c.view.version):
            if rule.name == "turns-on-the-session-channel":
                why.append(f"the host speaks {c.view.version}, where {rule.says} (that turn family is not modelled)")
                return tuple(why)
    return tuple(why)


# -- channels, reconnects, probes --------------------------------------------------------------


def create_terminal(data: Draws, run: LiveRun) -> list[Op]:
    c = _pick_client(data, run)
    if c is None:
        return []
    uri = f"ahp-terminal:/fz-{run.token}-t{_n(run)}"
    params = {"channel": uri, "claim": {"kind": "client", "clientId": c.view.client_id}, "cols": 80, "rows": 24}
    return [{"op": "command", "client": c.view.index, "method": "createTerminal", "params": params},
            *({"op": "subscribe", "client": x.view.index, "channel": uri} for x in run.ready_clients())]


def unknown_channel(data: Draws, run: LiveRun) -> list[Op]:
    """An action on a channel that does not exist: silently ignored (WIRE.md §5.3, INV-044)."""
    c = _pick_client(data, run)
    if c is None:
        return []
    if not is_known_to("chat/draftChanged", c.speaks):  # never a type newer than the client's version
        return [{"op": "dispatch", "client": c.view.index, "channel": f"ahp-session:/fz-{run.token}-missing",
                 "action": {"type": "session/titleChanged", "title": "x"}}]
    return [{"op": "dispatch", "client": c.view.index, "channel": f"ahp-chat:/fz-{run.token}-missing",
             "action": {"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}}}}]


def reconnect(data: Draws, run: LiveRun) -> list[Op]:
    c = _pick_client(data, run)
    if c is None or not c.view.envelopes:
        return []
    return [{"op": "reconnect", "client": c.view.index, "back": data.integer(0, 6, "back")}]


def frame_class(frame: str) -> str:
    """The class of a malformed frame, as a host that dies on it meets it (issue 33: each its own
    class and cause): "null frame", "number frame", "string frame", "boolean frame", "array
    frame" (a batch), "object frame" or "non-JSON frame"."""
    return f"{frame_type(frame)} frame"


#: Every frame class the malformed frames (`GARBAGE`, `BARE_VALUES`) fall in.
FRAME_CLASSES: frozenset[str] = frozenset(frame_class(f) for f in (*GARBAGE, *BARE_VALUES))


def op_class(op: Op) -> str | None:
    """What a host that died on `op` can be said to have died of, so that the run stops sending
    it (a frame class, a handshake probe); None: an op of the protocol itself, nothing to avoid."""
    if op.get("op") == "garbage":
        return frame_class(str(op.get("frame", "")))
    if op.get("op") == "handshake":
        return f"handshake probe {op.get('probe')}"
    return None


def garbage(data: Draws, run: LiveRun) -> list[Op]:
    c = _pick_client(data, run)
    if c is None:
        return []
    kinds = [k for k in (GARBAGE, BARE_VALUES) if any(frame_class(f) not in run.avoid for f in k)]
    if not kinds:
        return []
    frames = [f for f in data.choice(kinds, "frame kind") if frame_class(f) not in run.avoid]
    return [{"op": "garbage", "client": c.view.index, "frame": data.choice(frames, "frame")}]


def preflight_ops() -> list[Op]:
    """Every handshake probe, every bare JSON value and one frame that is not JSON, once per
    campaign, at the start (after the clients connect): host-level properties a plain run must
    not leave to chance (issue 16; issue 33: every frame class, so a host that closes the
    connection on each is told it for each). The `handshake` and `garbage` scenarios keep drawing
    them during the run."""
    from .wild import PROBES

    return ([{"op": "handshake", "client": 0, "probe": p} for p in PROBES]
            + [{"op": "garbage", "client": 0, "frame": f} for f in (*BARE_VALUES, GARBAGE[1])])


def handshake(data: Draws, run: LiveRun) -> list[Op]:
    """A handshake or error-code probe on a connection of its own (WIRE.md §3, JSON-RPC §5.1):
    ping before initialize, a request before initialize, a second initialize, unknown or empty
    version lists, an unknown method, bad params (INV-H01…H06)."""
    from .wild import PROBES

    probes = [p for p in PROBES if f"handshake probe {p}" not in run.avoid]
    if not probes:
        return []
    return [{"op": "handshake", "client": 0, "probe": data.choice(probes, "probe")}]


SCENARIOS: Mapping[str, Scenario] = {
    "action": valid_action,
    "turn": plain_turn,
    "answer": answer,
    "server-only": server_only,
    "create-chat": create_chat,
    "session-dirs": session_directories,
    "chat-dirs": chat_directories,
    "attachments": turn_with_attachments,
    "cancel": cancel_without_turn,
    "resume": resume,
    "move-chat": move_chat,
    "race": race,
    "terminal": create_terminal,
    "unknown-channel": unknown_channel,
    "reconnect": reconnect,
    "garbage": garbage,
    "handshake": handshake,
}

DEFAULT_WEIGHTS: Mapping[str, int] = {
    "action": 36, "turn": 8, "answer": 6, "server-only": 5, "create-chat": 8, "session-dirs": 6, "chat-dirs": 6,
    "attachments": 10, "cancel": 3, "race": 4, "terminal": 2, "unknown-channel": 2, "reconnect": 3, "garbage": 2,
    "handshake": 2,
}
#: Scenarios a run adds to its weights when it speaks 0.9.0 or later and its weights do not name
#: them (`weights_for`): the 0.7.0 runs draw exactly as before.
LATER_WEIGHTS: Mapping[str, int] = {"resume": 3, "move-chat": 2}


def weights_for(profile: str, weights: Mapping[str, int]) -> dict[str, int]:
    """`weights` plus `LATER_WEIGHTS` for a 0.9.0 or later profile (a name already in `weights`,
    0 included, keeps its weight)."""
    out = dict(weights)
    try:
        later = parse_version(profile.split("-")[0].split("+")[0]) >= (0, 9, 0)
    except ValueError:
        later = False
    if later:
        for name, w in LATER_WEIGHTS.items():
            out.setdefault(name, w)
    return out


def parse_weights(text: str) -> dict[str, int]:
    """`name=N,name=N` over the scenario names (the others keep their default weight)."""
    out = dict(DEFAULT_WEIGHTS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, n = part.partition("=")
        if name not in SCENARIOS or not n.strip().isdigit():
            raise ValueError(f"bad scenario weight {part!r} (want NAME=N with NAME in {', '.join(SCENARIOS)})")
        out[name] = int(n)
    return out
