"""Fast-form change lists: diff by identity, apply copy-on-write."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.targets.delta import ChangeError, apply_changes, diff

# -- diff ---------------------------------------------------------------------------------------


def test_identical_states_have_no_changes() -> None:
    s = {"a": [1, {"b": 2}]}
    assert diff(s, s) == []


def test_only_the_changed_path_is_reported() -> None:
    turns = [{"id": f"t{i}", "parts": ["x" * 10]} for i in range(100)]
    part = {"kind": "markdown", "id": "p", "content": "Hel"}
    old = {"turns": turns, "activeTurn": {"id": "a", "responseParts": [part]}, "title": "T"}
    new = {**old, "activeTurn": {**old["activeTurn"], "responseParts": [{**part, "content": "Hello"}]}}
    assert diff(old, new) == [{"path": ["activeTurn", "responseParts", 0, "content"], "value": "Hello"}]


def test_append_to_a_list_is_an_index_set_at_the_end() -> None:
    old = {"turns": [{"id": "t1"}]}
    new = {"turns": [*old["turns"], {"id": "t2"}]}
    assert diff(old, new) == [{"path": ["turns", 1], "value": {"id": "t2"}}]


def test_removed_key_is_a_delete_and_added_key_a_set() -> None:
    old = {"a": 1, "b": 2, "c": 3}
    new = {"a": 1, "c": 3, "d": 4}
    assert sorted(map(json.dumps, diff(old, new))) == sorted(
        map(json.dumps, [{"path": ["d"], "value": 4}, {"path": ["b"], "delete": True}])
    )


def test_shrunk_list_is_replaced_whole() -> None:
    old = {"l": [1, 2, 3]}
    new = {"l": [1, 2]}
    assert diff(old, new) == [{"path": ["l"], "value": [1, 2]}]


def test_equal_scalars_of_different_type_differ() -> None:
    assert diff({"x": 1}, {"x": True}) == [{"path": ["x"], "value": True}]
    assert diff({"x": 1}, {"x": 1.0}) == [{"path": ["x"], "value": 1.0}]
    assert diff({"x": "a"}, {"x": "".join(["a"])}) == []


def test_container_changed_throughout_is_sent_whole() -> None:
    old = {"o": {"a": 1, "b": 2}}
    new = {"o": {"a": 5, "b": 6}}
    assert diff(old, new) == [{"path": ["o"], "value": {"a": 5, "b": 6}}]


def test_root_replaced_by_different_type() -> None:
    assert diff({"a": 1}, [1]) == [{"path": [], "value": [1]}]


# -- apply --------------------------------------------------------------------------------------


def test_apply_shares_untouched_subtrees_and_does_not_mutate() -> None:
    turns = [{"id": "t1"}]
    old = {"turns": turns, "activeTurn": {"responseParts": [{"content": "a"}]}}
    frozen = copy.deepcopy(old)
    new = apply_changes(old, [{"path": ["activeTurn", "responseParts", 0, "content"], "value": "ab"}])
    assert new == {"turns": [{"id": "t1"}], "activeTurn": {"responseParts": [{"content": "ab"}]}}
    assert old == frozen
    assert new["turns"] is turns
    assert new["activeTurn"] is not old["activeTurn"]


def test_apply_in_order_with_array_delete_and_append() -> None:
    old = {"l": [1, 2, 3]}
    changes = [
        {"path": ["l", 0], "delete": True},
        {"path": ["l", 2], "value": 9},
        {"path": ["k"], "value": {"x": []}},
        {"path": ["k", "x", 0], "value": "y"},
    ]
    assert apply_changes(old, changes) == {"l": [2, 3, 9], "k": {"x": ["y"]}}
    assert old == {"l": [1, 2, 3]}


def test_apply_empty_path_replaces_state() -> None:
    assert apply_changes({"a": 1}, [{"path": [], "value": {"b": 2}}]) == {"b": 2}


@pytest.mark.parametrize(
    "changes",
    [
        [{"path": ["missing", "x"], "value": 1}],
        [{"path": ["a"], "delete": True}],
        [{"path": ["l", 5], "value": 1}],
        [{"path": ["l", "0"], "value": 1}],
        [{"path": ["l", 1], "delete": True}],
        [{"path": ["s", "x"], "value": 1}],
        [{"path": [], "delete": True}],
        [{"path": ["s"]}],
        [{"value": 1}],
        ["not a change"],
    ],
)
def test_apply_rejects_changes_that_do_not_fit(changes: list[Any]) -> None:
    state = {"l": [0], "s": "str"}
    with pytest.raises(ChangeError):
        apply_changes(state, changes)
    assert state == {"l": [0], "s": "str"}


# -- property: apply(old, diff(old, new)) == new ------------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
json_value = st.recursive(
    json_leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.sampled_from("abcde"), children, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def edited(draw: st.DrawFn) -> tuple[Any, Any]:
    """A state and an edit of it that shares unchanged subtrees (like a reducer's result)."""
    old = draw(st.dictionaries(st.sampled_from("abcde"), json_value, max_size=5))

    def edit(v: Any, depth: int) -> Any:
        choice = draw(st.integers(0, 5))
        if choice == 0 or depth > 4:
            return v  # shared
        if choice == 1:
            return draw(json_value)  # replaced
        if isinstance(v, dict):
            out = {k: edit(x, depth + 1) for k, x in v.items() if draw(st.integers(0, 6)) > 0}
            if draw(st.booleans()):
                out[draw(st.sampled_from("abcdef"))] = draw(json_value)
            return out
        if isinstance(v, list):
            out = [edit(x, depth + 1) for x in v]
            if draw(st.booleans()):
                out.extend(draw(st.lists(json_value, max_size=2)))
            elif out and draw(st.booleans()):
                out.pop(draw(st.integers(0, len(out) - 1)))
            return out
        return v

    return old, edit(old, 0)


@settings(max_examples=100)
@given(edited())
def test_diff_then_apply_rebuilds_the_new_state(pair: tuple[Any, Any]) -> None:
    old, new = pair
    frozen = copy.deepcopy(old)
    changes = diff(old, new)
    json.dumps(changes)  # a change list is plain JSON
    assert apply_changes(old, changes) == new
    assert old == frozen
    # the same holds when nothing is shared (a reducer that deep-copies): diff is just coarser
    assert apply_changes(old, diff(old, copy.deepcopy(new))) == new
