"""A live run's usual start, shared by the live test modules: clients connected, one session
created by client 0 and subscribed by every client."""

from __future__ import annotations

from typing import Any

from harness.live.client import DEFAULT_CLIENTS
from harness.live.run import LiveRun


def setup_session(run: LiveRun, n: int = 2, dirs: list[str] | None = None) -> str:
    """Connect the first `n` default clients, create a session (with `dirs` when given) and
    subscribe every client to it; every op must pass the live checks. Returns the session URI."""
    for i, spec in enumerate(DEFAULT_CLIENTS[:n]):
        assert run.apply(spec.op(i)) == []
    s = f"ahp-session:/fz-{run.token}-s1"
    params: dict[str, Any] = {"channel": s, "provider": run.provider()}
    if dirs is not None:
        params["workingDirectories"] = dirs
    assert run.apply({"op": "command", "client": 0, "method": "createSession", "params": params}) == []
    for i in range(n):
        assert run.apply({"op": "subscribe", "client": i, "channel": s}) == []
    return s
