"""The live target: a JSON-RPC 2.0 over WebSocket client for any AHP host (WIRE.md §1–§5).

Spellings (`parse_live_spec`):

* `ws://HOST:PORT[/path]` (or `wss://`) — a host that is already running;
* `host-cmd:<command line>` — start a host: the command line is split as a POSIX shell splits
  it (no shell runs it), leading `VAR=value` words set its environment as a shell would; it runs
  in its own process group and must print its `ws://` URL on stdout (the first `ws://…` it prints
  is used); the harness stops the whole group afterwards, on every path (a signal during start-up
  included);
* `host:embedded[?defect=NAME&defect=NAME2]` — the embedded reference host (`harness/host`),
  optionally with named defects injected (`harness/host/defects.py`).

Hosts are loopback-only (127.0.0.1, ::1, localhost) unless `allow_remote=True`
(`--allow-remote`). Everything asynchronous lives here and in the engine's event-loop thread:
`WireConnection` is one client connection (requests with ids, notifications, a recorded
transcript of every frame in both directions).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.reference.profile import Profile
from harness.spec.versions import parse_version
from harness.websocket import Link, LinkClosed
from harness.websocket import connect as ws_connect

from .base import Target, TargetSetupError, register_target

#: How a live target is spelled (the ones `open_target` hands to this module).
LIVE_PREFIXES = ("ws://", "wss://", "host-cmd:", "host:")
ROOT = "ahp-root://"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_URL = re.compile(r"wss?://[^\s\"'<>]+")


def is_live_spec(text: str) -> bool:
    return text.strip().startswith(LIVE_PREFIXES)


@dataclass(frozen=True)
class LiveSpec:
    """A parsed live-target spelling."""

    kind: str  # "url" | "cmd" | "embedded"
    text: str  # the spelling as given
    url: str | None = None
    command: tuple[str, ...] = ()
    #: host-cmd: only: the leading `VAR=value` words of the command line, as (name, value).
    env: tuple[tuple[str, str], ...] = ()
    defects: tuple[str, ...] = ()
    #: host:embedded only: advertise and enforce `multipleWorkingDirectories.immutablePrimary`.
    immutable_primary: bool = False
    #: host:embedded only: the newest version it speaks (`version=1.0.0`: the 1.0.0 host, caret
    #: negotiation over ^1.0.0 and ^0.9.0); None: the 0.7.0 host (0.7.0 and 0.6.0).
    version: str | None = None


def parse_live_spec(text: str, *, defects: tuple[str, ...] = ()) -> LiveSpec:
    """Parse a live spelling; `defects` add to those named in `host:embedded?defect=…`."""
    t = text.strip()
    if t.startswith(("ws://", "wss://")):
        if defects:
            raise ValueError("defects can only be injected into host:embedded")
        check_url(t)
        return LiveSpec("url", t, url=t)
    if t.startswith("host-cmd:"):
        env, argv = split_host_command(t[len("host-cmd:") :])
        return LiveSpec("cmd", t, command=argv, env=env)
    if t.startswith("host:"):
        rest = t[len("host:") :]
        name, _, query = rest.partition("?")
        if name != "embedded":
            raise ValueError(f"unknown host {name!r} (want host:embedded)")
        params = parse_qs(query, keep_blank_values=True) if query else {}
        unknown = set(params) - {"defect", "immutablePrimary", "version"}
        if unknown:
            raise ValueError(
                f"host:embedded: unknown option(s) {', '.join(sorted(unknown))} "
                "(want defect=NAME, immutablePrimary=1, version=1.0.0)"
            )
        named = tuple(d for v in params.get("defect", []) for d in v.split(",") if d)
        flag = params.get("immutablePrimary", ["0"])[-1].lower() in ("1", "true", "yes", "")
        version = params.get("version", [None])[-1]
        if version is not None and version not in EMBEDDED_VERSIONS:
            raise ValueError(f"host:embedded: version={version} (want one of {', '.join(EMBEDDED_VERSIONS)})")
        return LiveSpec("embedded", t, defects=tuple(dict.fromkeys((*named, *defects))), immutable_primary=flag,
                        version=None if version == "0.7.0" else version)
    raise ValueError(f"not a live target spelling: {text!r} (want ws://…, host-cmd:… or host:embedded)")


_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def split_host_command(text: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """A `host-cmd:` command line → (its leading `VAR=value` assignments, the command's argv),
    split as a POSIX shell would split `A=1 B='x y' cmd args` (no shell runs it)."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ValueError(f"host-cmd: cannot split the command line {text.strip()!r}: {e}") from e
    env: list[tuple[str, str]] = []
    while words and (m := _ASSIGNMENT.match(words[0])):
        env.append((m.group(1), m.group(2)))
        words.pop(0)
    if not words:
        raise ValueError("host-cmd: needs a command line that starts the host"
                         + (" (after its VAR=value assignments)" if env else ""))
    return tuple(env), tuple(words)


def check_url(url: str) -> None:
    """A `ws://` spelling names a host and a valid port (one line saying what is wrong if not)."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (urlsplit checks the port when asked for it)
    except ValueError:
        port = parts.netloc.rpartition(":")[2]
        why = f"port {port} is out of range" if port.isdigit() else f"{port!r} is not a port number"
        raise ValueError(f"{url}: {why} (want ws://HOST:PORT with a port of 1-65535)") from None
    if not parts.hostname:
        raise ValueError(f"{url}: no host name (want ws://HOST:PORT)")


#: The newest versions an embedded host can speak (`host:embedded?version=V`): 0.7.0 (the default:
#: 0.7.0 and 0.6.0, each negotiated as offered) or 1.0.0 (^1.0.0 and ^0.9.0, the caret rule).
EMBEDDED_VERSIONS: tuple[str, ...] = ("0.7.0", "1.0.0")


def embedded_spec(defects: tuple[str, ...] = (), immutable_primary: bool = False, version: str | None = None) -> str:
    """The spelling of the embedded host with `defects` (what a finding records)."""
    opts = ([f"version={version}"] if version else []) + [f"defect={d}" for d in defects]
    opts += ["immutablePrimary=1"] if immutable_primary else []
    return "host:embedded" + ("?" + "&".join(opts) if opts else "")


def embedded_for_profile(spec: LiveSpec, profile: str) -> LiveSpec:
    """The embedded host a run at `profile` fuzzes when its spelling names no version: the 1.0.0
    host for a 0.9.0 or 1.0.0 profile (the baselines 1.0.0 hosts speak), else the 0.7.0 host."""
    if spec.kind != "embedded" or spec.version is not None:
        return spec
    try:
        newer = parse_version(profile.split("-")[0].split("+")[0]) >= (0, 9, 0)
    except ValueError:
        return spec
    if not newer:
        return spec
    text = embedded_spec(spec.defects, spec.immutable_primary, "1.0.0")
    return replace(spec, text=text, version="1.0.0")


def embedded_text(spec: LiveSpec) -> str:
    return embedded_spec(spec.defects, spec.immutable_primary, spec.version)


def _host_config(spec: LiveSpec) -> Any:
    from harness.host import HostConfig
    from harness.host.core import VERSIONS_1_0
    from harness.host.params import CommandParams

    extra = {"versions": VERSIONS_1_0} if spec.version == "1.0.0" else {}
    return HostConfig(defects=spec.defects, immutable_primary=spec.immutable_primary,
                      params=CommandParams.from_env(), **extra)


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_loopback(url: str, allow_remote: bool) -> None:
    if not allow_remote and not is_loopback(url):
        raise TargetSetupError(
            f"refusing non-loopback host {url!r}: live targets are loopback-only unless "
            "--allow-remote is given"
        )


# ---------------------------------------------------------------------------------------------
# starting and stopping hosts


class HostHandle:
    """A reachable host: its URL, and how to stop it (a no-op for a host we did not start).

    For a `host-cmd:` host, `proc` is its process and `stderr_tail` its last stderr lines (kept
    for the finding when it dies); `dead()` says why an embedded host died (its `dead` reason)."""

    def __init__(self, url: str, stop: Callable[[], None] = lambda: None, description: str = "",
                 proc: subprocess.Popen[str] | None = None, stderr_tail: deque[str] | None = None,
                 dead: Callable[[], str | None] = lambda: None, stderr_times: deque[float] | None = None,
                 stderr_reader: threading.Thread | None = None) -> None:
        self.url = url
        self._stop = stop
        self.description = description or url
        self._closed = False
        self.proc = proc
        self.stderr_tail: deque[str] = stderr_tail if stderr_tail is not None else deque(maxlen=STDERR_LINES)
        #: When each line of `stderr_tail` was read (the last burst is the crash), and the
        #: thread reading them (joined briefly after an exit, so that the traceback is whole).
        self.stderr_times: deque[float] = stderr_times if stderr_times is not None else deque(maxlen=STDERR_LINES)
        self.stderr_reader = stderr_reader
        self.dead = dead

    def crash_text(self) -> str:
        """The host's last words: the lines of its last stderr burst (what it wrote within a
        second of its last line), the first of them — where a traceback says what was thrown
        and at which source line — and the last, joined by " | "."""
        if self.stderr_reader is not None:
            self.stderr_reader.join(0.5)
        return crash_lines(list(self.stderr_tail), list(self.stderr_times))

    def exit_status(self, wait_s: float = 0.0) -> int | None:
        """The host process's exit status, once it exited (None: running, or not a process)."""
        if self.proc is None:
            return None
        if wait_s > 0:
            try:
                return self.proc.wait(wait_s)
            except subprocess.TimeoutExpired:
                return None
        return self.proc.poll()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._stop()


#: Lines of a `host-cmd:` host's stderr kept for a death finding (the last burst is quoted).
STDERR_LINES = 400
#: Of a crash's stderr burst, the first lines (what was thrown, where) and the last quoted.
CRASH_FIRST, CRASH_LAST = 6, 3
#: Lines written within this many seconds of the last one belong to its burst.
BURST_S = 1.0


#: A quoted stderr line is cut at this length (a transpiler's stack can name a whole module).
CRASH_LINE = 200


def _clip(line: str) -> str:
    return line if len(line) <= CRASH_LINE else line[: CRASH_LINE - 1] + "…"


def crash_lines(lines: list[str], times: list[float]) -> str:
    """The first `CRASH_FIRST` and last `CRASH_LAST` non-blank lines of the last stderr burst
    ("" when there are none). Without times (or fewer), the whole tail is the burst."""
    if times and len(times) == len(lines):
        last = times[-1]
        start = next(i for i, t in enumerate(times) if t >= last - BURST_S)
        lines = lines[start:]
    shown = [_clip(x.strip()) for x in lines if x.strip()]
    if len(shown) > CRASH_FIRST + CRASH_LAST:
        skipped = len(shown) - CRASH_FIRST - CRASH_LAST
        shown = [*shown[:CRASH_FIRST], f"… {skipped} line(s) …", *shown[-CRASH_LAST:]]
    return " | ".join(shown)


def describe_status(code: int) -> str:
    """`70`, or `-11 (SIGSEGV)` for a process a signal ended."""
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            return str(code)
    return str(code)


def _start_command(argv: tuple[str, ...], timeout_s: float, env: tuple[tuple[str, str], ...] = (),
                   *, budget_cut: bool = False) -> HostHandle:
    """Start a `host-cmd:` host and wait up to `timeout_s` for its URL (`budget_cut`: that wait
    is what the run's budget leaves). The host is stopped on every way out but success: its URL
    not printed, its exit, a signal (`RunStopped`, KeyboardInterrupt) while waiting.

    A stop signal is held from before the fork until the guarded wait: one that lands while
    `Popen` returns or the readers start would otherwise leave the host running after the run
    ends (seen at load 10+: the host outlived a SIGINT by seconds)."""
    held = _HeldStopSignals()
    try:
        proc = subprocess.Popen(
            list(argv),
            env={**os.environ, **dict(env)} if env else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # its last lines go into a death finding
            text=True,
            start_new_session=True,  # its own process group: we stop the whole group
        )
    except OSError as e:
        held.release()
        raise TargetSetupError(f"host-cmd: cannot start {argv[0]!r}: {e}") from e
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:  # read stdout for the URL, then keep draining so the host never blocks
        assert proc.stdout is not None
        for line in proc.stdout:
            if not found:
                m = _URL.search(line)
                if m:
                    found.append(m.group(0))
                    ready.set()
        ready.set()

    tail: deque[str] = deque(maxlen=STDERR_LINES)
    times: deque[float] = deque(maxlen=STDERR_LINES)

    def pump_err() -> None:  # keep the last stderr lines; never let the host block on a full pipe
        assert proc.stderr is not None
        for line in proc.stderr:
            times.append(time.monotonic())
            tail.append(line.rstrip("\n"))

    err_thread = threading.Thread(target=pump_err, name="host-cmd-stderr", daemon=True)

    def stop() -> None:
        _stop_group(proc)

    try:
        threading.Thread(target=pump, name="host-cmd-stdout", daemon=True).start()
        err_thread.start()
        held.release()  # a signal held since the fork is raised here, inside the guard
        got = ready.wait(max(0.0, timeout_s)) and bool(found)
    except BaseException:  # a signal while the host starts: it must not outlive the run
        held.release()
        stop()
        raise
    if not got:
        code = proc.poll()  # before stopping it: did it exit on its own?
        if code is None and ready.is_set():  # its stdout closed: it is exiting
            try:
                code = proc.wait(2.0)
            except subprocess.TimeoutExpired:
                code = None
        stop()
        if code is not None:
            err_thread.join(1.0)  # its last words are whole
            said = crash_lines(list(tail), list(times))
            raise TargetSetupError(
                f"host-cmd: the host exited (status {describe_status(code)}) without printing a ws:// URL on "
                "stdout" + (f"; its stderr: {said}" if said else "; nothing on stderr"))
        within = f"within {timeout_s:.1f} s" + (" (what the --budget left)" if budget_cut else "")
        raise TargetSetupError(f"host-cmd: the host did not print a ws:// URL on stdout {within}")
    return HostHandle(found[0], stop, f"{shlex.join(argv)} at {found[0]}", proc=proc, stderr_tail=tail,
                      stderr_times=times, stderr_reader=err_thread)


class _HeldStopSignals:
    """SIGINT and SIGTERM noted instead of handled while a child is spawned (main thread only),
    then handed to the handlers the run had, once each, by `release()`. The mask is not touched:
    a child inherits a blocked mask across exec, a caught signal's handler it does not."""

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.old: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous = signal.getsignal(sig)
            if previous is not None:  # None: a handler not installed from Python; leave it be
                self.old[sig] = signal.signal(sig, self._note)

    def _note(self, signum: int, frame: object) -> None:
        if signum not in self.caught:
            self.caught.append(signum)

    def release(self) -> None:
        """Restore the handlers (idempotent); a signal noted meanwhile is raised now, so its
        handler runs here, in the caller's guard."""
        for sig, handler in self.old.items():
            signal.signal(sig, handler)
        self.old.clear()
        caught, self.caught = self.caught, []
        for sig in caught:
            signal.raise_signal(sig)


def _reachable(url: str, timeout_s: float) -> None:
    """A TCP connection to the URL's host and port succeeds (else: a setup error, not a finding)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "wss" else 80)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=min(timeout_s, 5.0)).close()
    except OSError as e:
        raise TargetSetupError(f"cannot reach the host at {url}: {e}") from e


reachable = _reachable


def _stop_group(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is not None:
        return
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        return
    for sig, wait_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _check_embedded(spec: LiveSpec) -> None:
    """An embedded spelling's defect names, checked without starting the host."""
    try:
        from harness.host.defects import DefectSet
    except ImportError as e:
        raise TargetSetupError(f"host:embedded: the embedded host is not available ({e})") from e
    try:
        DefectSet(spec.defects)
    except ValueError as e:  # an unknown defect name
        raise TargetSetupError(f"host:embedded: {e}") from e


def _start_embedded(spec: LiveSpec) -> HostHandle:
    try:
        from harness.host import start_host
    except ImportError as e:
        raise TargetSetupError(f"host:embedded: the embedded host is not available ({e})") from e
    try:
        running = start_host(config=_host_config(spec))
    except ValueError as e:  # an unknown defect name
        raise TargetSetupError(f"host:embedded: {e}") from e
    return HostHandle(running.url, running.close, embedded_text(spec),
                      dead=lambda: running.host.dead)


async def serve_embedded_in_loop(spec: LiveSpec) -> tuple[str, Callable[[], Awaitable[None]]]:
    """Serve the embedded host of `spec` on the running event loop (the caller's): its URL and an
    async close. The live campaign uses it so that host and clients share one thread — no GIL
    handoff per frame — and the host only runs while the clients do (it has no timers)."""
    served = await embedded_in_loop(spec)
    return served.url, served.aclose


@dataclass
class EmbeddedInLoop:
    """An embedded host served on the caller's loop: its URL, why it died (if it did), a close."""

    url: str
    dead: Callable[[], str | None]
    aclose: Callable[[], Awaitable[None]]


async def embedded_in_loop(spec: LiveSpec) -> EmbeddedInLoop:
    """`serve_embedded_in_loop`, also saying when the host died (a `dies-on-null` defect)."""
    if spec.kind != "embedded":
        raise ValueError(f"not an embedded host spelling: {spec.text!r}")
    try:
        from harness.host import serve_host
    except ImportError as e:
        raise TargetSetupError(f"host:embedded: the embedded host is not available ({e})") from e
    try:
        server = await serve_host(_host_config(spec))
    except ValueError as e:  # an unknown defect name
        raise TargetSetupError(f"host:embedded: {e}") from e

    async def aclose() -> None:
        server.host.close_all()
        await asyncio.sleep(0)
        await server.aclose()

    return EmbeddedInLoop(server.url, lambda: server.host.dead, aclose)


#: How long a started host may take to print its URL (or a URL to accept) when the budget leaves more.
HOST_STARTUP_S = 20.0


def startup_wait(time_left: float | None) -> dict[str, Any]:
    """The start-up options of a live target under a budget: wait at most `HOST_STARTUP_S`, or
    what the budget leaves when that is less (`budget_cut`: the message says so). `run` and
    `commands` both bound a host's start-up by it."""
    if time_left is None:
        return {"startup_timeout_s": HOST_STARTUP_S}
    return {"startup_timeout_s": min(HOST_STARTUP_S, time_left), "budget_cut": time_left < HOST_STARTUP_S}


def start_live_host(spec: LiveSpec, *, allow_remote: bool = False, startup_timeout_s: float = HOST_STARTUP_S,
                    budget_cut: bool = False) -> HostHandle:
    """Make the host of `spec` reachable: start it when the spelling says so."""
    if spec.kind == "url":
        assert spec.url is not None
        check_loopback(spec.url, allow_remote)
        _reachable(spec.url, startup_timeout_s)
        return HostHandle(spec.url)
    if spec.kind == "cmd":
        handle = _start_command(spec.command, startup_timeout_s, spec.env, budget_cut=budget_cut)
    else:
        handle = _start_embedded(spec)
    try:
        check_loopback(handle.url, allow_remote)
    except TargetSetupError:
        handle.close()
        raise
    return handle


class LiveTarget:
    """What `open_target` returns for a live spelling: a host to start, not a reducer.

    The engine drives it with the live machine (`harness.live`); `reduce`/`session`
    exist only so that it satisfies the `Target` protocol and say so when called.
    """

    is_live = True

    def __init__(self, spec: str, *, allow_remote: bool = False, defects: tuple[str, ...] = (),
                 startup_timeout_s: float = HOST_STARTUP_S, start: bool = True, budget_cut: bool = False,
                 **_: Any) -> None:
        self.spec = parse_live_spec(spec, defects=tuple(defects))
        self.description = (
            self.spec.text if self.spec.kind != "embedded" else embedded_text(self.spec)
        )
        self.allow_remote = allow_remote
        self.startup_timeout_s = startup_timeout_s
        #: The start-up timeout is what the run's budget left (said in the message when it ends).
        self.budget_cut = budget_cut
        self._handle: HostHandle | None = None
        if self.spec.kind == "url":
            assert self.spec.url is not None
            check_loopback(self.spec.url, allow_remote)
        if self.embedded:
            # Started on first use (`url`): a live campaign serves its own copy on its event
            # loop, so starting one here would leave a host idle. Defect names are checked now.
            _check_embedded(self.spec)
        elif start:
            self.start()  # setup problems surface here, as TargetSetupError (a usage error)

    @property
    def embedded(self) -> bool:
        return self.spec.kind == "embedded"

    def start(self) -> HostHandle:
        if self._handle is None:
            self._handle = start_live_host(
                self.spec, allow_remote=self.allow_remote, startup_timeout_s=self.startup_timeout_s,
                budget_cut=self.budget_cut,
            )
        return self._handle

    @property
    def url(self) -> str:
        return self.start().url

    # -- a host that dies (issue 16) ------------------------------------------------------------

    @property
    def can_restart(self) -> bool:
        """A host this target started can be started again; a `ws://` host cannot."""
        return self.spec.kind in ("cmd", "embedded")

    def death(self, lost: bool = False) -> str | None:
        """Why the host is gone (None: it is not known to be): a `host-cmd:` process that exited
        (status, last stderr lines), an embedded host that died, a `ws://` host that no longer
        accepts connections. `lost`: a connection just broke (a process gets a moment to exit,
        a URL is probed)."""
        handle = self._handle
        if handle is None:
            return None
        if self.spec.kind == "cmd":
            code = handle.exit_status(1.0 if lost else 0.0)
            if code is None:
                return None
            said = handle.crash_text()
            err = f"; its stderr: {said}" if said else "; nothing on stderr"
            return f"the host process exited with status {describe_status(code)}{err}"
        if self.spec.kind == "embedded":
            why = handle.dead()
            return f"the embedded host died: {why}" if why else None
        if not lost:
            return None
        try:
            _reachable(handle.url, 2.0)
        except TargetSetupError as e:
            return f"the host went away: {e}"
        return None

    def restart(self) -> str:
        """Stop what is left of the host and start a fresh one: its (new) URL."""
        if not self.can_restart:
            raise TargetSetupError(f"{self.description}: a host we did not start cannot be restarted")
        self.close()
        return self.start().url

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        raise TargetSetupError(f"{self.description} is a live host: run it with the live machine")

    def session(self, kind: str, state: dict[str, Any]) -> Any:
        raise TargetSetupError(f"{self.description} is a live host: run it with the live machine")

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


# ---------------------------------------------------------------------------------------------
# the wire: one client connection


class RpcError(Exception):
    """A JSON-RPC error response."""

    def __init__(self, code: Any, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(Exception):
    """The host closed the connection (or it broke) while we waited for an answer."""


@dataclass
class Transcript:
    """Every frame of a run, in the order this process saw them: `{"c": conn, "d": ">"|"<", "m": msg}`.

    `">"` is client to host, `"<"` host to client; a frame that was not JSON is kept as a string.
    """

    frames: list[dict[str, Any]] = field(default_factory=list)
    limit: int = 200_000
    #: Frames seen in all (counting past `limit`): a drain waits until it stops moving.
    seen: int = 0

    def add(self, conn: int, direction: str, msg: Any) -> None:
        self.seen += 1
        if len(self.frames) < self.limit:
            self.frames.append({"c": conn, "d": direction, "m": msg})


Notify = Callable[[int, str, dict[str, Any]], None]

#: The largest frame a client connection takes from a host (a bigger one closes it: 1009).
MAX_FRAME_BYTES = 64 * 2**20


@dataclass(frozen=True, slots=True)
class Pending:
    """A request sent and not answered yet (`WireConnection.send_request`)."""

    id: int
    future: asyncio.Future[Any]


class WireConnection:
    """One client connection to a host: numbered requests, notifications, a recorded transcript.

    Runs on one asyncio loop, on a `harness.websocket.Link`: every host frame is handled as it
    arrives (no reader task); `on_notification(conn, method, params)` is called on that loop
    for every host notification, in arrival order. Host requests (the symmetric resource*
    family) are answered with -32601, as a client without handlers MUST (WIRE.md §4.4).
    """

    def __init__(self, conn_id: int, transcript: Transcript, on_notification: Notify) -> None:
        self.conn_id = conn_id
        self.transcript = transcript
        self.on_notification = on_notification
        self._link: Link | None = None
        self._next_id = 1
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        #: Answers with `id: null` (errors about frames the host could not attribute).
        self.null_replies: list[dict[str, Any]] = []

    async def open(self, url: str, timeout_s: float = 5.0) -> None:
        try:
            link = await ws_connect(url, max_size=MAX_FRAME_BYTES, timeout_s=timeout_s)
        except (OSError, TimeoutError) as e:
            raise ConnectionLost(f"cannot connect to {url}: {e}") from e
        except Exception as e:  # the handshake's errors (InvalidStatus, InvalidMessage, InvalidURI, …)
            raise ConnectionLost(f"cannot connect to {url}: {type(e).__name__}: {e}") from e
        self._link = link
        link.on_message = self._received
        link.on_closed = self._lost
        if link.lost.done():  # gone between the handshake and now
            self._lost()

    def _received(self, frame: str | bytes) -> None:
        text = frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame
        try:
            msg = json.loads(text)
        except ValueError:
            self.transcript.add(self.conn_id, "<", text)
            return
        self.transcript.add(self.conn_id, "<", msg)
        self._dispatch(msg)

    def _lost(self) -> None:
        if self.closed.is_set():
            return
        self.close_code = self._link.close_code if self._link is not None else None
        self.closed.set()
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(ConnectionLost(f"connection closed (code {self.close_code})"))
                fut.exception()  # retrieved: a waiter that timed out meanwhile must not log it
        self._waiting.clear()

    def _dispatch(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        if "method" in msg:
            params = msg.get("params")
            if "id" in msg:  # a host request: no handlers here
                self._send_nowait({"jsonrpc": "2.0", "id": msg["id"],
                                   "error": {"code": -32601, "message": f"Method not found: {msg['method']}"}})
                return
            self.on_notification(self.conn_id, str(msg["method"]), params if isinstance(params, dict) else {})
            return
        if msg.get("id", 0) is None:
            self.null_replies.append(msg)
            return
        fut = self._waiting.pop(msg.get("id"), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def _send_nowait(self, msg: Any) -> None:
        self.transcript.add(self.conn_id, ">", msg)
        with contextlib.suppress(LinkClosed):
            self._write(json.dumps(msg, separators=(",", ":")))

    def _write(self, text: str, flush: bool = True) -> None:
        if self._link is None:
            raise LinkClosed("not connected")
        self._link.send_text(text, flush=flush)

    async def _send(self, text: str, flush: bool = True) -> None:
        """Write one frame (`flush=False`: held for the next frame sent with `flush`, one write
        for both); wait while the host is not reading (the transport's high-water mark)."""
        try:
            self._write(text, flush)
        except (LinkClosed, UnicodeEncodeError) as e:
            raise ConnectionLost(f"send failed: {e}") from e
        assert self._link is not None
        await self._link.drain()

    async def send_raw(self, text: str) -> None:
        """Send a frame as is (probes: not JSON, a batch, …)."""
        self.transcript.add(self.conn_id, ">", text)
        await self._send(text)

    async def request(self, method: str, params: dict[str, Any], timeout_s: float = 5.0) -> Any:
        """Send a request; return its `result` or raise `RpcError` / `ConnectionLost` / TimeoutError."""
        return await self.answer(await self.send_request(method, params), timeout_s)

    async def send_request(self, method: str, params: dict[str, Any], *, flush: bool = True) -> Pending:
        """Send a request without waiting for its answer (`answer` waits): requests pipelined on
        one connection need no task each (`flush=False`: held for the next frame sent)."""
        if self.closed.is_set():
            raise ConnectionLost(f"connection closed (code {self.close_code})")
        rid = self._next_id
        self._next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.transcript.add(self.conn_id, ">", msg)
        try:
            await self._send(json.dumps(msg, separators=(",", ":")), flush)
        except ConnectionLost:
            self._waiting.pop(rid, None)
            raise
        return Pending(rid, fut)

    async def answer(self, pending: Pending, timeout_s: float = 5.0) -> Any:
        """The `result` of a request `send_request` sent, or `RpcError` / `ConnectionLost` /
        TimeoutError (the timeout counts from now)."""
        try:
            async with asyncio.timeout(timeout_s):  # cheaper than wait_for (no task per request)
                reply = await pending.future
        finally:
            self._waiting.pop(pending.id, None)
        if "error" in reply:
            err = reply["error"] if isinstance(reply["error"], dict) else {}
            raise RpcError(err.get("code"), str(err.get("message", "")), err.get("data"))
        return reply.get("result")

    async def notify(self, method: str, params: dict[str, Any], *, flush: bool = True) -> None:
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        self.transcript.add(self.conn_id, ">", msg)
        await self._send(json.dumps(msg, separators=(",", ":")), flush)

    async def close(self) -> None:
        """The closing handshake (1000), at most 2 s; then the connection is dropped."""
        link = self._link
        if link is None:
            return
        link.close()
        try:
            async with asyncio.timeout(2.0):
                await link.wait_closed()
        except TimeoutError:
            link.abort()
            await link.wait_closed()


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.005) -> bool:
    """Poll `predicate` (synchronous helper for tests)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return predicate()


def _open_live(text: str, *, profile: Profile | None = None, timeout_s: float = 5.0, **options: Any) -> Target:
    """A host to fuzz over the wire (the live machine drives it; profile and timeout are its own)."""
    return LiveTarget(text, **options)


register_target(
    LIVE_PREFIXES,
    ("ws://HOST:PORT[/PATH] (or wss://)", "host-cmd:<command that starts a host>", "host:embedded[?defect=NAME]"),
    _open_live,
)
