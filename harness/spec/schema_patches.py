"""The INV-007 corrections of the published schemas (REDUCERS.md §11 item 11).

The published schemas reject legitimate reducer output: `SessionStatus` is listed as single bits
although the reducers combine them (any integer in [0, 2^32)), and some keys are `required`
that the reducers omit (`usage` on `Turn`/`ActiveTurn`, `origin` on `ActionEnvelope`, and
`activity`/`_meta`/`changesets`/`operations` on their actions). One table, used where the
schemas validate generated values (`strategies.schema`) and where produced states are judged
(`harness.invariants.published_schema`).
"""

from __future__ import annotations

from typing import Any, Final

UINT32_MAX: Final = 2**32 - 1

#: (definition, required key to drop).
DROP_REQUIRED: Final = (
    ("Turn", "usage"),
    ("ActiveTurn", "usage"),
    ("ActionEnvelope", "origin"),
    ("SessionActivityChangedAction", "activity"),
    ("ChatActivityChangedAction", "activity"),
    ("SessionMetaChangedAction", "_meta"),
    ("SessionChangesetsChangedAction", "changesets"),
    ("ChangesetOperationsChangedAction", "operations"),
)

#: What each correction says, in the order `apply_inv007_patches` reports them.
INV007_PATCHES: Final = (
    "SessionStatus: any integer in [0, 2^32)",
    *(f"{d}: `{k}` not required" for d, k in DROP_REQUIRED),
)


def apply_inv007_patches(defs: dict[str, Any]) -> list[str]:
    """Patch merged `$defs` in place as INV-007 says; return the patches that changed something."""
    applied = []
    status = {"type": "integer", "minimum": 0, "maximum": UINT32_MAX}
    if "SessionStatus" in defs and defs["SessionStatus"] != status:
        defs["SessionStatus"] = status
        applied.append(INV007_PATCHES[0])
    for (name, key), text in zip(DROP_REQUIRED, INV007_PATCHES[1:], strict=True):
        body = defs.get(name)
        if isinstance(body, dict) and key in body.get("required", []):
            body["required"] = [k for k in body["required"] if k != key]
            applied.append(text)
    return applied
