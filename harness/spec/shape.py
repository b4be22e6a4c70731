"""`Shape`: what a payload object must carry (the facts of `payload_shapes`, per version)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Shape(NamedTuple):
    required: tuple[str, ...] = ()
    fields: Mapping[str, str] = {}
    consts: Mapping[str, Any] = {}
    variants: tuple[str, ...] = ()
    values: str | None = None
    #: A nonexhaustive union (CHANGELOG 0.9.0): an object whose discriminating constants match
    #: none of the members (`kind: "futureKind"`) is an unknown member, kept, not invalid.
    open: bool = False
