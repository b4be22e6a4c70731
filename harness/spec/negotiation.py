"""Version negotiation as 1.0.0 states it (CHANGELOG 1.0.0 "Changed"; `InitializeParams.protocolVersions`,
`InitializeResult.protocolVersion`, `UnsupportedProtocolVersionErrorData` of the 1.0.0 commands
and errors schemas), as pure functions both ends use: the embedded host to pick, the live
clients to judge what a host answered.

* An offer is a list of SemVer `MAJOR.MINOR.PATCH` strings; an entry that is not one is a
  malformed offer, reported explicitly (`offer_problem`).
* A host "selects the highest offered SemVer within its supported caret-compatible ranges and
  returns that exact entry" (`select`): `^1.0.0` is `>=1.0.0 <2.0.0`, `^0.9.0` is `>=0.9.0 <0.10.0`
  (SemVer caret: the left-most non-zero component is fixed).
* A refusal is -32005 whose `data.supportedVersions` is required, each entry a version or a
  SemVer range (`refusal_problem`); an answer's `protocolVersion` is required, a version, and
  one of the offered entries (`answer_problem`). Before 1.0.0 the refusal's data was optional: a
  client that cannot tell which version a refusing host speaks judges only what is there, and a
  missing `supportedVersions` is malformed once the host is known to speak 1.0.0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from .versions import Version, parse_version

#: The refusal of every offered version (WIRE.md §3.1, `UnsupportedProtocolVersion`).
UNSUPPORTED_PROTOCOL_VERSION = -32005
#: What 1.0.0 hosts advertise: the two compatibility baselines (CHANGELOG 1.0.0).
BASELINES: tuple[str, ...] = ("1.0.0", "0.9.0")
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
#: One comparator of a SemVer range (`^1.0.0`, `>=0.1.0`, `<0.3.0`, `~0.2.0`, `0.2.0`).
_COMPARATOR = re.compile(r"^(\^|~|>=|<=|>|<|=)?v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def is_version(value: Any) -> bool:
    """A SemVer `MAJOR.MINOR.PATCH` string without leading zeros or whitespace."""
    return isinstance(value, str) and _SEMVER.match(value) is not None


def is_range(value: Any) -> bool:
    """A version or a SemVer range of space-separated comparators (`>=0.1.0 <0.3.0`, `^0.2.0`),
    alternatives joined by `||`."""
    if not isinstance(value, str) or not value.strip():
        return False
    for alternative in value.split("||"):
        parts = alternative.split()
        if not parts or not all(_COMPARATOR.match(p) for p in parts):
            return False
    return True


def caret_upper(base: Version) -> Version:
    """The exclusive upper bound of `^base`."""
    major, minor, patch = base
    if major:
        return (major + 1, 0, 0)
    if minor:
        return (0, minor + 1, 0)
    return (0, 0, patch + 1)


def in_caret(version: Version, base: Version) -> bool:
    return base <= version < caret_upper(base)


def offer_problem(offered: Any) -> str | None:
    """Why `offered` is not a well-formed `protocolVersions` list (None: it is)."""
    if not isinstance(offered, list) or not offered:
        return "protocolVersions must be a non-empty array of version strings"
    for i, entry in enumerate(offered):
        if not is_version(entry):
            return f"protocolVersions[{i}] is {entry!r}, not a MAJOR.MINOR.PATCH version"
    return None


def select(offered: Sequence[str], bases: Iterable[str]) -> str | None:
    """The highest offered version within one of the caret ranges of `bases`, as offered (None:
    none is). Malformed entries are skipped (`offer_problem` reports them)."""
    ranges = [parse_version(b) for b in bases]
    inside = [(parse_version(v), i) for i, v in enumerate(offered)
              if is_version(v) and any(in_caret(parse_version(v), b) for b in ranges)]
    if not inside:
        return None
    return offered[max(inside)[1]]


def answer_problem(result: Any, offered: Sequence[str]) -> str | None:
    """Why an initialize result is malformed as a negotiation answer (None: it is sound, or it
    names a well-formed version that was not offered — INV-046's finding, not this one)."""
    if not isinstance(result, dict):
        return f"the initialize result is {_short(result)}, not an object"
    if "protocolVersion" not in result:
        return "the initialize result has no protocolVersion (required)"
    v = result["protocolVersion"]
    if not isinstance(v, str):
        return f"the initialize result's protocolVersion is {_short(v)}, not a string"
    if not is_version(v):
        return f"the initialize result's protocolVersion {v!r} is not a MAJOR.MINOR.PATCH version"
    return None


def refusal_problem(data: Any, *, required: bool = True) -> str | None:
    """Why a -32005 refusal's `data` is malformed (None: it carries `supportedVersions`, each a
    version or a SemVer range). `required`: the host speaks 1.0.0, where the data is required
    (optional before: only what is there is judged)."""
    if data is None and not required:
        return None
    if not isinstance(data, dict):
        return (f"the -32005 refusal's data is {_short(data)}, not an object with supportedVersions"
                + (" (required since 1.0.0)" if required else ""))
    if "supportedVersions" not in data and not required:
        return None
    said = data.get("supportedVersions")
    if not isinstance(said, list):
        return f"the -32005 refusal's data.supportedVersions is {_short(said)}, want an array of versions or ranges"
    for i, entry in enumerate(said):
        if not is_range(entry):
            return f"the -32005 refusal's data.supportedVersions[{i}] is {_short(entry)}, not a version or SemVer range"
    return None


def _short(value: Any) -> str:
    if value is None:
        return "absent or null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["BASELINES", "UNSUPPORTED_PROTOCOL_VERSION", "answer_problem", "caret_upper", "in_caret", "is_range", "is_version", "offer_problem",
           "refusal_problem", "select"]
