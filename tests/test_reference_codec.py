"""The model's strict JSON codec: every malformed text is a `WireDecodeError`, never another error."""

from __future__ import annotations

import pytest

from harness.reference.codec import WireDecodeError, decode, encode


@pytest.mark.parametrize(
    "text",
    [
        "{",  # truncated
        "NaN",  # non-JSON constant
        '{"a": 1, "a": 2}',  # duplicate key
        "[" * 100_000 + "]" * 100_000,  # nesting beyond the recursion limit
        "1" * 5_000,  # an integer beyond Python's int-conversion digit limit
    ],
)
def test_malformed_text_is_a_wire_decode_error(text: str) -> None:
    with pytest.raises(WireDecodeError):
        decode(text)


def test_round_trip_keeps_null_empty_list_and_big_integers() -> None:
    value = {"a": None, "b": [], "c": {}, "seq": 2**63 + 1}
    assert decode(encode(value)) == value
    assert encode(value) == '{"a":null,"b":[],"c":{},"seq":9223372036854775809}'
