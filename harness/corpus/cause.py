"""The root cause of a violation: what the target did, whichever invariant noticed it.

A run reports one finding per root cause (docs/corpus.md, "Root causes"). The identity of a
cause is the *minimal difference* between the reference model's state and the target's after
a step, classified as a path class and a transformation — never the invariant that fired, the
state kind or (except where the transformation is about the action) the action type. Those are
the cause's *witnesses*.

The differences a step made are the leaves where the model's state and the target's differ
after it (`null` counts as absent, as in the invariants' equality), minus the differences
*inherited* from earlier steps: a leaf at, under or above a path where the two states already
differed before the step is a consequence of an earlier cause, not a new one. Each remaining
difference is classified (first match wins):

| transformation | when (model value *a*, target value *b*) | identity |
|---|---|---|
| `unapplied` | the model changed the path, the target left it as it was (and its echo of the model's state keeps the key: else the loss is the cause) | action type |
| `int-wrap` | integers, *b* = *a* ∓ 2³² (or 2⁶⁴) | path class |
| `dropped-empty` | *b* absent, *a* is `[]`, `{}` or `""` (or the model removed an empty value the target keeps unchanged: an encoder that omits empty values cannot send their removal) | the empty value |
| `added-empty` | *a* absent, *b* is `[]`, `{}` or `""` | the empty value |
| `type` | JSON types differ | path class, both types |
| `variant` | two different word-like strings (an enum, a discriminator) | path class, both values |
| `dropped` / `added` | one side absent | path class |
| `value` | any other replaced value | path class, action type |

A step with several classes is signed by the first in that order (behaviour before
presence). The path class is the path with list indices generalised (`turns[].state`).

Without a difference of its own a violation is signed by what it says: a target failure
(`TARGET-CRASH` …) by the failure and the action type; a probe check (which calls the target's
reducer again: purity, determinism, …) by the presence-only difference its message names
(`step=[] rerun=<absent>` — the same `dropped-empty` cause as the state difference), else by the
invariant and the shape of its message — unless it says the target's reducer failed on a key
(`KeyError: 'x'`) that the target's state lacks where the model's has it (that difference's
cause: the target cannot read back its own state), or the states already differed before the step and
the probe, re-run on the model's state, stays silent (harness/engine/causes.py): then it saw an
earlier step's difference. A violation on states that agree is signed by its message too. A
violation whose differences are all inherited has no cause of its own (None): it witnesses an
earlier one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

from harness.diff import ABSENT, at, diff_paths, render, shape

#: At most this many differences of a step are classified.
MAX_DIFFS: Final = 64
#: The order in which transformations sign a step (the first present wins).
PRIORITY: Final = (
    "unapplied", "failure", "int-wrap", "type", "variant", "value", "dropped", "added",
    "dropped-empty", "added-empty", "check",
)
_EMPTIES: Final = ([], {}, "")
#: Transformations told by the two values alone (before `unapplied` is considered).
_CONTEXT_FREE: Final = frozenset({"int-wrap", "dropped-empty", "added-empty"})
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z_-]{0,31}")
_KEY_ERROR: Final = re.compile(r"KeyError: '([^']+)'")


@dataclass(frozen=True)
class Cause:
    """A root-cause identity: `key` (transformation and its parameters) and a human line."""

    key: tuple[str, ...]
    summary: str

    @property
    def id(self) -> str:
        blob = json.dumps(list(self.key), separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def transformation(self) -> str:
        return self.key[0]


@dataclass
class Witnesses:
    """Who noticed a cause: invariants, action types, state kinds, and how often."""

    invariants: set[str] = field(default_factory=set)
    action_types: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    count: int = 0

    def add(self, invariant: str, action_type: str, kind: str) -> bool:
        """Count one more violation; True when it added an invariant, type or kind."""
        self.count += 1
        new = invariant not in self.invariants or action_type not in self.action_types or kind not in self.kinds
        self.invariants.add(invariant)
        self.action_types.add(action_type)
        self.kinds.add(kind)
        return new

    def to_json(self) -> dict[str, Any]:
        return {
            "invariants": sorted(self.invariants), "actionTypes": sorted(self.action_types),
            "kinds": sorted(self.kinds), "count": self.count,
        }


def cause_json(cause: Cause, witnesses: Witnesses) -> dict[str, Any]:
    """The `cause` object of a finding file and of a report entry."""
    return {"id": cause.id, "summary": cause.summary, "key": list(cause.key), "witnesses": witnesses.to_json()}


def action_type(action: Any) -> str:
    t = action.get("type") if isinstance(action, dict) else None
    return t if isinstance(t, str) else f"<{type(action).__name__}>"


@dataclass
class StepView:
    """One step as the cause classifier sees it: the states before and after on both sides.

    For a probe (an action sent statelessly) the model's answer is the state unchanged, so
    `before` and `expected` are the target's state before the probe."""

    kind: str
    action: Any
    before: Any  # the model's state before the step
    target_before: Any  # the target's state before the step
    expected: Any  # the model's state after it
    observed: Any  # the target's state after it (None after a target failure)
    probe: bool = False
    #: The target's answer to a no-op (an unknown action type) on the model's state after the
    #: step: what the target's representation keeps of that state (None: not available).
    echo: Callable[[], Any] | None = None

    @property
    def type(self) -> str:
        return action_type(self.action)

    @cached_property
    def _diffs(self) -> tuple[list[tuple[Any, Any, Any]], bool]:
        """(fresh differences, whether the states differ at all after the step)."""
        if not (isinstance(self.expected, dict) and isinstance(self.observed, dict)):
            return [], False
        after = _first(diff_paths(self.expected, self.observed, null_is_absent=True))
        if not after:
            return [], False
        prior = [p for p, _, _ in _first(diff_paths(self.before, self.target_before, null_is_absent=True))]
        fresh = [d for d in after if not any(_overlap(d[0], q) for q in prior)]
        return fresh, True

    @cached_property
    def causes(self) -> list[Cause]:
        """The causes this step's own differences show, first by `PRIORITY`; empty when the
        states agree or every difference is inherited."""
        fresh, _ = self._diffs
        found: dict[str, Cause] = {}
        unapplied: list[tuple[Any, ...]] = []
        for d in fresh:
            c = self._classify(d)
            if c.transformation == "unapplied":
                unapplied.append(d[0])
            else:
                found.setdefault(c.id, c)
        lost, unapplied = self._representation_losses(unapplied)
        for c in lost:  # the target cannot hold what the model wrote: its representation
            found.setdefault(c.id, c)
        if unapplied:  # one line for the action, naming what it left unchanged
            whole = _equal(self.observed, self.target_before)
            paths = ", ".join(f"`{x}`" for x in sorted({shape(p) or "<root>" for p in unapplied})[:3])
            text = (f"`{self.type}` is a no-op on the target (the model changes {paths})" if whole
                    else f"`{self.type}` leaves {paths} unchanged where the model changes it")
            c = Cause(("unapplied", self.type), text)
            found[c.id] = c
        return sorted(found.values(), key=lambda c: PRIORITY.index(c.transformation))

    def _representation_losses(self, unapplied: list[Any]) -> tuple[list[Cause], list[Any]]:
        """(causes, paths still unapplied). Of the paths the model changed and the target left
        unchanged, those where the target's echo of the model's state (a no-op on that very
        state) has no key at all: the target cannot hold the value — an encoder that drops the
        key looks, through a changes-only protocol, as if it never applied the change."""
        if not unapplied or self.echo is None:
            return [], unapplied
        echo = self.echo()
        if not isinstance(echo, dict) or not isinstance(self.expected, dict):
            return [], unapplied
        gone = [(q, a) for q, a, b in _first(diff_paths(self.expected, echo, null_is_absent=True)) if b is ABSENT]
        lost: list[Cause] = []
        kept = []
        for p in unapplied:
            hit = next(((q, a) for q, a in gone if p[: len(q)] == q), None)
            if hit is None:
                kept.append(p)
            else:
                lost.append(classify(hit[0], hit[1], ABSENT, self.type))
        return lost, kept

    def missing_key_cause(self, message: str, answers: Any = ()) -> Cause | None:
        """The cause of a reducer that failed on a key its state lacks (`KeyError: 'x'` in
        `message`) where the model's state has it, before or after the step: the difference
        that dropped `x` — the target cannot read back its own state, a consequence of that cause.
        `answers`: more target states to look in (the target's own answer to the step, which a
        probe feeds back to it), each compared with the model's state after the step."""
        m = _KEY_ERROR.search(message)
        if m is None:
            return None
        pairs = [(self.before, self.target_before), (self.expected, self.observed)]
        for model, target in (*pairs, *((self.expected, a) for a in answers)):
            if not (isinstance(model, dict) and isinstance(target, dict)):
                continue
            for p, a, b in _first(diff_paths(model, target, null_is_absent=True)):
                if b is ABSENT and p and p[-1] == m.group(1):
                    return classify(p, a, b, self.type)
        return None

    @property
    def inherited_only(self) -> bool:
        """The states differ after the step, but only where they already differed before it."""
        fresh, differ = self._diffs
        return differ and not fresh

    def _classify(self, d: tuple[Any, Any, Any]) -> Cause:
        p, a, b = d
        c = classify(p, a, b, self.type)
        if c.transformation == "added-empty" and not self.probe and _stale(self, p, b):
            # the model removed an empty value the target still holds, unreported: an encoder
            # that drops empty values cannot say that it went away
            return classify(p, b, ABSENT, self.type)
        if c.transformation in _CONTEXT_FREE or self.probe:
            return c
        if _differs(at_path(self.before, p), a) and not _differs(at_path(self.target_before, p), b):
            return Cause(("unapplied", self.type), "")
        return c


def classify(p: tuple[Any, ...], a: Any, b: Any, atype: str) -> Cause:
    """The transformation of one difference (model value `a`, target value `b` at path `p`)."""
    where = shape(p) or "<root>"
    if type(a) is int and type(b) is int:
        for bits in (32, 64):
            if (a - b == 1 << bits and a >= 1 << (bits - 1)) or (b - a == 1 << bits and a < -(1 << (bits - 1))):
                sign = "−" if a > b else "+"
                return Cause(("int-wrap", where, str(bits)),
                             f"`{where}` x → x {sign} 2^{bits} (an int{bits} wrap of values ≥ 2^{bits - 1})")
    if b is ABSENT and any(_same(a, e) for e in _EMPTIES):
        return Cause(("dropped-empty", render(a)),
                     f"empty `{render(a)}` values lost: the key is absent where the model has `{render(a)}` "
                     f"(or a removed `{render(a)}` stays)")
    if a is ABSENT and any(_same(b, e) for e in _EMPTIES):
        return Cause(("added-empty", render(b)), f"`{render(b)}` present where the model has the key absent")
    if b is ABSENT:
        return Cause(("dropped", where), f"`{where}` absent where the model has a value")
    if a is ABSENT:
        return Cause(("added", where), f"`{where}` present where the model has none")
    ta, tb = _json_type(a), _json_type(b)
    if ta != tb:
        return Cause(("type", where, ta, tb), f"`{where}` is a {tb} where the model has a {ta}")
    if ta == "string" and _WORD.fullmatch(a) and _WORD.fullmatch(b):
        return Cause(("variant", where, a, b), f"`{where}` {render(a)} comes back as {render(b)}")
    return Cause(("value", where, atype), f"`{where}` differs from the model after `{atype}`")


def failure_cause(invariant: str, atype: str, probe: bool) -> Cause:
    """A target failure (crash, hang, error reply) on an action type (any probe counts as one)."""
    what = {"TARGET-CRASH": "crashes", "TARGET-TIMEOUT": "hangs"}.get(invariant, "fails")
    on = "a schema-invalid or unknown action (probe)" if probe else f"`{atype}`"
    return Cause(("failure", invariant, "<probe>" if probe else atype), f"the target {what} on {on}")


def check_cause(invariant: str, message: str) -> Cause:
    """A violation without a state difference of its own, signed by what it says: a
    presence-only difference its message names (`left=[] right=<absent>`), else the invariant
    and the shape of the message."""
    presence = message_presence(message)
    if presence is not None:
        return presence
    for m in _CHANGE.finditer(message):  # `status 2147483714 → -2147483583`: a wrap seen by a probe
        a, b = int(m.group(2)), int(m.group(3))
        if a >= 1 << 31 and -(1 << 31) <= b < 0:
            # the value after the change, read as unsigned, is ≥ 2³¹ too: the bits the probe's
            # action left, wrapped to int32 (the change itself may have flipped a bit as well)
            return classify((m.group(1),), b + (1 << 32), b, "")
    shaped = message_shape(message)
    return Cause(("check", invariant, shaped), f"{invariant}: {message[:160]}")


#: `name A → B` with two integers: a value a check saw change (the model keeps A, the target gives B).
_CHANGE: Final = re.compile(r"\b([A-Za-z_]\w*) (-?\d+) → (-?\d+)")

#: `path: label=value label=value` (harness.invariants._json.describe_diffs, and the probes'
#: `step=… rerun=…`, `once=… twice=…`, `now=N=… now=M=…` pairs) with two presence values.
_EMPTY: Final = r"(\[\]|\{\}|<absent>|\"\"|null)"
_PAIR: Final = re.compile(rf"={_EMPTY}\s+[^\s=;]+(?:=[^\s=;]+)?={_EMPTY}\s*$")


#: `path: label=VALUE label=<absent>` (either order): a value on one side only.
_ONE_SIDED: Final = re.compile(
    r"(?:^|:\s)([A-Za-z_$][\w.$\[\]-]*): [^\s=;]+(?:=[^\s=;]+)?=(.+?) [^\s=;]+(?:=[^\s=;]+)?=(.+?)\s*$"
)


def _path_class(text: str) -> str:
    text = re.sub(r"\[\d+\]", "[]", text)
    return text[2:] if text.startswith("$.") else text.lstrip("$") or "<root>"


def message_presence(message: str) -> Cause | None:
    """The presence cause a message names, when every value pair it shows (one per
    `;`-separated part) has a value on one side only: an empty value against `<absent>`
    (`dropped-empty`, `added-empty`), or any value against `<absent>` at a named path
    (`dropped`, `added`); else None."""
    pairs = []
    for part in message.split(";"):
        if "=" not in part:
            continue
        m = _PAIR.search(part)
        if m is None:
            one = _ONE_SIDED.search(part)
            if one is None or (one.group(2) == "<absent>") == (one.group(3) == "<absent>"):
                return None
            where = _path_class(one.group(1))
            pairs.append(("dropped" if one.group(3) == "<absent>" else "added", where))
            continue
        pairs.append(m.groups())
    causes = []
    for left, right in pairs:
        if left in ("dropped", "added"):
            causes.append(Cause((left, right), f"`{right}` absent where the model has a value" if left == "dropped"
                                else f"`{right}` present where the model has none"))
            continue
        a = ABSENT if left == "<absent>" else json.loads(left)
        b = ABSENT if right == "<absent>" else json.loads(right)
        if (a is ABSENT) == (b is ABSENT):
            return None
        causes.append(classify((), a, b, ""))
    return causes[0] if causes else None  # several presence pairs: signed by the first


def _stale(view: StepView, p: tuple[Any, ...], b: Any) -> bool:
    """The model changed the value at `p` and the target left it as `b`, as it was before."""
    return _differs(at_path(view.before, p), at_path(view.expected, p)) and not _differs(at_path(view.target_before, p), b)


def at_path(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = at(value, step)
        if value is ABSENT:
            return ABSENT
    return value


def _first(diffs: Any) -> list[tuple[Any, Any, Any]]:
    out = []
    for n, d in enumerate(diffs):
        if n >= MAX_DIFFS:
            break
        out.append(d)
    return out


def _overlap(p: tuple[Any, ...], q: tuple[Any, ...]) -> bool:
    n = min(len(p), len(q))
    return p[:n] == q[:n]


def _differs(x: Any, y: Any) -> bool:
    if x is None:
        x = ABSENT
    if y is None:
        y = ABSENT
    if x is ABSENT or y is ABSENT:
        return x is not y
    return next(iter(diff_paths(x, y, null_is_absent=True)), None) is not None


def _equal(x: Any, y: Any) -> bool:
    return not _differs(x, y)


def _same(x: Any, y: Any) -> bool:
    return type(x) is type(y) and x == y


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "object"
    return "null" if v is None else type(v).__name__


#: What varies between two reports of one cause, in a message: values and names.
_VARYING = (
    (re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''), "S"),  # quoted strings
    (re.compile(r"\b[a-zA-Z]+/[a-zA-Z]+\b"), "T"),  # action types
    (re.compile(r"[A-Za-z_][\w]*(?:(?:\.[A-Za-z_]\w*)|(?:\[-?\d*\]))+"), "P"),  # paths
    (re.compile(r"\b[A-Za-z_]\w*(?=: )"), "P"),  # a name before a colon: a path
    (re.compile(r"-?\d+(?:\.\d+)?"), "N"),  # numbers
)


def message_shape(message: str) -> str:
    """A message with its values, names and paths replaced by placeholders; the classes that
    matter (`<absent>`, `null`, `[]`, `{}`) stay."""
    for pattern, placeholder in _VARYING:
        message = pattern.sub(placeholder, message)
    return message
