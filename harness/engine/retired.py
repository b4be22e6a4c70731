"""Value classes a target hung on (issue 32: nothing retired for good).

A target that does not answer an action within its timeout costs that timeout every time it
meets the like again. A run retires the *value class* of the action — its type, at its size
(bytes of compact JSON) and above, in its state kind — never the kind: the kind goes on being
fuzzed with everything else (a per-input timeout, as AFL and libFuzzer keep). A later hang of a
smaller action of the type lowers the bound. Once `BY_SIZE` classes hung on a large action and
answered a smaller one of their type, size is taken for the cause: actions of any type and kind
from the second-smallest of their bounds are retired too (`any_type`), and from then on from the
smallest bound of any class that hung large and answered small — or, lower, from just above the
largest action the target answered since its first hang, when that band is narrow (`BAND`). Both lanes skip a retired action before sending
it, and the probe checks do not call the target with one (`ProbeSkipped`). A target that hangs
`HOPELESS` times in a row in a kind, with no answer between, hangs on the kind itself (it stopped
answering): then, and only then, the kind is dropped.

Before that evidence is in, a first hang on an action larger than every action the target has
answered in the run holds an *envelope*: no action larger than the largest answered is sent
(any type, any kind), but for one test every `ENVELOPE_TEST` answered steps. A test that answers
widens the envelope; one that hangs narrows where the limit lies. An answer clearly larger than
an action that hung, or a hang clearly smaller than an action answered (by `SLACK`), says size
is not the cause: the envelope is lifted for the rest of the run. Each hang is a whole timeout (5 s through an
adapter), and the classes above took one each for every type that met a large action before
size was taken for the cause (a bug beside the hang waited out five of them); a handler that
deadlocks costs the envelope the actions above the largest answered until its first test.

Small actions come first (`ramp`, for a target that can hang: libFuzzer's `-len_control`): no
action over `RAMP_FROM` bytes is sent before the target has answered `RAMP_EVERY` steps, and the
cap doubles every `RAMP_EVERY` answered steps after that, until it is off (`RAMP_DOUBLINGS`). A
bug a small action shows is found before the first large one can cost a timeout (and its
confirming replay, a second one): `draft-ignored-behind-a-hang` waited out both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from harness.targets import jsonio


def action_label(action: Any, adversarial: bool = False) -> str:
    """An action's label in the run's counters (`Recorder.sent`, both lanes alike) and in the
    retired classes: its type, `<untyped>` without one, `<adversarial>` for a probe."""
    if adversarial:
        return "<adversarial>"
    t = action.get("type") if isinstance(action, dict) else None
    return t if isinstance(t, str) else "<untyped>"


def action_size(action: Any) -> int:
    """An action's size in bytes of JSON as the wire writes it (`jsonio.dumps`: compact, ASCII):
    what a quadratic parser is slow on. A value the wire cannot write (an adversarial NaN) is
    measured as Python's `json` writes it."""
    try:
        return len(jsonio.dumps(action))
    except (TypeError, ValueError):
        return len(json.dumps(action, separators=(",", ":"), default=str))


class Retired(Protocol):
    """What a stepper asks of the run's classes: is this action held back, and a hang to retire."""

    def __call__(self, kind: str, action: Any) -> bool: ...

    def retire(self, kind: str, action: Any) -> None: ...


#: Hangs in a row in one kind, with no answered step between them, after which the kind itself is
#: what the target hangs on (a target that stopped answering at all): the kind is dropped.
HOPELESS = 3
#: Classes that hung on a large action of their type and answered a smaller one, after which size
#: alone is taken for the cause: every action at least as large as the second-smallest of their
#: bounds is retired, whatever its type and kind (a quadratic parser is slow on bytes, not on an
#: action type: one timeout per type was dozens of timeouts before the run got anywhere). A type
#: that hangs at every size (a handler that deadlocks) is no evidence for size, and counts not.
BY_SIZE = 2
#: Size taken for the cause, the band between the largest action answered and the smallest that
#: hung is retired whole when the smallest that hung is at most this many times the largest answered.
BAND = 2
#: The size ramp: the cap on an action's bytes of JSON to begin with, the answered steps each
#: cap holds for before it doubles, and the doublings after which there is no cap (1 MiB).
RAMP_FROM = 256
RAMP_EVERY = 500
RAMP_DOUBLINGS = 12
#: Answered steps between two tests of the envelope (an action above it, let through once).
ENVELOPE_TEST = 1_000
#: Sizes within this factor of each other are no evidence against size as the cause: what a
#: parser does with an action depends on more than its bytes (its nesting, its keys).
SLACK = 1.25


class ValueClasses:
    """The classes retired in one run: (kind, action type) -> the smallest size that hung."""

    def __init__(self) -> None:
        self.bounds: dict[tuple[str, str], int] = {}
        self.streak: dict[str, int] = {}  # hangs in a row per kind
        #: Told when a class is first retired: (kind, action type, size).
        self.on_retire: Callable[[str, str, int], None] = lambda kind, atype, size: None
        #: The classes that answered an action smaller than their bound (size-shaped hangs).
        self.sized: set[tuple[str, str]] = set()
        #: The size from which every action is retired (`BY_SIZE` sized classes), None before.
        self.any_type: int | None = None
        #: Told when `any_type` is first set or lowered: (size, classes that hung).
        self.on_size: Callable[[int, int], None] = lambda size, classes: None
        #: The largest action answered in the run, any type and kind (bytes of JSON).
        self.answered_max = 0
        #: The smallest action that hung, any type and kind (None before the first hang).
        self.hung_min: int | None = None
        #: The envelope (see the module's doc): held, and lifted for good once size is refuted.
        self.envelope = False
        self.refuted = False
        self.since_test = 0  # answered steps since the envelope's last test
        self._testing: Any = None  # the action let through as the test, until its outcome
        #: Small actions first (the module's doc): on for a target that can hang, never the model.
        self.ramp = False
        self.answered_steps = 0
        #: Told when the envelope is held (True: from `answered_max + 1` bytes) or lifted (False).
        self.on_envelope: Callable[[int, bool], None] = lambda size, held: None
        self._last: tuple[Any, int] | None = None  # the last action sized, and its size

    def _size(self, action: Any) -> int:
        """`action_size`, once per action: a step's action is asked about before it is sent and
        told about after (actions are never changed in place: a mutation builds a new object)."""
        last = self._last
        if last is not None and last[0] is action:
            return last[1]
        size = action_size(action)
        self._last = (action, size)
        return size

    def retire(self, kind: str, action: Any) -> None:
        key = (kind, action_label(action))
        size = self._size(action)
        self.streak[kind] = self.streak.get(kind, 0) + 1
        if key not in self.bounds:
            self.on_retire(kind, key[1], size)
        self.bounds[key] = min(size, self.bounds.get(key, size))
        self.hung_min = size if self.hung_min is None else min(size, self.hung_min)
        if action is self._testing:
            self._testing = None
        if size * SLACK < self.answered_max:
            self._refute()  # a clearly larger one was answered: not its size
        elif not self.refuted and not self.envelope and self.any_type is None and self.answered_max:
            self.envelope, self.since_test = True, 0
            self.on_envelope(self.answered_max + 1, True)
        self._by_size()

    def _by_size(self) -> None:
        if len(self.sized) < BY_SIZE:
            return
        bounds = sorted(self.bounds[k] for k in self.sized)
        # Size taken for the cause, every sized class's hang is evidence of the size: the smallest
        # bound (the second-smallest took one more timeout each time the bound came down).
        bound = bounds[BY_SIZE - 1] if self.any_type is None else bounds[0]
        # Size the cause, the limit lies between the largest action answered and the smallest
        # that hung: each action sent between them was one more timeout, so the band goes — when
        # it is narrow (within a factor `BAND`); a wide one would retire what the target answers.
        if 0 < self.answered_max < bound <= BAND * self.answered_max:
            bound = self.answered_max + 1
        if self.any_type is None or bound < self.any_type:
            self.any_type = bound
            self.envelope = False  # size is taken for the cause: the bound rules from here on
            self.on_size(bound, len(self.sized))

    def _refute(self) -> None:
        """Size is not the cause (an action clearly larger than one that hung was answered, or
        one clearly smaller than an answered action hung): the envelope goes, for good."""
        self.refuted = True
        if self.envelope:
            self.envelope = False
            self.on_envelope(self.answered_max + 1, False)

    def saw(self, kind: str, action: Any, hung: bool) -> None:
        """One step's outcome, in either lane: a hang retires the action's value class (never the
        kind); an answer says the hangs so far were of their classes."""
        if hung:
            self.retire(kind, action)
            return
        self.answered(kind)
        self.answered_steps += 1
        size = self._size(action)
        self.answered_max = max(self.answered_max, size)
        if action is self._testing:
            self._testing = None
        if self.envelope:
            self.since_test += 1
            if self.hung_min is not None and size > self.hung_min * SLACK:
                self._refute()  # answered, clearly larger than one that hung: not its size
        if self.bounds:
            key = (kind, action_label(action))
            bound = self.bounds.get(key)
            if bound is not None and key not in self.sized and size < bound:
                self.sized.add(key)  # it answers the type when smaller: the size hung
                self._by_size()

    def answered(self, kind: str) -> None:
        """A step of `kind` got an answer: the hangs so far were of their classes, not the kind's."""
        if self.streak.get(kind):
            self.streak[kind] = 0

    def hopeless(self) -> list[str]:
        """The kinds the target hung on `HOPELESS` times in a row, on different actions."""
        return [k for k, n in self.streak.items() if n >= HOPELESS]

    def __call__(self, kind: str, action: Any, *, moving: bool = True) -> bool:
        """Whether `action` belongs to a retired class of `kind` (or lies above the envelope,
        but for its test, or above the size ramp's cap). `moving=False` leaves out the ramp and
        the envelope, whose answers move with every answered step (`steady`)."""
        if not moving:
            return self._bounded(kind, action)
        if self.ramp:
            doublings = self.answered_steps // RAMP_EVERY
            if doublings < RAMP_DOUBLINGS and self._size(action) > RAMP_FROM << doublings:
                return True
        if self.envelope and action is not self._testing and self._size(action) > self.answered_max:
            if self.since_test < ENVELOPE_TEST:
                return True
            self.since_test, self._testing = 0, action  # the test: this one goes
        return self._bounded(kind, action)

    def _bounded(self, kind: str, action: Any) -> bool:
        if not self.bounds:
            return False
        limit = self.bounds.get((kind, action_label(action)))
        if self.any_type is not None:
            limit = self.any_type if limit is None else min(limit, self.any_type)
        return limit is not None and self._size(action) >= limit

    def steady(self) -> SteadyClasses:
        """These classes as the Hypothesis lane asks them (`SteadyClasses`)."""
        return SteadyClasses(self)

    def to_json(self) -> list[dict[str, Any]]:
        out = [{"kind": k, "type": t, "fromBytes": n} for (k, t), n in sorted(self.bounds.items())]
        if self.any_type is not None:
            out.append({"kind": "*", "type": "*", "fromBytes": self.any_type})
        elif self.envelope:
            out.append({"kind": "*", "type": "*", "fromBytes": self.answered_max + 1, "envelope": True})
        return out


class SteadyClasses:
    """The run's classes without the ramp and the envelope: Hypothesis runs an example again (to
    shrink it, to replay a failure) and needs every answer the same each time, while the ramp's
    cap and the envelope's tests move with every answered step — a step skipped once and sent the
    next time changes the state the next draws depend on ("inconsistent data generation"). The
    retired classes themselves change only on a hang."""

    def __init__(self, classes: ValueClasses) -> None:
        self.classes = classes

    def __call__(self, kind: str, action: Any) -> bool:
        return self.classes(kind, action, moving=False)

    def retire(self, kind: str, action: Any) -> None:
        self.classes.retire(kind, action)
