"""Pending messages: the steering message and the queue (REDUCERS.md §5.6, §5.2, §10).

An emptied queue is removed from the state (never left as `[]`); the steering message is a
single slot replaced regardless of id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .profile import Action, Ctx, Handler, State

STEERING = "steeringMessage"
QUEUE = "queuedMessages"


def _without(state: State, key: str) -> State:
    return {k: v for k, v in state.items() if k != key}


def _with_queue(state: State, queue: list[Any]) -> State:
    """`queuedMessages := queue`, or the key removed when `queue` is empty."""
    return {**state, QUEUE: queue} if queue else _without(state, QUEUE)


def consume(state: State, message_id: str) -> State:
    """What `chat/turnStarted` with `queuedMessageId` does to the pending messages: a steering
    message with that id is removed, every queued entry with that id is removed, and a present
    queue that ends up empty (even one that was `[]` already) is removed."""
    steering = state.get(STEERING)
    if steering is not None and steering.get("id") == message_id:
        state = _without(state, STEERING)
    queue = state.get(QUEUE)
    if queue is not None:
        remaining = [m for m in queue if m.get("id") != message_id]
        if not remaining or len(remaining) != len(queue):
            state = _with_queue(state, remaining)
    return state


# -- chat/pendingMessageSet -------------------------------------------------------------------


def _set_steering(state: State, entry: dict[str, Any]) -> State:
    return {**state, STEERING: entry}


def _set_queued(state: State, entry: dict[str, Any]) -> State:
    queue = state.get(QUEUE, [])
    for i, m in enumerate(queue):
        if m.get("id") == entry["id"]:
            return {**state, QUEUE: [*queue[:i], entry, *queue[i + 1 :]]}
    return {**state, QUEUE: [*queue, entry]}


_SETTERS: Final[Mapping[str, Callable[[State, dict[str, Any]], State]]] = {
    "steering": _set_steering,
    "queued": _set_queued,
}


def pending_message_set(state: State, action: Action, ctx: Ctx) -> State:
    entry = {"id": action["id"], "message": action["message"]}
    return _SETTERS[action["kind"]](state, entry)


# -- chat/pendingMessageRemoved ---------------------------------------------------------------


def _remove_steering(state: State, message_id: Any) -> State:
    steering = state.get(STEERING)
    if steering is None or steering.get("id") != message_id:
        return state
    return _without(state, STEERING)


def _remove_queued(state: State, message_id: Any) -> State:
    queue = state.get(QUEUE)
    if queue is None:
        return state
    remaining = [m for m in queue if m.get("id") != message_id]
    if len(remaining) == len(queue):
        return state
    return _with_queue(state, remaining)


_REMOVERS: Final[Mapping[str, Callable[[State, Any], State]]] = {
    "steering": _remove_steering,
    "queued": _remove_queued,
}


def pending_message_removed(state: State, action: Action, ctx: Ctx) -> State:
    return _REMOVERS[action["kind"]](state, action["id"])


# -- chat/queuedMessagesReordered -------------------------------------------------------------


def queued_messages_reordered(state: State, action: Action, ctx: Ctx) -> State:
    """Named messages first, in `order` (unknown and repeated ids skipped), then the rest in
    their original order. The result is always a permutation of the old queue."""
    queue = state.get(QUEUE)
    if queue is None:
        return state
    groups: dict[Any, list[Any]] = {}
    for m in queue:
        groups.setdefault(m.get("id"), []).append(m)
    front: list[Any] = []
    named: set[Any] = set()
    for message_id in action["order"]:
        if message_id in groups:
            front.extend(groups.pop(message_id))
            named.add(message_id)
    reordered = front + [m for m in queue if m.get("id") not in named]
    if all(a is b for a, b in zip(reordered, queue, strict=True)):
        return state
    return {**state, QUEUE: reordered}


HANDLERS: dict[str, Handler] = {
    "chat/pendingMessageSet": pending_message_set,
    "chat/pendingMessageRemoved": pending_message_removed,
    "chat/queuedMessagesReordered": queued_messages_reordered,
}
