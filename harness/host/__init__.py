"""The embedded reference host: the default live target, with named defects to inject.

A JSON-RPC 2.0 over WebSocket AHP host (spec 0.7.0, 0.6.0 negotiable; or, with
`versions=VERSIONS_1_0`, spec 1.0.0 over the caret ranges ^1.0.0 and ^0.9.0) bound to 127.0.0.1
only. Its reducers are the reference model (`harness.reference`); a scripted, deterministic
agent answers every user turn. See docs/host.md.

Public API
----------
`start_host(port=0, defects=(), *, immutable_primary=False, seed=0, clock=None, ...)`
    → `RunningHost` serving on a background thread: `.url` (`ws://127.0.0.1:PORT/`),
    `.close()`, `.call(fn)` (run `fn(host)` on the host's loop, e.g. to read a channel state),
    usable as a context manager.
`await serve_host(HostConfig(...), port=0)` → `HostServer` in the running event loop
    (`.url`, `await .aclose()`, `async with`).
`DEFECTS`: name → `Defect(name, description, invariants, rule)`; `DefectSet`.
`Host`: the protocol core without I/O (`handle_frame(conn, frame)`), for in-process use.

Adding methods
--------------
The method table is built per host from the modules in `core.METHOD_MODULES`
(`harness.host.commands`, `harness.host.resources`); each exposes
`METHODS: Mapping[str, Method]` and optionally `BEFORE_INITIALIZE: frozenset[str]` (methods
allowed before `initialize`). A module in that list that does not exist is skipped, so a new
module only has to define `METHODS`. A handler is `handler(host, conn, params) -> result`:
synchronous (keep it so — the host handles each frame without awaiting, which is its
determinism rule), `params` is a dict whose `channel` is a string, raise
`jsonrpc.RpcError(code, message, data)` for an error answer; a notification's return value is
dropped. One host can also take methods at run time: `host.register_method(name, handler)` or
`start_host(extra_methods={name: handler})`.
"""

from .core import Host, HostConfig, Method
from .defects import DEFECTS, Defect, DefectSet, UnknownDefect
from .jsonrpc import RpcError
from .server import HostServer, RunningHost, serve_host, start_host

__all__ = [
    "DEFECTS",
    "Defect",
    "DefectSet",
    "Host",
    "HostConfig",
    "HostServer",
    "Method",
    "RpcError",
    "RunningHost",
    "UnknownDefect",
    "serve_host",
    "start_host",
]
