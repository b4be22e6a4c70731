"""What a finding's verdict depends on besides its trace and profile: the schema-derived switches.

A spec folder (`--spec`, `$AHP_SPEC_DIR`, a `ts:` checkout) turns on two things that change
what a step means:

* the **payload schema**: the model judges every payload by the folder's action schema, so an
  action the built-in required-key facts accept may be schema-invalid — a probe, not a step;
* the **published-schema checks** (INV-007, INV-007.published) on every produced state.

A run records both in each finding (`extra["verdict"]`, `VerdictSwitches.to_json`), as the
released version of the folder that was used (`null`: off), and replay uses exactly that —
whatever `$AHP_SPEC_DIR` says at replay time. A finding file without the key (written before the
key existed, or by hand) was judged with both off: that is what it means on its own, and the
one reading that needs no spec folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .specdir import SpecDir
from .versions import format_version

KEY: Final = "verdict"
UNVERSIONED: Final = "unversioned"  # a spec folder without a CHANGELOG


@dataclass(frozen=True)
class VerdictSwitches:
    """The schema-derived switches of a run, by the spec folder version that supplied them."""

    payload_schema: str | None = None
    published_schema: str | None = None

    @classmethod
    def of_spec(cls, spec: SpecDir | None) -> VerdictSwitches:
        """The switches a run with `spec` (None: no spec folder) has on."""
        if spec is None:
            return OFF
        version = spec_version(spec)
        return cls(
            payload_schema=version if spec.schema_path("actions").is_file() else None,
            published_schema=version if spec.schema_path("state").is_file() else None,
        )

    @classmethod
    def of_finding(cls, extra: Mapping[str, Any]) -> VerdictSwitches:
        """The switches recorded in a finding's `extra` (OFF when it has none)."""
        raw = extra.get(KEY)
        if raw is None:
            return OFF
        if not isinstance(raw, Mapping) or set(raw) - {"payloadSchema", "publishedSchema"}:
            raise ValueError(
                f'"extra.{KEY}" must be an object with payloadSchema and publishedSchema, got {raw!r}'
            )
        values = [raw.get("payloadSchema"), raw.get("publishedSchema")]
        if not all(v is None or isinstance(v, str) for v in values):
            raise ValueError(f'"extra.{KEY}": each switch is a spec version string or null, got {raw!r}')
        return cls(*values)

    def to_json(self) -> dict[str, str | None]:
        return {"payloadSchema": self.payload_schema, "publishedSchema": self.published_schema}

    @property
    def needed(self) -> str | None:
        """The spec folder version the switches need (None: none)."""
        return self.payload_schema or self.published_schema

    def describe(self) -> str:
        if self.needed is None:
            return "no spec folder's schemas (built-in payload facts only; INV-007 checks off)"
        parts = []
        if self.payload_schema:
            parts.append(f"the {self.payload_schema} action schema")
        if self.published_schema:
            parts.append(f"the {self.published_schema} published-schema checks")
        return " and ".join(parts)


OFF: Final = VerdictSwitches()


def spec_version(spec: SpecDir) -> str:
    released = spec.release.released
    return format_version(released) if released is not None else UNVERSIONED


def checks_off(spec: SpecDir | None) -> str | None:
    """The one line a run without a spec folder's schemas prints at its start (None: all on)."""
    switches = VerdictSwitches.of_spec(spec)
    off = []
    if switches.payload_schema is None:
        off.append("payloads are judged by the built-in required-key facts only, not the full "
                   "action schema (types, enums, formats)")
    if switches.published_schema is None:
        off.append("the published-schema checks INV-007 and INV-007.published are off")
    if not off:
        return None
    where = "no spec folder (--spec DIR, $AHP_SPEC_DIR or a ts: checkout)" if spec is None else (
        f"the spec folder {spec.path} has no " + " or ".join(
            n for n, on in (("actions schema", switches.payload_schema), ("state schema", switches.published_schema))
            if on is None
        )
    )
    return f"{where}: " + "; ".join(off)
