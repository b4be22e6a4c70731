"""A child process spoken to in newline-delimited JSON over its stdin/stdout.

Reads and writes go straight to the pipe file descriptors with `poll`, so every wait has a
deadline and a large request cannot deadlock against a large reply (while a write waits for
room, replies are drained into the read buffer). stderr is drained by a small thread into a
ring of recent lines (for crash reports) and optionally echoed.

The child runs in its own session and process group: killing it also kills anything it
started (an `npx …` wrapper, a shell), and a signal sent to ahp-fuzz's own group (Ctrl-C in a
terminal) does not reach it directly — ahp-fuzz ends it itself. Three safety nets make sure no
child outlives ahp-fuzz: `close()`/`kill()` end the whole group; an `atexit` hook kills the
group of every child still running when the interpreter exits; and on Linux the child is
started with a parent-death signal (`PR_SET_PDEATHSIG` = SIGKILL), so even `kill -9` of
ahp-fuzz takes the child with it.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

_READ_CHUNK = 1 << 16


class ProcessEOF(Exception):
    """stdout reached end of file (the process closed it or died)."""


class ProcessTimeout(Exception):
    """The deadline passed while waiting for the process."""


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit code {code}"


_PIPE_SIZE = 1 << 20

#: Children still running, killed (whole group) when the interpreter exits.
_LIVE: weakref.WeakSet[LineProcess] = weakref.WeakSet()


@atexit.register
def _kill_leftovers() -> None:
    for proc in list(_LIVE):
        with contextlib.suppress(Exception):
            proc.kill()


def _parent_death_signal() -> Callable[[], None] | None:
    """A `preexec_fn` that asks Linux to SIGKILL the child when its parent dies."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    sigkill = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)

    return preexec


_PREEXEC = _parent_death_signal()


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux default: 64 KiB), so a whole chat state fits in one
    write. Best effort: other systems, or a lower /proc/sys/fs/pipe-max-size, keep theirs."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, _PIPE_SIZE)


class LineProcess:
    """One running child with line-oriented I/O and deadlines."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr_lines: int = 200,
        echo_stderr: TextIO | None = None,
        echo_prefix: str = "",
    ) -> None:
        self.argv = list(argv)
        self._stderr_ring: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._echo = echo_stderr
        self._echo_prefix = echo_prefix
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
                start_new_session=True,
                preexec_fn=_PREEXEC,  # a single prctl call in the child, no locks taken
            )
        except OSError as e:
            raise FileNotFoundError(f"cannot start {self.argv[0]!r}: {e.strerror or e}") from e
        _LIVE.add(self)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        assert self.proc.stderr is not None
        self._in_fd = self.proc.stdin.fileno()
        self._out_fd = self.proc.stdout.fileno()
        for fd in (self._in_fd, self._out_fd):
            _widen_pipe(fd)
        os.set_blocking(self._in_fd, False)
        self._buf = bytearray()
        self._pos = 0  # start of unread data in _buf
        self._scan = 0  # no newline in _buf[_pos:_scan]
        self._eof = False
        self._read_poll = select.poll()
        self._read_poll.register(self._out_fd, select.POLLIN)
        self._write_poll = select.poll()
        self._write_poll.register(self._in_fd, select.POLLOUT)
        self._write_poll.register(self._out_fd, select.POLLIN)
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr, name=f"stderr:{self.argv[0]}", daemon=True
        )
        self._stderr_thread.start()

    # -- stderr ----------------------------------------------------------------------------

    def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        fd = stream.fileno()
        pending = b""
        with stream:
            while chunk := os.read(fd, _READ_CHUNK):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                if len(pending) > _READ_CHUNK:  # an endless line: take it in pieces
                    lines.append(pending)
                    pending = b""
                for raw in lines:
                    self._stderr_line(raw)
            if pending:
                self._stderr_line(pending)

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        self._stderr_ring.append(line)
        if self._echo is not None:
            with contextlib.suppress(Exception):
                self._echo.write(f"{self._echo_prefix}{line}\n")
                self._echo.flush()

    def stderr_tail(self, n: int = 20, *, settle_s: float = 0.0) -> list[str]:
        """The last `n` stderr lines; with `settle_s`, first wait that long for stderr to end."""
        if settle_s > 0:
            self._stderr_thread.join(settle_s)
        return list(self._stderr_ring)[-n:]

    # -- state -----------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def alive(self) -> bool:
        return not self._eof and self.proc.poll() is None

    # -- output ----------------------------------------------------------------------------

    def _fill(self, deadline: float) -> None:
        """Read at least one chunk into the buffer, waiting until `deadline`."""
        while True:
            try:
                chunk = os.read(self._out_fd, _READ_CHUNK) if self._readable(deadline) else None
            except BlockingIOError:  # pragma: no cover - poll said readable
                continue
            if chunk is None:
                raise ProcessTimeout
            if not chunk:
                self._eof = True
                raise ProcessEOF
            if self._pos > 0 and self._pos * 2 > len(self._buf):
                del self._buf[: self._pos]
                self._scan -= self._pos
                self._pos = 0
            self._buf += chunk
            return

    def _readable(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bool(self._read_poll.poll(0))
        return bool(self._read_poll.poll(remaining * 1000.0))

    def read_line(self, deadline: float) -> bytes:
        """The next line of stdout without its newline; ProcessEOF / ProcessTimeout otherwise."""
        while True:
            i = self._buf.find(b"\n", self._scan)
            if i >= 0:
                line = bytes(self._buf[self._pos : i])
                self._pos = self._scan = i + 1
                if self._pos == len(self._buf):
                    self._buf.clear()
                    self._pos = self._scan = 0
                return line
            self._scan = len(self._buf)
            if self._eof:
                raise ProcessEOF
            self._fill(deadline)

    def pending_output(self) -> bytes:
        """Whatever stdout data is buffered but not yet read as a line."""
        return bytes(self._buf[self._pos :])

    # -- input -----------------------------------------------------------------------------

    def write(self, data: bytes, deadline: float) -> None:
        """Write all of `data`, draining stdout meanwhile so that neither side can block."""
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._in_fd, view)
            except BlockingIOError:
                n = 0
            except BrokenPipeError:
                raise ProcessEOF from None
            view = view[n:]
            if not view:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProcessTimeout
            for fd, ev in self._write_poll.poll(remaining * 1000.0):
                if fd == self._out_fd and ev & (select.POLLIN | select.POLLHUP):
                    try:
                        self._fill(time.monotonic())
                    except (ProcessEOF, ProcessTimeout):
                        # stdout is closed: stop watching it; the write decides what's next
                        self._write_poll.unregister(self._out_fd)
                elif fd == self._in_fd and ev & (select.POLLERR | select.POLLHUP):
                    raise ProcessEOF

    # -- ending ----------------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL the process group and reap the child."""
        self._kill_group()
        if self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(2.0)
        self._close_pipes()

    def _kill_group(self) -> None:
        """SIGKILL everything left in the child's process group — also after the child itself
        exited, so that nothing it started (a server, a watcher) outlives the run."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def wait_exit(self, timeout_s: float) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.proc.wait(timeout_s)
        return None

    def close(self, grace_s: float = 2.0) -> int | None:
        """Clean shutdown: close stdin (EOF), wait, then SIGTERM the group, then SIGKILL."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            if self.wait_exit(grace_s) is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGTERM)
                if self.wait_exit(1.0) is None:
                    self.kill()
        self._kill_group()
        self._close_pipes()
        self._stderr_thread.join(0.5)
        return self.proc.poll()

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._eof = True
