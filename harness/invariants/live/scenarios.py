"""Checks of the seed scenarios over the wire (INVARIANTS.md §E, §F, INV-053, X05).

Multiroot (INV-031 subset, INV-032 primary, INV-033 absent vs empty), collection attachments
(INV-037 one level and non-empty, INV-038 metadata independence, INV-039 durable preservation,
INV-040 degradation for peers that did not negotiate them), client-dispatchability (INV-053)
and the pinning of a chat attachment without `endTurn` (INV-X05).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.spec.versions import parse_version

from .base import ClientView, Dispatch, Envelope, LiveObservation, first_difference
from .wire import _comparable, _dispatch_of, has_collection, must_reject

COLLECTION = "collection"


def flatten(items: list[Any]) -> list[Any]:
    """One-level flattening (seed 000: "members of each collection in order")."""
    out: list[Any] = []
    for a in items:
        if isinstance(a, dict) and a.get("type") == COLLECTION and isinstance(a.get("attachments"), list):
            out.extend(a["attachments"])
        else:
            out.append(a)
    return out


def attachment_lists(value: Any, path: str = "") -> Iterator[tuple[str, list[Any]]]:
    """Every `attachments` list in `value` outside collections, with its path."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "attachments" and isinstance(v, list):
                yield f"{path}.{k}", v
            else:
                yield from attachment_lists(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from attachment_lists(v, f"{path}[{i}]")


def at_path(value: Any, path: str) -> Any:
    """Follow a path made by `attachment_lists` (None when it does not exist)."""
    import re

    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        if key:
            value = value.get(key) if isinstance(value, dict) else None
        else:
            value = value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
    return value


def _accepted_echoes(obs: LiveObservation, c: ClientView) -> Iterator[tuple[Envelope, ClientView, Dispatch]]:
    for e in obs.new_envelopes(c):
        if e.rejected:
            continue
        found = _dispatch_of(obs, e.origin)
        if found is not None:
            yield e, found[0], found[1]


def _fresh_sessions(obs: LiveObservation) -> Iterator[tuple[str, dict[str, Any]]]:
    fresh = obs.main_fresh()
    for uri in obs.sessions:
        snap = fresh.get(uri)
        if snap is not None and isinstance(snap.state, dict):
            yield uri, snap.state


def chat_subset(obs: LiveObservation) -> Iterator[str]:
    """INV-031 (ChatState.workingDirectories: "Every entry MUST be present in the owning
    session's workingDirectories"; guide/state-model.md: "a host MUST reject a directory that is
    not"): at quiescence each chat's subset, when present, is a subset of its session's set
    (string equality), and createChat / chat/workingDirectorySet with a non-member fail."""
    fresh = obs.main_fresh()
    for s_uri, s in _fresh_sessions(obs):
        if "workingDirectories" not in s and "workingDirectory" in s:
            continue  # a pre-0.7.0 projection: no subsets to compare
        session_dirs = s.get("workingDirectories") or []
        folded = fresh[s_uri].from_seq is None
        for entry in s.get("chats") or []:
            chat = fresh.get(str(entry.get("resource"))) if isinstance(entry, dict) else None
            if chat is not None and (chat.from_seq is None) != folded:
                chat = None  # a fold beside a real snapshot: judge the session's own catalog entry
            state = chat.state if chat is not None and isinstance(chat.state, dict) else entry
            if not isinstance(state, dict) or not isinstance(state.get("workingDirectories"), list):
                continue
            outside = [d for d in state["workingDirectories"] if d not in session_dirs]
            if outside:
                yield f"{state.get('resource')}: workingDirectories {outside} are not in {s_uri}'s set {session_dirs}"
    for c in obs.clients:
        for cmd in obs.new_commands(c):  # judged once, at the op that sent it (its snapshots)
            if (cmd.must_fail == "INV-031" and cmd.lost is None and not cmd.failed
                    and not _host_set_holds(obs, cmd.params.get("channel"), cmd.params.get("workingDirectories"))):
                yield f"client {c.index}: {cmd.method} succeeded but MUST fail ({cmd.reason})"
    yield from must_reject(obs, "INV-031", excused=lambda d: _host_set_holds(
        obs, obs.chat_session.get(d.channel), [d.action.get("directory")] if isinstance(d.action, dict) else None))


def _host_set_holds(obs: LiveObservation, uri: Any, dirs: Any) -> bool:
    """A real fresh snapshot of session `uri` shows every directory of `dirs` in its set: the
    expectation (createChat or chat/workingDirectorySet MUST fail) came from the clients' folds,
    and the host's own state had parted from them before (an action it never applied, an echo a
    client missed — INV-H07, INV-042 or INV-045 name that cause); the host was consistent with
    the state it held."""
    if not isinstance(dirs, list) or not isinstance(uri, str):
        return False
    for snaps in obs.fresh.values():
        snap = snaps.get(uri)
        if snap is not None and isinstance(snap.from_seq, int) and isinstance(snap.state, dict):
            have = snap.state.get("workingDirectories")
            if isinstance(have, list):
                return all(d in have for d in dirs)
    return False


def primary_immutable(obs: LiveObservation) -> Iterator[str]:
    """INV-032 (guide/state-model.md 0.7.0 "How the immutable primary is enforced"): when the agent
    advertises immutablePrimary without primaryReplacement, workingDirectories[0] never changes
    for the session's lifetime; removing it is rejected."""
    for s_uri, s in _fresh_sessions(obs):
        facts = obs.sessions[s_uri]
        if not facts.immutable_primary or facts.primary_replacement or not facts.directories:
            continue
        dirs = s.get("workingDirectories")
        if not isinstance(dirs, list):
            continue  # a view without the list (a pre-0.7.0 projection): nothing to compare
        if not dirs or dirs[0] != facts.directories[0]:
            yield f"{s_uri}: the immutable primary {facts.directories[0]!r} became {dirs[:1]}"
    yield from must_reject(obs, "INV-032")


def absent_vs_empty(obs: LiveObservation) -> Iterator[str]:
    """INV-033 (ChatState.workingDirectories doc; PR #337 review): absent (inherit the session's
    set) and [] (no access) stay distinct: a chat created with workingDirectories [] is shown
    with [] — in its snapshot and in the session's catalog entry — never as absent."""
    for c in obs.clients:
        for cmd in c.commands:
            if cmd.method != "createChat" or cmd.failed or cmd.lost or cmd.params.get("workingDirectories") != []:
                continue
            chat = cmd.params.get("chat")
            snap = c.first_snapshot(chat) if isinstance(chat, str) else None
            if snap is not None and isinstance(snap.state, dict):
                got = snap.state.get("workingDirectories", "<absent>")
                if got != []:
                    yield f"client {c.index}: {chat} was created with workingDirectories [] but its snapshot has {got!r}"
            for e in obs.new_envelopes(c):  # each envelope is checked once, in the op it came
                if e.rejected:
                    continue  # a rejected dispatch (a server-only probe naming the chat) is no entry
                summary = e.action.get("summary") if isinstance(e.action, dict) else None
                if e.type == "session/chatAdded" and isinstance(summary, dict) and summary.get("resource") == chat:
                    got = summary.get("workingDirectories", "<absent>")
                    if got != []:
                        yield f"client {c.index}: session/chatAdded for {chat} shows workingDirectories {got!r}, want []"


def collections_one_level(obs: LiveObservation) -> Iterator[str]:
    """INV-037 (seed 000: the member union excludes collections; "This array MUST contain at least
    one attachment"): a message with a nested or an empty collection is rejected."""
    yield from must_reject(obs, "INV-037")


def collection_metadata(obs: LiveObservation) -> Iterator[str]:
    """INV-038 (seed 000 §Metadata: "Hosts MUST preserve both without merging"): on a peer that
    negotiated collections, an accepted message's collections arrive exactly as sent: the
    collection's _meta/label/displayKind/range and each member's _meta/range unchanged."""
    for c in obs.clients:
        if c.collections is not True:
            continue
        for e, _owner, d in _accepted_echoes(obs, c):
            for path, sent in attachment_lists(d.action):
                if not has_collection(sent):
                    continue
                got = at_path(e.action, path)
                diff = first_difference(_comparable(sent), _comparable(got))
                if diff:
                    yield f"client {c.index}: {d.type} echo{path} differs from what was sent at {diff}"


def collection_durable(obs: LiveObservation) -> Iterator[str]:
    """INV-039 (seed 000 §Durable state): on a connection that negotiated collections, every
    carrier — here the chat snapshot — presents a collection as a single attachment, unchanged."""
    for c in obs.clients:
        if c.collections is not True:
            continue
        fresh = obs.fresh_for(c)
        for d in c.dispatches:
            if d.type != "chat/turnStarted" or d.channel not in fresh or not d.echoes or d.echoes[0].rejected:
                continue
            sent = (d.action.get("message") or {}).get("attachments")
            if not isinstance(sent, list) or not has_collection(sent):
                continue
            snap = fresh[d.channel]
            if not isinstance(snap.state, dict):
                continue
            turns = [*(snap.state.get("turns") or []), snap.state.get("activeTurn") or {}]
            turn = next((t for t in turns if isinstance(t, dict) and t.get("id") == d.action.get("turnId")), None)
            if turn is None:
                continue  # truncated away
            got = (turn.get("message") or {}).get("attachments")
            diff = first_difference(_comparable(sent), _comparable(got))
            if diff:
                yield f"client {c.index}: turn {d.action.get('turnId')!r} of {d.channel} stores its attachments changed at {diff}"


def collection_degradation(obs: LiveObservation) -> Iterator[str]:
    """INV-040 (seed 000 §Compatibility): on a connection without collection support every
    message is presented with attachments = flatten(attachments): no member lost, order kept,
    each member unchanged, and no collection variant sent."""
    for c in obs.clients:
        if c.collections is not False:
            continue
        for e in obs.new_envelopes(c):
            if not e.rejected and has_collection(e.action):
                yield f"client {c.index} did not negotiate collections but envelope {e.seq} ({e.type}) carries one"
        for e, _owner, d in _accepted_echoes(obs, c):
            for path, sent in attachment_lists(d.action):
                if not has_collection(sent):
                    continue
                got = at_path(e.action, path)
                diff = first_difference(_comparable(flatten(sent)), _comparable(got))
                if diff:
                    yield f"client {c.index}: {d.type}{path} is not the flattened collection at {diff}"
        for ch, snap in obs.fresh_for(c).items():
            # a folded view (fromSeq None) holds only what the envelopes and snapshots above
            # brought, each checked when it came
            if snap.from_seq is not None and has_collection(snap.state):
                yield f"client {c.index}'s view of {ch} (no collections negotiated) holds a collection"


def client_dispatchable_only(obs: LiveObservation) -> Iterator[str]:
    """INV-053 (IS_CLIENT_DISPATCHABLE doc: "Servers SHOULD call this … and reject"): a host
    accepts no server-only action type from a client."""
    yield from must_reject(obs, "INV-053")


def chat_attachment_pinned(obs: LiveObservation) -> Iterator[str]:
    """INV-X05 (specification/chat-channel.md §Pulling a chat into another chat: "When it is
    omitted, the host pins the referenced chat's latest completed turn when accepting the
    message"): an accepted chat attachment without endTurn comes back with endTurn = the
    referenced chat's latest completed turn (when it has one)."""
    for c in obs.clients:
        for d in obs.new_dispatches(c):
            if not d.pins or not d.echoes or d.echoes[0].rejected:
                continue
            echoed = d.echoes[0].action
            for path, want in d.pins.items():
                got = at_path(echoed, path)
                got_end = got.get("endTurn") if isinstance(got, dict) else None
                if got_end != want:
                    yield (
                        f"client {c.index}: {d.type} attachment {path} (no endTurn sent) came back with "
                        f"endTurn {got_end!r}; the referenced chat's latest completed turn is {want!r}"
                    )


#: Rejected chat/turnStarted dispatches, none accepted, before INV-H11 says turns are unreachable.
TURNS_REFUSED_ENOUGH = 2


def turns_reachable(obs: LiveObservation) -> Iterator[str]:
    """INV-H11 (issue 33; 0.4.0: turns live on the chat channel): a host accepts some
    chat/turnStarted; every one rejected, `TURNS_REFUSED_ENOUGH` or more of them plain turns (no
    attachment, nothing the model says must be rejected), leaves turns unreachable."""
    refused: list[str] = []
    for c in obs.clients:
        if c.version is not None and _before(c.version, (0, 4, 0)):
            continue  # turns on the session channel are that version's own (a note, not this check)
        for d in c.dispatches:
            if d.type != "chat/turnStarted" or not d.echoes:
                continue
            if not d.echoes[0].rejected:
                return
            message = d.action.get("message") if isinstance(d.action, dict) else None
            if d.must_reject is None and isinstance(message, dict) and not message.get("attachments"):
                refused.append(str(d.echoes[0].rejection))  # a plain turn: nothing in it to refuse
    if len(refused) >= TURNS_REFUSED_ENOUGH:
        yield (f"every chat/turnStarted was rejected ({len(refused)}, first with {refused[0]!r}): turns are not "
               "reachable on this host's chat channels")


def _before(version: str, than: tuple[int, int, int]) -> bool:
    try:
        return parse_version(version) < than
    except ValueError:
        return False
