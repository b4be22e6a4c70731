"""Connections kept open across the machine runs of one campaign."""

from __future__ import annotations

import asyncio
from typing import Any

from .client import SimClient


class ConnectionPool:
    """Connections kept open across the machine runs of one campaign (one loop, one host),
    keyed by (role, url, client spec): a run's clean clients and observers go back in when it
    closes (`LiveRun.close`), the next run's connect ops and observers take them out."""

    def __init__(self) -> None:
        self._free: dict[tuple[Any, ...], list[SimClient]] = {}

    def take(self, key: tuple[Any, ...]) -> SimClient | None:
        free = self._free.get(key)
        while free:
            c = free.pop()
            if c.conn is not None and not c.conn.closed.is_set():
                return c
        return None

    def give(self, key: tuple[Any, ...], c: SimClient) -> None:
        self._free.setdefault(key, []).append(c)

    def held(self) -> list[SimClient]:
        return [c for free in self._free.values() for c in free]

    def __len__(self) -> int:
        return sum(len(v) for v in self._free.values())

    async def aclose(self) -> None:
        conns = [c.conn for free in self._free.values() for c in free if c.conn is not None]
        self._free.clear()
        await asyncio.gather(*(conn.close() for conn in conns))
