"""What 1.0.0 adds, checked on a live host (issue 34): the reducer ideas INV-X06…X10 in the form a
host's own state shows them, at quiescence, on real fresh snapshots (never a client's fold: the
host's state is what is judged), plus the MUST of `chat/turnResume` on dispatches.

* INV-X06 — a turn that ended in `error` ends with its `ErrorResponsePart` and has no `Turn.error`
  (0.9.0: errors are durable response parts);
* INV-X07 — a `chat/turnResume` of a turn that is not the latest resumable errored one, or while
  a turn is active, is rejected ("The turn MUST be the latest turn, its state MUST be `error`, and
  its final response part MUST be a resumable error");
* INV-X08 — a catalogue entry's IsRead / IsArchived bits are its chat's ("Includes the activity
  bits and the orthogonal IsRead and IsArchived flags", matching `ChatSummary.status`);
* INV-X09 — change counts are counts ("across all changed files": no changed files, no lines);
* INV-X10 — background work ids are unique within the chat (`backgroundWorkSet` upserts by id);
* INV-X11 — an accepted moveChat within a session places the chat right after its `after` anchor,
  or first (the catalogue order is what `session/chatsReordered` publishes).

A host state that breaks X06 or X10 also differs from the clients' folds; INV-042 leaves such a
channel to these checks (`state_problems`), so the finding names the rule, not only the difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.spec.versions import parse_version

from ..chat_summary import _counts_problem
from .base import LiveObservation, Snapshot
from .wire import must_reject

READ_ARCHIVED = 32 | 64


def at_least(key: str, version: tuple[int, int, int]) -> bool:
    """The profile key's version (`profile_key`: "VERSION|collections") is `version` or later."""
    try:
        return parse_version(key.partition("|")[0]) >= version
    except ValueError:
        return False


def _real(obs: LiveObservation, since: tuple[int, int, int]) -> Iterator[tuple[str, Snapshot]]:
    """Each real fresh snapshot (not a fold) of the profiles at `since` or later, once per channel."""
    seen: set[str] = set()
    for key, snaps in obs.fresh.items():
        if not at_least(key, since):
            continue
        for ch, snap in snaps.items():
            if ch not in seen and isinstance(snap.from_seq, int) and isinstance(snap.state, dict):
                seen.add(ch)
                yield ch, snap


def error_problems(state: dict[str, Any]) -> list[str]:
    """INV-X06 on a chat state: errored turns keep their error as their last response part."""
    out = []
    for t in state.get("turns") or []:
        if not isinstance(t, dict) or t.get("state") != "error":
            continue
        parts = t.get("responseParts") or []
        last = parts[-1] if isinstance(parts, list) and parts else None
        if not (isinstance(last, dict) and last.get("kind") == "error"):
            out.append(f"turn {t.get('id')!r} ended in error without its error response part"
                       + (f" (it carries Turn.error {t['error']!r}, gone since 0.9.0)" if "error" in t else ""))
    return out


def work_problems(state: dict[str, Any]) -> list[str]:
    """INV-X10 on a chat state: one background work entry per id."""
    ids = [w.get("id") for w in state.get("backgroundWork") or [] if isinstance(w, dict)]
    dupes = sorted({str(i) for i in ids if ids.count(i) > 1})
    return [f"backgroundWork holds id {d!r} {ids.count(d)} times" for d in dupes] if dupes else []


def state_problems(kind: str | None, state: Any) -> list[str]:
    """The 1.0.0 state rules a host's chat state breaks (INV-X06, INV-X10)."""
    if kind != "chat" or not isinstance(state, dict):
        return []
    return error_problems(state) + work_problems(state)


def durable_errors(obs: LiveObservation) -> Iterator[str]:
    """INV-X06 (CHANGELOG 0.9.0: "Turn errors are durable response parts"): in a host's snapshot of
    a chat (a 0.9.0 or later peer's), a turn whose state is `error` ends with its error part."""
    for ch, snap in _real(obs, (0, 9, 0)):
        if obs.kinds.get(ch) == "chat":
            for problem in error_problems(snap.state):
                yield f"{ch} (snapshot at serverSeq {snap.from_seq}): {problem}"


def turn_resume_checked(obs: LiveObservation) -> Iterator[str]:
    """INV-X07 (ChatTurnResumeAction: "The turn MUST be the latest turn, its state MUST be
    `error`, and its final response part MUST be a resumable error"): a turnResume that names
    anything else, or comes while a turn is active, is rejected."""
    yield from must_reject(obs, "INV-X07")


def catalogue_status(obs: LiveObservation) -> Iterator[str]:
    """INV-X08 (SessionChatSummary.status: "Includes the activity bits and the orthogonal IsRead
    and IsArchived flags", matching ChatSummary.status): in real snapshots of a session and its
    chat taken at the same serverSeq, the entry's IsRead / IsArchived bits are the chat's."""
    fresh = {ch: snap for ch, snap in _real(obs, (1, 0, 0))}
    for s_uri, s in fresh.items():
        if obs.kinds.get(s_uri) != "session":
            continue
        for entry in s.state.get("chats") or []:
            c = fresh.get(str(entry.get("resource"))) if isinstance(entry, dict) else None
            if c is None or c.from_seq != s.from_seq or obs.kinds.get(c.channel) != "chat":
                continue
            mine, theirs = entry.get("status"), c.state.get("status")
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (mine, theirs)):
                continue
            if mine & READ_ARCHIVED != theirs & READ_ARCHIVED:
                yield (f"{s_uri}.chats[{c.channel}].status is {mine} but the chat's status is {theirs}: "
                       "the IsRead / IsArchived bits (32, 64) are not mirrored into the catalogue")


def change_counts(obs: LiveObservation) -> Iterator[str]:
    """INV-X09 (ChangesSummary: "Total number of inserted lines across all changed files",
    "Number of files that have changes"): a host's chat `changes` and each catalogue entry's
    `changes` are whole counts, and no changed file means no changed line."""
    for ch, snap in _real(obs, (1, 0, 0)):
        kind = obs.kinds.get(ch)
        if kind == "chat" and "changes" in snap.state:
            found = [("changes", snap.state["changes"])]
        elif kind == "session":
            found = [(f"chats[{c.get('resource')}].changes", c["changes"])
                     for c in snap.state.get("chats") or [] if isinstance(c, dict) and "changes" in c]
        else:
            continue
        for where, changes in found:
            bad = _counts_problem(changes)
            if bad:
                yield f"{ch}.{where}: {bad}"


def background_work(obs: LiveObservation) -> Iterator[str]:
    """INV-X10 (BackgroundShellWork.id: "unique within the owning chat"; backgroundWorkSet
    replaces the entry with its id): a host's chat holds one background work entry per id."""
    for ch, snap in _real(obs, (1, 0, 0)):
        if obs.kinds.get(ch) == "chat":
            for problem in work_problems(snap.state):
                yield f"{ch} (snapshot at serverSeq {snap.from_seq}): {problem}"


def move_chat_placed(obs: LiveObservation) -> Iterator[str]:
    """INV-X11 (MoveChatParams: "The optional `after` anchor positions the requested chat in the
    destination catalog; when omitted, the requested chat is placed first"): after a moveChat the
    host accepted within a session, that session's catalogue (at quiescence) holds the chat right
    after its anchor, or first."""
    fresh = obs.main_fresh()
    for c in obs.clients:
        for cmd in obs.new_commands(c):
            params = cmd.params if isinstance(cmd.params, dict) else {}
            dest = params.get("destination")
            if cmd.method != "moveChat" or cmd.error is not None or cmd.lost is not None or not isinstance(dest, dict):
                continue
            snap = fresh.get(str(dest.get("session")))
            if snap is None or not isinstance(snap.state, dict):
                continue
            order = [e.get("resource") for e in snap.state.get("chats") or [] if isinstance(e, dict)]
            chat, after = params.get("channel"), dest.get("after")
            if chat not in order or (after is not None and after not in order):
                continue
            want = 0 if after is None else order.index(after) + 1
            if order.index(chat) != want:
                where = f"right after {after}" if after is not None else "first"
                yield (f"client {c.index}: moveChat of {chat} was accepted but {dest.get('session')}'s catalogue "
                       f"holds it at {order.index(chat)}, not {where}: {order}")
