"""Every live check fails on a crafted counterexample (a recorded envelope stream / states) and
passes on the corrected one. No host needed: the observations are built by hand."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.invariants.live.base import (
    ABSENT,
    ClientView,
    Command,
    Dispatch,
    Envelope,
    LiveObservation,
    Probe,
    Reconnect,
    SessionFacts,
    Snapshot,
    WireProbe,
    first_difference,
    profile_key,
    strip_clock,
)
from harness.invariants.live.checks import LIVE_CHECKS, LIVE_IDS, check_live
from harness.invariants.registry import REGISTRY

S, C, C2 = "ahp-session:/s1", "ahp-chat:/c1", "ahp-chat:/c2"
MAIN = profile_key("0.7.0", True)


def client(i: int = 0, *, version: str = "0.7.0", collections: bool | None = True, delivery: int = 0,
           offered: list[str] | None = None) -> ClientView:
    return ClientView(i, f"cl-{i}", offered or ["0.7.0", "0.6.0"], version=version,
                      collections=collections, delivery_ms=delivery)


def env(seq: int, channel: str, action: dict, origin: object = ABSENT, rejection: object = None) -> Envelope:
    return Envelope(seq, channel, action, origin, rejection)


def own(c: ClientView, seq: int, channel: str, action: dict, *, echo_seq: int | None = None,
        rejection: str | None = None, must: str | None = None) -> Dispatch:
    """A dispatch of `c` and (unless echo_seq is None) its echo, recorded on `c`."""
    d = Dispatch(seq, channel, action, must_reject=must)
    c.dispatches.append(d)
    if echo_seq is not None:
        e = env(echo_seq, channel, action, {"clientId": c.client_id, "clientSeq": seq}, rejection)
        c.envelopes.append(e)
        d.echoes.append(e)
    return d


def obs(*clients: ClientView, fresh: dict[str, Snapshot] | None = None, **kw: object) -> LiveObservation:
    o = LiveObservation(list(clients), kinds={S: "session", C: "chat", C2: "chat"}, **kw)  # type: ignore[arg-type]
    if fresh is not None:
        o.fresh = {MAIN: fresh}
    return o


def subscribed(c: ClientView, channel: str, state: dict, seq: int = 0) -> None:
    c.subscribed.add(channel)
    c.confirmed[channel] = state
    c.history[channel] = [(seq, state)]
    c.snapshots.append(Snapshot(channel, seq, state, len(c.envelopes)))


def session_state(dirs: list[str] | None = None, chats: list[dict] | None = None, **extra: object) -> dict:
    s: dict = {"provider": "p", "title": "t", "status": 1, "lifecycle": "ready", "activeClients": [],
               "chats": chats if chats is not None else [], **extra}
    if dirs is not None:
        s["workingDirectories"] = dirs
    return s


def chat_state(uri: str = C, **extra: object) -> dict:
    return {"resource": uri, "title": "New Chat", "status": 1, "modifiedAt": "x", "turns": [], **extra}


def summary(uri: str = C, **extra: object) -> dict:
    return {"resource": uri, "title": "New Chat", "status": 1, "modifiedAt": "x", **extra}


# -- one counterexample and one correct case per check ------------------------------------------


def seq_not_increasing(ok: bool) -> LiveObservation:
    c = client()
    c.envelopes += [env(1, S, {"type": "session/ready"}), env(2 if ok else 1, S, {"type": "session/ready"})]
    return obs(c)


def seq_below_snapshot(ok: bool) -> LiveObservation:
    c = client()
    subscribed(c, C, chat_state(), seq=10)
    c.envelopes.append(env(11 if ok else 10, C, {"type": "chat/usage", "turnId": "t", "usage": {}}))
    return obs(c)


def replay_incomplete(ok: bool) -> LiveObservation:
    c = client()
    kept = [env(5, S, {"type": "session/ready"}), env(6, S, {"type": "session/ready"})]
    shown = [{"channel": S, "serverSeq": 5, "action": {"type": "session/ready"}},
             {"channel": S, "serverSeq": 6, "action": {"type": "session/ready"}}]
    c.reconnects.append(Reconnect(4, [S], {"type": "replay", "actions": shown if ok else shown[1:], "missing": []}, expected=kept))
    return obs(c)


def version_leak(ok: bool) -> LiveObservation:
    c = client(version="0.6.0", collections=False, offered=["0.6.0"])
    t = "session/titleChanged" if ok else "session/workingDirectorySet"
    c.envelopes.append(env(3, S, {"type": t, "title": "x", "directory": "file:///a"}))
    return obs(c)


def version_leak_in_snapshot(ok: bool) -> LiveObservation:
    c = client(version="0.6.0", collections=False, offered=["0.6.0"])
    entry = summary() if ok else summary(workingDirectories=[])
    o = obs(c)
    o.fresh = {profile_key("0.6.0", False): {S: Snapshot(S, 3, session_state(chats=[entry]))}}
    return o


def echo_without_clientseq(ok: bool) -> LiveObservation:
    c = client()
    action = {"type": "session/titleChanged", "title": "x"}
    d = Dispatch(1, S, action)
    c.dispatches.append(d)
    origin = {"clientId": c.client_id, "clientSeq": 1} if ok else {"clientId": c.client_id}
    e = env(7, S, action, origin)
    c.envelopes.append(e)
    if ok:
        d.echoes.append(e)
    return obs(c)


def echo_lost_origin(ok: bool) -> LiveObservation:
    c = client()
    action = {"type": "session/titleChanged", "title": "x"}
    d = Dispatch(1, S, action)
    c.dispatches.append(d)
    c.pending[S] = [] if ok else [d]
    c.envelopes.append(env(7, S, action, {"clientId": c.client_id, "clientSeq": 1} if ok else ABSENT))
    return obs(c)


def echo_changed(ok: bool) -> LiveObservation:
    c = client()
    d = own(c, 1, S, {"type": "session/titleChanged", "title": "x"})
    e = env(4, S, {"type": "session/titleChanged", "title": "x" if ok else "y"}, {"clientId": c.client_id, "clientSeq": 1})
    c.envelopes.append(e)
    d.echoes.append(e)
    return obs(c)


def rejection_without_reason(ok: bool) -> LiveObservation:
    c = client()
    own(c, 1, C, {"type": "chat/turnCancelled", "turnId": "t", "duration": 0}, echo_seq=3,
        rejection="no active turn" if ok else "")
    return obs(c)


def must_reject(inv: str, action: dict, channel: str = C) -> Callable[[bool], LiveObservation]:
    def build(ok: bool) -> LiveObservation:
        c = client()
        own(c, 1, channel, action, echo_seq=3, rejection="refused" if ok else None, must=inv)
        return obs(c)

    return build


def echoed_unknown_channel(ok: bool) -> LiveObservation:
    c = client()
    d = Dispatch(1, "ahp-chat:/nowhere", {"type": "chat/draftChanged"}, silent=True)
    c.dispatches.append(d)
    if not ok:
        d.echoes.append(env(3, "ahp-chat:/nowhere", d.action, {"clientId": c.client_id, "clientSeq": 1}))
    return obs(c)


def fold_differs(ok: bool) -> LiveObservation:
    c = client()
    subscribed(c, S, session_state(title="a"), seq=1)
    c.history[S].append((2, session_state(title="b")))
    return obs(c, fresh={S: Snapshot(S, 2, session_state(title="b" if ok else "a"))})


def never_echoed(ok: bool) -> LiveObservation:
    c = client()
    subscribed(c, S, session_state())
    d = Dispatch(1, S, {"type": "session/titleChanged", "title": "x"})
    c.dispatches.append(d)
    c.pending[S] = [] if ok else [d]
    return obs(c)


def clients_disagree(ok: bool, delivery: int = 0) -> LiveObservation:
    a, b = client(0), client(1, delivery=delivery)
    subscribed(a, S, session_state(title="x"))
    subscribed(b, S, session_state(title="x" if ok else "y"))
    return obs(a, b)


def summary_out_of_sync(ok: bool) -> LiveObservation:
    c = client()
    fresh = {S: Snapshot(S, 5, session_state(chats=[summary(status=1)])),
             C: Snapshot(C, 5, chat_state(status=1 if ok else 8))}
    return obs(c, fresh=fresh, sessions={S: SessionFacts(S, None)})


def chat_is_the_session(ok: bool) -> LiveObservation:
    """A session whose chats entry names the session itself (a mock with one channel for both)."""
    c = client()
    entry = summary(status=1) if ok else {**summary(status=1), "resource": S}
    fresh = {S: Snapshot(S, 5, session_state(chats=[entry])), C: Snapshot(C, 5, chat_state(status=1))}
    return obs(c, fresh=fresh, sessions={S: SessionFacts(S, None)})


def duplicate_turn_ids(ok: bool) -> LiveObservation:
    turns = [{"id": "t1", "state": "complete"}]
    return obs(client(), fresh={C: Snapshot(C, 5, chat_state(turns=turns, activeTurn={"id": "t2" if ok else "t1"}))})


def dangling_default_chat(ok: bool) -> LiveObservation:
    state = session_state(chats=[summary()], defaultChat=C if ok else C2)
    return obs(client(), fresh={S: Snapshot(S, 5, state)}, sessions={S: SessionFacts(S, None)})


def empty_annotation(ok: bool) -> LiveObservation:
    a = "ahp-session:/s1/annotations"
    state = {"annotations": [{"id": "a1", "entries": [{"id": "e"}] if ok else []}]}
    o = obs(client(), fresh={a: Snapshot(a, 5, state)})
    o.kinds[a] = "annotations"
    return o


def status_not_aggregated(ok: bool) -> LiveObservation:
    state = session_state(chats=[summary(status=24)], defaultChat=C, status=24 if ok else 1)
    return obs(client(), fresh={S: Snapshot(S, 5, state)}, sessions={S: SessionFacts(S, None)})


def subset_outside(ok: bool) -> LiveObservation:
    subset = ["file:///a" if ok else "file:///A/"]
    fresh = {S: Snapshot(S, 5, session_state(["file:///a"], chats=[summary(workingDirectories=subset)])),
             C: Snapshot(C, 5, chat_state(workingDirectories=subset))}
    return obs(client(), fresh=fresh, sessions={S: SessionFacts(S, ["file:///a"])})


def create_chat_outside(ok: bool) -> LiveObservation:
    c = client()
    cmd = Command("createChat", {"channel": S, "chat": C, "workingDirectories": ["file:///z"]}, must_fail="INV-031")
    if ok:
        cmd.error = {"code": -32602, "message": "not in the set"}
    else:
        cmd.result = None
    c.commands.append(cmd)
    return obs(c)


def primary_moved(ok: bool) -> LiveObservation:
    state = session_state(["file:///a", "file:///b"] if ok else ["file:///b"])
    return obs(client(), fresh={S: Snapshot(S, 5, state)},
               sessions={S: SessionFacts(S, ["file:///a", "file:///b"], immutable_primary=True)})


def empty_subset_dropped(ok: bool) -> LiveObservation:
    c = client()
    c.commands.append(Command("createChat", {"channel": S, "chat": C2, "workingDirectories": []}))
    c.snapshots.append(Snapshot(C2, 3, chat_state(C2, **({"workingDirectories": []} if ok else {}))))
    return obs(c)


def _chat_added(dirs: list[str]) -> dict:
    return {"type": "session/chatAdded", "summary": {"resource": C2, "title": "", "status": 1,
                                                     "modifiedAt": "x", "workingDirectories": dirs}}


def empty_subset_dropped_in_catalog(ok: bool) -> LiveObservation:
    c = client()
    c.commands.append(Command("createChat", {"channel": S, "chat": C2, "workingDirectories": []}))
    c.envelopes.append(env(4, S, _chat_added([] if ok else ["file:///a"])))
    return obs(c)


def test_a_rejected_chat_added_is_not_the_catalog_entry() -> None:
    """Seen in a 20-minute clean host:embedded campaign: the server-only scenario dispatched a
    `session/chatAdded` naming a chat the run had created with `workingDirectories: []`, with
    other directories; the host rightly rejected it, and INV-033 read the rejected echo as the
    catalog entry (a false finding). A rejected envelope is not state."""
    c = client()
    c.commands.append(Command("createChat", {"channel": S, "chat": C2, "workingDirectories": []}))
    own(c, 1, S, _chat_added(["file:///a"]), echo_seq=5, rejection="server-only action")
    assert not [v for v in check_live(obs(c), only={"INV-033"})]
    c.envelopes.append(env(6, S, _chat_added(["file:///a"])))  # the control: the host's own
    assert [v.invariant for v in check_live(obs(c), only={"INV-033"})] == ["INV-033"]


COLLECTION = {"type": "collection", "label": "form", "_meta": {"group": "g"},
              "attachments": [{"type": "simple", "label": "a", "_meta": {"part": 1}},
                              {"type": "simple", "label": "b"}]}


def _turn(attachments: list) -> dict:
    return {"type": "chat/turnStarted", "turnId": "t9", "startedAt": "x",
            "message": {"text": "hi", "origin": {"kind": "user"}, "attachments": attachments}}


def metadata_merged(ok: bool) -> LiveObservation:
    c = client()
    d = own(c, 1, C, _turn([COLLECTION]))
    members = COLLECTION["attachments"] if ok else [{**m, "_meta": {"group": "g", **m.get("_meta", {})}} for m in COLLECTION["attachments"]]
    e = env(4, C, _turn([{**COLLECTION, "attachments": members}]), {"clientId": c.client_id, "clientSeq": 1})
    c.envelopes.append(e)
    d.echoes.append(e)
    return obs(c)


def snapshot_loses_collection(ok: bool) -> LiveObservation:
    c = client()
    own(c, 1, C, _turn([COLLECTION]), echo_seq=4)
    stored = [COLLECTION] if ok else COLLECTION["attachments"]
    turn = {"id": "t9", "message": {"text": "hi", "origin": {"kind": "user"}, "attachments": stored}}
    return obs(c, fresh={C: Snapshot(C, 6, chat_state(turns=[turn]))})


def degraded_reordered(ok: bool) -> LiveObservation:
    sender, flat = client(0), client(1, collections=False)
    own(sender, 1, C, _turn([COLLECTION]), echo_seq=4)
    members = COLLECTION["attachments"] if ok else list(reversed(COLLECTION["attachments"]))
    flat.envelopes.append(env(4, C, _turn(members), {"clientId": sender.client_id, "clientSeq": 1}))
    return obs(sender, flat)


def pin_missing(ok: bool) -> LiveObservation:
    c = client()
    att = {"type": "chat", "label": "x", "resource": C2}
    d = own(c, 1, C, _turn([att]))
    d.pins[".message.attachments[0]"] = "t1"
    e = env(4, C, _turn([{**att, "endTurn": "t1"}] if ok else [att]), {"clientId": c.client_id, "clientSeq": 1})
    c.envelopes.append(e)
    d.echoes.append(e)
    return obs(c)


def garbage_probe(ok: bool) -> LiveObservation:
    c = client()
    reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    c.probes.append(Probe("{not json", reply if ok else None, alive=ok))
    return obs(c)


# -- a host in the wild (issue 16): handshake, error codes, bare values, never applied ----------


def wire(check: str, method: str, params: dict, good: dict, bad: dict) -> Callable[[bool], LiveObservation]:
    """A handshake probe whose answer is `good` (ok) or `bad` (the counterexample)."""

    def build(ok: bool) -> LiveObservation:
        o = obs(client())
        o.wire_probes.append(WireProbe(check, method, params, connection=7, **(good if ok else bad)))
        return o

    build.__name__ = check
    return build


ROOTP = {"channel": "ahp-root://"}
ERR = {"code": -32601, "message": "Method not found"}
INIT = {"channel": "ahp-root://", "protocolVersions": ["99.0.0"], "clientId": "p"}


def never_applied(ok: bool) -> LiveObservation:
    c = client()
    subscribed(c, C, chat_state(), seq=3)
    draft = {"text": "d", "origin": {"kind": "user"}}
    own(c, 1, C, {"type": "chat/draftChanged", "draft": draft}, echo_seq=4)
    c.history[C].append((4, chat_state(draft=draft)))
    o = obs(c, fresh={C: Snapshot(C, 4, chat_state(draft=draft) if ok else chat_state())})
    # the reference model's say for this one action: draftChanged sets the draft
    o.reduce = lambda version, kind, state, action: (
        {**state, "draft": action["draft"]} if action.get("type") == "chat/draftChanged" else state)
    return o


def never_applied_echoed_elsewhere(ok: bool) -> LiveObservation:
    """Client 0's draftChanged is echoed as accepted — to another connection only (an observer),
    not to its dispatcher — and never applied: the dispatcher's own fold equals the snapshot, so
    only the echo seen elsewhere shows what the host accepted. Correct: echoed to it, applied."""
    if ok:
        return never_applied(True)
    c = client()
    subscribed(c, C, chat_state(), seq=3)
    draft = {"text": "d", "origin": {"kind": "user"}}
    d = own(c, 1, C, {"type": "chat/draftChanged", "draft": draft})
    c.pending[C] = [d]
    o = obs(c, fresh={C: Snapshot(C, 4, chat_state())})
    o.reduce = never_applied(True).reduce
    o.note_echo(env(4, C, d.action, {"clientId": c.client_id, "clientSeq": 1}), client(-1))
    o.delivered[(c.client_id, 1)] = ["connection 9 (observer 1)"]
    return o


def echo_missed_by_a_subscriber(ok: bool) -> LiveObservation:
    """Client 0's echo reached client 0 but not client 1, which watches the channel (delivery
    without coalescing) and is at a ping-proven quiescence."""
    a, b = client(0), client(1)
    for c in (a, b):
        subscribed(c, S, session_state(title="x"), seq=2)
    d = own(a, 1, S, {"type": "session/titleChanged", "title": "y"}, echo_seq=3)
    e = d.echoes[0]
    a.history[S].append((3, session_state(title="y")))
    a.confirmed[S] = session_state(title="y")
    o = obs(a, b)
    o.note_echo(e, a)
    if ok:
        b.envelopes.append(e)
        b.history[S].append((3, session_state(title="y")))
        b.confirmed[S] = session_state(title="y")
    return o


def bare_value(ok: bool) -> LiveObservation:
    c = client()
    reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    c.probes.append(Probe("null", reply if ok else None, alive=ok))
    return obs(c)


def malformed_answer(ok: bool) -> LiveObservation:
    """The host answered initialize with protocolVersion "1.0" (not MAJOR.MINOR.PATCH)."""
    c = client(offered=["1.0.0", "0.9.0"])
    c.version = "1.0.0" if ok else "1.0"
    c.negotiation = None if ok else "the initialize result's protocolVersion '1.0' is not a MAJOR.MINOR.PATCH version"
    return obs(c)


def bare_refusal_of_a_10_host(ok: bool) -> LiveObservation:
    """A host that speaks 1.0.0 to client 0 refuses client 1 with -32005 and no data."""
    a, b = client(0, offered=["1.0.0", "0.9.0"]), client(1, offered=["0.9.0"])
    a.version, b.version = "1.0.0", None
    b.refusal_without_versions = not ok
    return obs(a, b)


def malformed_refusal_before_the_run(ok: bool) -> LiveObservation:
    o = obs(client())
    o.negotiation_problem = None if ok else "the -32005 refusal's data.supportedVersions[0] is 'latest', not a version"
    return o


V100 = profile_key("1.0.0", True)
ERROR_PART = {"kind": "error", "error": {"errorType": "x", "message": "failed"}, "resumable": True}


def _fresh_100(*snaps: Snapshot) -> LiveObservation:
    o = obs(client(version="1.0.0", offered=["1.0.0"]), sessions={S: SessionFacts(S, None)})
    o.fresh = {V100: {s.channel: s for s in snaps}}
    return o


def error_not_durable(ok: bool) -> LiveObservation:
    """A 1.0.0 host's chat holds a turn that ended in error without its error part (Turn.error)."""
    turn = {"id": "t1", "state": "error", "message": {"text": "hi", "origin": {"kind": "user"}},
            "responseParts": [ERROR_PART] if ok else [], **({} if ok else {"error": ERROR_PART["error"]})}
    return _fresh_100(Snapshot(C, 7, chat_state(turns=[turn])))


def resume_accepted(ok: bool) -> LiveObservation:
    """A 1.0.0 client's turnResume of a turn that is not the latest resumable error (must reject)."""
    c = client(version="1.0.0", offered=["1.0.0"])
    own(c, 1, C, {"type": "chat/turnResume", "turnId": "t-none"}, echo_seq=3,
        rejection="refused" if ok else None, must="INV-X07")
    return obs(c)


def status_not_mirrored(ok: bool) -> LiveObservation:
    """The chat is read (bit 32); its catalogue entry, at the same serverSeq, says it is not."""
    entry = summary(status=33 if ok else 1)
    return _fresh_100(Snapshot(S, 9, session_state(chats=[entry])), Snapshot(C, 9, chat_state(status=33)))


def counts_without_files(ok: bool) -> LiveObservation:
    entry = summary(changes={"additions": 4, "deletions": 1, "files": 1 if ok else 0})
    return _fresh_100(Snapshot(S, 9, session_state(chats=[entry])))


def work_duplicated(ok: bool) -> LiveObservation:
    shell = {"kind": "shell", "id": "w1", "label": "watch", "startedAt": "x", "command": "npm run watch"}
    work = [shell] if ok else [shell, {**shell, "label": "watch (rebuilt)"}]
    return _fresh_100(Snapshot(C, 9, chat_state(backgroundWork=work)))


def chat_misplaced(ok: bool) -> LiveObservation:
    """moveChat of C after C2 was accepted; the catalogue holds C before C2."""
    c = client(version="1.0.0", offered=["1.0.0"])
    c.commands.append(Command("moveChat", {"channel": C, "destination": {"kind": "session", "session": S, "after": C2}},
                              result={"session": S}))
    order = [C2, C] if ok else [C, C2]
    o = obs(c)
    o.fresh = {V100: {S: Snapshot(S, 9, session_state(chats=[summary(u) for u in order]))}}
    return o


def turns_refused(ok: bool) -> LiveObservation:
    """Every plain chat/turnStarted rejected (a host keeping turns on the session channel, issue
    33). Correct: the first is accepted (a later one refused while a turn runs is the host's say)."""
    c = client()
    for i in (1, 2):
        turn = {"type": "chat/turnStarted", "turnId": f"t{i}", "startedAt": "2026-01-01T00:00:00.000Z",
                "message": {"text": "hi", "origin": {"kind": "user"}}}
        own(c, i, C, turn, echo_seq=i, rejection=None if ok and i == 1 else "turns start on the session channel")
    return obs(c)


CASES: dict[str, list[Callable[[bool], LiveObservation]]] = {
    "INV-022": [duplicate_turn_ids],
    "INV-026": [dangling_default_chat, must_reject("INV-026", {"type": "session/defaultChatChanged", "defaultChat": C2}, S)],
    "INV-031": [subset_outside, create_chat_outside,
                must_reject("INV-031", {"type": "chat/workingDirectorySet", "directory": "file:///z"})],
    "INV-032": [primary_moved, must_reject("INV-032", {"type": "session/workingDirectoryRemoved", "directory": "file:///a"}, S)],
    "INV-033": [empty_subset_dropped, empty_subset_dropped_in_catalog],
    "INV-037": [must_reject("INV-037", _turn([{"type": "collection", "label": "e", "attachments": []}]))],
    "INV-038": [metadata_merged],
    "INV-039": [snapshot_loses_collection],
    "INV-040": [degraded_reordered],
    "INV-041": [seq_not_increasing, seq_below_snapshot, replay_incomplete],
    "INV-042": [fold_differs],
    "INV-043": [lambda ok: clients_disagree(ok, delivery=20)],
    "INV-044": [rejection_without_reason, echoed_unknown_channel,
                must_reject("INV-044", {"type": "chat/turnCancelled", "turnId": "t", "duration": 0})],
    "INV-045": [never_echoed, clients_disagree, echo_missed_by_a_subscriber],
    "INV-046": [version_leak, version_leak_in_snapshot],
    "INV-047": [echo_without_clientseq, echo_lost_origin, echo_changed],
    "INV-048": [summary_out_of_sync, chat_is_the_session],
    "INV-049": [empty_annotation, must_reject("INV-049", {"type": "annotations/entryRemoved"}, "ahp-session:/s1/annotations")],
    "INV-052": [status_not_aggregated],
    "INV-053": [must_reject("INV-053", {"type": "session/ready"}, S)],
    "INV-X04": [garbage_probe],
    "INV-X05": [pin_missing],
    "INV-X06": [error_not_durable],
    "INV-X07": [resume_accepted],
    "INV-X08": [status_not_mirrored],
    "INV-X09": [counts_without_files],
    "INV-X10": [work_duplicated],
    "INV-X11": [chat_misplaced],
    "INV-H01": [wire("ping", "ping", ROOTP, {"result": None}, {"error": ERR}),
                wire("ping", "ping", ROOTP, {"result": None}, {"answered": False, "lost": "silence"})],
    "INV-H02": [wire("before-initialize", "subscribe", ROOTP, {"error": ERR}, {"result": {"snapshot": {}}})],
    "INV-H03": [wire("second-initialize", "initialize", INIT, {"error": {"code": -32600, "message": "again"}},
                     {"result": {"protocolVersion": "0.7.0"}})],
    "INV-H04": [wire("unknown-version", "initialize", INIT, {"error": {"code": -32005, "message": "no"}},
                     {"result": {"protocolVersion": "0.7.0"}}),
                wire("unknown-version", "initialize", INIT, {"error": {"code": -32005, "message": "no"}},
                     {"error": {"code": -32602, "message": "no"}}),
                wire("empty-versions", "initialize", {**INIT, "protocolVersions": []},
                     {"error": {"code": -32602, "message": "empty"}}, {"result": {"protocolVersion": "0.7.0"}})],
    "INV-H05": [wire("unknown-method", "x-nope", ROOTP, {"error": ERR}, {"error": {"code": -32603, "message": "x"}})],
    "INV-H06": [wire("bad-params", "subscribe", {"channel": 42}, {"error": {"code": -32602, "message": "x"}},
                     {"result": {"snapshot": {}}})],
    "INV-H07": [never_applied, never_applied_echoed_elsewhere],
    "INV-H09": [bare_value],
    "INV-H10": [malformed_answer, bare_refusal_of_a_10_host, malformed_refusal_before_the_run],
    "INV-H11": [turns_refused],
}
PARAMS = [pytest.param(inv, build, id=f"{inv}-{i}") for inv, builds in CASES.items() for i, build in enumerate(builds)]


@pytest.mark.parametrize(("inv", "build"), PARAMS)
def test_counterexample_fails(inv: str, build: Callable[[bool], LiveObservation]) -> None:
    found = check_live(build(False), only={inv})
    assert found, f"{inv} did not fire on its counterexample"
    assert {v.invariant for v in found} == {inv}
    assert all(v.severity == REGISTRY[inv].severity for v in found)


@pytest.mark.parametrize(("inv", "build"), PARAMS)
def test_correct_case_passes_every_check(inv: str, build: Callable[[bool], LiveObservation]) -> None:
    assert check_live(build(True)) == []


def test_every_live_check_has_a_case() -> None:
    assert set(CASES) == LIVE_IDS
    for chk in LIVE_CHECKS:
        assert chk.id in REGISTRY, f"{chk.id} has no catalogue entry"
        inv = REGISTRY[chk.id]
        # live-only entries say where they are checked; INV-033 also has a per-step reducer check
        assert inv.elsewhere or inv.check is not None, chk.id
        assert len(chk.doc) > 40, f"{chk.id}: the docstring must quote its normative sentence"


def test_checks_look_only_at_what_is_new() -> None:
    o = seq_not_increasing(False)
    assert check_live(o, only={"INV-041"})
    o.since_env = {0: 2}
    assert check_live(o, only={"INV-041"}) == []


def test_a_rejected_echo_of_a_collection_is_not_a_degradation_finding() -> None:
    sender, flat = client(0), client(1, collections=False)
    own(sender, 1, C, _turn([COLLECTION]), echo_seq=4, rejection="no")
    flat.envelopes.append(env(4, C, _turn([COLLECTION]), {"clientId": sender.client_id, "clientSeq": 1}, "no"))
    assert check_live(obs(sender, flat), only={"INV-040"}) == []


def test_a_060_peer_does_not_compare_the_projected_working_directory() -> None:
    c = client(version="0.6.0", collections=False, offered=["0.6.0"])
    subscribed(c, S, session_state(workingDirectory="file:///a"))
    o = obs(c)
    o.fresh = {profile_key("0.6.0", False): {S: Snapshot(S, 0, session_state(workingDirectory="file:///b"))}}
    assert check_live(o, only={"INV-042"}) == []
    o.fresh[profile_key("0.6.0", False)][S] = Snapshot(S, 0, session_state(title="other", workingDirectory="file:///b"))
    assert check_live(o, only={"INV-042"})


def test_first_difference_and_strip_clock() -> None:
    assert first_difference({"a": []}, {"a": []}) is None
    assert "only in the first" in (first_difference({"a": []}, {}) or "")
    assert first_difference([1, 2], [1]) == " has 2 vs 1 items"
    assert strip_clock({"modifiedAt": 1, "x": [{"modifiedAt": 2, "y": 3}]}) == {"x": [{"y": 3}]}


def test_main_fresh_is_the_richest_profile() -> None:
    o = primary_moved(True)
    o.fresh = {profile_key("0.6.0", False): {S: Snapshot(S, 5, session_state(workingDirectory="file:///a"))},
               **o.fresh}
    assert o.main_fresh() is o.fresh[MAIN]
    assert check_live(o, only={"INV-032"}) == []
    only_old = primary_moved(True)
    only_old.fresh = {profile_key("0.6.0", False): {S: Snapshot(S, 5, session_state(workingDirectory="file:///b"))}}
    assert check_live(only_old, only={"INV-032", "INV-031"}) == []  # nothing a 0.6.0 view can show


def test_a_never_applied_action_is_h07_not_a_fold_mismatch() -> None:
    found = check_live(never_applied(False))
    assert [v.invariant for v in found] == ["INV-H07"]
    assert "accepted but never applied" in found[0].message and "chat/draftChanged" in found[0].message


def test_a_fold_mismatch_names_the_envelope_it_diverged_at() -> None:
    o = fold_differs(False)
    o.clients[0].envelopes.append(env(2, S, {"type": "session/titleChanged", "title": "b"}))
    [v] = check_live(o, only={"INV-042"})
    assert "first envelope it does not reflect is serverSeq 2 (session/titleChanged, server-originated)" in v.message


def test_a_lost_echo_says_which_connection_got_it() -> None:
    o = never_echoed(False)
    o.delivered[("cl-0", 1)] = ["connection 9 (observer 1)"]
    [v] = check_live(o, only={"INV-045"})
    assert "delivered to connection 9 (observer 1)" in v.message


def test_a_json_value_probe_is_not_a_parse_error_finding() -> None:
    o = bare_value(True)
    o.clients[0].probes[0].reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert [v.invariant for v in check_live(o)] == ["INV-H09"]


def test_a_never_applied_action_echoed_to_another_connection_is_still_h07() -> None:
    messages = [v.message for v in check_live(never_applied_echoed_elsewhere(False)) if v.invariant == "INV-H07"]
    assert len(messages) == 1 and "accepted but never applied" in messages[0]


def test_a_missed_echo_is_named_once_not_as_a_disagreement_or_a_fold_mismatch() -> None:
    o = echo_missed_by_a_subscriber(False)
    o.fresh = {MAIN: {S: Snapshot(S, 3, session_state(title="y"))}}
    found = check_live(o)
    assert [v.invariant for v in found] == ["INV-045"]
    assert "client 1 watches ahp-session:/s1 but never received serverSeq 3" in found[0].message
    assert "only its dispatcher's connection received" in found[0].message


def test_a_missed_echo_after_a_timed_drain_needs_a_later_envelope() -> None:
    o = echo_missed_by_a_subscriber(False)
    o.settled = False  # a drain proves nothing about client 1: nothing after serverSeq 3 reached it
    assert [v.invariant for v in check_live(o)] == ["INV-045"]  # the disagreement, not a missed echo
    assert "disagree" in check_live(o)[0].message


def test_clients_disagreeing_because_an_echo_went_astray_are_one_finding() -> None:
    """Client 1's dispatch is pending while its echo reached client 0 only: INV-045 names that;
    the coalescing comparison (INV-043) stays quiet, and so does the fold check (INV-042)."""
    a, b = client(0), client(1, delivery=20)
    for c in (a, b):
        subscribed(c, S, session_state(title="x"), seq=2)
    d = own(b, 1, S, {"type": "session/titleChanged", "title": "y"})
    b.pending[S] = [d]
    e = env(3, S, d.action, {"clientId": b.client_id, "clientSeq": 1})
    a.envelopes.append(e)
    a.history[S].append((3, session_state(title="y")))
    a.confirmed[S] = session_state(title="y")
    o = obs(a, b, fresh={S: Snapshot(S, 3, session_state(title="y"))})
    o.note_echo(e, a)
    o.delivered[(b.client_id, 1)] = ["connection 1 (client 0)"]
    found = check_live(o)
    assert [v.invariant for v in found] == ["INV-045"]
    assert "delivered to connection 1 (client 0) instead" in found[0].message


def test_create_chat_outside_the_folded_set_is_not_inv031_when_the_host_set_holds_it() -> None:
    """The fold said file:///z was not in the session's set (so createChat MUST fail), but the
    host's real snapshot of the session has it: the host diverged earlier (another cause)."""
    o = create_chat_outside(False)
    o.fresh = {MAIN: {S: Snapshot(S, 7, session_state(["file:///z"]))}}
    assert [v for v in check_live(o) if v.invariant == "INV-031"] == []
    o.fresh = {MAIN: {S: Snapshot(S, 7, session_state(["file:///a"]))}}
    assert [v.invariant for v in check_live(o)] == ["INV-031"]


def test_a_command_is_judged_at_the_op_that_sent_it_only() -> None:
    o = create_chat_outside(False)
    assert [v.invariant for v in check_live(o)] == ["INV-031"]
    o.since_cmd[0] = 1  # the next op: the command was judged already
    assert check_live(o) == []


def test_a_directory_set_the_folds_said_must_fail_is_not_inv031_when_the_host_set_holds_it() -> None:
    """chat/workingDirectorySet of file:///z was accepted; the folds said the session's set lacks
    it, the host's real snapshot of the session has it: an earlier divergence, not INV-031."""
    o = must_reject("INV-031", {"type": "chat/workingDirectorySet", "directory": "file:///z"})(False)
    o.chat_session[C] = S
    o.fresh = {MAIN: {S: Snapshot(S, 7, session_state(["file:///a", "file:///z"]))}}
    assert [v for v in check_live(o) if v.invariant == "INV-031"] == []
    o.fresh = {MAIN: {S: Snapshot(S, 7, session_state(["file:///a"]))}}
    assert [v.invariant for v in check_live(o)] == ["INV-031"]
    o.fresh = {MAIN: {S: Snapshot(S, None, session_state(["file:///a", "file:///z"]))}}  # a fold proves nothing
    assert [v.invariant for v in check_live(o)] == ["INV-031"]


def test_an_echo_known_only_from_a_replay_or_its_own_is_not_a_missed_echo() -> None:
    """An echo that came in another client's reconnect replay (it may predate this run: pooled
    connections carry an earlier run's fold) or the dispatcher's own (the pending queue's) never
    makes a subscriber "never received" it."""
    o = echo_missed_by_a_subscriber(False)
    (e,) = o.echoes[S].values()
    o.echoes = {}
    o.note_echo(e, client(2), live=False)
    assert list(o.missed_echoes()) == []
    o.echoes = {}
    o.note_echo(e, o.clients[0])
    assert [c.index for c, _ in o.missed_echoes()] == [1]  # client 1, never client 0 (its dispatcher)


def test_an_answer_that_ignores_the_offer_is_one_finding_not_two() -> None:
    """A host that answers 0.5.0 whatever is offered: the client that got the unoffered 0.5.0 is
    INV-046's finding; the 99.0.0 probe that also got 0.5.0 is that cause again, not INV-H04's."""
    probe = wire("unknown-version", "initialize", INIT, {"error": {"code": -32005, "message": "no"}},
                 {"result": {"protocolVersion": "0.5.0"}})(False)
    assert {v.invariant for v in check_live(probe, only={"INV-H04"})} == {"INV-H04"}  # alone: H04's
    probe.clients.append(client(1, version="0.5.0"))  # offered 0.7.0, 0.6.0; got 0.5.0
    assert {v.invariant for v in check_live(probe, only={"INV-H04", "INV-046"})} == {"INV-046"}
    alone = wire("unknown-version", "initialize", INIT, {"error": {"code": -32005, "message": "no"}},
                 {"result": {"protocolVersion": "0.5.0"}})(False)
    alone.unoffered_answer = "0.5.0"  # what the negotiation before the run got for the real offer
    assert check_live(alone, only={"INV-H04"}) == []
    empty = wire("empty-versions", "initialize", {**INIT, "protocolVersions": []},
                 {"error": {"code": -32602, "message": "empty"}}, {"result": {"protocolVersion": "0.5.0"}})(False)
    assert check_live(empty, only={"INV-H04"}) != []
    empty.unoffered_answer = "0.5.0"
    assert check_live(empty, only={"INV-H04"}) == []


def test_a_fold_apart_from_a_10_state_rule_is_that_rules_finding() -> None:
    """INV-042 leaves to INV-X06 / X10 a channel whose host state breaks them (one cause)."""
    for build, inv in ((error_not_durable, "INV-X06"), (work_duplicated, "INV-X10")):
        o = build(False)
        c = o.clients[0]
        fold = build(True).fresh[V100][C].state
        subscribed(c, C, fold, seq=9)
        assert {v.invariant for v in check_live(o, only={"INV-042", inv})} == {inv}
        o.fresh[V100][C] = Snapshot(C, 9, {**o.fresh[V100][C].state, "title": "elsewhere"})
        assert "INV-042" not in {v.invariant for v in check_live(o)}  # still the rule's finding
    ok = status_not_mirrored(False)
    assert {v.invariant for v in check_live(ok, only={"INV-048", "INV-X08"})} == {"INV-X08"}


def test_a_09_peer_is_compared_without_what_only_10_actions_change() -> None:
    """A 0.9.0 peer of a 1.0.0 host gets no chat/isReadChanged nor backgroundWorkSet: its fold is
    compared with the host's snapshot without the IsRead bit and the 1.0.0 fields (not INV-042);
    a 0.9.0 field it could follow still counts."""
    c = client(version="0.9.0", offered=["0.9.0"])
    subscribed(c, C, chat_state(), seq=9)
    o = obs(c)
    host = chat_state(status=33, backgroundWork=[{"kind": "shell", "id": "w"}], movable=True)
    o.fresh = {profile_key("0.9.0", True): {C: Snapshot(C, 9, host)}}
    assert check_live(o, only={"INV-042"}) == []
    o.fresh = {profile_key("0.9.0", True): {C: Snapshot(C, 9, {**host, "title": "other"})}}
    assert check_live(o, only={"INV-042"}) != []


def test_flag_bits_are_inv_048s_only_where_no_peer_speaks_10() -> None:
    """INV-048 leaves bits 32/64 to INV-X08 where the host speaks 1.0.0 (a 0.9.0 peer's fold cannot
    follow them); a 0.7.0 host's mismatch in those bits is still INV-048's."""
    o = status_not_mirrored(False)
    o.fresh = {MAIN: o.fresh[V100]}  # the same states, seen by a 0.7.0 peer of a 0.7.0 host
    o.clients = [client()]
    assert {v.invariant for v in check_live(o, only={"INV-048", "INV-X08"})} == {"INV-048"}
    o.clients = [client(version="1.0.0", offered=["1.0.0"]), client(1, version="0.9.0", offered=["0.9.0"])]
    o.fresh = {profile_key("0.9.0", False): o.fresh[MAIN]}  # only the 0.9.0 peer's view
    assert check_live(o, only={"INV-048", "INV-X08"}) == []
def test_turns_refused_to_a_client_of_a_version_before_chat_channels_are_not_inv_h11() -> None:
    o = turns_refused(False)
    assert check_live(o, only={"INV-H11"})
    o.clients[0].version = "0.3.0"  # its turns live on the session channel: that version's own
    assert check_live(o, only={"INV-H11"}) == []


@pytest.mark.parametrize("rejected", [False, True])
def test_a_server_only_action_echoed_with_another_clients_origin_is_still_accepted(rejected: bool) -> None:
    # issue 33: the ahpx mock stamps every echo with the newest client's id; its acceptance of a
    # server-only type (INV-053) showed only as INV-045/INV-047 (origin), never as itself
    c, other = client(0), client(1)
    own(c, 1, S, {"type": "session/ready"}, must="INV-053")
    o = obs(c, other)
    o.note_echo(env(3, S, {"type": "session/ready"}, {"clientId": other.client_id, "clientSeq": 1},
                    "refused" if rejected else None), other)
    found = check_live(o, only={"INV-053"})
    assert [v.invariant for v in found] == ([] if rejected else ["INV-053"])


def test_an_unknown_channels_dispatch_echoed_with_another_clients_origin_is_still_echoed() -> None:
    # issue 33: the ahpx mock echoes a dispatch to a channel that does not exist (MUST be ignored)
    # but stamps the echo with the newest client's id: INV-044 saw it only when the dispatcher was
    # that client (seed 1 of three)
    c, other = client(0), client(1)
    gone = "ahp-chat:/gone"
    d = own(c, 1, gone, {"type": "chat/draftChanged"})
    d.silent = True
    o = obs(c, other)
    assert check_live(o, only={"INV-044"}) == []
    o.note_echo(env(3, gone, {"type": "chat/draftChanged"}, {"clientId": other.client_id, "clientSeq": 1}), other)
    found = check_live(o, only={"INV-044"})
    assert [v.invariant for v in found] == ["INV-044"] and "non-existent channel" in found[0].message
