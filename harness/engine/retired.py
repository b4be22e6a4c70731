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
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
        #: The largest action answered since the first hang, any type and kind (bytes of JSON).
        self.answered_max = 0

    def retire(self, kind: str, action: Any) -> None:
        key = (kind, action_label(action))
        size = action_size(action)
        self.streak[kind] = self.streak.get(kind, 0) + 1
        if key not in self.bounds:
            self.on_retire(kind, key[1], size)
        self.bounds[key] = min(size, self.bounds.get(key, size))
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
            self.on_size(bound, len(self.sized))

    def saw(self, kind: str, action: Any, hung: bool) -> None:
        """One step's outcome, in either lane: a hang retires the action's value class (never the
        kind); an answer says the hangs so far were of their classes."""
        if hung:
            self.retire(kind, action)
            return
        self.answered(kind)
        if self.bounds:
            size = action_size(action)
            self.answered_max = max(self.answered_max, size)
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

    def __call__(self, kind: str, action: Any) -> bool:
        """Whether `action` belongs to a retired class of `kind`."""
        if not self.bounds:
            return False
        limit = self.bounds.get((kind, action_label(action)))
        if self.any_type is not None:
            limit = self.any_type if limit is None else min(limit, self.any_type)
        return limit is not None and action_size(action) >= limit

    def to_json(self) -> list[dict[str, Any]]:
        out = [{"kind": k, "type": t, "fromBytes": n} for (k, t), n in sorted(self.bounds.items())]
        if self.any_type is not None:
            out.append({"kind": "*", "type": "*", "fromBytes": self.any_type})
        return out
