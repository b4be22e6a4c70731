"""The pipe JSON codec is exactly the standard library's compact JSON, only faster."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.targets import jsonio

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),
        st.sampled_from(["\ud800", "é\u2028", "\x00"]),  # lone surrogate, separators, NUL
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=20,
)


@given(values)
def test_same_text_as_json_dumps_and_reads_back(value: Any) -> None:
    text = jsonio.dumps(value)
    assert text == json.dumps(value, separators=(",", ":"), allow_nan=False)
    assert jsonio.loads(text) == json.loads(text)
    assert jsonio.loads(f" \t{text}\r\n") == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a":1} x', "[1,]", "nul", '{"a":1}{"b":2}'])
def test_rejects_what_json_rejects(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsonio.loads(text)


def test_refuses_non_json_values() -> None:
    with pytest.raises(ValueError):
        jsonio.dumps({"x": math.nan})
    with pytest.raises(TypeError):
        jsonio.dumps({"x": object()})


def test_number_tokens_keeps_what_is_not_written_as_the_model_writes_it() -> None:
    from harness.targets.jsonio import WrittenTokens

    tokens = WrittenTokens()
    value = tokens.loads('{"a": 3.0, "b": 1e2, "c": 3.5, "d": 3, "e": [Infinity, -Infinity, NaN], "f": "3.0"}')
    assert value["a"] == 3 and value["d"] == 3 and value["c"] == 3.5
    assert tokens.take().numbers == ("3.0", "1e2", "Infinity", "-Infinity", "NaN")
    assert tokens.take().numbers == ()  # taken
    tokens.loads('{"x": 1, "y": 2.25}')
    assert tokens.take().numbers == ()
