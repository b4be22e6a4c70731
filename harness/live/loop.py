"""The live run's event loop, driven inline by the synchronous caller (or on a thread)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from .failure import TARGET_TIMEOUT, LiveFailure

T = TypeVar("T")


class EventLoopThread:
    """The run's asyncio loop, driven inline by the synchronous caller (`run(coro, timeout)`).

    The loop runs only while an op runs, in the caller's thread: between ops its reader tasks wait
    (frames stay in the socket buffers; `ping` barriers make every op end at quiescence anyway).
    A loop on a background thread, handed each op with `run_coroutine_threadsafe`, cost two thread
    handoffs per op and made the client loop, the Hypothesis thread and an in-process host fight
    for the GIL (bench/results/live.md). `threaded=True` keeps that old mode (the bench baseline).
    """

    def __init__(self, name: str = "ahp-live-loop", *, threaded: bool = False,
                 shield: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.threaded = threaded
        #: Inline mode: a stop signal (whose handler raises `RunStopped`) must not land inside the
        #: loop's callbacks (websockets' parser, a reader task): `RunControl.shielded` defers it
        #: to the end of the op (bounded by the op's timeout).
        self._shield = shield
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
            self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
        if self._thread is not None:
            fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
            try:
                return fut.result(timeout_s)
            except concurrent.futures.TimeoutError:
                fut.cancel()
                raise LiveFailure(TARGET_TIMEOUT, f"no answer from the host within {timeout_s:g}s") from None
        try:
            with self._shield() if self._shield is not None else contextlib.nullcontext():
                return self.loop.run_until_complete(asyncio.wait_for(coro, timeout_s))
        except TimeoutError:
            raise LiveFailure(TARGET_TIMEOUT, f"no answer from the host within {timeout_s:g}s") from None

    def close(self) -> None:
        if self.loop.is_closed():
            return
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
            if not self._thread.is_alive():
                self.loop.close()
            return
        tasks = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(asyncio.wait(tasks, timeout=2.0))
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()
