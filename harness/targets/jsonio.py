"""Compact JSON for the adapter pipes, about twice as fast as `json.dumps`/`json.loads`.

`json.dumps` rebuilds its C encoder on every call and `json.loads` adds a whitespace regex
around the C scanner; at tens of thousands of small messages per second that overhead is
most of the cost. This module builds both C objects once (through the `json` package's own
hooks) and falls back to the public API where the C accelerators are absent. The output is
byte-for-byte what `json.dumps(obj, separators=(",", ":"), allow_nan=False)` produces
(ASCII-only, so lone surrogates survive), and `loads` accepts exactly what `json.loads`
accepts.
"""

from __future__ import annotations

import json
import json.decoder
import json.encoder
import json.scanner
from collections.abc import Callable
from typing import Any, NamedTuple

_PUBLIC_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_PUBLIC_DECODER = json.JSONDecoder()
_TRAILING_WS = " \t\n\r"


def _build_encoder() -> Callable[[Any], str]:
    make = json.encoder.c_make_encoder
    escape = json.encoder.c_encode_basestring_ascii
    if make is None or escape is None:
        return _PUBLIC_ENCODER.encode
    try:
        # markers=None: no cycle check (the data is decoded JSON or plain dicts/lists);
        # positional arguments as in json.encoder.JSONEncoder.iterencode.
        c_encode = make(None, _PUBLIC_ENCODER.default, escape, None, ":", ",", False, False, False)

        def encode(obj: Any) -> str:
            if isinstance(obj, str):
                return escape(obj)
            return "".join(c_encode(obj, 0))

        probe = {"a": [1, 2.5, None, True, "é\ud800"], "b": {}}
        if encode(probe) == _PUBLIC_ENCODER.encode(probe):
            return encode
    except (TypeError, ValueError):  # a Python whose C encoder takes other arguments
        pass
    return _PUBLIC_ENCODER.encode


def _build_decoder(decoder: json.JSONDecoder = _PUBLIC_DECODER) -> Callable[[str], Any]:
    scan = json.scanner.c_make_scanner
    if scan is None:
        return decoder.decode
    scan_once = scan(decoder)

    def decode(text: str) -> Any:
        start = 0
        while start < len(text) and text[start] in _TRAILING_WS:
            start += 1
        try:
            value, end = scan_once(text, start)
        except StopIteration as e:
            raise json.JSONDecodeError("Expecting value", text, e.value) from None
        if end != len(text) and text[end:].strip(_TRAILING_WS):
            raise json.JSONDecodeError("Extra data", text, end)
        return value

    return decode


#: `dumps(obj)` -> compact ASCII JSON text; ValueError on NaN/Infinity, TypeError on non-JSON.
dumps: Callable[[Any], str] = _build_encoder()
#: `loads(text)` -> value; json.JSONDecodeError (a ValueError) on anything that is not JSON.
loads: Callable[[str], Any] = _build_decoder()


class Written(NamedTuple):
    """What a text wrote that is not how the model writes it (issue 32, "look at the bytes"):
    `numbers`, the number tokens of an integral value with a fraction or exponent (`3.0`, `1e2`)
    and the non-I-JSON constants (`NaN`, `Infinity`); `duplicate_keys`, each name an object
    wrote more than once (RFC 8259 §4: names SHOULD be unique; I-JSON, RFC 7493 §2.3: MUST NOT;
    parsers disagree on which of the two values counts)."""

    numbers: tuple[str, ...] = ()
    duplicate_keys: tuple[str, ...] = ()


class WrittenTokens:
    """A `loads` that also keeps what `Written` names. The C scanner calls the number hooks only
    for a float or a constant, so an integer costs nothing; the pairs hook is called once per
    object (a `dict` of its pairs, and a length compare)."""

    def __init__(self) -> None:
        self._numbers: list[str] = []
        self._keys: list[str] = []
        self.loads = _build_decoder(json.JSONDecoder(
            parse_float=self._float, parse_constant=self._constant, object_pairs_hook=self._object))

    def _float(self, token: str) -> float:
        value = float(token)
        if value.is_integer() or value != value or value in (float("inf"), float("-inf")):
            self._numbers.append(token)
        return value

    def _constant(self, token: str) -> float:
        self._numbers.append(token)
        return float(token)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in self._keys:
                    self._keys.append(key)
                seen.add(key)
        return obj

    def take(self) -> Written:
        """What was kept since the last call."""
        out = Written(tuple(self._numbers), tuple(self._keys))
        self._numbers, self._keys = [], []
        return out
