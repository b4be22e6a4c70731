"""Malformed WebSocket frames for a JSON-RPC AHP host, each with the answer it should get.

A `FrameCase` is one or more frames sent back to back plus what the host must answer, per the
malformed-input policy of WIRE.md §10 (the recommendations for "our" host, which are also what
JSON-RPC 2.0 prescribes): -32700 with id null for text that is not JSON or binary that is not
UTF-8; -32600 for a non-object, a wrong `jsonrpc`, a bad id or a request without `method`;
a batch gets one -32600 with id null *or* silence (both seen in the wild); -32601 for an unknown
method and for requests before `initialize`; -32602 for params that are not an object or lack
`channel`; silence for notifications and stray responses; close code 1009 for a frame over the
host's size limit. Reused ids must each get their own answer.

`frame_cases(max_message_bytes)` is the strategy; `draw_cases(n, seed=…)` draws a fixed list
(deterministic for a seed) for drivers and benches that are not Hypothesis tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT: Final = "ahp-root://"
#: Methods a host answers before `initialize`; anything else must be refused (-32601).
PRE_INITIALIZE: Final = frozenset({"initialize", "ping", "reconnect"})
#: Methods of the AHP command map (an unknown method is drawn outside this set).
KNOWN_METHODS: Final = frozenset(
    {
        "initialize", "ping", "reconnect", "subscribe", "unsubscribe", "dispatchAction",
        "createSession", "disposeSession", "createChat", "disposeChat", "fetchTurns",
        "completions", "listSessions", "resolveSessionConfig", "sessionConfigCompletions",
        "authenticate", "createTerminal", "disposeTerminal", "invokeChangesetOperation",
        "createResourceWatch", "resourceRead", "resourceWrite", "resourceList", "resourceCopy",
        "resourceMove", "resourceDelete", "resourceResolve", "resourceMkdir", "resourceRequest",
        "moveChat",
    }
)
#: Requests whose params this fuzzer breaks (each needs an object with a string `channel`).
PARAM_METHODS: Final = ("subscribe", "listSessions", "createSession", "createChat", "fetchTurns", "disposeSession")

ExpectKind = Literal["error", "result", "silence", "close", "error-or-silence"]


@dataclass(frozen=True, slots=True)
class Expect:
    """One expected reaction: an error answer (`code`, `req_id`), a result, silence or a close."""

    kind: ExpectKind
    code: int | None = None
    req_id: Any = None
    #: Other error codes WIRE.md accepts for the same frame (e.g. deep nesting: -32700 or -32600).
    alt: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class FrameCase:
    """Frames sent back to back on one connection, and the reactions expected, in order.

    `fresh`: send on a new connection that has not initialized (requests-before-initialize).
    """

    kind: str
    frames: tuple[Frame, ...]
    expect: tuple[Expect, ...]
    fresh: bool = False


#: One WebSocket message: a text frame, a binary frame, or a text message sent fragmented (the
#: tuple's parts as continuation frames: a host must reassemble them into one message).
Frame = str | bytes | tuple[str, ...]


def _rpc(req_id: Any, method: Any, params: Any = None, *, jsonrpc: Any = "2.0") -> str:
    msg: dict[str, Any] = {"jsonrpc": jsonrpc, "id": req_id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


ids = st.integers(min_value=1, max_value=2**53) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12
).filter(lambda s: not s.startswith("sentinel"))
json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)

_GARBAGE_PREFIXES = ("{", "[", '{"jsonrpc":"2.0","id":', '{"jsonrpc":', "nul", "tru", "'", "{'a':1}", "NaN", "Infinity")


@st.composite
def invalid_json(draw: st.DrawFn) -> FrameCase:
    text = draw(
        st.one_of(
            st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60),
            st.builds(lambda p, t: p + t, st.sampled_from(_GARBAGE_PREFIXES), st.text(max_size=20)),
            st.builds(lambda v: json.dumps(v)[:-1], json_values.filter(lambda v: isinstance(v, (dict, list)))),
        ).filter(lambda t: not _is_json(t))
    )
    return FrameCase("invalid-json", (text,), (Expect("error", -32700, None),))


@st.composite
def invalid_utf8(draw: st.DrawFn) -> FrameCase:
    raw = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xe2\x82", b"{\"a\":\"\xed\xa0\x80\"}", b"\x80abc"]))
    tail = draw(st.binary(max_size=8))
    data = raw + tail
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return FrameCase("binary-not-utf8", (data,), (Expect("error", -32700, None),))
    return FrameCase("binary-not-utf8", (b"\xff" + data,), (Expect("error", -32700, None),))


@st.composite
def binary_valid(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    return FrameCase("binary-request", (_rpc(req_id, "ping", {"channel": ROOT}).encode(),), (Expect("result", None, req_id),))


@st.composite
def not_an_object(draw: st.DrawFn) -> FrameCase:
    value = draw(json_scalars)
    return FrameCase("not-an-object", (json.dumps(value),), (Expect("error", -32600, None),))


@st.composite
def batch(draw: st.DrawFn) -> FrameCase:
    items = draw(st.lists(st.builds(lambda i: json.loads(_rpc(i, "ping", {"channel": ROOT})), ids) | json_values, max_size=4))
    return FrameCase("batch", (json.dumps(items),), (Expect("error-or-silence", -32600, None),))


@st.composite
def wrong_jsonrpc(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    version = draw(json_scalars.filter(lambda v: v != "2.0") | st.just("1.0") | st.just("2"))
    frame = json.dumps({"id": req_id, "method": "ping", "params": {"channel": ROOT}} | ({"jsonrpc": version} if draw(st.booleans()) else {}))
    return FrameCase("wrong-jsonrpc", (frame,), (Expect("error", -32600, req_id),))


@st.composite
def bad_id(draw: st.DrawFn) -> FrameCase:
    bad = draw(st.booleans() | st.lists(st.integers(), max_size=2) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2) | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()))
    return FrameCase("bad-id", (_rpc(bad, "ping", {"channel": ROOT}),), (Expect("error", -32600, None),))


@st.composite
def no_method(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    return FrameCase("no-method", (json.dumps({"jsonrpc": "2.0", "id": req_id, "params": {}}),), (Expect("error", -32600, req_id),))


@st.composite
def unknown_method(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    method = draw(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=24)
        .filter(lambda m: m not in KNOWN_METHODS)
        | st.sampled_from(["Ping", "ping ", "x-private", "initialise", "rpc.discover", "resourceReadX"])
    )
    return FrameCase("unknown-method", (_rpc(req_id, method, {"channel": ROOT}),), (Expect("error", -32601, req_id),))


@st.composite
def bad_params(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    method = draw(st.sampled_from(PARAM_METHODS))
    params = draw(
        st.one_of(
            json_scalars.filter(lambda v: v is not None),
            st.lists(json_scalars, max_size=3),
            st.just({}),
            st.dictionaries(st.sampled_from(["channel", "chat", "cursor"]), json_scalars.filter(lambda v: not isinstance(v, str)), min_size=1).filter(lambda d: "channel" in d),
        )
    )
    return FrameCase("bad-params", (_rpc(req_id, method, params),), (Expect("error", -32602, req_id),))


@st.composite
def notification(draw: st.DrawFn) -> FrameCase:
    method = draw(st.sampled_from(["dispatchAction", "unsubscribe", "noSuchNotification", "ping"]))
    params = draw(st.just({"channel": "ahp-chat:/fuzz-nowhere", "clientSeq": 1, "action": {"type": "chat/draftChanged"}}) | json_values)
    frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params})
    return FrameCase("notification", (frame,), (Expect("silence"),))


@st.composite
def stray_response(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    body = draw(st.sampled_from([{"result": None}, {"error": {"code": -32000, "message": "x"}}]))
    return FrameCase("stray-response", (json.dumps({"jsonrpc": "2.0", "id": req_id, **body}),), (Expect("silence"),))


@st.composite
def id_reuse(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    n = draw(st.integers(2, 4))
    frames = tuple(_rpc(req_id, "ping", {"channel": ROOT}) for _ in range(n))
    return FrameCase("id-reuse", frames, tuple(Expect("result", None, req_id) for _ in range(n)))


@st.composite
def before_initialize(draw: st.DrawFn) -> FrameCase:
    req_id = draw(ids)
    method = draw(st.sampled_from(sorted(KNOWN_METHODS - PRE_INITIALIZE)))
    return FrameCase("before-initialize", (_rpc(req_id, method, {"channel": ROOT}),), (Expect("error", -32601, req_id),), fresh=True)


@st.composite
def bare_value(draw: st.DrawFn) -> FrameCase:
    """A bare JSON value — `null` above all (hosts in the wild die on it, issue 16), numbers,
    strings, booleans, an empty array: -32600 with id null (an array: or silence)."""
    text = draw(st.sampled_from(["null", "0", "-1", "42", "1.5", '"x"', '""', "true", "false", "[]", "{}"]))
    want = Expect("error-or-silence", -32600, None) if text == "[]" else Expect("error", -32600, None)
    if text == "{}":  # an object, but no jsonrpc/method: Invalid Request too
        want = Expect("error", -32600, None)
    return FrameCase("bare-value", (text,), (want,))


@st.composite
def deep_nesting(draw: st.DrawFn, max_message_bytes: int = 64 * 1024) -> FrameCase:
    """Arrays or objects nested far deeper than any AHP message (within the host's size limit): a
    parse error (a host's decoder refuses it, -32700) or an Invalid Request (-32600); never a crash."""
    fits = [d for d in (64, 1_000, 10_000, 100_000) if 6 * d + 100 <= max_message_bytes] or [8]
    depth = draw(st.sampled_from(fits))
    inner = draw(st.sampled_from(["array", "object", "params"]))
    if inner == "array":
        text = "[" * depth + "]" * depth
    elif inner == "object":
        text = '{"a":' * depth + "1" + "}" * depth
    else:
        text = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://","x":' + "[" * depth + "]" * depth + "}}"
        return FrameCase("deep-nesting", (text,), (Expect("result", None, 1, alt=(-32700, -32600)),))
    return FrameCase("deep-nesting", (text,), (Expect("error", -32700, None, alt=(-32600,)),))


@st.composite
def huge_number(draw: st.DrawFn) -> FrameCase:
    """Integers beyond 2^53 and 2^64 (ids; WIRE.md §2: serverSeq may exceed 2^31) and a number
    too large for a double in params: answered as any request (the id echoed exactly)."""
    digits = draw(st.integers(17, 400))
    req_id = 10**digits + draw(st.integers(0, 9))
    if draw(st.booleans()):
        frame = _rpc(req_id, "ping", {"channel": ROOT})
        return FrameCase("huge-number", (frame,), (Expect("result", None, req_id, alt=(-32600,)),))
    frame = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"channel":"ahp-root://","n":1e' + str(digits * 10) + "}}"
    return FrameCase("huge-number", (frame,), (Expect("result", None, 7, alt=(-32700, -32600)),))


@st.composite
def fragmented(draw: st.DrawFn) -> FrameCase:
    """A valid request sent as a fragmented WebSocket message: reassembled and answered."""
    req_id = draw(ids)
    text = _rpc(req_id, "ping", {"channel": ROOT})
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), min_size=1, max_size=6))))
    parts = tuple(text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True))
    return FrameCase("fragmented", (parts,), (Expect("result", None, req_id),))


def oversize(max_message_bytes: int) -> st.SearchStrategy[FrameCase]:
    def build(extra: int, valid: bool) -> FrameCase:
        size = max_message_bytes + extra
        frame = _rpc(1, "ping", {"channel": ROOT, "pad": "x" * size}) if valid else "x" * size
        return FrameCase("oversize", (frame,), (Expect("close", 1009),))

    return st.builds(build, st.integers(1, 2048), st.booleans())


#: (strategy factory, weight) — oversize frames cost a reconnect, so they are rare.
def frame_cases(max_message_bytes: int = 64 * 1024) -> st.SearchStrategy[FrameCase]:
    weighted: list[tuple[st.SearchStrategy[FrameCase], int]] = [
        (invalid_json(), 4),
        (invalid_utf8(), 2),
        (binary_valid(), 1),
        (not_an_object(), 2),
        (batch(), 2),
        (wrong_jsonrpc(), 2),
        (bad_id(), 2),
        (no_method(), 1),
        (unknown_method(), 3),
        (bad_params(), 3),
        (notification(), 2),
        (stray_response(), 1),
        (id_reuse(), 1),
        (before_initialize(), 1),
        (oversize(max_message_bytes), 1),
        (bare_value(), 2),
        (deep_nesting(max_message_bytes), 1),
        (huge_number(), 1),
        (fragmented(), 1),
    ]
    pool = [s for s, w in weighted for _ in range(w)]
    return st.sampled_from(range(len(pool))).flatmap(lambda i: pool[i])


def draw_cases(n: int, *, seed: int = 0, max_message_bytes: int = 64 * 1024) -> list[FrameCase]:
    """`n` cases drawn from `frame_cases` (deterministic for a seed), outside any test."""
    out: list[FrameCase] = []
    strategy = frame_cases(max_message_bytes)

    @settings(
        max_examples=n,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(case: FrameCase) -> None:
        out.append(case)

    collect._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    while len(out) < n:
        before = len(out)
        collect()
        if len(out) == before:
            break
        collect._hypothesis_internal_use_seed = seed + len(out)  # type: ignore[attr-defined]
    return out[:n]
