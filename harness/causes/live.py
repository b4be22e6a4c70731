"""Live findings' causes: what a host did, in the reducer findings' vocabulary (issue 33).

A live violation is signed by what the host did, never by the trace that showed it, so one root
cause is one finding and one id in every run, seed and scenario (and a matrix joins live columns
on it, harness/report/matrix.py):

* **the connection or the host** — `connection-closed` / `host-died` on a *trigger*: what the
  host was sent when it happened, in words the live half gives (`a null frame`, `a non-JSON
  frame`, `a dispatch to an unknown channel`, `the createChat command` …). A malformed-frame
  check (INV-X04, INV-H09) that saw the connection close is that close: one cause whichever
  check noticed it. A host that hung is `failure`/`TARGET-TIMEOUT` on its trigger.
* **an answer to a frame** — `frame-answered`: the frame's JSON type and what came back (silence,
  an error code, a result), so "drops a non-JSON frame" and "closes the connection on it" are two
  causes, not one.
* **an accepted action never applied** — `unapplied-accepted` with the action type (INV-H07).
* **anything else** — the check's words with values, URIs and client ids taken out
  (`check_cause` over a message whose run namespace is normalised).

The live half (harness/live/signing.py) computes the trigger and hands it in; this room never
imports the live half.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Final

from .transformation import Cause, Witnesses, check_cause

#: The pseudo-invariants of the live half (harness/live/failure.py, wild.py).
LIVE_FAILURES: Final = {"TARGET-CRASH": "connection-closed", "TARGET-DIED": "host-died"}
#: What a live finding's witnesses count as its kind (a live run's `kindsFuzzed`).
LIVE_KIND: Final = "live"

_FRAME_CLOSED: Final = re.compile(
    r"the host closed the connection after the (?:frame (?P<text>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|JSON value (?P<value>.*?))(?: \(|$)")
_FRAME_GOT: Final = re.compile(r"the (?:frame .*|JSON value .*) got (?P<reply>.*), want an error (?P<want>-?\d+)")
_CODE: Final = re.compile(r"'code': (-?\d+)")
_UNAPPLIED: Final = re.compile(r"accepted but never applied: serverSeq \d+ \((?P<type>[^,]+),")
#: The run's namespace (`fz-<token>-…`), URIs and connection numbers, and the JSON a check quotes
#: of what the host answered or was offered (a result, params, an offer list: cut at different
#: lengths, with the run's values in them): what varies between runs.
_RUN_VARYING: Final = (
    (re.compile(r"\b(result|params) [\[{][^()]*?(?=, want| want| got|\)|$)"), r"\1 …"),
    (re.compile(r"\([\[{][^()]*\)"), "(…)"),
    (re.compile(r"\b[a-z][a-z0-9+.-]*:/[^\s,;)'\"\]]*"), "URI"),
    (re.compile(r"\bfz-[0-9a-f]{8}-[\w-]*"), "CLIENT"),
    (re.compile(r"\bconnection \d+"), "connection N"),
)


def frame_type(text: str) -> str:
    """A frame's class as a host that chokes on it meets it: `non-JSON`, or the JSON type of
    its value (`null`, `number`, `string`, `boolean`, `array`, `object`)."""
    try:
        value = json.loads(text)
    except ValueError:
        return "non-JSON"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def frame_trigger(text: str) -> str:
    """The trigger words for a frame: `a null frame`, `an array frame`, `a non-JSON frame` …"""
    kind = frame_type(text)
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} frame"


def closed_cause(trigger: str) -> Cause:
    return Cause(("connection-closed", trigger), f"the host closes the connection on {trigger}")


def died_cause(trigger: str) -> Cause:
    return Cause(("host-died", trigger), f"the host dies on {trigger}")


def live_cause(invariant: str, message: str, trigger: str | None) -> Cause:
    """The cause of the live violation `invariant`/`message`, seen on the op `trigger` names
    (None: an op the live half has no words for)."""
    what = trigger or "an op"
    if invariant == "TARGET-DIED":
        return died_cause(what)
    if invariant == "TARGET-CRASH":
        return closed_cause(what)
    if invariant == "TARGET-TIMEOUT":
        return Cause(("failure", "TARGET-TIMEOUT", what), f"the host does not answer {what}")
    if invariant in ("INV-X04", "INV-H09"):
        closed = _FRAME_CLOSED.search(message)
        if closed is not None:
            text = closed.group("text")
            return closed_cause(frame_trigger(_unquote(text) if text is not None else closed.group("value")))
        got = _FRAME_GOT.search(message)
        if got is not None:
            ftype = "non-JSON" if invariant == "INV-X04" else "JSON value"
            return Cause(("frame-answered", ftype, _reply_class(got.group("reply")), got.group("want")),
                         f"the host answers a {ftype} frame with {_reply_class(got.group('reply'))}, "
                         f"not error {got.group('want')}")
    if invariant == "INV-H07":
        m = _UNAPPLIED.search(message)
        if m is not None:
            t = m.group("type").strip()
            return Cause(("unapplied-accepted", t), f"the host accepts {t} but never applies it")
    cause = check_cause(invariant, normalise(message))
    if cause.transformation != "check":
        return cause
    at = _STATE_AT.search(message) if invariant in STATE_COMPARISONS else None
    if at is not None:  # which field the host's states differ at is what it did, whichever check saw it
        field = f".{at.group('key')}"
        return Cause(("state-differs", field),
                     f"the host's state at {field} is not what its snapshots and envelopes say")
    return Cause(cause.key, f"{invariant}: {_SUMMARY_VARYING.sub(_placeholder, normalise(message))[:160]}")


#: The checks that compare two states of one channel (a fold and a fresh snapshot, two clients'):
#: a difference at one field is one cause whichever of them saw it first (the ahpx mock's made-up
#: `createdAt` showed as INV-042 in one seed and as INV-043 in another).
STATE_COMPARISONS: Final = frozenset({"INV-042", "INV-043", "INV-045"})


#: Where a live state check's two states first differ (`… differs from a fresh snapshot at
#: .activeSessions: 6 vs 7`, `clients 2 and 3 disagree on URI at quiescence: .createdAt: …`): the
#: top-level field is the cause (a count the host changes silently and a timestamp it makes up per
#: answer are two behaviours; the message shape alone has both as `.P: N vs N`).
_STATE_AT: Final = re.compile(r"(?:differs from a fresh snapshot at|disagree on \S+?(?: at quiescence)?:) "
                              r"\.(?P<key>[A-Za-z_$][\w$]*)")


#: The host applies none of the client actions it accepted (INV-H07 in a campaign where no fresh
#: snapshot ever showed one): one cause, whichever action types the run happened to send.
UNAPPLIED_ANY: Final = Cause(("unapplied-accepted", "*"),
                             "the host applies no client action it accepts (none shows in its snapshots)")

#: The host echoes a client's action under another dispatch's origin: every echo check that
#: pairs echoes with dispatches (INV-045, INV-047) then sees that one cause.
MISATTRIBUTED: Final = Cause(("echo-origin-misattributed",),
                             "the host echoes a client's action under another dispatch's origin (clientId, clientSeq)")
ECHO_CHECKS: Final = frozenset({"INV-045", "INV-047"})


def live_witnesses(invariant: str) -> Witnesses:
    """A live finding's witnesses: its invariant and the live kind (no action type: a live run's
    kinds are `live`, so the matrix judges a live cause's applicability by that kind)."""
    w = Witnesses()
    w.add(invariant, "<live>", LIVE_KIND)
    w.action_types.clear()
    return w


#: What a summary leaves out besides `normalise`'s: which client, which serverSeq or clientSeq, a
#: quoted value (the summary reads the same in every run, as the id does).
_SUMMARY_VARYING: Final = re.compile(r"\b(clients?|serverSeq|clientSeq|fromSeq) \d+(?: and (?:client )?\d+)?|"
                                     r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|"
                                     r"\b(?:[a-z]+/[A-Za-z]+)\b")


def _placeholder(m: re.Match[str]) -> str:
    if m.group(1):
        return f"{m.group(1)} N"
    return "<type>" if "/" in m.group(0) and m.group(0)[0] not in "'\"" else "…"


def normalise(message: str) -> str:
    """A live check's message without what varies between runs (URIs, client ids, connections,
    the JSON it quotes of an answer or an offer)."""
    for pattern, placeholder in _RUN_VARYING:
        message = pattern.sub(placeholder, message)
    return message


def _unquote(text: str) -> str:
    try:
        value = ast.literal_eval(text)  # the check quotes the frame with repr()
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _reply_class(reply: str) -> str:
    if reply.strip() == "None":
        return "silence"
    code = _CODE.search(reply)
    if code is not None:
        return f"error {code.group(1)}"
    return "a result" if "'result'" in reply else "an answer"
