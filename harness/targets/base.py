"""The target interface: what the engine steps, whatever implementation sits behind it.

A *target* is a reducer implementation: `reduce(kind, state, action, now_ms)` returns the new
state or raises `TargetError`. A *session* keeps one state on the target's side and steps it
(the adapter's fast form); targets without a native session get `ReduceSession`, a wrapper
over `reduce`. Errors are findings, not harness failures:

* `TargetError` — the implementation answered this step with an error (e.g. it threw);
* `TargetCrashed` — the process died or broke the protocol (a crash finding);
* `TargetTimeout` — no answer in time (a hang finding).

After a crash or a hang the target restarts its process on next use; sessions opened before
that are stale and raise `TargetCrashed`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from harness.reference.profile import DEFAULT_PROFILE, Profile

State = dict[str, Any]
Action = Mapping[str, Any]

class TargetError(Exception):
    """The target answered this step with an error (finding material).

    `error_type` is the implementation's name for it (an exception class, when it has one),
    `code` the adapter protocol's error code, `detail` the raw error object of the reply.
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        code: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type
        self.code = code
        self.detail = dict(detail) if detail is not None else {}


class TargetCrashed(TargetError):
    """The target process died, or broke the protocol (finding: crash).

    `exit_code` is the process's exit status when it is known (negative: killed by that
    signal); `stderr_tail` holds the last lines it wrote to stderr.
    """

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        stderr_tail: Sequence[str] = (),
        code: str = "crash",
    ) -> None:
        super().__init__(message, code=code)
        self.exit_code = exit_code
        self.stderr_tail = list(stderr_tail)


class TargetProtocolError(TargetCrashed):
    """The target broke the adapter protocol: a line that is not JSON, a wrong reply id,
    a malformed change list, or a fast-form state that diverged from its own full read."""

    def __init__(self, message: str, *, stderr_tail: Sequence[str] = ()) -> None:
        super().__init__(message, stderr_tail=stderr_tail, code="protocol")


class TargetTimeout(TargetError):
    """No answer within the timeout (finding: hang). The process was killed; the target
    restarts it on next use."""

    def __init__(self, message: str, *, timeout_s: float, stderr_tail: Sequence[str] = ()) -> None:
        super().__init__(message, code="timeout")
        self.timeout_s = timeout_s
        self.stderr_tail = list(stderr_tail)


class TargetSetupError(Exception):
    """The target cannot be started on this machine (missing node/npm, no checkout, install
    failed, the adapter did not announce itself). A usage/setup error, not a finding."""


@runtime_checkable
class TargetSession(Protocol):
    """One state held by a target, stepped action by action."""

    def step(self, action: Action, now_ms: int) -> State:
        """Apply `action` at time `now_ms`; return the new full state as the harness sees it.

        The returned dict shares structure with earlier ones: callers must not mutate it. On
        `TargetError` the session's state is unchanged (the failed step is not applied)."""
        ...

    def read(self) -> State:
        """The target's own full state (a checkpoint read)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Target(Protocol):
    description: str

    def reduce(self, kind: str, state: State, action: Action, now_ms: int) -> State: ...

    def session(self, kind: str, state: State) -> TargetSession: ...

    def close(self) -> None: ...


class ReduceSession:
    """A session over a stateless `reduce`: the state lives here and is sent every step."""

    def __init__(self, target: Target, kind: str, state: State) -> None:
        self._target = target
        self.kind = kind
        self._state = state
        self._closed = False

    def step(self, action: Action, now_ms: int) -> State:
        if self._closed:
            raise RuntimeError("session is closed")
        self._state = self._target.reduce(self.kind, self._state, action, now_ms)
        return self._state

    def read(self) -> State:
        return self._state

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> ReduceSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Opens a target: (the spelling as given, stripped; profile; timeout_s; the caller's options).
Opener = Callable[..., "Target"]


@dataclass(frozen=True)
class TargetSpelling:
    """One way to spell a target: `prefixes` it starts with (or `exact`, the whole spelling),
    `shown` how the unknown-spelling error names it, `opener` what builds it."""

    prefixes: tuple[str, ...]
    shown: tuple[str, ...]
    opener: Opener
    exact: bool = False

    def matches(self, text: str) -> bool:
        return text in self.prefixes if self.exact else text.startswith(self.prefixes)


#: The spellings the concrete target modules registered, in registration order (the package's
#: `__init__` imports them: reference, adapter, typescript, live).
SPELLINGS: list[TargetSpelling] = []


def register_target(prefixes: Sequence[str], shown: Sequence[str], opener: Opener, *, exact: bool = False) -> None:
    """A concrete target module names its spelling(s) and how to open it (see `open_target`)."""
    SPELLINGS.append(TargetSpelling(tuple(prefixes), tuple(shown), opener, exact))


def open_target(
    spec: str,
    *,
    profile: Profile = DEFAULT_PROFILE,
    timeout_s: float = 5.0,
    **options: Any,
) -> Target:
    """Open a target from its spelling.

    * `reference` — the in-process reference model;
    * `adapter:<command line>` — any implementation speaking the adapter protocol
      (docs/adapters.md); the command line is split like a POSIX shell would;
    * `ts:<AHP checkout>` — the TypeScript reducers of a checkout's `types/` folder, through
      the Node bridge (tsx is installed into the cache on first use);
    * `js:<module>` — a JavaScript (ESM) reducer module, through the Node bridge, no tsx;
    * `ws://…`, `host-cmd:<command>`, `host:embedded[?defect=NAME]` — a live host
      (`harness/targets/live.py`; options: `allow_remote`, `defects`).

    Each concrete target module registers its spellings (`register_target`); `harness.targets`
    imports them all, so this module imports none. `options` go to the target's constructor
    (e.g. `env`, `cwd`, `stderr`, `checkpoint_every`, `startup_timeout_s`). Unknown spellings
    raise ValueError naming every registered one; a target that cannot start here raises
    `TargetSetupError`.
    """
    text = spec.strip()
    for spelling in SPELLINGS:
        if spelling.matches(text):
            return spelling.opener(text, profile=profile, timeout_s=timeout_s, **options)
    shown = [name for spelling in SPELLINGS for name in spelling.shown]
    listed = ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else "".join(shown)
    raise ValueError(f"unknown target {spec!r} (want {listed})")
