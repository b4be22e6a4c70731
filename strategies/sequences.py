"""State-aware action sequences per state kind, and multiroot scenarios across channels.

`action_sequences(kind)` draws a valid initial state and then, step by step, an action that
refers to the *current* state (each step is folded with the reference model so the next action
sees its effect). The result has the reducer-fixture shape (`kind`, `initial`, `actions`), so a
finding can be written as a fixture.

`multiroot_scenarios()` targets REDUCERS.md §8 and INV-029..035 across a session and its chats
(separate channels with separate reducers):

* `directories` — sessions with 0..N directories, set/remove/re-set churn;
* `chat-subsets` — chats whose subset is absent (inherit), empty (no access) or partial, with
  chat set/remove (fixtures 247/252 behaviour: set on absent narrows, remove on absent no-op);
* `immutable-primary` — the agent advertises `immutablePrimary`; a step removes index 0
  (a host must decline; the reducer applies it verbatim, INV-032);
* `dangling-subset` — the session removes a directory that a chat subset still names
  (INV-031: nothing cascades);
* `equivalent-spellings` — set one spelling, set/remove an equivalent-but-different one
  (INV-034);
* `replace-chains` — 0.8.0 `session/workingDirectoryReplaced` chains A→B→C→A, targets at
  index 0, replacements that already occur earlier or later (INV-035).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from harness.reference import DEFAULT_PROFILE, Profile, reduce

from . import states as sts
from . import uris
from ._common import Json
from .actions import ActionContext, actions_for

NOW_MS: Final = 9999  # the fixtures' clock; sequences advance it by one second per step


@dataclass(frozen=True)
class ActionSequence:
    """An initial state of `kind` and the actions applied to it, in order."""

    kind: str
    initial: Json
    actions: tuple[Json, ...]

    def as_fixture(self, description: str = "generated") -> Json:
        return {
            "description": description,
            "reducer": self.kind,
            "initial": self.initial,
            "actions": list(self.actions),
        }


def fold(
    kind: str,
    state: Json,
    actions: Sequence[Json],
    profile: Profile = DEFAULT_PROFILE,
    now_ms: int = NOW_MS,
) -> Json:
    """Apply `actions` in order with the reference model (one second apart)."""
    for i, a in enumerate(actions):
        state = reduce(kind, state, a, now_ms=now_ms + 1000 * i, profile=profile)
    return state


@st.composite
def action_sequences(
    draw: st.DrawFn,
    kind: str,
    *,
    min_size: int = 1,
    max_size: int = 12,
    profile: Profile = DEFAULT_PROFILE,
    initial: st.SearchStrategy[Json] | None = None,
    context: ActionContext | None = None,
) -> ActionSequence:
    """A state-aware sequence for `kind`: every action is drawn against the state reached so
    far (ids exist, tool calls are in the status the action needs, …)."""
    state0 = draw(initial if initial is not None else sts.states(kind))
    n = draw(st.integers(min_size, max_size))
    ctx = context if context is not None else ActionContext(profile=profile)
    state, out = state0, []
    for i in range(n):
        a = draw(actions_for(kind, state, profile, context=ctx))
        out.append(a)
        state = reduce(kind, state, a, now_ms=NOW_MS + 1000 * i, profile=profile)
    return ActionSequence(kind, state0, tuple(out))


# --- multiroot -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One action dispatched on one channel (`kind` names the reducer of that channel)."""

    channel: str
    kind: str
    action: Json


@dataclass(frozen=True)
class MultirootScenario:
    """A session, some of its chats, the agent's multiroot capability, and steps across them."""

    family: str
    capability: Json  # MultipleWorkingDirectoriesCapability (0.8.0 adds primaryReplacement)
    session_uri: str
    session: Json
    chats: dict[str, Json]
    steps: tuple[Step, ...]
    version: str = "0.7.0"
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def profile(self) -> Profile:
        return Profile.for_version(self.version)

    def run(self, now_ms: int = NOW_MS) -> tuple[Json, dict[str, Json]]:
        """Fold every step with the reference model; return the final session and chats."""
        session, chats = self.session, dict(self.chats)
        for i, step in enumerate(self.steps):
            t = now_ms + 1000 * i
            if step.kind == "session":
                session = reduce("session", session, step.action, now_ms=t, profile=self.profile)
            else:
                chats[step.channel] = reduce(
                    "chat", chats[step.channel], step.action, now_ms=t, profile=self.profile
                )
        return session, chats


def _summary(chat: Json) -> Json:
    keys = (
        "resource",
        "title",
        "status",
        "modifiedAt",
        "activity",
        "origin",
        "interactivity",
        "workingDirectories",
    )
    return {k: chat[k] for k in keys if k in chat}


@st.composite
def _session_with_chats(
    draw: st.DrawFn,
    *,
    n_dirs: st.SearchStrategy[int] | None = None,
    n_chats: st.SearchStrategy[int] | None = None,
) -> tuple[str, Json, dict[str, Json]]:
    count = draw(n_dirs if n_dirs is not None else st.integers(0, 4))
    dirs = draw(st.lists(uris.directories(), min_size=count, max_size=count, unique=True))
    chat_count = draw(n_chats if n_chats is not None else st.integers(0, 3))
    chat_uris = draw(
        st.lists(uris.chat_uris(), min_size=chat_count, max_size=chat_count, unique=True)
    )
    chats = {
        u: draw(sts.chat_states(session_directories=tuple(dirs), resource=u)) for u in chat_uris
    }
    session = draw(sts.session_states(directories=tuple(dirs)))
    session = {**session, "chats": [_summary(c) for c in chats.values()]}
    if not dirs and draw(st.booleans()):
        del session["workingDirectories"]  # 0 directories: absent as well as []
    session.pop("defaultChat", None)
    if chat_uris:
        session["defaultChat"] = chat_uris[0]
    return draw(uris.session_uris()), session, chats


@dataclass(frozen=True)
class ChannelGroup:
    """A session and some of its chats, as one multi-channel starting point: the session's
    `chats` catalog mirrors the chat states; each chat's subset is absent, empty or partial."""

    session_uri: str
    session: Json
    chats: tuple[Json, ...]


@st.composite
def channel_groups(draw: st.DrawFn, max_chats: int = 3) -> ChannelGroup:
    """A session with 1–3 directories and 1..`max_chats` chats (multi-channel runs: the
    cross-channel invariants, e.g. INV-031, need the session and its chats in one sequence)."""
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(1, 4), n_chats=st.integers(1, max_chats))
    )
    dirs = list(session.get("workingDirectories") or [])
    out = []
    for i, c in enumerate(chats.values()):
        flavour = draw(st.sampled_from(("absent", "empty", "partial"))) if i else "partial"
        c = {k: v for k, v in c.items() if k != "workingDirectories"}
        if flavour == "empty":
            c["workingDirectories"] = []
        elif flavour == "partial" and dirs:
            c["workingDirectories"] = dirs[: draw(st.integers(1, len(dirs)))]
        out.append(c)
    session = {**session, "chats": [_summary(c) for c in out]}
    return ChannelGroup(suri, session, tuple(out))


def _set(kind: str, d: str) -> Json:
    return {"type": f"{kind}/workingDirectorySet", "directory": d}


def _remove(kind: str, d: str) -> Json:
    return {"type": f"{kind}/workingDirectoryRemoved", "directory": d}


@st.composite
def directory_churn(draw: st.DrawFn) -> MultirootScenario:
    """Sessions with 0..N directories; set/remove/re-set steps drawn against the current set."""
    suri, session, chats = draw(_session_with_chats(n_dirs=st.integers(0, 5), n_chats=st.just(0)))
    steps = []
    state = session
    for i in range(draw(st.integers(1, 8))):
        a = draw(
            actions_for(
                "session",
                state,
                types=["session/workingDirectorySet", "session/workingDirectoryRemoved"],
            )
        )
        steps.append(Step(suri, "session", a))
        state = reduce("session", state, a, now_ms=NOW_MS + i)
    return MultirootScenario("directories", {}, suri, session, chats, tuple(steps))


@st.composite
def chat_subsets(draw: st.DrawFn) -> MultirootScenario:
    """Chats with absent / empty / partial subsets of a session set; chat set/remove steps."""
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(1, 4), n_chats=st.integers(1, 3))
    )
    dirs = tuple(session["workingDirectories"])
    # Make sure each flavour appears: first chat absent, second empty, third partial (if any).
    flavours: list[str] = []
    for i, (u, c) in enumerate(list(chats.items())):
        c = {k: v for k, v in c.items() if k != "workingDirectories"}
        if i == 1:
            c["workingDirectories"] = []
        elif i == 2:
            c["workingDirectories"] = list(dirs[: max(1, len(dirs) - 1)])
        flavours.append(
            "absent"
            if "workingDirectories" not in c
            else ("empty" if not c["workingDirectories"] else "partial")
        )
        chats[u] = c
    session = {**session, "chats": [_summary(c) for c in chats.values()]}
    ctx = ActionContext(session_directories=dirs)
    steps = []
    current = dict(chats)
    for i in range(draw(st.integers(1, 6))):
        u = draw(st.sampled_from(sorted(current)))
        a = draw(
            actions_for(
                "chat",
                current[u],
                types=["chat/workingDirectorySet", "chat/workingDirectoryRemoved"],
                context=ctx,
            )
        )
        steps.append(Step(u, "chat", a))
        current[u] = reduce("chat", current[u], a, now_ms=NOW_MS + i)
    return MultirootScenario(
        "chat-subsets", {}, suri, session, chats, tuple(steps), notes={"flavours": flavours}
    )


@st.composite
def immutable_primary_removal(draw: st.DrawFn) -> MultirootScenario:
    """`immutablePrimary` is advertised and a step removes `workingDirectories[0]` (INV-032)."""
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(1, 4), n_chats=st.integers(0, 2))
    )
    primary = session["workingDirectories"][0]
    before = [
        Step(suri, "session", _set("session", d))
        for d in draw(st.lists(uris.directories(), max_size=2))
    ]
    steps = (*before, Step(suri, "session", _remove("session", primary)))
    return MultirootScenario(
        "immutable-primary",
        {"immutablePrimary": True},
        suri,
        session,
        chats,
        steps,
        notes={"primary": primary},
    )


@st.composite
def dangling_subset_removal(draw: st.DrawFn) -> MultirootScenario:
    """The session removes a directory that some chat's subset still names (INV-031)."""
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(1, 4), n_chats=st.integers(1, 3))
    )
    dirs = session["workingDirectories"]
    victim = draw(st.sampled_from(dirs))
    u = draw(st.sampled_from(sorted(chats)))
    chat = chats[u]
    subset = list(chat.get("workingDirectories", []))
    if victim not in subset:
        subset = [*subset, victim]
    chats = {**chats, u: {**chat, "workingDirectories": subset}}
    session = {**session, "chats": [_summary(c) for c in chats.values()]}
    return MultirootScenario(
        "dangling-subset",
        {},
        suri,
        session,
        chats,
        (Step(suri, "session", _remove("session", victim)),),
        notes={"directory": victim, "chat": u},
    )


@st.composite
def equivalent_spellings(draw: st.DrawFn) -> MultirootScenario:
    """Set one spelling, then set and/or remove an equivalent-but-different one (INV-034).
    Runs on the session set or on a chat subset."""
    v = draw(uris.equivalent_directories())
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(0, 3), n_chats=st.integers(0, 1))
    )
    on_chat = bool(chats) and draw(st.booleans())
    channel, kind = (next(iter(chats)), "chat") if on_chat else (suri, "session")
    tail = draw(
        st.sampled_from(
            (
                (_set(kind, v.variant),),
                (_remove(kind, v.variant),),
                (_set(kind, v.variant), _remove(kind, v.variant)),
                (_remove(kind, v.variant), _remove(kind, v.base)),
            )
        )
    )
    steps = tuple(Step(channel, kind, a) for a in (_set(kind, v.base), *tail))
    return MultirootScenario(
        "equivalent-spellings", {}, suri, session, chats, steps, notes={"variant": v}
    )


@st.composite
def replace_chains(draw: st.DrawFn) -> MultirootScenario:
    """0.8.0: chains of `session/workingDirectoryReplaced` — A→B, B→C, C→A, targets at index 0
    (with `immutablePrimary` and `primaryReplacement` in any combination), replacements that
    already occur before or after the target, and CAS failures (target absent)."""
    suri, session, chats = draw(
        _session_with_chats(n_dirs=st.integers(2, 5), n_chats=st.integers(0, 1))
    )
    state = session
    steps = []
    for i in range(draw(st.integers(2, 6))):
        present = list(state.get("workingDirectories") or [])
        directory = draw(
            st.one_of(st.sampled_from(present), uris.directories())
            if present
            else uris.directories()
        )
        replacement = draw(
            st.one_of(st.sampled_from(present), uris.directories(), uris.directory_spellings())
            if present
            else uris.directories()
        )
        a = {
            "type": "session/workingDirectoryReplaced",
            "directory": directory,
            "replacement": replacement,
        }
        steps.append(Step(suri, "session", a))
        state = reduce("session", state, a, now_ms=NOW_MS + i, profile=Profile.for_version("0.8.0"))
    capability = draw(
        st.fixed_dictionaries(
            {}, optional={"immutablePrimary": st.booleans(), "primaryReplacement": st.booleans()}
        )
    )
    return MultirootScenario(
        "replace-chains", capability, suri, session, chats, tuple(steps), version="0.8.0"
    )


FAMILY_TARGETS: Final = MappingProxyType(
    {
        "directories": "sessions with 0..N directories; set/remove/re-set churn (INV-029/030)",
        "chat-subsets": "chats with absent / empty / partial subsets; chat set/remove (INV-033, fixtures 247/252)",
        "immutable-primary": "remove index 0 under immutablePrimary (INV-032: host must decline)",
        "dangling-subset": "session removes a directory a chat still names (INV-031)",
        "equivalent-spellings": "set/remove with equivalent-but-different spellings (INV-034)",
        "replace-chains": "0.8.0 workingDirectoryReplaced chains, index-0 targets, dedup (INV-035)",
    }
)

MULTIROOT_FAMILIES: Final = MappingProxyType(
    {
        "directories": directory_churn,
        "chat-subsets": chat_subsets,
        "immutable-primary": immutable_primary_removal,
        "dangling-subset": dangling_subset_removal,
        "equivalent-spellings": equivalent_spellings,
        "replace-chains": replace_chains,
    }
)


def multiroot_scenarios(
    families: Sequence[str] | None = None,
) -> st.SearchStrategy[MultirootScenario]:
    """Any multiroot scenario (or only those of `families`; see `MULTIROOT_FAMILIES`)."""
    names = list(families) if families is not None else list(MULTIROOT_FAMILIES)
    unknown = [n for n in names if n not in MULTIROOT_FAMILIES]
    if unknown:
        raise ValueError(
            f"unknown multiroot families {unknown} (want {', '.join(MULTIROOT_FAMILIES)})"
        )
    return st.one_of([MULTIROOT_FAMILIES[n]() for n in names])
