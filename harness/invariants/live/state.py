"""State checks at quiescence (INVARIANTS.md §D, §G): INV-022, 026, 042, 043, 045, 048, 049, 052.

They compare what clients folded from the envelopes they received with fresh snapshots an
observer took at quiescence, and clients with each other. States are compared without
`modifiedAt` (a host's wall clock, INV-042) unless a check says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import combinations, pairwise
from typing import Any

from harness.spec.versions import introduced_in, parse_version

from . import v100
from .base import ClientView, Envelope, LiveObservation, profile_key, state_difference
from .wire import must_reject

State = dict[str, Any]

ACTIVITY_MASK = 31
IDLE, ERROR, IN_PROGRESS, INPUT_NEEDED = 1, 2, 8, 24
#: ChatSummary fields a ChatState inlines (INV-048).
SUMMARY_FIELDS = ("resource", "title", "status", "activity", "modifiedAt", "origin", "interactivity",
                  "workingDirectories")


def snapshot_replay(obs: LiveObservation) -> Iterator[str]:
    """INV-042 (specification/lifecycle.md; guide/reconciliation.md): reducing snapshot S1 of C
    with every non-rejected envelope of C up to f2, in serverSeq order, yields the snapshot S2
    taken at f2 (all fields but modifiedAt)."""
    for c in obs.clients:
        for ch, snap in obs.fresh_for(c).items():
            if ch not in c.subscribed or not isinstance(snap.from_seq, int):
                continue
            mine = c.state_at(ch, snap.from_seq)
            if mine is None:
                continue
            norm = _normalizer(obs, c, ch)
            mine, theirs = norm(mine), norm(snap.state)
            diff = state_difference(mine, theirs)
            if diff:
                if _unechoed(obs, ch):
                    continue  # a dispatch never echoed to its client: folds lack it (INV-045's finding)
                if obs.misrouted() and _foreign_echoes(obs, c, ch, snap.from_seq):
                    continue  # an echo went to another connection, not this one (INV-045's finding)
                if unapplied(obs, c, ch, snap.from_seq, theirs, norm):
                    continue  # the host never applied accepted client actions: INV-H07's finding
                if _too_new(c, ch, snap.from_seq):
                    continue  # envelopes newer than the version it negotiated: INV-046's finding
                if v100.state_problems(obs.kinds.get(ch), snap.state):
                    continue  # the host's state breaks a 1.0.0 rule: that rule's finding (INV-X06, X10)
                yield (
                    f"client {c.index}: {ch} folded from its snapshot and envelopes up to serverSeq "
                    f"{snap.from_seq} differs from a fresh snapshot at {diff}{_diverged_at(c, ch, snap.from_seq, theirs, diff, norm)}"
                )


def _too_new(c: ClientView, ch: str, upto: int) -> bool:
    """`c` got an envelope on `ch` (up to `upto`) of a type introduced after the version it
    negotiated: its fold, by that version's rules, leaves it out (INV-046 reports it)."""
    try:
        v = parse_version(c.version or "")
    except ValueError:
        return False
    return any(e.channel == ch and isinstance(e.seq, int) and e.seq <= upto
               and (introduced_in(e.type) or (0, 0, 0)) > v for e in c.envelopes)


def _unechoed(obs: LiveObservation, ch: str) -> bool:
    """Some client's dispatch on `ch` was never echoed to it (INV-045 reports each such one)."""
    return any(c.pending.get(ch) for c in obs.clients)


def _envelope_at(c: ClientView, ch: str, seq: Any) -> Envelope | None:
    for e in reversed(c.envelopes):
        if e.channel == ch and e.seq == seq:
            return e
    return None


def _describe(e: Envelope | None, seq: Any) -> str:
    if e is None:
        return f"serverSeq {seq}"
    who = (f"client {e.origin.get('clientId')}'s clientSeq {e.origin.get('clientSeq')}"
           if isinstance(e.origin, dict) else "server-originated")
    return f"serverSeq {e.seq} ({e.type}, {who})"


def _fold_steps(c: ClientView, ch: str, upto: int,
                norm: Callable[[Any], Any] = lambda s: s) -> list[tuple[int, State]]:
    return [(s, norm(st)) for s, st in c.history.get(ch, []) if isinstance(s, int) and s <= upto]


def _folds(obs: LiveObservation, c: ClientView, ch: str, upto: int) -> tuple[Any, Any, list[Envelope]] | None:
    """The client's snapshot of `ch` folded with every non-rejected envelope up to `upto` — its
    own and the accepted echoes any other connection of the run received (a host may echo to the
    wrong connection) —, the same fold *without* the client-originated ones, and those of them
    that changed the full fold (None: nothing to fold)."""
    h = c.history.get(ch) or []
    if obs.reduce is None or not h or not isinstance(h[0][0], int):
        return None
    base_seq, base = h[0]
    merged = {e.seq: e for e in obs.echoes.get(ch, {}).values()  # live ones: a replay's may predate the run
              if not e.replayed and base_seq < e.seq <= upto}  # type: ignore[operator]
    merged.update({e.seq: e for e in c.envelopes
                   if e.channel == ch and not e.rejected and not e.replayed and isinstance(e.seq, int)
                   and not isinstance(e.seq, bool) and base_seq < e.seq <= upto})
    kind, version = obs.kinds.get(ch, ""), c.version or ""
    full = without = base
    changed: list[Envelope] = []
    for seq in sorted(merged):
        e = merged[seq]
        after = obs.reduce(version, kind, full, e.action)
        if isinstance(e.origin, dict):
            if state_difference(full, after) is not None:
                changed.append(e)
        else:
            without = obs.reduce(version, kind, without, e.action)
        full = after
    return full, without, changed


def unapplied(obs: LiveObservation, c: ClientView, ch: str, upto: int, theirs: Any,
              norm: Callable[[Any], Any] = lambda s: s) -> list[Envelope]:
    """The accepted client actions a host never applied (else []): the fold of `_folds` without
    the client-originated envelopes equals the host's snapshot `theirs`, while the full fold does
    not. Those echoes that changed the full fold are returned (the reference model says they
    change the state)."""
    folds = _folds(obs, c, ch, upto)
    if folds is None:
        return []
    full, without, skipped = folds
    if (not skipped or state_difference(norm(without), theirs) is not None
            or state_difference(norm(full), theirs) is None):
        return []
    return skipped


def _applied(obs: LiveObservation, c: ClientView, ch: str, upto: int, theirs: Any,
             norm: Callable[[Any], Any]) -> bool:
    """The host applied an accepted client action: its snapshot `theirs` equals `_folds`' full
    fold and not the fold without the client-originated envelopes."""
    folds = _folds(obs, c, ch, upto)
    if folds is None:
        return False
    full, without, changed = folds
    return (bool(changed) and state_difference(norm(full), theirs) is None
            and state_difference(norm(without), theirs) is not None)


def _foreign_echoes(obs: LiveObservation, c: ClientView, ch: str, upto: int) -> bool:
    """Some connection other than `c`'s received an accepted echo on `ch` (after `c`'s snapshot
    of it, up to `upto`) that `c` did not."""
    h = c.history.get(ch) or []
    per = obs.echoes.get(ch)
    if not per or not h or not isinstance(h[0][0], int):
        return False
    mine = c.received_seqs(ch)
    return any(s not in mine and h[0][0] < s <= upto for s in per)


def _diverged_at(c: ClientView, ch: str, upto: int, theirs: Any, diff: str,
                 norm: Callable[[Any], Any] = lambda s: s) -> str:
    """Name the envelope where the fold and the host part: the first one after the last point
    where the fold equals the host's snapshot, else the last envelope that changed `diff`'s path."""
    steps = _fold_steps(c, ch, upto, norm)
    for k in range(len(steps) - 2, -1, -1):
        if state_difference(steps[k][1], theirs) is None:
            seq = steps[k + 1][0]
            return (f"; the snapshot equals the fold up to serverSeq {steps[k][0]}: the first envelope "
                    f"it does not reflect is {_describe(_envelope_at(c, ch, seq), seq)}")
    top = _top_key(diff)
    for (_, before), (seq, after) in reversed(list(pairwise(steps))):
        d = state_difference(before, after)
        if d and _top_key(d) == top:
            return f"; the last envelope that changed .{top} is {_describe(_envelope_at(c, ch, seq), seq)}"
    return ""


def _top_key(diff: str) -> str:
    """The top-level key a `first_difference` path starts with (`.turns[0].id: …` → `turns`)."""
    return diff.split(":")[0].split(" ")[0].lstrip(".").split(".")[0].split("[")[0]


def accepted_applied(obs: LiveObservation) -> Iterator[str]:
    """INV-H07 (guide/actions.md §Action Envelope: an envelope without rejectionReason is
    applied): an accepted client action the reference model says changes the state shows in the
    host's next snapshot. Fires when the snapshot is exactly the fold without those actions —
    the echoes the client received and those another connection of the run received instead."""
    for c in obs.clients:
        for ch, snap in obs.fresh_for(c).items():
            if ch not in c.subscribed or not isinstance(snap.from_seq, int):
                continue
            mine = c.state_at(ch, snap.from_seq)
            norm = _normalizer(obs, c, ch)
            if mine is None or any(not obs.echoed(c.client_id, d.client_seq) for d in c.pending.get(ch, ())):
                continue  # an own dispatch never echoed anywhere: INV-045's finding
            if (state_difference(norm(mine), norm(snap.state)) is None
                    and not _foreign_echoes(obs, c, ch, snap.from_seq)):
                if not obs.applied_seen:
                    obs.applied_seen = _applied(obs, c, ch, snap.from_seq, norm(snap.state), norm)
                continue
            never = unapplied(obs, c, ch, snap.from_seq, norm(snap.state), norm)
            if never:
                first = never[0]
                yield (
                    f"client {c.index}: accepted but never applied: {_describe(first, first.seq)} on {ch} "
                    f"was echoed as accepted and changes the state by the reference model, but the host's "
                    f"snapshot at serverSeq {snap.from_seq} does not show it"
                    + (f" (nor {len(never) - 1} later accepted action(s))" if len(never) > 1 else "")
                )


def _normalizer(obs: LiveObservation, c: ClientView, ch: str) -> Callable[[Any], Any]:
    """How a client's fold and a snapshot are compared: a pre-0.7.0 peer sees the singular
    workingDirectory projected from the 0.7.0 set, which only 0.7.0 actions change (a profile
    mismatch, not a host bug; a 0.7.0-only field shown to it is INV-046's finding)."""
    if obs.kinds.get(ch) in ("session", "chat") and (c.version or "") < "0.7.0":
        return _pre_070
    if obs.kinds.get(ch) in ("session", "chat") and _older_than(c.version, (1, 0, 0)):
        return _pre_100
    return lambda s: s


def _older_than(version: str | None, than: tuple[int, int, int]) -> bool:
    try:
        return parse_version(version or "") < than
    except ValueError:
        return False


#: Chat fields only 1.0.0 actions write (chat/changesetsChanged, canvasesChanged, movableChanged,
#: backgroundWorkSet/Removed) and the IsRead / IsArchived status bits (chat/isReadChanged,
#: isArchivedChanged): a 0.9.0 peer of a 1.0.0 host is sent none of those actions.
FIELDS_1_0 = frozenset({"backgroundWork", "canvases", "changes", "changesets", "movable"})
_READ_ARCHIVED = 32 | 64


def _pre_100(state: Any) -> Any:
    """A session or chat state without what only 1.0.0 actions change (a 0.9.0 fold cannot
    follow it): the 1.0.0 chat fields, the IsRead / IsArchived bits, the catalogue's order
    (session/chatsReordered)."""
    if not isinstance(state, dict):
        return state
    out = {k: v for k, v in state.items() if k not in FIELDS_1_0}
    if isinstance(out.get("status"), int) and not isinstance(out["status"], bool):
        out["status"] = out["status"] & ~_READ_ARCHIVED
    if isinstance(out.get("chats"), list):
        chats = [_pre_100(c) for c in out["chats"]]
        out["chats"] = sorted(chats, key=lambda c: str(c.get("resource")) if isinstance(c, dict) else "")
    return out


def _pre_070(state: Any) -> Any:
    """A session or chat state without the fields a pre-0.7.0 fold cannot follow."""
    if not isinstance(state, dict):
        return state
    out = {k: v for k, v in state.items() if k not in ("workingDirectory", "workingDirectories")}
    if isinstance(out.get("chats"), list):
        out["chats"] = [_pre_070(c) for c in out["chats"]]
    return out


def _pairs(obs: LiveObservation, same_delivery: bool) -> Iterator[tuple[Any, Any, str]]:
    for a, b in combinations(obs.clients, 2):
        if a.collections is None or b.collections is None:
            continue  # after a reconnect their earlier views were projected differently
        if profile_key(a.version, a.collections) != profile_key(b.version, b.collections):
            continue
        if (a.delivery_ms == b.delivery_ms) != same_delivery:
            continue
        for ch in sorted(a.subscribed & b.subscribed):
            if ch in a.confirmed and ch in b.confirmed:
                yield a, b, ch


def converges(obs: LiveObservation) -> Iterator[str]:
    """INV-045 (guide/reconciliation.md: "server-wins semantics"; doctrine: "all clients converge
    on the same state"): a client keeping confirmed + pending ends, once its dispatches are
    echoed, with optimistic == confirmed == host state; clients with the same view agree."""
    for c in obs.clients:
        for ch, queue in sorted(c.pending.items()):
            if queue and ch in c.subscribed:
                d = queue[0]
                went = obs.delivered.get((c.client_id, d.client_seq))
                where = (f"; its echo was delivered to {', '.join(went)} instead (not to the dispatcher's "
                         "connection)") if went else ""
                yield (
                    f"client {c.index}: {len(queue)} dispatch(es) on {ch} never echoed, first "
                    f"clientSeq {d.client_seq} ({d.type}): optimistic state cannot reconcile{where}"
                )
    for c, e in obs.missed_echoes():
        origin = e.origin if isinstance(e.origin, dict) else {}
        went = obs.delivered.get((str(origin.get("clientId")), origin.get("clientSeq")))
        where = f"delivered to {', '.join(went)}" if went else "only its dispatcher's connection received"
        yield (
            f"client {c.index} watches {e.channel} but never received {_describe(e, e.seq)}, an "
            f"accepted echo {where}, at quiescence: the host does not send every action to every subscriber"
        )
    for a, b, ch in _pairs(obs, same_delivery=True):
        diff = state_difference(a.confirmed[ch], b.confirmed[ch])
        if diff and not obs.misrouted() and not _unechoed(obs, ch):  # else the echoes above are the cause
            yield f"clients {a.index} and {b.index} disagree on {ch} at quiescence: {diff}"


def coalesced_delivery(obs: LiveObservation) -> Iterator[str]:
    """INV-043 (specification/subscriptions.md §Delivery preferences: coalescing must preserve
    "the same reduced state a client would observe from immediate delivery"): clients with
    different delivery.maxLatencyMs agree at every quiescent point."""
    for a, b, ch in _pairs(obs, same_delivery=False):
        diff = state_difference(a.confirmed[ch], b.confirmed[ch])
        if diff and not obs.misrouted() and not _unechoed(obs, ch):  # INV-045's cause: echoes astray
            yield (
                f"client {a.index} (maxLatencyMs {a.delivery_ms}) and client {b.index} "
                f"(maxLatencyMs {b.delivery_ms}) disagree on {ch}: {diff}"
            )


def _quiet_between(obs: LiveObservation, channels: set[str], lo: int, hi: int) -> bool:
    """No client saw an envelope of `channels` with lo < serverSeq <= hi."""
    for c in obs.clients:
        for e in reversed(c.envelopes):  # envelopes arrive in serverSeq order: stop below lo
            if isinstance(e.seq, int) and e.seq <= lo:
                break
            if e.channel in channels and isinstance(e.seq, int) and e.seq <= hi:
                return False
    # an echo that only another connection got (a host that misroutes echoes)
    return not any(lo < s <= hi for ch in channels for s in obs.echoes.get(ch, ()))


def summary_consistency(obs: LiveObservation) -> Iterator[str]:
    """INV-048 (ChatState doc: "Producers MUST keep the two representations consistent";
    specification/chat-channel.md §State): at quiescence the ChatSummary fields inlined in each
    ChatState equal the session's chats entry for it."""
    fresh = obs.main_fresh()
    # where the host speaks 1.0.0, the IsRead / IsArchived bits are INV-X08's on a 1.0.0 view, and
    # a 0.9.0 view's fold cannot follow them (chat/isReadChanged, isArchivedChanged are 1.0.0 only)
    flags_are_x08s = any(v100.at_least(f"{c.version}|", (1, 0, 0)) for c in obs.clients)
    for s_uri in obs.sessions:
        s = fresh.get(s_uri)
        if s is None or not isinstance(s.state, dict):
            continue
        for entry in s.state.get("chats") or []:
            if not isinstance(entry, dict):
                continue
            if entry.get("resource") == s_uri:  # no ChatState to compare with: the session's own
                yield (f"{s_uri}.chats names the session itself as a chat: that channel's snapshot is the "
                       "session's, no ChatState keeps the summary")
                continue
            c = fresh.get(str(entry.get("resource")))
            if c is None or not isinstance(c.state, dict):
                continue
            if (s.from_seq is None) != (c.from_seq is None):
                continue  # a fold beside a real snapshot: a fold that missed an envelope, or a
                # host that never applied one, would show as a summary mismatch (not this cause)
            if isinstance(s.from_seq, int) and isinstance(c.from_seq, int):
                lo, hi = sorted((s.from_seq, c.from_seq))
                if not _quiet_between(obs, {s_uri, c.channel}, lo, hi):
                    continue
            for k in SUMMARY_FIELDS:
                if k == "status" and flags_are_x08s and _status_apart_by_flags(entry.get(k), c.state.get(k)):
                    continue  # only the IsRead / IsArchived bits differ: INV-X08's finding
                if entry.get(k, "<absent>") != c.state.get(k, "<absent>"):
                    yield (
                        f"{c.channel}.{k} is {c.state.get(k, '<absent>')!r} but its entry in "
                        f"{s_uri}.chats has {entry.get(k, '<absent>')!r}"
                    )


def _status_apart_by_flags(a: Any, b: Any) -> bool:
    """Two status bitsets that differ, and only in the IsRead / IsArchived bits (32, 64)."""
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b))
    return ints and a != b and a & ~v100.READ_ARCHIVED == b & ~v100.READ_ARCHIVED


def turn_ids_unique(obs: LiveObservation) -> Iterator[str]:
    """INV-022 (ChatState.turns "Completed turns"; server validation): within a chat, the ids in
    turns plus activeTurn.id are pairwise distinct."""
    for ch, snap in obs.main_fresh().items():
        if obs.kinds.get(ch) != "chat" or not isinstance(snap.state, dict):
            continue
        ids = [t.get("id") for t in snap.state.get("turns") or [] if isinstance(t, dict)]
        active = snap.state.get("activeTurn")
        if isinstance(active, dict):
            ids.append(active.get("id"))
        dupes = sorted({str(i) for i in ids if ids.count(i) > 1})
        if dupes:
            yield f"{ch}: turn id(s) {dupes} occur more than once"


def default_chat_in_catalog(obs: LiveObservation) -> Iterator[str]:
    """INV-026 (specification/session-channel.md §Server Validation: "Server MUST reject"
    session/defaultChatChanged naming a chat not in the catalog): defaultChat, when present,
    names an entry of chats."""
    for s_uri in obs.sessions:
        snap = obs.main_fresh().get(s_uri)
        if snap is None or not isinstance(snap.state, dict) or "defaultChat" not in snap.state:
            continue
        chats = {c.get("resource") for c in snap.state.get("chats") or [] if isinstance(c, dict)}
        if snap.state["defaultChat"] not in chats:
            yield f"{s_uri}.defaultChat {snap.state['defaultChat']!r} is not in its chats {sorted(map(str, chats))}"
    yield from must_reject(obs, "INV-026")


def annotations_not_empty(obs: LiveObservation) -> Iterator[str]:
    """INV-049 (Annotation doc: "Every annotation MUST contain at least one AnnotationEntry")."""
    for ch, snap in obs.main_fresh().items():
        if obs.kinds.get(ch) != "annotations" or not isinstance(snap.state, dict):
            continue
        for a in snap.state.get("annotations") or []:
            if isinstance(a, dict) and not a.get("entries"):
                yield f"{ch}: annotation {a.get('id')!r} has no entries"
    yield from must_reject(obs, "INV-049")


def session_status_aggregates(obs: LiveObservation) -> Iterator[str]:
    """INV-052 (specification/session-channel.md §Chat aggregation: "Take the activity bits …
    from the defaultChat when set, else from the most recently modified chat. Promote
    InputNeeded if any chat needs input. Promote Error if any chat is in an error state")."""
    for s_uri in obs.sessions:
        snap = obs.main_fresh().get(s_uri)
        if snap is None or not isinstance(snap.state, dict):
            continue
        chats = [c for c in snap.state.get("chats") or [] if isinstance(c, dict) and isinstance(c.get("status"), int)]
        status = snap.state.get("status")
        if not chats or not isinstance(status, int):
            continue
        default = next((c for c in chats if c.get("resource") == snap.state.get("defaultChat")), None)
        if default is None:
            default = max(chats, key=lambda c: str(c.get("modifiedAt", "")))
        acts = {c["status"] & ACTIVITY_MASK for c in chats}
        allowed = {default["status"] & ACTIVITY_MASK}
        if INPUT_NEEDED in acts or ERROR in acts:
            allowed = {a for a in (INPUT_NEEDED, ERROR) if a in acts}
        if status & ACTIVITY_MASK not in allowed:
            yield (
                f"{s_uri}: status activity {status & ACTIVITY_MASK} but its chats aggregate to "
                f"{sorted(allowed)} (chat activities {sorted(acts)})"
            )
