"""The model's JSON wire codec: an untyped path that keeps every key, `null`, `[]` and big integer.

Decoding rejects the non-JSON constants Python would otherwise accept (NaN, Infinity) and
duplicate object keys (RFC 8259 leaves them undefined; the harness treats them as malformed).
Encoding is compact UTF-8 and never collapses `[]` or `null` (INV-008, INV-033).
"""

from __future__ import annotations

import json
from typing import Any


class WireDecodeError(ValueError):
    """Text that is not a single strict JSON value."""


def _reject_constant(name: str) -> Any:
    raise WireDecodeError(f"not JSON: {name}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise WireDecodeError(f"duplicate object key {k!r}")
        out[k] = v
    return out


def decode(text: str | bytes) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise WireDecodeError(str(e)) from e
    except RecursionError as e:
        raise WireDecodeError("nesting too deep") from e
    except ValueError as e:  # e.g. an integer literal beyond Python's int-conversion digit limit
        raise WireDecodeError(str(e)) from e


def encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
