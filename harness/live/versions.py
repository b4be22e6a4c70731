"""Which protocol version a live run speaks with its host (issue 23): the offer, the negotiation
before the run, and what the run says when the host speaks another version than the profile's.

A host's version is never a reason to fuzz nothing while a common language exists:

* **The offer** comes from the profiles the harness has (`KNOWN_VERSIONS`): the run's profile
  version first, then every other version with rules, newest first (`offers_for`). The client
  that speaks only 0.6.0 keeps its single offer (INV-046 needs a client that does not offer the
  host's newest version). `--offer V` adds versions the user knows the host speaks.
* **The negotiation** (`negotiate`, one connection before the run) tells what the host answers:
  - a version of the offer: nothing to say;
  - a version nobody offered (the ahpx mock's 0.5.0): the run goes on — every client's
    initialize is INV-046's finding — and each client folds with the rules of the version it
    negotiated, so only action types introduced by then are sent (`ops` reads the client's
    version);
  - -32005 for the whole offer: the versions the refusal names (`data.supportedVersions`,
    exact or a SemVer range's base), else the older versions the action registry knows (0.4.0 …
    0.1.0), are offered on a fresh connection; one the host takes is appended to the clients'
    offers and the run is a subset run at that version;
  - a refusal of everything: `HostVersionsUnknown` (exit 2) with advice that works (`--offer`).
  Silence, garbage or a dropped socket are left to the run, which reports them as findings.
* **The statement** (`Speaking.note`): "fuzzed as a 0.5.1 subset: …" — which rules stand in for
  the negotiated version and what the run cannot know — printed at the top of stdout and kept in
  report.json (`speaking`) and the HTML report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from harness.spec.negotiation import (
    BASELINES,
    UNSUPPORTED_PROTOCOL_VERSION,
    answer_problem,
    refusal_problem,
)
from harness.spec.versions import (
    KNOWN_VERSIONS,
    action_types,
    format_version,
    introduced_in,
    parse_version,
)
from harness.targets.live import ROOT, ConnectionLost, RpcError, WireConnection

#: Versions the action registry knows that no profile has rules for: offered when a host refuses
#: every version with rules (a host library speaking only 0.3.0), newest first.
OLDER_VERSIONS: tuple[str, ...] = ("0.4.0", "0.3.0", "0.2.0", "0.1.0")
_RANGE = re.compile(r"^\s*(?:\^|~|>=|=)?\s*v?(\d+\.\d+\.\d+)")


class HostVersionsUnknown(ValueError):
    """The host refused every version the live clients can speak (a setup error, exit 2)."""


@dataclass(frozen=True)
class Speaking:
    """What the negotiation before the run found."""

    offered: tuple[str, ...]
    #: The version the host negotiated (None: it did not answer initialize with one).
    version: str | None = None
    #: Versions appended to every multi-version client's offer (the host refused the first offer).
    also_offer: tuple[str, ...] = ()
    #: The statement for stdout, report.json and the HTML (None: the host speaks the offer).
    note: str | None = None
    #: What was malformed in the host's answers (`negotiation.answer_problem`, `refusal_problem`):
    #: the run reports it (INV-H10) and goes on where a version was still agreed.
    malformed: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"offered": list(self.offered), "negotiated": self.version, "alsoOffered": list(self.also_offer),
                "note": self.note, "malformed": self.malformed}


def nearest_profile(version: str) -> str:
    """The version with rules nearest to `version`: the newest one not newer than it (the rules it
    builds on), else the oldest (a host older than every version with rules)."""
    v = parse_version(version)
    below = [k for k in KNOWN_VERSIONS if parse_version(k) <= v]
    return max(below, key=parse_version) if below else min(KNOWN_VERSIONS, key=parse_version)


def subset_note(version: str, why: str) -> str | None:
    """'fuzzed as a P subset: WHY; rules it cannot know: …' for a negotiated `version` that has no
    rules here (None: it has, or it is no version at all — the run's checks say what is wrong)."""
    if version in KNOWN_VERSIONS:
        return None
    try:
        v = parse_version(version)
    except ValueError:
        return None
    near = nearest_profile(version)
    newest = KNOWN_VERSIONS[-1]
    if v > parse_version(newest):
        cannot = (f"whatever {version} changed after {newest}: the {newest} reducer rules stand in for it, and "
                  f"action types newer than {newest} are unknown to the model (their envelopes leave the state "
                  "unchanged in the clients' folds)")
    else:
        later = sorted(t for t in action_types(KNOWN_VERSIONS[-1]) if (introduced_in(t) or (0, 0, 0)) > v)
        cannot = (f"the {near} reducer rules stand in for {version}'s; the {len(later)} action types introduced "
                  f"after {version} are not sent (e.g. {', '.join(later[:4])})")
    return f"fuzzed as a {near} subset: {why}; rules it cannot know: {cannot}"


def offers_for(version: str, clients: tuple[Any, ...], also: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """The live clients' offers for a run whose profile is `version`: every client that offers
    more than one version offers the profile's version first, then every other version with
    rules (newest first), then `also`; a single-version client keeps its offer."""
    first = version if version in KNOWN_VERSIONS else KNOWN_VERSIONS[-1]
    full = tuple(dict.fromkeys((first, *reversed(KNOWN_VERSIONS), *also)))
    single = _single_offer(first)
    return tuple(replace(c, offer=full) if len(c.offer) > 1 else replace(c, offer=single) if single else c
                 for c in clients)


def _single_offer(version: str) -> tuple[str, ...] | None:
    """What a single-version client offers in a run at `version`: in a 0.9.0/1.0.0 run the older
    1.0.0 baseline, 0.9.0 (a 1.0.0 host speaks only ^1.0.0 and ^0.9.0; the client still does not
    offer the host's newest version, INV-046); otherwise its own offer (None)."""
    return (BASELINES[-1],) if parse_version(version) >= parse_version(BASELINES[-1]) else None


def named_versions(data: Any) -> list[str]:
    """The exact versions a -32005 refusal names (`data.supportedVersions`; a SemVer range such
    as `^0.6.0` names its base version)."""
    said = data.get("supportedVersions") if isinstance(data, dict) else None
    out: list[str] = []
    for item in said if isinstance(said, list) else []:
        m = _RANGE.match(item) if isinstance(item, str) else None
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


async def _initialize(url: str, offer: list[str], timeout_s: float) -> tuple[Any, RpcError | None]:
    """One initialize offering `offer` on a fresh connection: (result, None) or (None, refusal).
    ConnectionLost / TimeoutError propagate."""
    conn = WireConnection(0, _Discard(), lambda *_: None)
    await conn.open(url, timeout_s)
    params = {"channel": ROOT, "protocolVersions": offer, "clientId": "ahp-fuzz-version-check",
              "clientInfo": {"name": "ahp-fuzz", "version": "0.1.0"}}
    try:
        return await conn.request("initialize", params, timeout_s), None
    except RpcError as e:
        return None, e
    finally:
        await conn.close()


async def negotiate(url: str, offer: list[str], timeout_s: float = 5.0) -> Speaking:
    """Before fuzzing: which version the host speaks with these clients (see the module doc)."""
    first = tuple(offer)
    try:
        result, refusal = await _initialize(url, offer, timeout_s)
    except (ConnectionLost, TimeoutError):
        return Speaking(first)
    if refusal is None:
        problem = answer_problem(result, first)
        if problem is not None:  # no MAJOR.MINOR.PATCH version agreed: INV-H10 reports it
            return Speaking(first, malformed=problem)
        version = result["protocolVersion"]
        if version in first:
            return Speaking(first, version, note=subset_note(version, f"the host negotiated {version}"))
        why = (f"the host negotiated {version}, which was not offered ({', '.join(first)}): INV-046; "
               f"each client folds with the rules of the version it negotiated")
        return Speaking(first, version, note=subset_note(version, why) or why)
    if refusal.code != UNSUPPORTED_PROTOCOL_VERSION:
        return Speaking(first)  # another error: the run's checks report it
    problem = refusal_problem(refusal.data, required=False)
    named = named_versions(refusal.data)
    fallback = [v for v in dict.fromkeys((*named, *OLDER_VERSIONS)) if v not in first]
    tried = list(first)
    if fallback:
        tried += fallback
        try:
            result, again = await _initialize(url, fallback, timeout_s)
        except (ConnectionLost, TimeoutError):
            return Speaking(first)
        version = result.get("protocolVersion") if again is None and isinstance(result, dict) else None
        if isinstance(version, str) and version in fallback:
            if problem is None and parse_version(version) >= (1, 0, 0):
                problem = refusal_problem(refusal.data)  # a 1.0.0 host: the data is required
            said = f"it named {', '.join(named)}" if named else "it named none (data.supportedVersions)"
            why = (f"the host refused every version with rules here ({', '.join(first)}) with -32005 ({said}) "
                   f"and speaks {version}")
            return Speaking(first, version, (version,), subset_note(version, why) or why, problem)
    said = f"it names {', '.join(named)}" if named else "it names none in data.supportedVersions"
    if problem is not None:
        said += f"; its refusal is malformed: {problem}"
    raise HostVersionsUnknown(
        f"the host refused every protocol version ahp-fuzz can speak ({', '.join(tried)}) with -32005 ({said}): "
        "nothing can be fuzzed. If it speaks another version, offer it with `--offer VERSION` (the run is then a "
        f"subset run with the nearest rules, {KNOWN_VERSIONS[0]} … {KNOWN_VERSIONS[-1]})")


def check_offer(text: str) -> tuple[str, ...]:
    """`--offer 1.0.0,0.9.0`: the versions, each MAJOR.MINOR.PATCH (ValueError otherwise)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if part:
            out.append(format_version(parse_version(part)))
    if not out:
        raise ValueError("--offer: give one or more versions, e.g. --offer 1.0.0")
    return tuple(out)


class _Discard:
    """A transcript that keeps nothing (the negotiation is not part of any run)."""

    seen = 0

    def add(self, conn: int, direction: str, msg: Any) -> None:
        pass
