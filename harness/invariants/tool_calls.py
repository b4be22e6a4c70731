"""C. The tool-call state machine (INVARIANTS.md INV-017, 018, 019, 051; REDUCERS.md §5.4, §7b.2)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from . import _chat
from ._chat import IDENTITY_FIELDS, RESULT_KEYS, TERMINAL_TOOL_STATUSES
from ._json import as_list, at, describe_diffs, first_diffs, fmt_path, same, short
from .base import Step, invariant

#: Allowed status changes (guide/state-model.md §Tool Call Lifecycle; R§5.4 digraph). The
#: end-of-turn force-cancel (any non-terminal → cancelled) is allowed separately.
EDGES: Final = {
    "streaming": frozenset({"streaming", "pending-confirmation", "running"}),
    "pending-confirmation": frozenset(
        {"pending-confirmation", "running", "cancelled", "completed", "pending-result-confirmation"}
    ),
    "running": frozenset(
        {
            "running",
            "pending-confirmation",
            "auth-required",
            "completed",
            "pending-result-confirmation",
        }
    ),
    "auth-required": frozenset({"running", "completed"}),
    "pending-result-confirmation": frozenset({"completed", "cancelled"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
}
#: Statuses into which a confirmed call's `selectedOption` is carried (INV-019).
CARRIES_SELECTION: Final = frozenset(
    {"running", "auth-required", "pending-result-confirmation", "completed", "cancelled"}
)


def _result_overrides(step: Step) -> frozenset[str]:
    """Keys a `chat/toolCallComplete` result copies over tool-call fields (the INV-051 case)."""
    if step.type != "chat/toolCallComplete":
        return frozenset()
    result = step.action.get("result")
    if not isinstance(result, dict):
        return frozenset()
    return frozenset(k for k in result if k not in RESULT_KEYS)


def _targets(step: Step, btc: dict[str, Any]) -> bool:
    return btc.get("toolCallId") == step.action.get("toolCallId")


def _is_client(contributor: Any) -> bool:
    return isinstance(contributor, dict) and contributor.get("kind") == "client"


def _ownership_problem(before: Any, after: Any) -> str | None:
    """R§7b.2: client ownership is fixed at toolCallStart; an MCP/absent owner never becomes a client."""
    if _is_client(before):
        if not (_is_client(after) and after.get("clientId") == before.get("clientId")):
            return (
                f"contributor moved from client {short(at(before, 'clientId'))} to {short(after)}"
            )
    elif _is_client(after):
        return f"contributor became a client ({short(after)}) after toolCallStart"
    return None


@invariant(
    "INV-017",
    "Tool-call transitions follow the state machine",
    severity="violation",
    source="guide/state-model.md §Tool Call Lifecycle (state diagram); R§5.4 digraph, R§7b.2; "
    "fixtures 019–029, 095–098, 243–255, 257",
    kinds={"chat"},
)
def tool_call_transitions(step: Step) -> Iterator[str]:
    """Every change of a tool call's status is an edge of the lifecycle digraph (end-of-turn
    force-cancel aside); completed and cancelled are absorbing; toolCallId, toolName and
    displayName never change after toolCallStart, nor do intention and contributor except
    through the 0.7.0 `chat/toolCallReady` refinement (client ownership fixed at start); a
    started tool call begins in `streaming`."""
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None:
        return
    b_parts, a_parts, ended = paired
    if b_parts is a_parts:
        return
    overrides = _result_overrides(step)
    refine = step.type == "chat/toolCallReady" and step.profile.at_least("0.7.0")
    for i, btc, atc in _chat.paired_tool_calls(b_parts, a_parts):
        where = f"responseParts[{i}] ({short(at(btc, 'toolCallId'))})"
        if atc is None:
            yield f"{step.type}: the tool call at {where} disappeared"
            continue
        if atc is btc:
            continue
        skip = overrides if _targets(step, btc) else frozenset()
        for f in IDENTITY_FIELDS:
            if f in skip or same(btc.get(f), atc.get(f)):
                continue
            if refine and _targets(step, btc) and f == "intention":
                continue
            if refine and _targets(step, btc) and f == "contributor":
                problem = _ownership_problem(btc.get(f), atc.get(f))
                if problem:
                    yield f"{step.type}: {where}: {problem}"
                continue
            yield f"{step.type}: {where}: identity field {f} changed {short(at(btc, f))} → {short(at(atc, f))}"
        if "status" in skip:
            continue
        b, a = btc.get("status"), atc.get("status")
        if b in TERMINAL_TOOL_STATUSES:
            if not same(btc, atc):
                # name what changed: a key dropped or added (an encoder, a decoder) reads
                # differently from a status or result rewritten after the end
                what = describe_diffs(btc, atc, left="before", right="after", limit=2)
                yield (f"{step.type}: {where}: a {b} tool call changed ({what}); completed and "
                       "cancelled are absorbing")
        elif b in EDGES and b != a and a not in EDGES[b] and not (ended and a == "cancelled"):
            yield f"{step.type}: {where}: status {b} → {short(at(atc, 'status'))} is not an edge of the lifecycle"
    if step.type == "chat/toolCallStart" and not ended:
        for part in a_parts[len(b_parts) :]:
            tc = _chat.tool_call(part)
            if tc is not None and tc.get("status") != "streaming":
                yield f"chat/toolCallStart created tool call {short(at(tc, 'toolCallId'))} in status {short(at(tc, 'status'))}, not streaming"


def _is_mcp(contributor: Any) -> bool:
    return isinstance(contributor, dict) and contributor.get("kind") == "mcp"


@invariant(
    "INV-018",
    "auth-required is MCP-only and cannot be completed successfully",
    severity="violation",
    source='ToolCallAuthRequiredState doc ("A successful result dispatched from this state is '
    'invalid and MUST be rejected/ignored as a no-op by the reducer"); chat/toolCallAuthRequired '
    "doc; fixtures 244–246, 253–255",
    kinds={"chat"},
    actions=_chat.TOOL_CALL_ACTIONS | _chat.TURN_END,
)
def auth_required_rules(step: Step) -> Iterator[str]:
    """A tool call becomes `auth-required` only if its contributor kind is `mcp`; a
    `toolCallComplete` with `result.success` true on an `auth-required` call leaves it
    unchanged; a failing completion from `auth-required` always lands in `completed` (never
    `pending-result-confirmation`)."""
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None or paired[0] is paired[1]:
        return
    overrides = _result_overrides(step)
    result = step.action.get("result")
    success = isinstance(result, dict) and bool(result.get("success"))
    for i, btc, atc in _chat.paired_tool_calls(paired[0], paired[1]):
        if atc is None or atc is btc:
            continue
        where = f"responseParts[{i}] ({short(at(btc, 'toolCallId'))})"
        b, a = btc.get("status"), atc.get("status")
        if a == "auth-required" and b != "auth-required" and not _is_mcp(atc.get("contributor")):
            yield f"{step.type}: {where} became auth-required with contributor {short(at(atc, 'contributor'))} (MCP only)"
        if (
            step.type == "chat/toolCallComplete"
            and b == "auth-required"
            and _targets(step, btc)
            and "status" not in overrides
        ):
            if success and not same(btc, atc):
                yield f"chat/toolCallComplete with success=true changed auth-required {where} (must be a no-op)"
            elif not success and a != "completed":
                if a == b:
                    changed = ", ".join(fmt_path(p) for p, _, _ in first_diffs(btc, atc, 5))
                    yield (
                        f"chat/toolCallComplete with a failed result left {where} in auth-required, "
                        f"not completed (status unchanged; changed: {changed or 'nothing'})"
                    )
                else:
                    yield f"chat/toolCallComplete with a failed result moved {where} from auth-required to {short(at(atc, 'status'))}, not completed"


@invariant(
    "INV-019",
    "selectedOption comes from the offered options",
    severity="violation",
    source="guide/state-model.md §Confirmation Options; ToolCallPostConfirmationFields doc; "
    "fixtures 127–132, 248, 249",
    kinds={"chat"},
    actions=_chat.TOOL_CALL_ACTIONS,
)
def selected_option(step: Step) -> Iterator[str]:
    """When a tool call gains `selectedOption`, it is deep-equal to an element of the `options`
    the call had in pending-confirmation, and it is then carried unchanged into running /
    auth-required / pending-result-confirmation / completed / cancelled (a new
    `chat/toolCallReady` starts a fresh confirmation)."""
    if step.type == "chat/toolCallReady":
        return
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None or paired[0] is paired[1]:
        return
    overrides = _result_overrides(step)
    for i, btc, atc in _chat.paired_tool_calls(paired[0], paired[1]):
        if atc is None or atc is btc or ("selectedOption" in overrides and _targets(step, btc)):
            continue
        where = f"responseParts[{i}] ({short(at(btc, 'toolCallId'))})"
        old, new = btc.get("selectedOption"), atc.get("selectedOption")
        if new is not None and not same(old, new):
            options = as_list(btc.get("options"))
            if btc.get("status") != "pending-confirmation":
                yield f"{step.type}: {where} selectedOption changed outside confirmation: {short(old)} → {short(new)}"
            elif not any(same(o, new) for o in options):
                yield f"{step.type}: {where} selectedOption {short(new)} is not one of the offered options"
        elif old is not None and new is None and atc.get("status") in CARRIES_SELECTION:
            yield f"{step.type}: {where} dropped selectedOption {short(old)} on the way to {atc.get('status')}"


@invariant(
    "INV-051",
    "Tool results cannot overwrite tool-call identity",
    severity="known",
    source="tool-call state machine (guide/state-model.md diagram); ToolCallResult shape",
    kinds={"chat"},
    known_issue="REDUCERS.md §11 item 12 (toolCallComplete copies every key of result over the call)",
    actions={"chat/toolCallComplete"},
)
def result_cannot_overwrite(step: Step) -> Iterator[str]:
    """After `chat/toolCallComplete`, the tool call's status is `completed` or
    `pending-result-confirmation` and its identity fields are unchanged, whatever extra keys
    `result` carries."""
    overrides = _result_overrides(step)
    if not overrides:
        return
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None:
        return
    for i, btc, atc in _chat.paired_tool_calls(paired[0], paired[1]):
        if atc is None or not _targets(step, btc) or same(btc, atc):
            continue
        where = f"responseParts[{i}] ({short(at(btc, 'toolCallId'))})"
        if atc.get("status") not in ("completed", "pending-result-confirmation"):
            yield f"result key(s) {sorted(overrides)} left {where} in status {short(at(atc, 'status'))}"
        for f in IDENTITY_FIELDS:
            if not same(btc.get(f), atc.get(f)):
                yield f"result key {f!r} overwrote {where} {f}: {short(at(btc, f))} → {short(at(atc, f))}"
