"""E. Multiroot working directories (INVARIANTS.md INV-029…035; REDUCERS.md §8, §11 items 5–7)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import unquote

from ._json import at, fresh, same, short
from .base import Reducer, Step, catalogue_entry, invariant

KEY: Final = "workingDirectories"
SET: Final = frozenset({"session/workingDirectorySet", "chat/workingDirectorySet"})
REMOVE: Final = frozenset({"session/workingDirectoryRemoved", "chat/workingDirectoryRemoved"})
REPLACE: Final = "session/workingDirectoryReplaced"
_KINDS: Final = frozenset({"session", "chat"})


def _dirs(state: dict[str, Any]) -> list[Any] | None:
    value = state.get(KEY)
    return value if isinstance(value, list) else None


def _without_first(items: list[Any], item: Any) -> list[Any]:
    i = items.index(item)
    return items[:i] + items[i + 1 :]


def _distinct(items: list[Any] | None) -> bool:
    if not items:
        return True
    keys = [short(x, 10_000) for x in items]
    return len(set(keys)) == len(keys)


def _boundary(step: Step, before: list[Any] | None) -> bool:
    """INV-033's cases: the list is absent, or a Remove empties it."""
    d = step.action.get("directory")
    return before is None or (step.type in REMOVE and before == [d])


@invariant(
    "INV-029",
    "Directory sets are duplicate-free and order-stable",
    severity="violation",
    source='0.7.0 action docs ("membership keyed by the directory URI"); guide/state-model.md '
    "(Set appends); fixtures 241–246 (session), 247–252 (chat)",
    kinds=_KINDS,
    actions=SET | REMOVE,
)
def directory_set_order(step: Step) -> Iterator[str]:
    """`workingDirectories` never contains two equal strings; Set appends at the end (or is a
    no-op when the directory is already an element); Remove deletes one element and keeps the
    others' relative order. (The absent-list and emptied-list cases are INV-033.)"""
    before, after = _dirs(step.before), _dirs(step.after)
    if _distinct(before) and not _distinct(after):
        yield f"{step.type}: {KEY} has duplicates: {short(after)}"
    if _boundary(step, before):
        return
    assert before is not None
    d = step.action.get("directory")
    if step.type in SET:
        want = before if d in before else [*before, d]
    else:
        want = _without_first(before, d) if d in before else before
    if after != want:
        yield f"{step.type}({short(d)}): {KEY} {short(before)} → {short(after)}, want {short(want)}"


@invariant(
    "INV-030",
    "Set/Remove inverse on a present list",
    severity="violation",
    source='docs/proposals/multiroot-sessions.md §9 ("idempotent and safe to retry"); fixtures '
    "243, 245, 246, 249, 251, 252",
    kinds=_KINDS,
    probe=True,
    actions=SET,
    note="Idempotence of Set and Remove is checked by INV-028; the chat absent case is INV-030.chat-absent.",
)
def set_remove_inverse(step: Step, reducer: Reducer) -> Iterator[str]:
    """If `d` is not in a present list L, Remove(d)∘Set(d) returns L; for an absent session list
    it returns `[]` (the law holds modulo absent ≡ [] for sessions)."""
    before = _dirs(step.before)
    d = step.action.get("directory")
    if (before is not None and d in before) or (before is None and step.kind == "chat"):
        return
    undo = {"type": step.type.replace("Set", "Removed"), "directory": d}
    undone = reducer(step.kind, fresh(step.after), undo, step.now_ms)
    back = _dirs(undone)
    if before is None:
        if back not in (None, []):
            yield f"Set({short(d)}) then Remove on an absent session list gave {short(back)}, want [] or absent"
    elif back != before:
        # the exact value (`<absent>`, `null`), the model's side first: the `label=value` form root causes read
        yield f"Set({short(d)}) then Remove: {KEY}: want={short(before)} gave={short(at(undone, KEY))}"


@invariant(
    "INV-030.chat-absent",
    "Set/Remove inverse on an inherited (absent) chat subset",
    severity="known",
    source="ChatState.workingDirectories doc (absent = inherit the full session set, [] = no "
    "access); INVARIANTS.md INV-030; fixtures 247, 252",
    kinds={"chat"},
    probe=True,
    known_issue="REDUCERS.md §11 item 5 (Set on an absent subset narrows it; Remove leaves [])",
    actions={"chat/workingDirectorySet"},
)
def chat_absent_inverse(step: Step, reducer: Reducer) -> Iterator[str]:
    """For a chat whose subset is absent ("inherits the full session set"), Set(d) followed by
    Remove(d) returns to the inherited state; it must not end in `[]` ("no access")."""
    if _dirs(step.before) is not None:
        return
    d = step.action.get("directory")
    undo = {"type": "chat/workingDirectoryRemoved", "directory": d}
    back = reducer("chat", fresh(step.after), undo, step.now_ms)
    if back.get(KEY) is not None:
        yield (
            f"Set({short(d)}) then Remove on an inherited chat subset gave {short(back.get(KEY))}: "
            "the chat lost access instead of inheriting the session set again"
        )


@invariant(
    "INV-033",
    "Absent vs empty subset semantics",
    severity="violation",
    source="seed 001 ChatState.workingDirectories doc; fixtures 241, 247, 252; PR #337 review "
    "(INVARIANTS.md INV-033(b))",
    kinds=_KINDS,
    actions=SET | REMOVE,
    note="Part (a), encoding never collapses [] and absent, is INV-008 (wire); part (c) is about consumers.",
)
def absent_vs_empty(step: Step) -> Iterator[str]:
    """(b) Reducer semantics are exactly: Set on an absent list ⇒ `[d]`; Remove on an absent list
    ⇒ absent; Remove of the last element ⇒ `[]` (present, not absent)."""
    before = _dirs(step.before)
    if not _boundary(step, before):
        return
    d = step.action.get("directory")
    got = step.after.get(KEY)
    if before is None:
        if step.type in SET and got != [d]:
            yield f"{step.type}({short(d)}) on an absent list gave {short(got)}, want [{short(d)}]"
        if step.type in REMOVE and KEY in step.after and got is not None:
            yield f"{step.type}({short(d)}) on an absent list created {short(got)}, want absent"
    elif got != []:
        yield f"{step.type}({short(d)}) of the last element gave {short(got)}, want [] (present)"


INV_031 = catalogue_entry(
    "INV-031",
    "Chat subset ⊆ session set",
    severity="violation",
    scope="live",
    kinds={"session", "chat"},
    source='ChatState.workingDirectories doc ("Every entry MUST be present in the owning '
    "session's workingDirectories\"); specification/chat-channel.md 0.7.0; guide/state-model.md",
    statement="At every quiescent point, for every chat C of session S with C.workingDirectories "
    "present, every element is an element of S.workingDirectories (string equality).",
    note="Needs a live host (later issue). The reducer-only form, over independent session and "
    "chat streams, is INV-031.reducer (known).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)


@invariant(
    "INV-031.reducer",
    "Chat subset ⊆ session set, across reducer steps",
    severity="known",
    source='ChatState.workingDirectories doc ("Every entry MUST be present in the owning '
    "session's workingDirectories; servers MUST reject a chat/workingDirectorySet action that "
    'violates this constraint")',
    kinds={"session", "chat"},
    known_issue="REDUCERS.md §11 items 5–6 (reducers cannot see the other channel; no cascade)",
)
def subset_of_session(step: Step) -> Iterator[str]:
    """Every entry of a chat's `workingDirectories` MUST be present in the owning session's
    `workingDirectories`: no step makes a chat entry dangle (needs the step's `session` for a
    chat step, or `chats` for a session step)."""
    if step.kind == "chat" and step.session is not None:
        session = set(map(str, _dirs(step.session) or []))
        b = {str(x) for x in _dirs(step.before) or [] if str(x) not in session}
        dangling = [x for x in _dirs(step.after) or [] if str(x) not in session and str(x) not in b]
        if dangling:
            yield f"{step.type}: chat entries {short(dangling)} are not in the session set {short(sorted(session))}"
    elif step.kind == "session" and step.chats:
        before, after = _dirs(step.before) or [], _dirs(step.after) or []
        gone = [x for x in before if x not in after]
        for chat in step.chats:
            hit = [x for x in _dirs(chat) or [] if x in gone]
            if hit:
                yield f"{step.type}: chat {short(chat.get('resource'))} still names removed directories {short(hit)}"


INV_032 = catalogue_entry(
    "INV-032",
    "Primary stays in the effective set",
    severity="violation",
    scope="live",
    kinds={"session", "chat"},
    source='guide/state-model.md 0.7.0 ("How the immutable primary is enforced"); proposal '
    "c840a572 §9; 0.8.0 changelog Fixed; seed 001",
    statement="With immutablePrimary and without primaryReplacement, workingDirectories[0] never "
    "changes for the session's lifetime; with primaryReplacement it changes only via "
    "session/workingDirectoryReplaced targeting index 0, never by Remove.",
    note="Needs a live host and the agent's capabilities (later issue): reducers apply removal "
    "of index 0 verbatim, by design.",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)

# --- URI identity (INV-034) -------------------------------------------------------------------

_URI: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//([^/?#]*))?([^?#]*)(.*)$")
_PCT: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DRIVE: Final = re.compile(r"^/([A-Za-z]):")


def _pct(m: re.Match[str]) -> str:
    char = unquote(m.group(0))
    return char if char in _UNRESERVED else m.group(0).upper()


def _dot_segments(path: str) -> str:
    out: list[str] = []
    for seg in path.split("/"):
        if seg == ".":
            continue
        if seg == "..":
            if len(out) > 1:
                out.pop()
            continue
        out.append(seg)
    return "/".join(out)


def loose_uri_key(uri: str) -> str:
    """A deliberately loose URI key: the normalizations a host might apply (INV-034's classes).

    Scheme and authority case, percent-encoding case and unreserved escapes, dot segments,
    trailing slash, Unicode NFC and Windows drive-letter case. The protocol defines none of these:
    reducers must compare exact strings.
    """
    text = unicodedata.normalize("NFC", uri)
    m = _URI.match(text)
    if not m:
        return text.rstrip("/")
    scheme, _, authority, path, rest = m.groups()
    path = _dot_segments(_PCT.sub(_pct, path))
    path = _DRIVE.sub(lambda d: f"/{d.group(1).lower()}:", path).rstrip("/")
    head = scheme.lower() + ":" + (f"//{authority.lower()}" if authority is not None else "")
    return head + path + _PCT.sub(_pct, rest)


def _equivalent_other(uri: Any, existing: list[Any]) -> Any:
    """An element of `existing` that is a different string but loosely the same URI, or None."""
    if not isinstance(uri, str) or uri in existing:
        return None
    key = loose_uri_key(uri)
    for x in existing:
        if isinstance(x, str) and x != uri and loose_uri_key(x) == key:
            return x
    return None


def _chat_uris(state: dict[str, Any]) -> list[Any]:
    chats = state.get("chats")
    return (
        [c.get("resource") for c in chats if isinstance(c, dict)] if isinstance(chats, list) else []
    )


def _chat_uri(action_type: str, action: dict[str, Any]) -> Any:
    if action_type == "session/chatAdded":
        summary = action.get("summary")
        return summary.get("resource") if isinstance(summary, dict) else None
    return action.get("chat")


_URI_ACTIONS: Final = (
    SET
    | REMOVE
    | {
        REPLACE,
        "session/chatAdded",
        "session/chatRemoved",
        "session/chatUpdated",
    }
)


@invariant(
    "INV-034",
    "URI identity is exact string identity",
    severity="divergence",
    source="common/state.ts (URI is a plain string; no equivalence defined in 0.6.0–0.8.0); PR "
    '#337 review ("Every reducer currently uses raw string equality"); R§8.7, R§11 item 7',
    kinds=_KINDS,
    actions=_URI_ACTIONS,
    note="Severity divergence: the spec defines no URI equivalence, and the reference reducers "
    "compare exact strings; a target that normalizes differs where the spec is silent.",
)
def uri_exact_identity(step: Step) -> Iterator[str]:
    """Spellings that differ as strings but are "equivalent" under a common normalization
    (trailing slash, percent-encoding, scheme/authority case, dot segments, NFC/NFD, drive-letter
    case) are distinct: Set(v) next to u appends, Remove(v) does not remove u; the same holds for
    chat resources in `session/chat*` and for `defaultChat`."""
    t, a = step.type, step.action
    if t in SET | REMOVE or t == REPLACE:
        d = a.get("directory")
        before = _dirs(step.before) or []
        other = _equivalent_other(d, before)
        if other is None:
            return
        after = _dirs(step.after) or []
        if t in SET and (len(after) != len(before) + 1 or other not in after):
            yield f"{t}({short(d)}) was treated as the existing {short(other)}: {short(before)} → {short(after)}"
        elif t not in SET and after != before:
            yield f"{t}({short(d)}) changed the list although only {short(other)} is present: {short(before)} → {short(after)}"
        return
    uri = _chat_uri(t, a)
    before = _chat_uris(step.before)
    other = _equivalent_other(uri, before)
    if other is None:
        return
    after = _chat_uris(step.after)
    if t == "session/chatAdded":
        if len(after) != len(before) + 1:
            yield f"chatAdded({short(uri)}) replaced the existing {short(other)} instead of appending"
        return
    if not same(step.before.get("chats"), step.after.get("chats")):
        yield f"{t}({short(uri)}) changed the catalog entry {short(other)}"
    if t == "session/chatRemoved" and step.before.get("defaultChat") == other != step.after.get(
        "defaultChat"
    ):
        yield f"chatRemoved({short(uri)}) cleared defaultChat {short(other)}"


@invariant(
    "INV-035",
    "Replace is a compare-and-swap",
    severity="violation",
    source='0.8.0 changelog ("retains an earlier duplicate replacement so a later replacement '
    'cannot move a protected primary"); proposal c840a572 §9; R§8.5 examples',
    kinds={"session"},
    actions={REPLACE},
)
def replace_cas(step: Step) -> Iterator[str]:
    """`session/workingDirectoryReplaced(directory, replacement)`: no-op if the list is absent or
    `directory` is not an element; otherwise the result is duplicate-free, contains `replacement`,
    does not contain `directory` unless `directory == replacement`, has length |L| or |L|−1,
    keeps every other element's relative order, and if `replacement` occurred before
    `directory` it keeps that earlier position."""
    before, after = _dirs(step.before), _dirs(step.after)
    d, r = step.action.get("directory"), step.action.get("replacement")
    if before is None or d not in before:
        if not same(step.before.get(KEY), step.after.get(KEY)):
            yield f"Replace({short(d)} → {short(r)}) is a CAS failure but changed {KEY}: {short(before)} → {short(after)}"
        return
    if after is None:
        yield f"Replace({short(d)} → {short(r)}) removed {KEY}"
        return
    where = f"Replace({short(d)} → {short(r)}): {short(before)} → {short(after)}"
    if _distinct(before) and not _distinct(after):
        yield f"{where} has duplicates"
    if r not in after:
        yield f"{where} lacks the replacement"
    if d != r and d in after:
        yield f"{where} still contains the replaced directory"
    if len(after) not in (len(before), len(before) - 1):
        yield f"{where} has length {len(after)}, want {len(before)} or {len(before) - 1}"
    others_before = [x for x in before if x not in (d, r)]
    others_after = [x for x in after if x not in (d, r)]
    if others_before != others_after:
        yield f"{where} moved or lost other entries"
    j = before.index(r) if r in before else None
    if j is not None and j < before.index(d) and (j >= len(after) or after[j] != r):
        yield f"{where} moved the earlier replacement from index {j}"
