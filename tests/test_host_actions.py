"""Any action a client dispatches to an existing channel is echoed exactly once — accepted or
rejected — and never breaks the host; the host's state is what the reference model makes of the
accepted echoes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.host import RunningHost, start_host
from harness.host.probe import ProbeClient
from harness.reference import Model
from strategies import adversarial_actions, valid_actions

pytestmark = pytest.mark.live

KIND_OF_CHANNEL = {"session": "ahp-session:/fz", "chat": "ahp-chat:/fz.default"}


@pytest.fixture(scope="module")
def host() -> Iterator[RunningHost]:
    with start_host() as h:
        yield h


def _drawn() -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(sorted(KIND_OF_CHANNEL)).flatmap(
        lambda kind: st.tuples(st.just(kind), valid_actions(kind) | adversarial_actions(kind))
    )


_counter = iter(range(10**9))


@settings(max_examples=100)
@given(st.lists(_drawn(), min_size=1, max_size=6))
def test_every_dispatch_is_echoed_once_and_state_follows_the_model(host: RunningHost, drawn: list[tuple[str, Any]]) -> None:
    run = next(_counter)

    async def go() -> None:
        async with await ProbeClient.open(host.url) as c:
            await c.initialize(f"fz-{run}")
            session = f"ahp-session:/fz{run}"
            chat = await c.create_session(session, ["file:///a", "file:///b"])
            channels = {"session": session, "chat": chat}
            before = {k: await c.subscribe(u) for k, u in channels.items()}
            seqs = []
            for kind, action in drawn:
                if isinstance(action, dict):
                    seqs.append((kind, await c.dispatch(channels[kind], action)))
            await c.settle()
            for _, seq in seqs:
                echoes = [e for e in c.envelopes() if (e.get("origin") or {}).get("clientSeq") == seq]
                assert len(echoes) == 1, (seq, echoes)
            # fold every envelope after each snapshot through the model: equals the host's state
            model = Model()
            for kind, uri in channels.items():
                state = before[kind]["state"]
                for env in c.envelopes(uri):
                    if env["serverSeq"] > before[kind]["fromSeq"] and "rejectionReason" not in env:
                        state = model.reduce(kind, state, env["action"], 0)
                now = (await c.subscribe(uri))["state"]
                strip = ("modifiedAt",)
                assert _without(state, strip) == _without(now, strip), kind
            await c.settle()

    asyncio.run(asyncio.wait_for(go(), 30))


def _without(value: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value
