"""`reference` — the executable reference model, in process."""

from __future__ import annotations

from typing import Any

from harness.reference import DEFAULT_PROFILE, Model, Profile
from harness.spec.versions import KINDS

from .base import Action, State, Target, TargetError, register_target


class ReferenceTarget:
    """The reference reducers as a target. A reducer exception (e.g. `MalformedAction` on a
    schema-invalid payload) becomes `TargetError`, like an adapter's error reply would.

    `in_process` tells the clock probes (harness/invariants/clock.py) that calls run in this
    process, so they observe the model's clock reads by watching the call."""

    in_process = True

    def __init__(self, profile: Profile = DEFAULT_PROFILE, *, model: Any = None) -> None:
        self.profile = profile
        self.model = model if model is not None else Model(profile)
        self.description = f"reference ({profile.label})"

    def reduce(self, kind: str, state: State, action: Action, now_ms: int) -> State:
        check_kind(kind)
        try:
            return self.model.reduce(kind, state, action, now_ms)
        except Exception as e:
            raise _as_target_error(e) from e

    def session(self, kind: str, state: State) -> ReferenceSession:
        check_kind(kind)
        return ReferenceSession(self, kind, state)

    def close(self) -> None:
        return None

    def __enter__(self) -> ReferenceTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReferenceSession:
    def __init__(self, target: ReferenceTarget, kind: str, state: State) -> None:
        self._reduce = target.model.reduce
        self.kind = kind
        self._state = state

    def step(self, action: Action, now_ms: int) -> State:
        try:
            self._state = self._reduce(self.kind, self._state, action, now_ms)
        except Exception as e:
            raise _as_target_error(e) from e
        return self._state

    def read(self) -> State:
        return self._state

    def close(self) -> None:
        return None


def check_kind(kind: str) -> None:
    """An unknown state kind is the caller's mistake (ValueError), not a finding."""
    if kind not in KINDS:
        raise ValueError(f"unknown state kind {kind!r} (want one of {', '.join(KINDS)})")


def _as_target_error(e: Exception) -> TargetError:
    return TargetError(f"{type(e).__name__}: {e}", error_type=type(e).__name__, code="reducerError")


def _open_reference(text: str, *, profile: Profile = DEFAULT_PROFILE, timeout_s: float = 5.0, **options: Any) -> Target:
    return ReferenceTarget(profile, **options)


register_target(("reference",), ("reference",), _open_reference, exact=True)
