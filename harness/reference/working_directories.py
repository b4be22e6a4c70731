"""Multiroot working-directory sets (REDUCERS.md §8.3–§8.5), shared by session and chat.

Membership is exact string equality: no URI normalization anywhere (§8.7). An emptied list
stays `[]`; an absent list stays absent on removal.
"""

from __future__ import annotations

from .profile import Action, Ctx, State

KEY = "workingDirectories"


def directory_set(state: State, action: Action, ctx: Ctx) -> State:
    directory = action["directory"]
    current = state.get(KEY, [])
    if directory in current:
        return state
    return {**state, KEY: [*current, directory]}


def directory_removed(state: State, action: Action, ctx: Ctx) -> State:
    current = state.get(KEY)
    directory = action["directory"]
    if current is None or directory not in current:
        return state
    i = current.index(directory)
    return {**state, KEY: current[:i] + current[i + 1 :]}


def directory_replaced(state: State, action: Action, ctx: Ctx) -> State:
    """0.8.0 compare-and-swap: `directory` must be present (else a no-op).

    The replacement takes the target's position and every other occurrence of it is removed —
    except, in released 0.8.0, when it already sits *before* the target: then it keeps that
    earlier position and the target is simply removed, so a replacement can never move the
    protected index-0 primary (0.8.0 changelog, Fixed; REDUCERS.md §8.5).
    """
    current = state.get(KEY)
    directory, replacement = action["directory"], action["replacement"]
    if current is None or directory not in current:
        return state
    i = current.index(directory)
    j = current.index(replacement) if replacement in current else None
    if j is not None and j < i and ctx.profile.replace_keeps_earlier:
        result = current[:i] + current[i + 1 :]
    else:
        result = [replacement if k == i else d for k, d in enumerate(current) if k == i or d != replacement]
    if result == current:
        return state
    return {**state, KEY: result}
