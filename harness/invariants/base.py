"""The vocabulary of the catalogue: `Step`, `Violation`, `Invariant`, and the `invariant` decorator.

A *step* is one reducer step observed on a target: the state before, the action, the state the
target produced (and, in a differential run, what the reference model produced). A *check* is a
short function that looks at one step and yields a human-readable message per problem it sees;
the registry turns messages into `Violation`s carrying the invariant's id and severity.

Two kinds of check:

* step checks `(step) -> Iterable[str]` only read the step (cheap, run after every step);
* probe checks `(step, reducer) -> Iterable[str]` call the target's reducer again (purity,
  determinism, clock confinement, idempotence, unknown/foreign no-ops, inverse laws).

Catalogue entries whose property needs a live host, the wire, or a spec directory are registered
with `check=None` and a `note` saying what would check them; the registry skips them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol

from harness.reference.profile import DEFAULT_PROFILE, Profile
from harness.spec.versions import KINDS

Severity = Literal["violation", "warning", "divergence", "known"]
Scope = Literal["reducer", "wire", "live"]

SEVERITIES: tuple[Severity, ...] = ("violation", "warning", "divergence", "known")
SCOPES: tuple[Scope, ...] = ("reducer", "wire", "live")

#: Every state kind, for invariants that apply to all of them.
ALL_KINDS = frozenset(KINDS)

JSONDict = dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One reducer step observed on a target.

    `session` and `chats` are optional cross-channel context for the few invariants that relate
    two channels (INV-031): for a chat step, the owning session's state at that point; for a
    session step, the states of its chats. An engine that does not track them leaves them empty
    and those checks stay silent.
    """

    kind: str  # root|session|chat|terminal|changeset|annotations|resourceWatch
    before: JSONDict
    action: JSONDict
    after: JSONDict
    now_ms: int
    profile: Profile = DEFAULT_PROFILE
    reference_after: JSONDict | None = None  # None when the target IS the reference model
    session: JSONDict | None = None
    chats: tuple[JSONDict, ...] = ()

    @cached_property
    def type(self) -> str:
        """The action's `type` ("" when it has none); computed once per step."""
        t = self.action.get("type") if isinstance(self.action, dict) else None
        return t if isinstance(t, str) else ""


@dataclass(frozen=True)
class Violation:
    invariant: str  # "INV-016"
    severity: Severity
    message: str  # human readable, names the offending path/values
    #: The root-cause key when the producer knows it (harness/causes/), else None: the
    #: classifier signs the violation by what the target did.
    cause: tuple[str, ...] | None = field(default=None, compare=False)


class Reducer(Protocol):
    """What probe checks may call: the target's reducer."""

    def __call__(self, kind: str, state: JSONDict, action: JSONDict, now_ms: int) -> JSONDict: ...


StepCheck = Callable[[Step], Iterable[str]]
ProbeCheck = Callable[[Step, Reducer], Iterable[str]]


@dataclass(frozen=True)
class Invariant:
    id: str  # "INV-016"; a variant of a catalogue entry gets a suffix: "INV-012.strong"
    title: str
    severity: Severity
    scope: Scope
    source: str  # spec doc/section + REDUCERS/INVARIANTS reference
    kinds: frozenset[str]  # state kinds it applies to
    statement: str  # the normative sentence, quoted or paraphrased from the spec
    check: Callable[..., Iterable[str]] | None  # None: catalogue entry, not checkable per step
    probe: bool = False  # needs to call the reducer again
    known_issue: str | None = None  # e.g. "REDUCERS.md §11 item 9"
    #: Action types the check looks at (None: every step of `kinds`). Lets the registry skip a
    #: check without calling it; the check may still filter further.
    actions: frozenset[str] | None = None
    #: How the entry is (or will be) checked when `check` is None, or a caveat when it is not.
    note: str | None = None
    #: For an entry without a per-step check: what does check it today, if anything.
    elsewhere: str | None = None

    @property
    def catalogue_id(self) -> str:
        """The INVARIANTS.md id this entry belongs to (`INV-012` for `INV-012.strong`)."""
        return self.id.split(".", 1)[0]

    @property
    def checkable(self) -> bool:
        return self.check is not None

    @property
    def checked_by(self) -> str:
        """A short label for tables: how this entry is checked today."""
        if self.check is None:
            return "elsewhere" if self.elsewhere else "not yet checkable"
        return "probe" if self.probe else "step"


def invariant(
    id: str,
    title: str,
    *,
    severity: Severity,
    source: str,
    kinds: Iterable[str],
    scope: Scope = "reducer",
    probe: bool = False,
    known_issue: str | None = None,
    actions: Iterable[str] | None = None,
    note: str | None = None,
) -> Callable[[Callable[..., Iterable[str]]], Invariant]:
    """Turn a short check function into a catalogue entry.

    The function's docstring is the statement: quote the normative sentence and name its source.
    The decorated name becomes the `Invariant`; the registry collects every `Invariant` found in
    the catalogue modules.
    """

    def wrap(fn: Callable[..., Iterable[str]]) -> Invariant:
        doc = (fn.__doc__ or "").strip()
        if not doc:
            raise TypeError(f"{id}: an invariant's docstring must quote its normative sentence")
        if severity == "known" and not known_issue:
            raise TypeError(f"{id}: a `known` invariant must name its known_issue")
        return Invariant(
            id=id,
            title=title,
            severity=severity,
            scope=scope,
            source=source,
            kinds=frozenset(kinds),
            statement=" ".join(doc.split()),
            check=fn,
            probe=probe,
            known_issue=known_issue,
            actions=frozenset(actions) if actions is not None else None,
            note=note,
        )

    return wrap


def catalogue_entry(
    id: str,
    title: str,
    *,
    severity: Severity,
    scope: Scope,
    source: str,
    statement: str,
    note: str,
    kinds: Iterable[str] = ALL_KINDS,
    known_issue: str | None = None,
    elsewhere: str | None = None,
) -> Invariant:
    """An entry listed in the catalogue that no per-step check covers (yet): `note` says why."""
    return Invariant(
        id=id,
        title=title,
        severity=severity,
        scope=scope,
        source=source,
        kinds=frozenset(kinds),
        statement=" ".join(statement.split()),
        check=None,
        known_issue=known_issue,
        note=note,
        elsewhere=elsewhere,
    )
