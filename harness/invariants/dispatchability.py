"""INV-053: which action types a client may dispatch — a host property plus a self-check of the
model's table (`harness.spec.versions`) against the counts REDUCERS.md §2.1, §2.4 and §2.4.1 give.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Final

from harness.spec.versions import (
    ACTION_INTRODUCED_IN,
    CLIENT_DISPATCHABLE,
    KIND_PREFIX,
    Version,
    parse_version,
)

from .base import Violation, catalogue_entry

INV_053 = catalogue_entry(
    "INV-053",
    "Only client-dispatchable types are accepted from clients",
    severity="warning",
    scope="live",
    source="types/action-origin.generated.ts (IS_CLIENT_DISPATCHABLE); isClientDispatchable doc "
    '("Servers SHOULD call this … and reject"); R§2.4, R§2.4.1',
    statement="The client-dispatchable set is exactly the 34 types of R§2.4 for 0.6.0 (+4 "
    "working-directory actions in 0.7.0, +1 replace in 0.8.0); a host accepts no other type "
    "from clients.",
    note="Host part needs a live host (later issue). The model part is "
    "`dispatchability.model_self_check()`, run by the tests and by `ahp-fuzz invariants --self-check`.",
    elsewhere="model part: ahp-fuzz invariants --self-check",
)

#: version -> (number of action types, number of client-dispatchable ones) (R§2.1, §2.4, §2.4.1).
EXPECTED_COUNTS: Final = {"0.6.0": (81, 34), "0.7.0": (85, 38), "0.8.0": (86, 39)}
#: 0.6.0 family -> (types, client-dispatchable) (R§2.1 counts, R§2.4 table).
EXPECTED_FAMILIES_060: Final = {
    "root": (4, 1),
    "session": (25, 9),
    "chat": (27, 13),
    "terminal": (11, 5),
    "changeset": (8, 1),
    "annotations": (5, 5),
    "resourceWatch": (1, 0),
}
#: 0.7.0 family -> (types, client-dispatchable) where it changed (R§2.4.1).
EXPECTED_FAMILIES_070: Final = {"session": (27, 11), "chat": (29, 15)}
#: Server-only although a spec page lists it among client actions (R§11 item 3).
SERVER_ONLY: Final = ("session/defaultChatChanged", "chat/toolCallReady", "chat/inputRequested")


def _counts(
    introduced: Mapping[str, Version], dispatchable: Set[str], version: str, kind: str | None = None
) -> tuple[int, int]:
    v = parse_version(version)
    prefix = KIND_PREFIX[kind] if kind is not None else ""
    types = [t for t, i in introduced.items() if i <= v and t.startswith(prefix)]
    return len(types), sum(t in dispatchable for t in types)


def model_self_check(
    introduced: Mapping[str, Version] = ACTION_INTRODUCED_IN,
    dispatchable: Set[str] = CLIENT_DISPATCHABLE,
) -> list[Violation]:
    """Compare a dispatchability table (the model's by default) with the spec's counts.

    Returns one `Violation` per disagreement; empty when the table matches.
    """
    problems: list[str] = []
    for version, want in EXPECTED_COUNTS.items():
        got = _counts(introduced, dispatchable, version)
        if got != want:
            problems.append(f"{version}: (types, client-dispatchable) is {got}, want {want}")
    for families, version in ((EXPECTED_FAMILIES_060, "0.6.0"), (EXPECTED_FAMILIES_070, "0.7.0")):
        for kind, want in families.items():
            got = _counts(introduced, dispatchable, version, kind)
            if got != want:
                problems.append(
                    f"{version} {kind}: (types, client-dispatchable) is {got}, want {want}"
                )
    unknown = sorted(set(dispatchable) - set(introduced))
    if unknown:
        problems.append(f"client-dispatchable types that no version defines: {unknown}")
    stray = sorted(t for t in introduced if not any(t.startswith(p) for p in KIND_PREFIX.values()))
    if stray:
        problems.append(f"action types of no state kind: {stray}")
    for t in SERVER_ONLY:
        if t in dispatchable:
            problems.append(
                f"{t} is server-only in IS_CLIENT_DISPATCHABLE but the model lets clients dispatch it"
            )
    return [Violation("INV-053", "violation", p) for p in problems]
