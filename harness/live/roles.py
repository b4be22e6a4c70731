"""What a live client and the probes of `wild` need of the run they belong to, as protocols.

`LiveRun` (run.py) owns its clients (client.py) and calls into `wild` for barriers, probes and
deaths; the client and `wild` in turn read a few of the run's fields. Naming those fields here,
instead of importing `LiveRun` for its type, keeps the imports one way (issue 23: `client`,
`run`, `pool` and `wild` imported each other): run → client, pool, wild; client → wild; and
both client and wild → roles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from harness.invariants.live.base import ClientView, Dispatch, LiveObservation
from harness.targets.live import Transcript, WireConnection


class RunRole(Protocol):
    """The run, as its clients and probes see it."""

    url: str
    token: str
    obs: LiveObservation
    transcript: Transcript
    request_timeout_s: float
    kinds: dict[str, str]
    racing: bool
    ping_refused: bool
    ping_silent: bool
    probe_no: int

    def next_conn(self) -> int: ...

    def ready_clients(self) -> Sequence[Any]: ...

    def expect_dispatch(self, client: Any, d: Dispatch) -> None: ...


class PeerRole(Protocol):
    """A client, as `wild` sees it: its connection, its view, its run."""

    conn: WireConnection | None
    view: ClientView
    dead: bool

    @property
    def run(self) -> RunRole: ...

    async def ping(self) -> bool: ...
