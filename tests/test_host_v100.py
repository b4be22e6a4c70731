"""Issue 34: version negotiation as 1.0.0 states it, on both ends — the rule itself
(`harness/spec/negotiation.py`), the embedded 1.0.0 host (caret ranges ^1.0.0 and ^0.9.0, a
malformed offer refused explicitly, 1.0.0 action types gated out for a 0.9.0 peer) and the 0.7.0
host it still is by default (each offered version as before)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.host import HostConfig
from harness.host.core import VERSIONS_1_0, Host
from harness.live.client import DEFAULT_CLIENTS
from harness.live.versions import offers_for
from harness.spec import negotiation as neg
from harness.targets.live import embedded_for_profile, embedded_text, parse_live_spec

ROOT = "ahp-root://"

# -- the rule --------------------------------------------------------------------------------------


def test_caret_ranges_follow_semver() -> None:
    assert neg.caret_upper((1, 0, 0)) == (2, 0, 0) and neg.caret_upper((0, 9, 0)) == (0, 10, 0)
    assert neg.caret_upper((0, 0, 3)) == (0, 0, 4)
    assert neg.in_caret((1, 7, 2), (1, 0, 0)) and not neg.in_caret((2, 0, 0), (1, 0, 0))
    assert neg.in_caret((0, 9, 4), (0, 9, 0)) and not neg.in_caret((0, 10, 0), (0, 9, 0))


@pytest.mark.parametrize(("offered", "chosen"), [
    (["0.9.0", "1.0.0"], "1.0.0"),  # the highest, not the client's first
    (["0.7.0", "0.9.2", "0.9.10"], "0.9.10"),  # compared as versions, not strings
    (["1.3.0", "2.0.0"], "1.3.0"),  # 2.0.0 is outside ^1.0.0
    (["0.10.0", "0.8.0"], None),  # ^0.9.0 stops below 0.10.0
    (["1.0", "1.0.0"], "1.0.0"),  # a malformed entry is never chosen (offer_problem reports it)
])
def test_select_takes_the_highest_offered_version_within_a_caret_range(offered: list[str], chosen: str | None) -> None:
    assert neg.select(offered, neg.BASELINES) == chosen


def test_malformed_offers_answers_and_refusals_are_named() -> None:
    assert neg.offer_problem(["1.0.0", "0.9.0"]) is None
    assert "protocolVersions[1] is '1.0'" in (neg.offer_problem(["1.0.0", "1.0"]) or "")
    assert neg.offer_problem(["01.0.0"]) and neg.offer_problem([]) and neg.offer_problem("1.0.0")
    assert neg.answer_problem({"protocolVersion": "1.0.0"}, ["1.0.0"]) is None
    assert neg.answer_problem({"protocolVersion": "7.0.0"}, ["1.0.0"]) is None  # not offered: INV-046's
    assert "no protocolVersion" in (neg.answer_problem({"serverSeq": 0}, ["1.0.0"]) or "")
    assert "not a MAJOR.MINOR.PATCH" in (neg.answer_problem({"protocolVersion": "v1"}, ["1.0.0"]) or "")
    assert "not a string" in (neg.answer_problem({"protocolVersion": 1}, ["1.0.0"]) or "")
    assert neg.refusal_problem({"supportedVersions": ["^1.0.0", ">=0.1.0 <0.3.0", "0.9.0"]}) is None
    assert "required since 1.0.0" in (neg.refusal_problem(None) or "")
    assert neg.refusal_problem(None, required=False) is None  # optional before 1.0.0
    assert neg.refusal_problem({"supportedVersions": ["newest"]}, required=False)


# -- the 1.0.0 host ---------------------------------------------------------------------------------


class Wire:
    """One sans-I/O connection to a host: what it sent, request by request."""

    def __init__(self, host: Host) -> None:
        self.host, self.out, self.closed = host, [], []
        self.conn = host.connect(self.out.append, lambda code, why: self.closed.append(code))
        self.ids = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        self.out.clear()
        self.host.handle_frame(self.conn, json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method,
                                                      "params": params}))
        return next(m for m in map(json.loads, self.out) if m.get("id") == self.ids)

    def initialize(self, offer: list[str], client: str = "c1") -> dict[str, Any]:
        return self.request("initialize", {"channel": ROOT, "protocolVersions": offer, "clientId": client})


def _host_100() -> Host:
    return Host(HostConfig(versions=VERSIONS_1_0))


@pytest.mark.parametrize(("offer", "chosen"), [
    (["0.9.0", "1.0.0", "0.7.0"], "1.0.0"),
    (["0.7.0", "0.9.0"], "0.9.0"),
    (["1.4.2", "1.0.0"], "1.4.2"),
])
def test_the_10_host_picks_the_highest_offered_version_in_its_carets(offer: list[str], chosen: str) -> None:
    host = _host_100()
    answer = Wire(host).initialize(offer)
    assert answer["result"]["protocolVersion"] == chosen
    assert host.model.profile.version == (1, 0, 0)


def test_the_10_host_refuses_what_is_outside_its_carets_naming_its_ranges() -> None:
    w = Wire(_host_100())
    answer = w.initialize(["0.7.0", "2.0.0", "0.10.0"])
    assert answer["error"]["code"] == -32005
    assert answer["error"]["data"] == {"supportedVersions": ["^1.0.0", "^0.9.0"]}
    assert neg.refusal_problem(answer["error"]["data"]) is None and w.closed


def test_the_10_host_refuses_a_malformed_offer_explicitly() -> None:
    answer = Wire(_host_100()).initialize(["1.0.0", "1.0"])
    assert answer["error"]["code"] == -32602
    assert "protocolVersions[1] is '1.0'" in answer["error"]["message"]


def test_the_07_host_still_takes_the_first_offered_version_it_speaks() -> None:
    host = Host()
    assert Wire(host).initialize(["1.0.0", "0.6.0", "0.7.0"])["result"]["protocolVersion"] == "0.6.0"
    assert Wire(host).initialize(["1.0", "0.7.0"], "c2")["result"]["protocolVersion"] == "0.7.0"  # as before
    assert host.model.profile.version == (0, 7, 0)


def test_a_09_peer_of_the_10_host_gets_no_10_action() -> None:
    host = _host_100()
    new, old = Wire(host), Wire(host)
    assert new.initialize(["1.0.0"], "new")["result"]["protocolVersion"] == "1.0.0"
    assert old.initialize(["0.9.0"], "old")["result"]["protocolVersion"] == "0.9.0"
    s = "ahp-session:/s1"
    assert "result" in new.request("createSession", {"channel": s, "provider": "scripted"})
    chat = f"{s}.default" if f"{s}.default" in host.channels else next(u for u, c in host.channels.items() if c.kind == "chat")
    for w in (new, old):
        assert "result" in w.request("subscribe", {"channel": chat})
    new.out.clear()
    old.out.clear()
    new.host.handle_frame(new.conn, json.dumps({"jsonrpc": "2.0", "method": "dispatchAction", "params": {
        "channel": chat, "clientSeq": 1, "action": {"type": "chat/isReadChanged", "isRead": True}}}))
    types = lambda w: [m["params"]["action"]["type"] for m in map(json.loads, w.out) if m.get("method") == "action"]  # noqa: E731
    assert "chat/isReadChanged" in types(new)
    assert "chat/isReadChanged" not in types(old)
    assert host.channels[chat].state["status"] & 32


# -- which host a run fuzzes, what its clients offer ------------------------------------------------


def test_a_10_run_fuzzes_the_10_host_and_a_07_run_the_07_host() -> None:
    spec = parse_live_spec("host:embedded?defect=seq-repeat")
    assert embedded_for_profile(spec, "0.7.0") is spec
    new = embedded_for_profile(spec, "1.0.0")
    assert new.version == "1.0.0" and embedded_text(new) == "host:embedded?version=1.0.0&defect=seq-repeat"
    assert parse_live_spec(embedded_text(new)) == new
    assert embedded_for_profile(spec, "0.9.0").version == "1.0.0"
    with pytest.raises(ValueError, match=r"version=0\.8\.0"):
        parse_live_spec("host:embedded?version=0.8.0")


def test_the_clients_of_a_10_run_offer_the_baselines() -> None:
    clients = offers_for("1.0.0", DEFAULT_CLIENTS)
    assert clients[0].offer[:2] == ("1.0.0", "0.9.0")
    assert clients[3].offer == ("0.9.0",)  # the single-version client: not the host's newest (INV-046)
    assert offers_for("0.7.0", DEFAULT_CLIENTS)[3].offer == ("0.6.0",)  # a 0.7.0 run as before


# -- a host's malformed answer is a finding of its own (INV-H10), never a crash or a fallback ---------


def _answering(change: Any) -> HostConfig:
    """A 1.0.0 host whose initialize answers are passed through `change(params, result)`."""
    from harness.host import commands

    def initialize(host: Host, conn: Any, params: dict[str, Any]) -> Any:
        return change(params, commands.initialize(host, conn, params))

    return HostConfig(versions=VERSIONS_1_0, extra_methods={"initialize": initialize})


def _without_version(params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "protocolVersion"}


def _short_version(params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "protocolVersion": result["protocolVersion"].rsplit(".", 1)[0]}  # "1.0"


def _bare_refusal(params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    from harness.host import jsonrpc as rpc

    if params.get("protocolVersions") == ["0.9.0"]:  # the single-version client: refused, no data
        raise rpc.RpcError(-32005, "Unsupported protocol version")
    return result


@pytest.mark.live
@pytest.mark.parametrize(("change", "said"), [
    (_without_version, "has no protocolVersion (required)"),
    (_short_version, "protocolVersion '1.0' is not a MAJOR.MINOR.PATCH version"),
    (_bare_refusal, "the -32005 refusal has no data.supportedVersions, required since 1.0.0"),
])
def test_a_malformed_negotiation_answer_is_an_inv_h10_finding(change: Any, said: str) -> None:
    from harness.engine.events import EventBus
    from harness.host import start_host
    from harness.live import LiveConfig, run_live_campaign

    with start_host(config=_answering(change)) as running:
        cfg = LiveConfig(url=running.url, target_spec=running.url, profile="1.0.0", seed=1, token_salt="h10",
                         budget_s=120.0, max_chunks=2, chunk_examples=2, max_steps=8, shrink_budget_s=0.5,
                         preflight=False)
        summary = run_live_campaign(cfg, EventBus(lambda e: None))
    found = {f.invariant: f.message for f in summary.findings}
    assert "INV-H10" in found, found
    assert said in found["INV-H10"]
    assert "INV-046" not in found  # a malformed version is not reported again as "not offered"


# -- the embedded host at 1.0.0 is clean ---------------------------------------------------------------


@pytest.mark.live
def test_a_10_run_on_the_embedded_host_speaks_10_and_is_clean() -> None:
    from harness.engine.events import EventBus, RunStarted
    from harness.live import LiveConfig, run_live_campaign

    events: list[Any] = []
    cfg = LiveConfig(url=None, target_spec="host:embedded", profile="1.0.0", seed=3, token_salt="clean",
                     budget_s=300.0, max_chunks=3, chunk_examples=5)  # bounded by chunks; the budget a hang guard
    summary = run_live_campaign(cfg, EventBus(events.append))
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.speaking == "1.0.0" and started.target == "host:embedded?version=1.0.0"
    assert summary.stopped_because == "chunks" and summary.steps > 100
    assert [(f.invariant, f.message) for f in summary.findings] == []


@pytest.mark.live
def test_a_refusal_of_everything_names_its_malformation() -> None:
    """The negotiation before the run: a host refusing every version with malformed refusal data
    is exit 2 (nothing to fuzz) whose message says what was malformed."""
    import asyncio

    from harness.host import jsonrpc as rpc
    from harness.host import start_host
    from harness.live.versions import HostVersionsUnknown, negotiate

    def refuse(host: Host, conn: Any, params: dict[str, Any]) -> Any:
        raise rpc.RpcError(-32005, "no", {"supportedVersions": ["latest"]})

    said = r"its refusal is malformed: .*supportedVersions\[0\] is 'latest'"
    with start_host(config=HostConfig(extra_methods={"initialize": refuse})) as running, \
            pytest.raises(HostVersionsUnknown, match=said):
        asyncio.run(negotiate(running.url, ["1.0.0", "0.9.0"], 10.0))


D = "ahp-chat:/s1.default"  # the session's default chat (not movable)


@pytest.mark.parametrize(("defects", "after", "want"), [
    ((), "ahp-chat:/b", [D, "ahp-chat:/b", "ahp-chat:/a"]),
    ((), None, ["ahp-chat:/b", D, "ahp-chat:/a"]),
    (("move-chat-misplaced",), "ahp-chat:/b", [D, "ahp-chat:/a", "ahp-chat:/b"]),
])
def test_move_chat_within_a_session_places_it_after_its_anchor(defects: tuple[str, ...], after: str | None,
                                                               want: list[str]) -> None:
    host = Host(HostConfig(versions=VERSIONS_1_0, defects=defects))
    w = Wire(host)
    w.initialize(["1.0.0"])
    s = "ahp-session:/s1"
    assert "result" in w.request("createSession", {"channel": s, "provider": "scripted"})
    for chat in ("ahp-chat:/a", "ahp-chat:/b"):
        assert "result" in w.request("createChat", {"channel": s, "chat": chat})
    default = host.channels[s].state["defaultChat"]
    assert default == D
    moved = "ahp-chat:/a" if after else "ahp-chat:/b"
    dest = {"kind": "session", "session": s, **({"after": after} if after else {})}
    assert w.request("moveChat", {"channel": moved, "destination": dest})["result"] == {"session": s}
    assert [c["resource"] for c in host.channels[s].state["chats"]] == want
    refused = w.request("moveChat", {"channel": default, "destination": {"kind": "session", "session": s}})
    assert refused["error"]["code"] == -32602  # the default chat is not movable
