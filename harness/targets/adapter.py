"""`adapter:<command line>` — any reducer implementation speaking the adapter protocol.

The protocol (docs/adapters.md is the reference): newline-delimited JSON over the child's
stdin/stdout. The adapter announces itself on its first line; the harness then sends
requests `{"id", "op", …}` and reads one reply per request, in order, each `{"id", …}`:

* simple form: `reduce {kind, state, action, now}` → `{state}`;
* fast form: `load {handle, kind, state}` → `{}`, `step {handle, action, now}` →
  `{changes}` (or `{state}`), `read {handle}` → `{state}`, `drop {handle}` → `{}`;
* any request may be answered `{"id", "error": {"message", "type"?, "code"?}}`.

The harness passes the modelled protocol version in the environment
(`AHP_PROTOCOL_VERSION`, `AHP_FUZZ_PROFILE`). stdin EOF asks the adapter to exit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import sys
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from harness.errors import RunStopped
from harness.reference.profile import DEFAULT_PROFILE, Profile
from harness.spec.versions import format_version

from . import jsonio
from .base import (
    Action,
    ReduceSession,
    State,
    Target,
    TargetCrashed,
    TargetError,
    TargetProtocolError,
    TargetSession,
    TargetSetupError,
    TargetTimeout,
    register_target,
)
from .delta import ChangeError, apply_changes
from .process import LineProcess, ProcessEOF, ProcessTimeout, describe_exit

ADAPTER_PROTOCOL = 1
FORMS = ("simple", "fast")
#: Pipelining: refill when at most LOW requests are outstanding, up to HIGH outstanding.
PIPELINE_LOW = 64
PIPELINE_HIGH = 256

_encode = jsonio.dumps
_decode = jsonio.loads


class RunLimit(Protocol):
    """The run's hard limit as a target sees it (`harness.engine.control.RunControl`)."""

    reason: str | None  # set once the run must stop

    def time_left(self) -> float | None:
        """Seconds until the run's deadline, on the run's own clock (None: no limit)."""


def split_command(text: str) -> list[str]:
    """Split an `adapter:` command line like a POSIX shell (quotes, backslashes)."""
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise ValueError(f"adapter command line {text!r}: {e}") from e
    if not argv:
        raise ValueError("adapter: needs a command line, e.g. adapter:node my-adapter.js")
    return argv


def profile_env(profile: Profile) -> dict[str, str]:
    """The environment variables that tell an adapter which protocol behaviour is modelled:
    `AHP_PROTOCOL_VERSION` (e.g. `0.7.0`) and `AHP_FUZZ_PROFILE`, a JSON object with the
    profile's `label` and every field of `Profile` (the version as text)."""
    fields = {f.name: getattr(profile, f.name) for f in dataclasses.fields(profile)}
    fields["version"] = format_version(profile.version)
    return {
        "AHP_PROTOCOL_VERSION": format_version(profile.version),
        "AHP_FUZZ_PROFILE": _encode({"label": profile.label, **fields}),
    }


def _error_from_reply(op: str, err: Any) -> TargetError:
    if isinstance(err, str):
        return TargetError(err, detail={"message": err})
    if isinstance(err, Mapping):
        message = err.get("message")
        text = message if isinstance(message, str) else _encode(err)[:500]
        etype = err.get("type")
        code = err.get("code")
        return TargetError(
            text,
            error_type=etype if isinstance(etype, str) else None,
            code=code if isinstance(code, str) else None,
            detail=err,
        )
    return TargetError(f"{op}: error reply {err!r:.200}", detail={"error": err})


class AdapterTarget:
    """A reducer implementation in a child process. Starts it on creation (to fail early),
    restarts it on next use after a crash or a timeout, and stops it on `close()`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        profile: Profile = DEFAULT_PROFILE,
        timeout_s: float = 5.0,
        startup_timeout_s: float = 30.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        description: str | None = None,
        stderr: Literal["capture", "inherit"] = "capture",
        checkpoint_every: int = 4096,
        form: Literal["auto", "simple"] = "auto",
    ) -> None:
        if not argv:
            raise ValueError("adapter needs a command line")
        self.argv = list(argv)
        self.profile = profile
        self.timeout_s = timeout_s
        self.startup_timeout_s = startup_timeout_s
        self._env = {**os.environ, **(env or {}), **profile_env(profile)}
        self._given_env = dict(env or {})
        self._stderr = stderr
        self._cwd = cwd
        self._echo = sys.stderr if stderr == "inherit" else None
        self.checkpoint_every = checkpoint_every
        self._form = form
        self._label = description or "adapter:" + shlex.join(self.argv)
        self.description = self._label
        self.announcement: dict[str, Any] = {}
        self.generation = 0  # bumped on each (re)start: sessions of older generations are stale
        self.restarts = 0
        self._proc: LineProcess | None = None
        self._next_id = 1
        self._next_handle = 1
        self._released: list[tuple[int, int]] = []  # (generation, handle) of collected sessions
        self._closed = False
        self._lanes: list[AdapterTarget] = []  # started by `for_profile`, closed with this one
        self._written = jsonio.WrittenTokens()
        #: Set by the campaign: no wait extends past the run's deadline (a wait cut short by it
        #: kills the process and raises `RunStopped`, not a timeout finding), and nothing new
        #: starts once the run must stop.
        self.run_limit: RunLimit | None = None
        self._start()

    # -- process lifecycle -------------------------------------------------------------------

    @property
    def forms(self) -> tuple[str, ...]:
        forms = self.announcement.get("forms", ["simple"])
        return tuple(f for f in FORMS if f in forms)

    @property
    def kinds(self) -> tuple[str, ...] | None:
        """The state kinds the adapter announced reducers for; None when it did not say."""
        kinds = self.announcement.get("kinds")
        if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds):
            return tuple(kinds)
        return None

    @property
    def profiles(self) -> tuple[str, ...] | None:
        """The profiles the adapter announces reducers for, by the names the model has rules
        for: `protocolVersions` (a list), else its one `profile` or `protocolVersion`; None when
        it names none the model knows. A run fuzzes each in a lane of its own (engine/arms.py),
        each through an adapter process of its own started with that profile's environment."""
        ann = self.announcement
        names = ann.get("protocolVersions")
        if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
            one = ann.get("profile") or ann.get("protocolVersion")
            names = [one] if isinstance(one, str) else []
        known = []
        for name in names:
            try:
                known.append(Profile.named(name).label)
            except ValueError:
                continue  # a version without rules: the run says so (harness/cli/_profiles.py)
        return tuple(dict.fromkeys(known)) or None

    def for_profile(self, profile: Profile) -> AdapterTarget:
        """The same adapter command, started for `profile` (its environment says which)."""
        other = AdapterTarget(
            self.argv, profile=profile, timeout_s=self.timeout_s, startup_timeout_s=self.startup_timeout_s,
            env=self._given_env, cwd=self._cwd, description=f"{self._label} [{profile.label}]",
            stderr=self._stderr, checkpoint_every=self.checkpoint_every, form=self._form,
        )
        other.run_limit = self.run_limit
        self._lanes.append(other)
        return other

    @property
    def fast(self) -> bool:
        return self._form == "auto" and "fast" in self.forms

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stderr_tail(self, n: int = 20) -> list[str]:
        return self._proc.stderr_tail(n) if self._proc is not None else []

    def _start(self) -> None:
        if self.run_limit is not None and self.run_limit.reason is not None:
            raise RunStopped(self.run_limit.reason)  # no restart once the run must stop
        try:
            proc = LineProcess(
                self.argv,
                env=self._env,
                cwd=self._cwd,
                echo_stderr=self._echo,
                echo_prefix="[adapter] ",
            )
        except FileNotFoundError as e:
            raise TargetSetupError(f"{self._label}: {e}") from e
        self._proc = proc
        self.generation += 1
        self._next_id = 1
        deadline, cut = self._wait_until(self.startup_timeout_s)
        try:
            line = proc.read_line(deadline)
        except ProcessTimeout:
            if cut:
                self._abandon(proc)
            tail = proc.stderr_tail()
            proc.kill()
            self._proc = None
            raise TargetSetupError(
                f"{self._label}: no announcement line within {self.startup_timeout_s:g} s"
                + _tail_text(tail)
            ) from None
        except ProcessEOF:
            code = proc.wait_exit(2.0)
            tail = proc.stderr_tail(settle_s=0.5)
            proc.kill()
            self._proc = None
            raise TargetSetupError(
                f"{self._label}: exited before announcing itself ({describe_exit(code)})"
                + _tail_text(tail)
            ) from None
        try:
            ann = _decode(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            ann = None
        if not isinstance(ann, dict) or "ahpAdapter" not in ann:
            proc.kill()
            self._proc = None
            raise TargetSetupError(
                f"{self._label}: first stdout line is not an adapter announcement "
                f'(want {{"ahpAdapter": 1, "forms": [...], ...}}): {line[:200]!r}'
            )
        if ann.get("ahpAdapter") != ADAPTER_PROTOCOL:
            proc.kill()
            self._proc = None
            raise TargetSetupError(
                f"{self._label}: speaks adapter protocol {ann.get('ahpAdapter')!r}; "
                f"this harness speaks {ADAPTER_PROTOCOL}"
            )
        forms = ann.get("forms", ["simple"])
        if not isinstance(forms, list) or not any(f in FORMS for f in forms):
            proc.kill()
            self._proc = None
            raise TargetSetupError(f"{self._label}: announcement names no known form: {forms!r}")
        self.announcement = ann
        self.description = self._describe()

    def _wait_until(self, seconds: float) -> tuple[float, bool]:
        """When a wait of `seconds` must end, and whether the run's deadline (rather than the
        timeout) sets that. Raises `RunStopped` when the run must already stop."""
        limit = self.run_limit
        now = time.monotonic()
        if limit is None:
            return now + seconds, False
        if limit.reason is not None:
            raise RunStopped(limit.reason)
        # the time left is read on the run's clock (an injected one in tests), the wait is real
        left = limit.time_left()
        if left is not None and left < seconds:
            if left <= 0:
                raise RunStopped("budget")
            return now + left, True
        return now + seconds, False

    def _abandon(self, proc: LineProcess) -> None:
        """The run's time is up in the middle of a request: kill the process, stop the run."""
        proc.kill()
        self._proc = None
        raise RunStopped("budget")

    def _describe(self) -> str:
        ann = self.announcement
        parts = [str(ann["name"])] if isinstance(ann.get("name"), str) else []
        if isinstance(ann.get("protocolVersion"), str):
            parts.append(ann["protocolVersion"])
        return f"{self._label} ({', '.join(parts)})" if parts else self._label

    def _ensure(self) -> LineProcess:
        if self._closed:
            raise RuntimeError(f"{self._label}: target is closed")
        if self._proc is None:
            self.restarts += 1
            self._start()
        proc = self._proc
        assert proc is not None
        if proc.returncode is not None:  # it exited on its own since its last reply
            tail = proc.stderr_tail(settle_s=0.5)
            proc.kill()
            self._proc = None
            raise TargetCrashed(
                f"{self._label}: adapter exited after its last reply "
                f"({describe_exit(proc.returncode)})" + _tail_text(tail),
                exit_code=proc.returncode,
                stderr_tail=tail,
            )
        return proc

    def restart(self) -> None:
        """Kill the process (if any) and start a fresh one."""
        if self._proc is not None:
            self._proc.kill()
            self._proc = None
        self._ensure()

    def close(self, grace_s: float = 2.0) -> None:
        """Clean shutdown: EOF on stdin, `grace_s` to exit, then signals to the process group."""
        for lane in self._lanes:
            lane.close(grace_s)
        self._lanes.clear()
        if self._proc is not None:
            self._proc.close(grace_s)
            self._proc = None
        self._closed = True

    def __enter__(self) -> AdapterTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- request/reply -----------------------------------------------------------------------

    def _fail(self, proc: LineProcess, exc: BaseException, op: str) -> TargetError:
        """Turn an I/O failure into a finding; the process is gone afterwards."""
        if isinstance(exc, ProcessTimeout):
            tail = proc.stderr_tail()
            proc.kill()
            self._proc = None
            return TargetTimeout(
                # the request's op is not named: a hang is one cause whichever request met it
                # (a stateless `reduce` of a probe, a session's `step`)
                f"{self._label}: no reply within {self.timeout_s:g} s; "
                "adapter killed (restarts on next use)" + _tail_text(tail),
                timeout_s=self.timeout_s,
                stderr_tail=tail,
            )
        code = proc.wait_exit(2.0)
        tail = proc.stderr_tail(settle_s=0.5)
        proc.kill()
        self._proc = None
        return TargetCrashed(
            f"{self._label}: adapter died during {op!r} ({describe_exit(code)})" + _tail_text(tail),
            exit_code=code,
            stderr_tail=tail,
        )

    def _protocol_error(self, proc: LineProcess, message: str) -> TargetProtocolError:
        tail = proc.stderr_tail()
        proc.kill()
        self._proc = None
        return TargetProtocolError(
            f"{self._label}: protocol broken: {message}" + _tail_text(tail), stderr_tail=tail
        )

    def take_written(self) -> jsonio.Written:
        """What the adapter's replies wrote since the last call that is not how the model writes
        it (`jsonio.Written`: integral floats, non-finite numbers, duplicate keys): its encoder,
        seen in the bytes."""
        return self._written.take()

    def _parse_reply(self, proc: LineProcess, line: bytes, rid: int, op: str) -> dict[str, Any]:
        try:
            reply = self._written.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise self._protocol_error(
                proc, f"reply to {op!r} (id {rid}) is not JSON: {line[:200]!r}"
            ) from None
        if type(reply) is not dict:
            raise self._protocol_error(
                proc, f"reply to {op!r} (id {rid}) is not an object: {line[:200]!r}"
            )
        if reply.get("id") != rid:
            raise self._protocol_error(
                proc, f"expected a reply with id {rid} (to {op!r}), got id {reply.get('id')!r}"
            )
        return reply

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its reply (error replies are returned, not raised)."""
        proc = self._ensure()
        rid = self._next_id
        self._next_id += 1
        op = request["op"]
        line = _encode({"id": rid, **request}).encode() + b"\n"
        return self._round_trip(proc, line, rid, op)

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request of an optional op (e.g. `roundTrip`) and return its reply as is
        (an error reply is returned, not raised; a crash or hang raises)."""
        return self._call(request)

    def _round_trip(self, proc: LineProcess, line: bytes, rid: int, op: str) -> dict[str, Any]:
        deadline, cut = self._wait_until(self.timeout_s)
        try:
            proc.write(line, deadline)
            reply_line = proc.read_line(deadline)
        except (ProcessTimeout, ProcessEOF) as e:
            if cut and isinstance(e, ProcessTimeout):
                self._abandon(proc)
            raise self._fail(proc, e, op) from None
        return self._parse_reply(proc, reply_line, rid, op)

    def _pipeline(
        self, n: int, build: Callable[[int, int], bytes], op: str
    ) -> Iterator[dict[str, Any]]:
        """Send `n` requests (`build(i, id)` makes the i-th line) and yield the replies in
        order. Requests go out in batches ahead of the replies (at most PIPELINE_HIGH
        outstanding), so both processes work at once; each reply gets the full timeout."""
        proc = self._ensure()
        base = self._next_id
        self._next_id += n
        sent = got = 0
        while got < n:
            deadline, cut = self._wait_until(self.timeout_s)
            try:
                if sent < n and sent - got <= PIPELINE_LOW:
                    hi = min(n, got + PIPELINE_HIGH)
                    proc.write(b"".join([build(i, base + i) for i in range(sent, hi)]), deadline)
                    sent = hi
                line = proc.read_line(deadline)
            except (ProcessTimeout, ProcessEOF) as e:
                if cut and isinstance(e, ProcessTimeout):
                    self._abandon(proc)
                raise self._fail(proc, e, op) from None
            yield self._parse_reply(proc, line, base + got, op)
            got += 1

    def _expect_state(self, proc_reply: dict[str, Any], op: str) -> State:
        if "error" in proc_reply:
            raise _error_from_reply(op, proc_reply["error"])
        state = proc_reply.get("state")
        if type(state) is not dict:
            assert self._proc is not None
            raise self._protocol_error(
                self._proc, f"reply to {op!r} has no state object: {_encode(proc_reply)[:200]}"
            )
        return state

    # -- the Target interface -----------------------------------------------------------------

    def reduce(self, kind: str, state: State, action: Action, now_ms: int) -> State:
        """The simple form: send the whole state, get the whole new state back."""
        reply = self._call(
            {"op": "reduce", "kind": kind, "state": state, "action": action, "now": now_ms}
        )
        return self._expect_state(reply, "reduce")

    def observe_clock(
        self, kind: str, state: State, action: Action, now_ms: int
    ) -> tuple[State, int | None] | None:
        """`reduce`, with the clock reads the adapter counted during the call (docs/adapters.md:
        `"observeClock": true` → `"clockReads": n`). None when the adapter does not announce
        `observesClock`; the count is None when its reply carries no valid one."""
        if self.announcement.get("observesClock") is not True:
            return None
        reply = self._call(
            {
                "op": "reduce",
                "kind": kind,
                "state": state,
                "action": action,
                "now": now_ms,
                "observeClock": True,
            }
        )
        new = self._expect_state(reply, "reduce")
        reads = reply.get("clockReads")
        ok = type(reads) is int and reads >= 0
        return new, reads if ok else None

    def session(self, kind: str, state: State) -> TargetSession:
        """A fast-form session when the adapter offers it, else a wrapper over `reduce`."""
        if not self.fast:
            return ReduceSession(self, kind, state)
        handle = self._next_handle
        self._next_handle += 1
        # Handles of sessions garbage-collected without close() are dropped first, in the
        # same pipeline (a finalizer must not do I/O: it may run in the middle of a request).
        stale = [h for gen, h in self._released if gen == self.generation]
        self._released.clear()
        lines = [_encode({"op": "drop", "handle": h}) for h in stale]
        lines.append(_encode({"op": "load", "handle": handle, "kind": kind, "state": state}))
        replies = list(self._pipeline(len(lines), lambda i, rid: _with_id(rid, lines[i]), "load"))
        last = replies[-1]  # errors of the drops do not matter
        if "error" in last:
            raise _error_from_reply("load", last["error"])
        return FastSession(self, handle, kind, state)


class FastSession:
    """A state held by the adapter under a handle; the harness keeps a mirror it patches."""

    def __init__(self, target: AdapterTarget, handle: int, kind: str, state: State) -> None:
        self._target = target
        self._generation = target.generation
        self.handle = handle
        self.kind = kind
        self._mirror = state
        self.steps = 0
        self._closed = False
        self._finalizer = weakref.finalize(
            self, target._released.append, (target.generation, handle)
        )

    @property
    def state(self) -> State:
        """The mirror: the state as the harness has rebuilt it from the change lists."""
        return self._mirror

    @property
    def stale(self) -> bool:
        """The adapter restarted since this session was opened (after a crash or a timeout,
        perhaps of another session's or a probe's call): its state is gone."""
        t = self._target
        return not self._closed and not t._closed and (t.generation != self._generation or t._proc is None)

    def _live(self) -> AdapterTarget:
        if self._closed:
            raise RuntimeError("session is closed")
        t = self._target
        if t._closed:
            raise RuntimeError(f"{t._label}: target is closed")
        if t.generation != self._generation or t._proc is None:
            raise TargetCrashed(
                f"{t._label}: the adapter restarted after a crash or timeout; "
                "this session's state is gone (open a new session)"
            )
        return t

    def _apply(self, reply: dict[str, Any]) -> State:
        t = self._target
        if "error" in reply:
            raise _error_from_reply("step", reply["error"])
        changes = reply.get("changes")
        if changes is None and type(reply.get("state")) is dict:
            new = reply["state"]
        elif type(changes) is list:
            try:
                new = apply_changes(self._mirror, changes)
            except ChangeError as e:
                assert t._proc is not None
                raise t._protocol_error(t._proc, f"step on handle {self.handle}: {e}") from None
            if type(new) is not dict:
                assert t._proc is not None
                raise t._protocol_error(
                    t._proc,
                    f"step on handle {self.handle}: changes replaced the state with a non-object",
                )
        else:
            assert t._proc is not None
            raise t._protocol_error(
                t._proc, f"step reply has neither changes nor state: {_encode(reply)[:200]}"
            )
        self._mirror = new
        self.steps += 1
        if t.checkpoint_every and self.steps % t.checkpoint_every == 0:
            self.checkpoint()
        return new

    def step(self, action: Action, now_ms: int) -> State:
        t = self._live()
        assert t._proc is not None
        rid = t._next_id
        t._next_id += 1
        return self._apply(
            t._round_trip(t._proc, _step_line(rid, self.handle, action, now_ms), rid, "step")
        )

    def step_many(self, steps: Sequence[tuple[Action, int]]) -> list[State | TargetError]:
        """Pipelined steps: the outcome of each step in order, a state or the step's error.

        A failed step leaves the state unchanged and the following steps still run (the same
        as calling `step` in a loop and catching `TargetError`). Crashes, protocol errors and
        timeouts raise.
        """
        t = self._live()
        handle = self.handle

        def build(i: int, rid: int) -> bytes:
            action, now = steps[i]
            return _step_line(rid, handle, action, now)

        out: list[State | TargetError] = []
        for reply in t._pipeline(len(steps), build, "step"):
            try:
                out.append(self._apply(reply))
            except TargetCrashed:
                raise
            except TargetError as e:
                out.append(e)
        return out

    def read(self) -> State:
        """The adapter's own full state for this handle (also re-bases the mirror on it)."""
        t = self._live()
        state = t._expect_state(t._call({"op": "read", "handle": self.handle}), "read")
        self._mirror = state
        return state

    def checkpoint(self) -> State:
        """Read the adapter's state and check that the mirror equals it."""
        t = self._live()
        mirror = self._mirror
        state = t._expect_state(t._call({"op": "read", "handle": self.handle}), "read")
        if state != mirror:
            where = _first_difference(mirror, state)
            assert t._proc is not None
            raise t._protocol_error(
                t._proc,
                f"fast-form changes diverged from the adapter's own state after step {self.steps} "
                f"of handle {self.handle} (first difference at {where})",
            )
        return mirror

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._finalizer.detach()
        t = self._target
        if t.generation == self._generation and t._proc is not None and not t._closed:
            with contextlib.suppress(TargetError):
                t._call({"op": "drop", "handle": self.handle})

    def __enter__(self) -> FastSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_STEP_LINE = '{"id":%d,"op":"step","handle":%d,"now":%d,"action":%s}\n'


def _step_line(rid: int, handle: int, action: Action, now_ms: int) -> bytes:
    if type(now_ms) is not int:
        raise TypeError(f"now_ms must be an int (ms since the epoch), got {now_ms!r}")
    return (_STEP_LINE % (rid, handle, now_ms, _encode(action))).encode()


def _with_id(rid: int, encoded: str) -> bytes:
    """Prefix an encoded request object (`{...}`) with its id, newline-terminated."""
    return (f'{{"id":{rid},' + encoded[1:] + "\n").encode()


def _first_difference(a: Any, b: Any, path: tuple[Any, ...] = ()) -> str:
    if type(a) is dict and type(b) is dict:
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return repr([*path, k]) + (
                    " (missing in mirror)" if k not in a else " (missing in adapter)"
                )
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], (*path, k))
    if type(a) is list and type(b) is list:
        if len(a) != len(b):
            return f"{list(path)!r} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, (*path, i))
    return repr(list(path))


def _tail_text(tail: Sequence[str]) -> str:
    if not tail:
        return ""
    return "\n  last stderr lines:\n    " + "\n    ".join(tail[-10:])


def bridge_path() -> Path:
    """The Node bridge shipped with the package (used by the `ts:` and `js:` targets)."""
    return Path(__file__).with_name("node_bridge.mjs")


def _open_adapter(text: str, *, profile: Profile = DEFAULT_PROFILE, timeout_s: float = 5.0, **options: Any) -> Target:
    argv = split_command(text[len("adapter:") :])
    return AdapterTarget(argv, profile=profile, timeout_s=timeout_s, description=text, **options)


register_target(("adapter:",), ("adapter:<command line>",), _open_adapter)
