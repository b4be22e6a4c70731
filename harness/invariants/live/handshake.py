"""Handshake, liveness and error-code checks (issue 16): INV-H01…H06, INV-H09.

A host in the wild may refuse `ping`, serve requests before `initialize`, re-bind on a second
`initialize`, negotiate versions nobody offered or answer errors with the wrong codes. The live
machine sends probes for each (`live/wild.py`: `handshake` ops, the ping barrier, bare
JSON values among the malformed frames) and records them as `WireProbe`s / `Probe`s; these checks
judge them. Each yields one message per offending probe since the previous check.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.spec.negotiation import refusal_problem
from harness.spec.versions import parse_version

from .base import LiveObservation

UNSUPPORTED_PROTOCOL_VERSION = -32005
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


def ping_answered(obs: LiveObservation) -> Iterator[str]:
    """INV-H01 (WIRE.md §3.1, §4.1: ping "MUST answer, even pre-initialize"): a ping is answered
    with result null."""
    for p in obs.new_wire_probes("ping"):
        if not p.answered:
            yield (
                f"connection {p.connection}: ping got {p.answer()}, want result null (WIRE.md: ping MUST be "
                "answered); quiescence falls back to a timed drain"
            )
        elif p.error is not None or p.result is not None:
            yield (
                f"connection {p.connection}: ping got {p.answer()}, want result null (WIRE.md: ping MUST be "
                "answered)"
            )


def refused_before_initialize(obs: LiveObservation) -> Iterator[str]:
    """INV-H02 (WIRE.md §3.1: initialize "MUST be first"): on a fresh connection a request other
    than ping, initialize or reconnect is answered with an error."""
    for p in obs.new_wire_probes("before-initialize"):
        if p.answered and p.error is None:
            yield (
                f"connection {p.connection}: {p.method} before initialize was served ({p.answer()}), "
                "want an error (initialize MUST be first; -32601 as VS Code answers)"
            )


def second_initialize_refused(obs: LiveObservation) -> Iterator[str]:
    """INV-H03 (WIRE.md §3.1): a second initialize on an initialized connection is an error
    (-32600 as the interop host answers), not a re-bind."""
    for p in obs.new_wire_probes("second-initialize"):
        if p.answered and p.error is None:
            yield (
                f"connection {p.connection}: a second initialize was accepted ({p.answer()}): the host "
                "re-binds an initialized connection, want an error (-32600)"
            )


def version_refused(obs: LiveObservation) -> Iterator[str]:
    """INV-H04 (WIRE.md §3.1: "If none acceptable → error -32005 UnsupportedProtocolVersion";
    protocolVersion "MUST be one of the offered entries"): an offer of unknown versions gets
    -32005; an empty offer gets an error; neither negotiates."""
    for p in obs.new_wire_probes("unknown-version"):
        if not p.answered:
            continue
        offered = p.params.get("protocolVersions") if isinstance(p.params, dict) else None
        if p.error is None:
            got = p.result.get("protocolVersion") if isinstance(p.result, dict) else p.result
            if got == obs.unoffered_answer or any(c.version == got and got not in c.offered for c in obs.clients):
                continue  # it answers that version whatever is offered: INV-046's finding, one cause
            yield (
                f"connection {p.connection}: initialize offering only {offered} negotiated {got!r}, "
                "want error -32005 (UnsupportedProtocolVersion) when no version overlaps"
            )
        elif p.code != UNSUPPORTED_PROTOCOL_VERSION:
            yield (
                f"connection {p.connection}: initialize offering only {offered} got {p.answer()}, "
                "want -32005 (UnsupportedProtocolVersion)"
            )
    for p in obs.new_wire_probes("empty-versions"):
        if p.answered and p.error is None:
            got = p.result.get("protocolVersion") if isinstance(p.result, dict) else p.result
            if got == obs.unoffered_answer:
                continue  # the version it answers whatever is offered: INV-046's cause
            yield (
                f"connection {p.connection}: initialize with an empty protocolVersions list negotiated "
                f"{got!r}, want an error (-32602 or -32005)"
            )


def negotiation_answers(obs: LiveObservation) -> Iterator[str]:
    """INV-H10 (1.0.0 InitializeResult.protocolVersion, UnsupportedProtocolVersionErrorData):
    every answer to a client's initialize, and to the negotiation before the run, is well-formed:
    a protocolVersion that is a MAJOR.MINOR.PATCH string; a refusal whose supportedVersions are
    versions or ranges — required once the host speaks 1.0.0 (a client negotiated 1.0.0 or
    later: the host is known to speak it)."""
    if obs.negotiation_problem is not None:
        yield f"the negotiation before the run: {obs.negotiation_problem}"
    speaks_100 = any(_at_least(c.version, (1, 0, 0)) for c in obs.clients)
    for p in obs.new_wire_probes("unknown-version"):
        if p.answered and p.code == UNSUPPORTED_PROTOCOL_VERSION:
            data = p.error.get("data") if isinstance(p.error, dict) else None
            problem = refusal_problem(data, required=speaks_100)
            if problem is not None:
                yield f"connection {p.connection}: initialize offering only {p.params.get('protocolVersions')}: {problem}"
    for c in obs.clients:
        if c.negotiation is not None:
            yield f"client {c.index} (offered {c.offered}): {c.negotiation}"
        elif c.refusal_without_versions and speaks_100:
            yield (f"client {c.index} (offered {c.offered}): the -32005 refusal has no data.supportedVersions, "
                   "required since 1.0.0 (the host speaks 1.0.0 to another client)")


def _at_least(version: str | None, than: tuple[int, int, int]) -> bool:
    try:
        return parse_version(version or "") >= than
    except ValueError:
        return False


def unknown_method(obs: LiveObservation) -> Iterator[str]:
    """INV-H05 (JSON-RPC 2.0 §5.1: -32601 "The method does not exist"): an unknown method gets
    error -32601."""
    for p in obs.new_wire_probes("unknown-method"):
        if p.answered and p.code != METHOD_NOT_FOUND:
            yield f"connection {p.connection}: unknown method {p.method!r} got {p.answer()}, want error -32601"


def bad_params(obs: LiveObservation) -> Iterator[str]:
    """INV-H06 (JSON-RPC 2.0 §5.1: -32602 "Invalid method parameter(s)"; WIRE.md §2: params
    always carry a channel URI string): a request with invalid params gets error -32602."""
    for p in obs.new_wire_probes("bad-params"):
        if p.answered and p.code != INVALID_PARAMS:
            yield f"connection {p.connection}: {p.method} with params {p.params} got {p.answer()}, want error -32602"


def bare_values(obs: LiveObservation) -> Iterator[str]:
    """INV-H09 (JSON-RPC 2.0 §4, §5.1; WIRE.md §1, §10): a frame that is valid JSON but not a
    request object gets -32600 with id null (an array: -32600 or silence, as hosts in the wild
    drop batches), and the connection stays open."""
    for c in obs.clients:
        for p in c.probes:
            if not p.is_json:
                continue
            if not p.alive:
                yield f"client {c.index}: the host closed the connection after the JSON value {p.frame[:40]} {p.detail}".rstrip()
                continue
            r = p.reply
            if r is None and p.frame.lstrip().startswith("["):
                continue  # a batch dropped silently: what every implementation seen does
            err = r.get("error") if isinstance(r, dict) else None
            if not isinstance(err, dict) or err.get("code") != INVALID_REQUEST or r.get("id", 0) is not None:
                yield f"client {c.index}: the JSON value {p.frame[:40]} got {r!r}, want an error -32600 with id null"
