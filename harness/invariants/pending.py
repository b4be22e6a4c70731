"""C. Input requests and pending messages (INVARIANTS.md INV-023, INV-024)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any, Final

from . import _chat
from ._json import canonical, hkey, same, short
from .base import Step, invariant

_ANSWER_ACTIONS: Final = frozenset({"chat/inputAnswerChanged", "chat/inputCompleted"})


@invariant(
    "INV-023",
    "Input-request lifecycle",
    severity="violation",
    source="guide/elicitation.md; InputRequestResponsePart doc; fixtures 105–110, 235–237",
    kinds={"chat"},
)
def input_request_lifecycle(step: Step) -> Iterator[str]:
    """`chat/inputAnswerChanged` and `chat/inputCompleted` only ever modify the open part with
    the given request id; a part with a `response` is never modified again (`inputRequested`
    included); `answers` is either absent or non-empty."""
    paired = _chat.paired_parts(step.before, step.after, step.type, step.action)
    if paired is None or paired[2]:
        return
    b_parts, a_parts, _ = paired
    if b_parts is a_parts:
        return
    answering = step.type in _ANSWER_ACTIONS
    rid = step.action.get("requestId")
    for i, bp in enumerate(b_parts):
        ap = a_parts[i] if i < len(a_parts) else None
        if ap is bp:
            continue
        if _chat.is_input_request(bp) and bp.get("response") is not None:
            if not same(bp, ap):
                yield f"{step.type}: responded input request {short(_chat.request_id(bp))} at responseParts[{i}] was modified"
            continue
        targeted = _chat.is_open_input(bp) and _chat.request_id(bp) == rid
        if answering and not targeted and not same(bp, ap):
            yield f"{step.type}({short(rid)}) modified responseParts[{i}], which is not the open request {short(rid)}"
    for i, ap in enumerate(a_parts):
        if not _chat.is_input_request(ap) or (i < len(b_parts) and same(b_parts[i], ap)):
            continue
        request = ap.get("request")
        answers = request.get("answers") if isinstance(request, dict) else None
        if answers is not None and not answers:
            yield f"{step.type}: input request {short(_chat.request_id(ap))} at responseParts[{i}] has empty answers {short(answers)} (absent or non-empty)"


def _ids(queue: list[Any]) -> list[Any]:
    return [hkey(m.get("id")) if isinstance(m, dict) else None for m in queue]


def _reorder_problem(before: list[Any], after: Any, order: Any) -> str | None:
    if not isinstance(after, list):
        return f"the queue became {short(after)}"
    if Counter(map(canonical, before)) != Counter(map(canonical, after)):
        return f"not a permutation of the queue: ids {_ids(before)} → {_ids(after)}"
    ids = _ids(before)
    if len(set(ids)) != len(ids) or not isinstance(order, list):
        return None
    named: list[Any] = []
    for x in map(hkey, order):
        if x in ids and x not in named:
            named.append(x)
    want = named + [x for x in ids if x not in named]
    if _ids(after) != want:
        return f"queue order {_ids(after)} is not {want} (named ids in order, then the rest in original order)"
    return None


@invariant(
    "INV-024",
    "Pending-message structure",
    severity="violation",
    source='chat/queuedMessagesReordered doc ("a client with a stale view … never silently drops '
    'messages"); chat/pendingMessageSet/Removed docs; fixtures 006–009, 039–057',
    kinds={"chat"},
)
def pending_messages(step: Step) -> Iterator[str]:
    """(a) `queuedMessages` ids are pairwise distinct (given a distinct start); (b) after
    `pendingMessageRemoved(queued)` or `turnStarted(queuedMessageId)` the queue is absent rather
    than `[]` when it became empty; (c) `queuedMessagesReordered` output is a permutation of its
    input for every `order` (stale, duplicate and unknown ids included), named messages first in
    `order` sequence and unmentioned ones after them in original relative order; (d) there is at
    most one steering message."""
    before, after, t = step.before, step.after, step.type
    b_queue, a_queue = before.get("queuedMessages"), after.get("queuedMessages")
    if a_queue is not b_queue and isinstance(a_queue, list):
        b_ids = _ids(b_queue) if isinstance(b_queue, list) else []
        a_ids = _ids(a_queue)
        if len(set(b_ids)) == len(b_ids) and len(set(a_ids)) != len(a_ids):
            yield f"{t}: queuedMessages ids are no longer distinct: {a_ids}"
    emptying = (t == "chat/pendingMessageRemoved" and step.action.get("kind") == "queued") or (
        t == "chat/turnStarted" and step.action.get("queuedMessageId")
    )
    if emptying and a_queue == [] and b_queue:
        yield f"{t} emptied queuedMessages but left [] instead of removing the key"
    if t == "chat/queuedMessagesReordered":
        if b_queue is None:
            if a_queue is not None:
                yield f"queuedMessagesReordered created a queue {short(a_queue)} where there was none"
        elif isinstance(b_queue, list):
            problem = _reorder_problem(b_queue, a_queue, step.action.get("order"))
            if problem:
                yield f"queuedMessagesReordered: {problem}"
    steering = after.get("steeringMessage")
    if steering is not None and not isinstance(steering, dict):
        yield f"{t}: steeringMessage is {short(steering)}, not a single message"
