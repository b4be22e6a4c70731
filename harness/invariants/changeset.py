"""G. Changeset state (INVARIANTS.md INV-050; REDUCERS.md §6.2, §11 item 10)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._json import short
from .base import Step, invariant


def _error_mismatch(obj: Any) -> str | None:
    """Why `obj` breaks "error present iff status is error" (None when it holds)."""
    if not isinstance(obj, dict):
        return None
    has_error = obj.get("error") is not None
    if obj.get("status") == "error" and not has_error:
        return "status is error but error is absent"
    if obj.get("status") != "error" and has_error:
        return (
            f"error {short(obj.get('error'))} is present but status is {short(obj.get('status'))}"
        )
    return None


def _operations(state: dict[str, Any]) -> list[Any]:
    ops = state.get("operations")
    return ops if isinstance(ops, list) else []


@invariant(
    "INV-050",
    "Changeset error iff status error",
    severity="violation",
    source='ChangesetState.error doc ("Present iff status === ChangesetStatus.Error"); '
    'ChangesetOperation.error doc ("Present iff status === ChangesetOperationStatus.Error; '
    'otherwise omitted"); fixtures 136, 137, 155–157',
    kinds={"changeset"},
)
def error_iff_status(step: Step) -> Iterator[str]:
    """`ChangesetState.error` is present iff `status == "error"`, and each operation's `error`
    is present iff its status is `"error"` — after every changeset action except
    `changeset/contentChanged` (INV-050.contentChanged); operations a producer sent verbatim in
    `operationsChanged`, and status actions whose own payload breaks the rule, are the
    producer's fault and not reported."""
    t = step.type
    if t == "changeset/contentChanged":
        return
    # A status action whose own payload breaks the rule ("the error payload is set together with
    # status whenever it transitions to Error") is the producer's fault, not the reducer's.
    sent_ok = _error_mismatch(step.action) is None
    problem = _error_mismatch(step.after)
    if (
        problem
        and sent_ok
        and (t == "changeset/statusChanged" or _error_mismatch(step.before) is None)
    ):
        yield f"{t}: {problem}"
    if t == "changeset/operationsChanged":
        return
    b_ops, a_ops = _operations(step.before), _operations(step.after)
    if a_ops is b_ops:
        return
    target = step.action.get("operationId") if t == "changeset/operationStatusChanged" else None
    for i, op in enumerate(a_ops):
        problem = _error_mismatch(op)
        if not problem:
            continue
        old = b_ops[i] if i < len(b_ops) else None
        targeted = isinstance(op, dict) and target is not None and op.get("id") == target
        if (targeted and sent_ok) or (
            not targeted and old is not None and _error_mismatch(old) is None
        ):
            yield f"{t}: operations[{i}] ({short(op.get('id'))}): {problem}"


@invariant(
    "INV-050.contentChanged",
    "Changeset error iff status error, after contentChanged",
    severity="known",
    source='ChangesetState.error doc ("Present iff status === ChangesetStatus.Error")',
    kinds={"changeset"},
    known_issue="REDUCERS.md §11 item 10 (contentChanged sets or deletes error without touching status)",
    actions={"changeset/contentChanged"},
)
def error_iff_status_content(step: Step) -> Iterator[str]:
    """`ChangesetState.error` is present iff `status == "error"`, also after
    `changeset/contentChanged`."""
    problem = _error_mismatch(step.after)
    if problem:
        yield f"changeset/contentChanged: {problem}"
