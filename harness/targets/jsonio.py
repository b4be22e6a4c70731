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
from typing import Any

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


class NumberTokens:
    """A `loads` that also keeps the number tokens a text wrote that every implementation does not
    read as the model wrote them (issue 32, "look at the bytes"): a fraction or exponent on an
    integral value (`3.0`, `1e2`) and the non-I-JSON constants (`NaN`, `Infinity`). The C scanner
    calls the hooks only for such tokens (a float or a constant), so an integer costs nothing."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.loads = _build_decoder(json.JSONDecoder(parse_float=self._float, parse_constant=self._constant))

    def _float(self, token: str) -> float:
        value = float(token)
        if value.is_integer() or value != value or value in (float("inf"), float("-inf")):
            self.seen.append(token)
        return value

    def _constant(self, token: str) -> float:
        self.seen.append(token)
        return float(token)

    def take(self) -> list[str]:
        """The tokens kept since the last call."""
        out, self.seen = self.seen, []
        return out
