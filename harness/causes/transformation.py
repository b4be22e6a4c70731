"""The root cause of a violation: what the target did, whichever invariant noticed it.

A run reports one finding per root cause (docs/corpus.md, "Root causes", holds the table of
transformations with examples from the wild set). The identity of a cause (`Cause.key`, hashed
into `Cause.id`) is a *transformation* — what the target did to a value or an action — never
the invariant that fired, the state kind, a list index, or (except where the transformation is
about the action) the action type; those are the cause's *witnesses*.

`StepView.causes` classifies the differences a step made: the leaves where the model's state
and the target's differ after it (`null` counts as absent), minus the differences *inherited*
from earlier steps (at, under or above a path where the states already differed before it).
Each is classified by `classify` (int32 wraps, lost or added empty values, JSON types, a key of a
name dropped or added, a word turned into another, another value), after three readings of the
step: a list holding the model's items in another order (`reorder`); a path the model changed and
the target left as it was — the action not applied (`unapplied`, by type), a field the reducers
derive not recomputed (`stale`, by field), an item whose namesake was updated instead
(`duplicate-id`), unless the target's echo shows it cannot hold the value (its representation's
loss); and a dropped key the state schema does not model there (`UNMODELLED`, a note). A derived
field that differs beside another difference is that difference's. The causes of a step are
ranked by `PRIORITY`.

Without a difference of its own a violation is signed by what it says (`failure_cause`: a target
failure by its error class; `check_cause`: a probe check by the presence-only difference its
message names, else by its invariant and message shape); harness/causes/signing.py decides which
applies and when a probe saw only an earlier cause.
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
from harness.spec.interop import MAX_SAFE_INTEGER

from .locations import PROBE_RAISED, short, without_locations

#: At most this many differences of a step are classified.
MAX_DIFFS: Final = 64
#: The order in which transformations sign a step (the first present wins).
PRIORITY: Final = (
    "unapplied", "not-a-no-op", "failure", "refuses-integral-float", "ignores-integral-float", "int-as-float", "non-i-json-number", "duplicate-json-key", "int-wrap", "int-precision", "type", "variant",
    "value", "reorder", "duplicate-id", "stale", "dropped", "added", "dropped-empty", "added-empty", "unmodelled",
    "check",
)
_EMPTIES: Final = ([], {}, "")
#: Path classes the reducers compute from the rest of the state rather than copy from a payload
#: (REDUCERS.md: `touchChatModified`-like stamps, the summary status and its copies in a session's
#: catalog). A target that leaves one as it was is one cause per field, whatever the action type.
DERIVED: Final = frozenset({"modifiedAt", "status", "chats[].status", "chats[].modifiedAt"})
#: Of those, the stamps: written by the reducer on a change, never computed from the rest. A stamp
#: the target leaves as it was on a step where it did change the state is its own cause.
STAMPS: Final = frozenset({"modifiedAt", "chats[].modifiedAt"})
#: Transformations of how a target writes a value out (its encoder), which cannot change what its
#: reducer computes a derived field from: a derived field that differs beside one of them is a
#: cause of its own, not a consequence of it (issue 32: an ignored isReadChanged hid behind the
#: encoder's `activeClients: []` lost).
#: A status's activity bits (REDUCERS.md §2.5): computed from the rest; the bits above are flags.
ACTIVITY_BITS: Final = 31
ENCODING: Final = frozenset({"dropped-empty", "added-empty", "int-wrap", "int-precision", "type", "unmodelled"})
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


#: The typed-decoder fidelity class (round-trip group B, KNOWN-FIDELITY-GAPS.md): keys the state
#: schema does not declare at their place are dropped. A note for the run, never a finding.
UNMODELLED: Final = Cause(
    ("unmodelled",),
    "keys the schema does not model at their place are dropped (a typed decoder: round-trip group B)",
)


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
    #: Whether the state schema declares the key at a path of `expected` (harness/spec/modelled.py;
    #: None: no schema to ask). A dropped key it does not declare is the typed-decoder fidelity
    #: class (`UNMODELLED`), not a divergence of its own.
    modelled: Callable[[str, Any, tuple[Any, ...]], bool | None] | None = None
    #: The target's answer to a no-op on a given state (None: not available).
    echo_on: Callable[[Any], Any] | None = None
    #: The target's reducer applying the step's action to a given state (None: not available).
    answer_on: Callable[[Any], Any] | None = None

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
        states agree or every difference is inherited. `differences(cause)` gives the
        differences each one stands for."""
        fresh, _ = self._diffs
        found: dict[str, Cause] = {}
        of: dict[str, list[tuple[Any, Any, Any]]] = {}
        unapplied: list[tuple[Any, Any, Any]] = []

        def add(c: Cause, d: tuple[Any, Any, Any]) -> None:
            found.setdefault(c.id, c)
            of.setdefault(c.id, []).append(d)

        for d in fresh:
            moved = self._permuted(d[0])
            if moved is not None:
                add(moved, d)
                continue
            c = self._classify(d)
            if c.transformation == "unapplied":
                unapplied.append(d)
            elif self._model_no_op and (c.transformation not in ENCODING or self._lost_on_the_step(c, d)
                                        or self._copied_from_action(d)):
                # the model leaves the state as it is and the target changes it: whatever it
                # changed, the action is one cause (a helper that clears more than it should
                # is one bug, not one per field)
                add(Cause(("not-a-no-op", self.type),
                          f"`{self.type}` changes the state where the model leaves it as it is"), d)
            else:
                add(c, d)
        lost, unapplied = self._representation_losses(unapplied)
        for c, d in lost:  # the target cannot hold what the model wrote: its representation
            add(c, d)
        left = []
        for d in unapplied:  # left as it was in an item with a namesake: the namesake was updated
            dup = self._duplicate_id(d[0])
            if dup is not None:
                add(dup, d)
            else:
                left.append(d)
        unapplied = left
        # a field the step's action writes itself is not derived on that step (isReadChanged sets
        # a status flag, a chatUpdated carries `status`)
        derived = [d for d in unapplied if shape(d[0]) in DERIVED and not self._action_writes(d)]
        applied = [d for d in unapplied if shape(d[0]) not in DERIVED or self._action_writes(d)]
        for d in derived:  # a field the reducers compute from the rest: one cause per field, any type
            where = shape(d[0])
            add(derived_cause(where), d)
        if applied:  # what the action itself writes stays as it was: one cause per action type
            c = Cause(("unapplied", self.type),
                      f"`{self.type}` is not applied as the model applies it (what it changes stays as it was)")
            for d in applied:
                add(c, d)
        ranked = sorted(found.values(), key=lambda c: PRIORITY.index(c.transformation))
        own = [c for c in ranked if not _derived_only(c, of[c.id])]
        explains = [c for c in own if c.transformation not in ENCODING]
        if explains and len(own) < len(ranked):
            # a field computed from the rest (the summary status) that differs on a step where the
            # rest differs too follows from that difference: it is the step's other cause's —
            # unless that cause only changes how values are written out (it cannot change what
            # the target computed), or the field is a stamp the target did not write on a step
            # where it wrote other things (a stamp that is never written)
            for c in ranked:
                if c not in own and not self._unstamped(c, of[c.id]):
                    of[explains[0].id].extend(of.pop(c.id))
            ranked = [c for c in ranked if c.id in of]
        self._of = of
        return ranked

    @cached_property
    def _action_names(self) -> frozenset[str]:
        """The strings the action holds at its top level (the ids it names)."""
        a = self.action
        return frozenset(v for v in a.values() if isinstance(v, str)) if isinstance(a, dict) else frozenset()

    @cached_property
    def _model_no_op(self) -> bool:
        """A valid step the model leaves the state unchanged on."""
        return (not self.probe and isinstance(self.before, dict) and isinstance(self.expected, dict)
                and (self.expected is self.before or not _first(diff_paths(self.before, self.expected, null_is_absent=True))))

    def _action_writes(self, d: tuple[Any, Any, Any]) -> bool:
        """The difference `d` at a derived field is in what the step's action writes itself, not
        in what the reducer recomputes: the payload carries the field's key (`changes.status`),
        or the model's status and the target's differ in flag bits only (IsRead, IsArchived: bits
        5 and up, which actions set or clear), not in activity bits (bits 0–4, recomputed from the
        rest, REDUCERS.md §5.1)."""
        p, a, b = d
        if self.probe or not p or not isinstance(p[-1], str):
            return False
        key = p[-1]
        # a top-level field is written by a top-level key of the payload; an object one level
        # down writes fields of the state's nested objects (`changes.status` a catalog entry's),
        # never the state's own (a `riskAssessment.status` is no chat status)
        top = isinstance(self.action, dict) and key in self.action and key != "type"
        if top if len(p) == 1 else key in self._payload_keys:
            return True
        return key == "status" and type(a) is int and type(b) is int and a != b and (a ^ b) & ACTIVITY_BITS == 0

    @cached_property
    def _payload_keys(self) -> frozenset[str]:
        """The keys of the action's payload and of its objects one level down (`changes.status`,
        `summary.modifiedAt`), not deeper (a tool call's own `status` in a response part is not
        the chat's)."""
        a = self.action
        if not isinstance(a, dict):
            return frozenset()
        out = {k for k in a if k != "type"}
        for v in a.values():
            if isinstance(v, dict):
                out.update(v)
        return frozenset(out)

    def _unstamped(self, c: Cause, diffs: list[tuple[Any, Any, Any]]) -> bool:
        """`c` is a stamp left as it was, on a step where the target changed its state: it ran
        the action and did not stamp it."""
        return (c.transformation == "stale"
                and all(shape(d[0]) in STAMPS and not _differs(at_path(self.target_before, d[0]), d[2]) for d in diffs)
                and isinstance(self.target_before, dict) and isinstance(self.observed, dict)
                and _differs(self.target_before, self.observed))

    def differences(self, cause: Cause) -> list[tuple[Any, Any, Any]]:
        """The (path, model value, target value) differences `cause` stands for on this step."""
        _ = self.causes
        return list(self._of.get(cause.id, ()))

    def _permuted(self, p: tuple[Any, ...]) -> Cause | None:
        """A reorder: the innermost list above `p` holds the same items on both sides, in
        another order (a sort, a reversal, a move): one cause for the list, not one per leaf."""
        for n in range(len(p) - 1, -1, -1):
            if not isinstance(p[n], int):
                continue
            q = p[:n]
            a, b = at_path(self.expected, q), at_path(self.observed, q)
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and _same_items(a, b):
                where = shape(q) or "<root>"
                return Cause(("reorder", where), f"`{where}` holds the model's items in another order")
        return None

    def _representation_losses(
        self, unapplied: list[tuple[Any, Any, Any]]
    ) -> tuple[list[tuple[Cause, tuple[Any, Any, Any]]], list[tuple[Any, Any, Any]]]:
        """(causes with the difference each stands for, differences still unapplied). Of the
        paths the model changed and the target left unchanged, those where the target's echo of
        the model's state (a no-op on that very state) has no key at all: the target cannot hold
        the value — an encoder that drops the key looks, through a changes-only protocol, as if
        it never applied the change."""
        if not unapplied or self.echo is None:
            return [], unapplied
        echo = self.echo()
        if not isinstance(echo, dict) or not isinstance(self.expected, dict):
            return [], unapplied
        gone = [(q, a) for q, a, b in _first(diff_paths(self.expected, echo, null_is_absent=True)) if b is ABSENT]
        lost: list[tuple[Cause, tuple[Any, Any, Any]]] = []
        kept = []
        for d in unapplied:
            p = d[0]
            hit = next(((q, a) for q, a in gone if p[: len(q)] == q), None)
            if hit is None:
                kept.append(d)
            else:
                lost.append((self._unmodelled(classify(hit[0], hit[1], ABSENT, self.type), hit[0]), d))
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

    @cached_property
    def _own_echo(self) -> Any:
        """The target's echo of its own state before the step (asked once: a target round trip)."""
        return self.echo_on(self.target_before) if self.echo_on is not None else None

    def _lost_on_the_step(self, c: Cause, d: tuple[Any, Any, Any]) -> bool:
        """An empty value the target held before the step, and holds when it echoes that state, lost
        on it: not how the target writes values out (an encoder that drops empties loses it in its
        echo too), but what it did with the action."""
        held = at_path(self.target_before, d[0])
        # the very empty value: `{"traceId": null}` is `{}` only where null is absent, and an
        # encoder that drops `{}` kept it — the step made it `{}`, which the encoder then drops
        return c.transformation == "dropped-empty" and held is not ABSENT and held == d[1] and self._holds(d[0])

    def _copied_from_action(self, d: tuple[Any, Any, Any]) -> bool:
        """The target holds at `d`'s key the very value the step's action carries under it (its
        `_meta: {}`, one level down alike): it wrote the action's value where the model wrote
        nothing, which is applying the action, not how values are written out."""
        p, _, b = d
        a = self.action
        if self.probe or not p or not isinstance(p[-1], str) or not isinstance(a, dict) or b is ABSENT:
            return False
        key = p[-1]
        carried = [a.get(key)] + [v.get(key) for v in a.values() if isinstance(v, dict)]
        return any(c is not None and not _differs(c, b) for c in carried)

    def _holds(self, p: tuple[Any, ...]) -> bool:
        """The target, echoing its own state before the step (a no-op on it), keeps a value at
        `p`: its representation can hold it (False when that cannot be asked)."""
        echo = self._own_echo
        return isinstance(echo, dict) and at_path(echo, p) is not ABSENT

    def _unmodelled(self, c: Cause, p: tuple[Any, ...]) -> Cause:
        """`c`, or the fidelity class when `c` drops a key the schema does not model there."""
        if c.transformation == "dropped" and self.modelled is not None and self.modelled(self.kind, self.expected, p) is False:
            return UNMODELLED
        return c

    def _left_as_it_was(self, p: tuple[Any, ...], b: Any) -> bool:
        """The target's value at `p` is what it held before the step — at `p`, or where the object
        holding `p` came from when the step moved it (a turn's end moves `activeTurn` into
        `turns`: a tool call it leaves open stays as it was, one level elsewhere)."""
        if _loosely_equal(at_path(self.target_before, p), b):
            return True
        moved = moved_from(self.expected, self.target_before, p)
        if moved is None:
            return False
        was = at_path(self.target_before, moved)
        # the value came along with its object, as the target already held it differently from
        # the model before the step (an object it writes as a string, moved by a reorder): that
        # earlier difference's, carried — not the action left undone
        return _loosely_equal(was, b) and not _differs(at_path(self.before, moved), was)

    def _duplicate_id(self, p: tuple[Any, ...]) -> Cause | None:
        """The difference sits in a list item that shares an identifier (`toolCallId`,
        `commandId`, `id`, …) with another item of its list, in the model's state: which of the
        namesakes an action updates (upstream: every one, or the first) is one cause, whatever
        the action type or field."""
        for n in range(len(p) - 1, -1, -1):
            if not isinstance(p[n], int):
                continue
            items = at_path(self.expected, p[:n])
            if not isinstance(items, list) or not 0 <= p[n] < len(items):
                continue
            mine = _identifiers(items[p[n]])
            named = self._action_names
            namesakes = [j for j, other in enumerate(items) if mine & _identifiers(other)]
            # A target that changed none of the namesakes can have updated another one only
            # where that update is invisible: an earlier namesake already holding the values (a
            # client that updates the first only). A missing update of the first namesake, the
            # later ones untouched (the model's guard skipped them), is the action not applied.
            touched = any(_differs(at_path(self.target_before, (*p[:n], j)), at_path(self.observed, (*p[:n], j)))
                          for j in namesakes)
            if touched and self._same_namesakes_written(p, n, namesakes):
                continue  # the target wrote the very namesakes the model did: a value differs, not which
            hid: bool | None = None  # the target is asked at most once per list (`_namesake_hid`)
            for j, other in enumerate(items):
                shared = mine & _identifiers(other)
                # which namesake an action updates is a question only for an action that names
                # one (a `toolCallId`): a turn's end that leaves every open call as it was is
                # that action's cause, namesakes or not
                if j == p[n] or not shared or not any(v in named for _, v in shared):
                    continue
                if not touched and j < p[n] and hid is None:
                    hid = self._namesake_hid(p, n, namesakes)
                q = (*p[:n], j)
                if ((touched or (j < p[n] and hid))
                        and not (_differs(at_path(self.before, q), at_path(self.expected, q))
                                 and not _differs(at_path(self.target_before, q), at_path(self.observed, q)))):
                    # ... and the target did not leave this namesake as it was where the model
                    # changed it too: one that left every namesake so ignored the action
                    return Cause(("duplicate-id",), "of list items sharing an identifier (two tool calls of "
                                 "one `toolCallId`, two commands of one `commandId` …), the target updates "
                                 "other namesakes than the model does")
        return None

    def _same_namesakes_written(self, p: tuple[Any, ...], n: int, namesakes: list[int]) -> bool:
        """The target wrote the field at `p` (below item `p[n]`) in the same namesakes as the
        model: a turn's end appended under a history turn's id, its duration unclamped. Compared
        at the field, not the item, and past empty values: a namesake whose empty `_meta` the
        target's encoder dropped is not one it updated."""
        field = p[n + 1:]

        def written(before: Any, after: Any) -> set[int]:
            return {j for j in namesakes
                    if _differs(_bare(at_path(before, (*p[:n], j, *field))), _bare(at_path(after, (*p[:n], j, *field))))}

        model = written(self.before, self.expected)
        return p[n] in model and written(self.target_before, self.observed) == model

    def _namesake_hid(self, p: tuple[Any, ...], n: int, namesakes: list[int]) -> bool:
        """A target that changed no namesake may have updated an earlier one invisibly (a client
        that updates the first of a `toolCallId` only, whose guard then skipped it) — or ignored
        the action. Asked (`answer_on`) to apply the action with the other namesakes taken out, a
        target of the first kind writes what the model writes at `p` (item `p[n]` of its list);
        one that ignores the action still does not. Not available (no target to ask): the
        namesakes, as before."""
        if self.answer_on is None:
            return True
        at, i = p[:n], p[n]
        items = at_path(self.target_before, at)
        if not isinstance(items, list):
            return True
        alone = [x for j, x in enumerate(items) if j == i or j not in namesakes]
        answer = self.answer_on(_put(self.target_before, at, alone))
        if not isinstance(answer, dict):
            return True  # it failed there: nothing to conclude
        moved = i - sum(1 for j in namesakes if j < i)
        # an empty value inside (`scopes_supported: []`) its encoder drops is another cause's
        return not _differs(_pruned(at_path(answer, (*at, moved, *p[n + 1:]))), _pruned(at_path(self.expected, p)))

    def _classify(self, d: tuple[Any, Any, Any]) -> Cause:
        p, a, b = d
        c = self._unmodelled(classify(p, a, b, self.type), p)
        if self.probe:
            return c
        if c.transformation == "added-empty" and _stale(self, p, b) and not self._holds(p):
            # the model removed an empty value the target still holds, unreported: an encoder
            # that drops empty values cannot say that it went away (unless the target, asked to
            # echo its own state, keeps that value: then it ignored the action — below)
            return classify(p, b, ABSENT, self.type)
        prior = at_path(self.before, p)
        if prior is ABSENT:  # an object the step moved (activeTurn into turns): its value where it was
            moved = moved_from(self.expected, self.before, p)
            if moved is not None:
                prior = at_path(self.before, moved)
        changed = _differs(prior, a)
        if c.transformation not in _CONTEXT_FREE and changed:
            dup = self._duplicate_id(p)
            if dup is not None:
                return dup  # the model changed it; the target changed another namesake, or none
        echo_tells = self.echo is not None or c.transformation != "dropped-empty"  # else: the loss, as it looks
        if changed and echo_tells and c.transformation != "int-wrap" and self._left_as_it_was(p, b):
            # the model changed it and the target left it as it was (an empty value and none
            # alike: an encoder may drop one): the action, unless the target's echo shows it
            # cannot hold the value (`_representation_losses`) — or a namesake was updated instead
            return Cause(("unapplied", self.type), "")
        if c.transformation in ("value", "variant") and shape(p) in DERIVED:
            # a flag the action sets or clears, left as it was where the rest changed: the action's;
            # else a derived field computed otherwise: one cause with one left as it was (a target
            # that recomputes an activity otherwise shows both, by the state it meets)
            return Cause(("unapplied", self.type), "") if self._action_writes(d) else derived_cause(shape(p))
        return c


def classify(p: tuple[Any, ...], a: Any, b: Any, atype: str) -> Cause:
    """The transformation of one difference (model value `a`, target value `b` at path `p`).

    The key names what the target did to the value, not where: an int32 wrap, a lost empty
    value, a JSON type turned into another, a key of a name dropped, are each one cause at any
    path (the summary names no path either, so the same cause reads the same in every run).
    Only a replaced value of the same type (`value`) and a different word (`variant`) keep the
    path class: what else could tell two such behaviours apart."""
    where = shape(p) or "<root>"
    a = ABSENT if a is None else a  # `null` is absent (REDUCERS.md §7): `[]` → null is `[]` lost
    b = ABSENT if b is None else b
    if type(a) is int and type(b) is int:
        for bits in (32, 64):
            if not -(1 << (bits - 1)) <= a < 1 << (bits - 1) and b == _wrapped(a, bits):
                # any bit beyond the width lost, not just one turn of 2^bits (bits 31 and 32 set)
                sign = "−" if a > b else "+"
                return Cause(("int-wrap", str(bits)),
                             f"integers ≥ 2^{bits - 1} come back wrapped to int{bits} (x → x {sign} 2^{bits})")
    if (type(a) is int and abs(a) > MAX_SAFE_INTEGER and isinstance(b, int | float) and not isinstance(b, bool)
            and b != a and float(a) == float(b)):
        return Cause(("int-precision",), "integers beyond ±(2^53−1) come back rounded to a double")
    if b is ABSENT and (any(_same(a, e) for e in _EMPTIES) or _null_object(a)):  # one encoder rule for all
        return Cause(("dropped-empty",),
                     "empty values (`[]`, `{}`, `\"\"`) lost: the key is absent where the model has an empty "
                     "value (or a removed empty value stays)")
    if a is ABSENT and (any(_same(b, e) for e in _EMPTIES) or _null_object(b)):
        return Cause(("added-empty",), "empty values (`[]`, `{}`, `\"\"`) present where the model has the key absent")
    if b is ABSENT:
        name = key_name(p)
        return Cause(("dropped", name), f"`{name}` absent where the model has a value")
    if a is ABSENT:
        name = key_name(p)
        return Cause(("added", name), f"`{name}` present where the model has none")
    ta, tb = _json_type(a), _json_type(b)
    if ta != tb:
        return Cause(("type", ta, tb), f"a {ta} comes back as a {tb}")
    if ta == "string" and _WORD.fullmatch(a) and _WORD.fullmatch(b):
        return Cause(("variant", where, a, b), f"`{where}` {render(a)} comes back as {render(b)}")
    return Cause(("value", where), f"`{where}` differs from the model")


def key_name(p: tuple[Any, ...]) -> str:
    """The name of the key a difference sits at (`_meta`, `turns[]` for an item): what a decoder
    that drops a key drops wherever the key is."""
    for i in range(len(p) - 1, -1, -1):
        if isinstance(p[i], str):
            return p[i] + "[]" * (len(p) - 1 - i)
    return "<root>" if not p else "[]" * len(p)


def failure_cause(invariant: str, message: str) -> Cause:
    """A target failure (crash, hang, error reply), signed by the class of its error: the
    message with its values, action types, paths and long quoted strings normalised away
    (`error_class`) — not the action type it happened on, so one bug in a decoder is one cause
    however many types reach it (ClusterFuzz's crash state, in words)."""
    what = {"TARGET-CRASH": "crashes", "TARGET-TIMEOUT": "hangs"}.get(invariant, "fails")
    klass = error_class(without_locations(_OUR_PREFIX.sub("", message, count=1)))
    return Cause(("failure", invariant, klass), f"the target {what}: {short(klass)}")


#: The words the stepper puts before a target's own error (harness/engine/stepper.py).
_OUR_PREFIX: Final = re.compile(r"^target (?:raised on [^:]*|crashed|hung|refuses [^:]*): ")
#: What varies between two reports of one error: (pattern, placeholder), in this order.
_ERROR_VARYING: Final = (
    (re.compile(r"\b[a-zA-Z]+/[a-zA-Z]+\b"), "T"),  # action types
    (re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''),
     lambda m: m.group(0) if re.fullmatch(r".[A-Za-z_$][A-Za-z_$]{0,31}.", m.group(0)) else "S"),  # a name, not an id
    (re.compile(r"\b[A-Za-z_]\w*(?:(?:\.[A-Za-z_$][\w$]*)|(?:\[-?\d*\]))+"), "P"),  # paths, Type.field
    (re.compile(r"\b0x[0-9a-fA-F]+\b|-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"), "N"),  # numbers
    (re.compile(r"\s+"), " "),
)


def error_class(message: str) -> str:
    """An error message with what varies between two reports of one bug replaced; short quoted
    names stay (`reading 'findIndex'` says where it broke). The first line of each part only:
    a stack or a stderr tail varies with the state."""
    head = message.split("\n", 1)[0]
    for pattern, placeholder in _ERROR_VARYING:
        head = pattern.sub(placeholder, head)  # type: ignore[arg-type]
    return head.strip()[:240]


def _wrapped(a: int, bits: int) -> int:
    """`a` as a signed integer of `bits` bits keeps it: its low bits, two's complement."""
    low = a & ((1 << bits) - 1)
    return low - (1 << bits) if low >= 1 << (bits - 1) else low


def check_cause(invariant: str, message: str) -> Cause:
    """A violation without a state difference of its own, signed by what it says: a
    presence-only difference its message names (`left=[] right=<absent>`), else the invariant
    and the shape of the message."""
    if message.startswith(PROBE_RAISED):  # the target's error: its class, never its raw first text
        klass = error_class(without_locations(message[len(PROBE_RAISED):]))
        return Cause(("check", invariant, message_shape(PROBE_RAISED + klass)), short(f"{invariant}: {PROBE_RAISED}{klass}"))
    presence = message_presence(message)
    if presence is not None:
        return presence
    for m in _CHANGE.finditer(message):  # `status 2147483714 → -2147483583`: a wrap seen by a probe
        a, b = int(m.group(2)), int(m.group(3))
        if a >= 1 << 31 and -(1 << 31) <= b < 1 << 31 and (b < 0 or a >= 1 << 32):
            # the bits beyond int32 the value had (bit 31: now a sign; bits 32 and up: gone), with
            # the low bits the target gave: what the probe's action left, wrapped to int32 (the
            # change itself may have flipped a low bit as well)
            return classify((m.group(1),), (a >> 32 << 32) + (b & 0xFFFFFFFF), b, "")
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


def _key_of_text(path_class: str) -> str:
    """`key_name` of a path class written as text (`activeTurn._meta` -> `_meta`, `a.turns[]` -> `turns[]`)."""
    return re.split(r"\.(?![^\[]*\])", path_class)[-1] or path_class


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
            where = _key_of_text(_path_class(one.group(1)))  # by name, as `classify` keys it
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


def apply_differences(base: Any, diffs: list[tuple[Any, Any, Any]]) -> Any:
    """`base` (the model's state) with each (path, _, target value) difference written in — an
    absent target value removes the key —, copied only along the changed paths."""
    def order(d: tuple[Any, Any, Any]) -> tuple[Any, ...]:
        return tuple((0, x) if isinstance(x, int) else (1, str(x)) for x in d[0])

    writes = [d for d in diffs if d[2] is not ABSENT]
    removals = sorted((d for d in diffs if d[2] is ABSENT), key=order, reverse=True)  # last item first
    for p, _, b in [*writes, *removals]:
        base = _put(base, tuple(p), b)
    return base


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        out = dict(value)
        inner = _put(value.get(head, {} if rest and isinstance(rest[0], str) else []), rest, new)
        if inner is ABSENT:
            out.pop(head, None)
        else:
            out[head] = inner
        return out
    if isinstance(value, list) and isinstance(head, int):
        items = list(value)
        if head < len(items):
            inner = _put(items[head], rest, new)
            if inner is ABSENT:
                del items[head]
            else:
                items[head] = inner
        elif new is not ABSENT:
            items.append(_put({} if rest and isinstance(rest[0], str) else [], rest, new))
        return items
    return value  # a path through a leaf: nothing to write


def at_path(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = at(value, step)
        if value is ABSENT:
            return ABSENT
    return value


def moved_from(after: Any, before: Any, p: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Where the object holding `p` in `after` sat in `before` when a step moved it: the innermost
    object on `p` with an `id` that `before` lacks at the same place but holds at the top level
    or as an item of a top-level list (`turns[-1]` ← `activeTurn`). None: not moved."""
    for n in range(len(p) - 1, 0, -1):
        obj = at_path(after, p[:n])
        ident = obj.get("id") if isinstance(obj, dict) else None
        if not isinstance(ident, str):
            continue
        here = at_path(before, p[:n])
        if isinstance(here, dict) and here.get("id") == ident:
            return None  # not moved
        if not isinstance(before, dict):
            return None
        for k, v in before.items():
            if isinstance(v, dict) and v.get("id") == ident:
                return (k, *p[n:])
            if isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, dict) and item.get("id") == ident:
                        return (k, i, *p[n:])
        return None
    return None


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


def _pruned(value: Any) -> Any:
    """`value` with every key of an object inside it whose value is (or prunes to) `[]`, `{}` or
    `""` left out: what an encoder that drops empties writes of it."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in _EMPTIES}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _bare(value: Any) -> Any:
    """`_pruned(value)`, or None when that is empty: an empty value and none are one write."""
    out = _pruned(value)
    return None if out in _EMPTIES else out


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


def derived_cause(where: str) -> Cause:
    """A field the reducers derive from the rest, computed otherwise by the target (left as it was,
    or given another value): one cause per field, whatever the action type."""
    return Cause(("stale", where), f"`{where}` is not computed as the model computes it (not recomputed, "
                 "or recomputed otherwise)")


def _derived_only(c: Cause, diffs: list[tuple[Any, Any, Any]]) -> bool:
    """`c` replaces or leaves a value of a `DERIVED` field only (not a transformation of the value
    itself, as an int32 wrap is)."""
    return c.transformation in ("stale", "value", "variant") and all(shape(d[0]) in DERIVED for d in diffs)


def _identifiers(item: Any, name: str | None = None) -> set[tuple[str, str]]:
    """The (key, value) pairs that name a list item — its `id`; `xId` where the item is an `x`
    (its `type` or `kind` says so, or it sits under the key `x`: `toolCall.toolCallId`); the
    same one object level down (`responseParts[].toolCall.toolCallId`) — not the references it
    holds (`turnId` of an input request names another object)."""
    out: set[tuple[str, str]] = set()
    if not isinstance(item, dict):
        return out
    own = {name, item.get("type"), item.get("kind")} - {None}
    for k, v in item.items():
        if isinstance(v, str) and (k == "id" or (k.endswith("Id") and k[:-2] in own)):
            out.add((k, v))
        elif isinstance(v, dict) and name is None:
            out |= _identifiers(v, k)
    return out


def _loosely_equal(x: Any, y: Any) -> bool:
    """Equal, or both empty: absent, `null`, `[]`, `{}`, `""` or an object of `null`s."""
    def empty(v: Any) -> bool:
        return v is ABSENT or v is None or any(_same(v, e) for e in _EMPTIES) or _null_object(v)

    return (empty(x) and empty(y)) or not _differs(x, y)


def _null_object(v: Any) -> bool:
    """An object all of whose values are `null`: empty, as absent == null reads it."""
    return isinstance(v, dict) and bool(v) and all(x is None for x in v.values())


def _same_items(a: list[Any], b: list[Any]) -> bool:
    """`a` and `b` hold the same items (as JSON), in some order."""
    key = lambda v: json.dumps(v, sort_keys=True, default=str)  # noqa: E731
    return sorted(map(key, a)) == sorted(map(key, b))


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
