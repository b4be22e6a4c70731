"""One client connection as the host sees it (no I/O: outgoing frames go to `deliver`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.reference.codec import encode
from harness.spec.versions import Version, parse_version


@dataclass(eq=False)
class Connection:
    """Per-connection protocol state: who the client is, what it negotiated, what it watches.

    `deliver(text)` sends one outgoing text frame (written to the socket at once by the
    server, `harness.host.server`); `request_close(code, reason)` starts the closing handshake
    after the frames sent so far.
    """

    number: int
    deliver: Callable[[str], None]
    request_close: Callable[[int, str], None]
    client_id: str | None = None
    version: str | None = None
    #: The client declared `capabilities.attachmentCollections` at initialize.
    collections: bool = False
    subscriptions: set[str] = field(default_factory=set)
    #: The version of the host's model: an older connection gets newer action types gated out.
    host_version: Version = (0, 7, 0)
    _version_tuple: Version | None = None

    @property
    def ready(self) -> bool:
        """True after a successful `initialize` or `reconnect`."""
        return self.version is not None

    def bind(self, client_id: str, version: str, *, collections: bool) -> None:
        self.client_id = client_id
        self.version = version
        self._version_tuple = parse_version(version)
        self.collections = collections

    @property
    def version_tuple(self) -> Version:
        assert self._version_tuple is not None, "connection not initialized"
        return self._version_tuple

    def send(self, message: dict[str, Any]) -> None:
        self.deliver(encode(message))
