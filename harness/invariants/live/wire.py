"""Wire checks over recorded envelope streams (INVARIANTS.md §G): INV-041, 044, 046, 047, X04.

Each check reads a `LiveObservation` (what every simulated client sent and received) and yields
one message per problem. They only look at envelopes and dispatches recorded since the previous
check (`since_env`, `since_disp`), so a long run costs linear time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from harness.spec.versions import introduced_in, parse_version

from .base import ABSENT, ClientView, Dispatch, Envelope, LiveObservation, first_difference

#: Keys a host may canonicalize or enrich in an echoed action (INV-047: directory spelling,
#: INV-034; a chat attachment's pinned `endTurn`). Differences elsewhere are not allowed.
ENRICHABLE = frozenset({"directory", "replacement", "workingDirectories", "endTurn"})


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in ENRICHABLE}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def has_collection(value: Any) -> bool:
    if isinstance(value, dict):
        return value.get("type") == "collection" or any(has_collection(v) for v in value.values())
    if isinstance(value, list):
        return any(has_collection(v) for v in value)
    return False


def _dispatch_of(obs: LiveObservation, origin: Any) -> tuple[ClientView, Dispatch] | None:
    if not isinstance(origin, dict):
        return None
    for c in obs.clients:
        if c.client_id == origin.get("clientId"):
            d = c.dispatch_at(origin.get("clientSeq"))
            if d is not None:
                return c, d
    return None


def server_seq_increasing(obs: LiveObservation) -> Iterator[str]:
    """INV-041 (guide/actions.md: serverSeq is a "monotonically increasing sequence number
    assigned by the server"; Snapshot.fromSeq: "Subsequent actions will have serverSeq >
    fromSeq"; specification/lifecycle.md §Reconnection): on one connection successive envelopes
    have strictly increasing serverSeq; an envelope of C after a snapshot of C has serverSeq >
    fromSeq; a replay returns exactly the envelopes above lastSeenServerSeq."""
    for c in obs.clients:
        start = obs.since_env.get(c.index, 0)
        prev = c.envelopes[start - 1].seq if start > 0 else None
        for i in range(start, len(c.envelopes)):
            e = c.envelopes[i]
            if not isinstance(e.seq, int) or isinstance(e.seq, bool):
                yield f"client {c.index}: envelope #{i} ({e.type}) has serverSeq {e.seq!r}, not an integer"
                continue
            if isinstance(prev, int) and e.seq <= prev:
                yield f"client {c.index}: envelope #{i} ({e.type} on {e.channel}) has serverSeq {e.seq} after {prev}"
            prev = e.seq
        for snap in c.snapshots:
            if not isinstance(snap.from_seq, int):
                continue
            for i in range(max(snap.position, start), len(c.envelopes)):
                e = c.envelopes[i]
                if e.channel == snap.channel and isinstance(e.seq, int) and e.seq <= snap.from_seq:
                    yield (
                        f"client {c.index}: envelope #{i} on {e.channel} has serverSeq {e.seq} "
                        f"<= its snapshot's fromSeq {snap.from_seq}"
                    )
        for r in c.reconnects:
            if not isinstance(r.result, dict) or r.result.get("type") != "replay":
                continue
            got = [x for x in r.result.get("actions") or [] if isinstance(x, dict)]
            seqs = [x.get("serverSeq") for x in got]
            for a, b in itertools.pairwise(seqs):
                if isinstance(a, int) and isinstance(b, int) and b <= a:
                    yield f"client {c.index}: replay has serverSeq {b} after {a}"
            low = [s for s in seqs if isinstance(s, int) and s <= r.last_seen]
            if low:
                yield f"client {c.index}: replay after lastSeenServerSeq {r.last_seen} returned {low}"
            missing = sorted({e.seq for e in r.expected} - set(seqs))
            if missing:
                yield (
                    f"client {c.index}: replay after lastSeenServerSeq {r.last_seen} left out "
                    f"serverSeq {missing} of its subscriptions"
                )


def version_gating(obs: LiveObservation) -> Iterator[str]:
    """INV-046 (specification/versioning.md; ACTION_INTRODUCED_IN): "A host MUST NOT send action
    types … newer than the negotiated version"; the negotiated version is one the client
    offered."""
    for c in obs.clients:
        if c.version is None or c.negotiation is not None:
            continue  # no version, or not a MAJOR.MINOR.PATCH one: INV-H10's finding
        if c.version not in c.offered:
            yield f"client {c.index}: host negotiated {c.version!r}, which the client did not offer ({c.offered})"
            continue
        v = parse_version(c.version)
        for e in obs.new_envelopes(c):
            intro = introduced_in(e.type)
            if intro is not None and intro > v:
                yield (
                    f"client {c.index} negotiated {c.version} but received {e.type} "
                    f"(introduced in {'.'.join(map(str, intro))}) on {e.channel}"
                )
            elif v < V070 and newer_fields(e.action):
                yield f"client {c.index} negotiated {c.version} but {e.type} (serverSeq {e.seq}) carries {newer_fields(e.action)}"
        if v < V070:
            for ch, snap in obs.fresh_for(c).items():
                if obs.kinds.get(ch) in ("session", "chat") and newer_fields(snap.state):
                    yield f"client {c.index} negotiated {c.version} but its snapshot of {ch} carries {newer_fields(snap.state)}"


V070 = (0, 7, 0)
#: State fields a 0.7.0 peer may see and an older one may not (0.7.0 multiroot: the singular
#: workingDirectory was replaced by the workingDirectories list on sessions, chats and summaries).
FIELDS_0_7 = frozenset({"workingDirectories"})


def newer_fields(value: Any, path: str = "") -> list[str]:
    """Paths of 0.7.0-only fields in a state or action payload (for pre-0.7.0 peers)."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in FIELDS_0_7:
                found.append(f"{path}.{k}")
            elif k not in ("attachments", "message", "draft"):  # message content is opaque here
                found += newer_fields(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += newer_fields(v, f"{path}[{i}]")
    return found


def echo_fidelity(obs: LiveObservation) -> Iterator[str]:
    """INV-047 (common/actions.ts ActionOrigin; guide/reconciliation.md): every client action is
    echoed at most once with origin.clientId = the dispatcher's id and origin.clientSeq = the
    dispatched clientSeq; a client's clientSeq values strictly increase and its echoes arrive in
    that order; the echoed action differs from the dispatched one only where the host
    canonicalizes or enriches. Server-originated envelopes omit origin (never null)."""
    for c in obs.clients:
        new = obs.new_dispatches(c)
        start = obs.since_disp.get(c.index, 0)
        prev = c.dispatches[start - 1].client_seq if start > 0 else None
        for d in new:
            if prev is not None and d.client_seq <= prev:
                yield f"client {c.index} dispatched clientSeq {d.client_seq} after {prev}"
            prev = d.client_seq
            if len(d.echoes) > 1:
                yield f"client {c.index}: clientSeq {d.client_seq} ({d.type}) was echoed {len(d.echoes)} times"
        last_own: int | None = None
        for e in reversed(c.envelopes[: obs.since_env.get(c.index, 0)]):  # the latest own echo
            if isinstance(e.origin, dict) and e.origin.get("clientId") == c.client_id and isinstance(e.origin.get("clientSeq"), int):
                last_own = e.origin["clientSeq"]
                break
        for e in obs.new_envelopes(c):
            if e.origin is ABSENT:
                pending = [d for d in c.pending.get(e.channel, []) if d.action == e.action]
                if pending and e.rejection is None:
                    yield (
                        f"client {c.index}: its pending {e.type} (clientSeq {pending[0].client_seq}) came "
                        f"back as a server-originated envelope (serverSeq {e.seq}): the echo lost its origin"
                    )
                continue
            if not isinstance(e.origin, dict):
                yield f"client {c.index}: envelope {e.seq} ({e.type}) has origin {e.origin!r} (omit it, never null)"
                continue
            cid, cseq = e.origin.get("clientId"), e.origin.get("clientSeq")
            if not isinstance(cid, str) or not isinstance(cseq, int) or isinstance(cseq, bool):
                yield f"client {c.index}: envelope {e.seq} ({e.type}) has a malformed origin {e.origin!r}"
                continue
            if cid == c.client_id:
                if last_own is not None and cseq <= last_own:
                    yield f"client {c.index}: echo of clientSeq {cseq} arrived after the echo of {last_own}"
                last_own = cseq
            found = _dispatch_of(obs, e.origin)
            if found is None:
                if any(x.client_id == cid for x in obs.clients):
                    yield f"client {c.index}: envelope {e.seq} names origin {e.origin} that no client dispatched"
                continue
            owner, d = found
            if d.channel != e.channel:
                yield f"client {c.index}: echo of {owner.index}/{d.client_seq} came on {e.channel}, dispatched on {d.channel}"
            elif (owner is c or (c.collections is True and c.version == owner.version)) and (
                c.collections is True or not has_collection(d.action)
            ):
                diff = first_difference(_comparable(d.action), _comparable(e.action))
                if diff:
                    yield f"client {c.index}: echo of client {owner.index}'s clientSeq {d.client_seq} differs from the dispatch at {diff}"


def rejections(obs: LiveObservation) -> Iterator[str]:
    """INV-044 (guide/actions.md §Action Envelope; guide/reconciliation.md step 3; the server
    validation tables): a client action the host does not accept is echoed with the same action,
    the client's origin and a non-empty rejectionReason; an action addressed to a non-existent
    channel gets no echo; and the validation rows that say MUST reject are rejected."""
    for c in obs.clients:
        for e in obs.new_envelopes(c):
            if not e.rejected:
                continue
            if not isinstance(e.rejection, str) or not e.rejection.strip():
                yield f"client {c.index}: rejected envelope {e.seq} ({e.type}) has rejectionReason {e.rejection!r}"
            if not isinstance(e.origin, dict):
                yield f"client {c.index}: rejected envelope {e.seq} ({e.type}) carries no client origin"
        for d in obs.new_dispatches(c):
            # echoed as itself, or as accepted under another dispatch's origin (issue 33: the ahpx
            # mock stamps every echo with the newest client's id — still an echo of this action)
            if d.silent and (d.echoes or obs.accepted_with_another_origin(c.client_id, d.client_seq, d.channel,
                                                                            d.action) is not None):
                yield (
                    f"client {c.index}: {d.type} on the non-existent channel {d.channel} was echoed "
                    "(MUST be silently ignored)"
                )
    yield from must_reject(obs, "INV-044")


def must_reject(obs: LiveObservation, inv_id: str,
                excused: Callable[[Dispatch], bool] | None = None) -> Iterator[str]:
    """Dispatches whose rejection `inv_id` requires, echoed as accepted (shared by the checks).
    The message says MUST or SHOULD as the catalogue's severity for `inv_id` does (a `warning`
    is a SHOULD: INV-053). `excused`: a dispatch the host's own state shows it could accept (the
    expectation came from a fold the host had already parted from: another cause)."""
    from ..registry import REGISTRY  # the registry collects this module: look it up when called

    entry = REGISTRY.get(inv_id)
    word = "SHOULD" if entry is not None and entry.severity == "warning" else "MUST"
    for c in obs.clients:
        for d in obs.new_dispatches(c):
            if d.must_reject != inv_id:
                continue
            accepted = [e for e in d.echoes if not e.rejected]
            if not accepted and not d.echoes:  # its echo went to another connection: still accepted
                elsewhere = obs.accepted_elsewhere(c.client_id, d.client_seq, d.channel) \
                    or obs.accepted_with_another_origin(c.client_id, d.client_seq, d.channel, d.action)
                accepted = [elsewhere] if elsewhere is not None else []
            if accepted and not (excused is not None and excused(d)):
                why = f" ({d.reason})" if d.reason else ""
                yield (
                    f"client {c.index}: {d.type} on {d.channel} was accepted (serverSeq "
                    f"{accepted[0].seq}) but {word} be rejected{why}"
                )


def malformed_frames(obs: LiveObservation) -> Iterator[str]:
    """INV-X04 (WIRE.md §10; JSON-RPC 2.0 §5.1): a frame that is not JSON is answered with error
    -32700 and id null, and the connection stays open."""
    for c in obs.clients:
        for p in c.probes:
            if p.is_json:
                continue  # valid JSON that is not a request: INV-H09's
            if not p.alive:
                yield f"client {c.index}: the host closed the connection after the frame {p.frame[:40]!r} {p.detail}".rstrip()
                continue
            r = p.reply
            err = r.get("error") if isinstance(r, dict) else None
            if not isinstance(err, dict) or err.get("code") != -32700 or r.get("id", 0) is not None:
                yield f"client {c.index}: the frame {p.frame[:40]!r} got {r!r}, want an error -32700 with id null"


def envelope_of(params: dict[str, Any]) -> Envelope:
    return Envelope.from_params(params)
