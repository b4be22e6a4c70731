"""`reduce(kind, state, action, now_ms=…)`: route an action to the reducer table of a state kind.

Each channel module exports `HANDLERS`, a table from action type to a small pure function
`(state, action, ctx) -> state`. Types missing from the table, types of another family, types
newer than the profile's version and non-dict actions are no-ops: the input state is returned
unchanged (identity) and a warning goes to `ctx.warn`. Reducers never read the clock; `now_ms`
is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.spec import interop
from harness.spec.versions import is_known_to

from . import (
    annotations,
    automation,
    automation_run,
    canvas,
    changeset,
    chat,
    payloads,
    resource_watch,
    root,
    session,
    terminal,
)
from .profile import (
    DEFAULT_PROFILE,
    Ctx,
    Handler,
    Profile,
    RuleHandlers,
    State,
    merge_rule_handlers,
)

TABLES: dict[str, Mapping[str, Handler]] = {
    "root": root.HANDLERS,
    "session": session.HANDLERS,
    "chat": chat.HANDLERS,
    "terminal": terminal.HANDLERS,
    "changeset": changeset.HANDLERS,
    "annotations": annotations.HANDLERS,
    "resourceWatch": resource_watch.HANDLERS,
    "automation": automation.HANDLERS,
    "automationRun": automation_run.HANDLERS,
    "canvas": canvas.HANDLERS,
}

#: Action types whose reducer the spec gives no state effect (`profile.no_state_effect`): never
#: effective, so a run's coverage and its reach weights leave them out of "rarely effective".
NO_STATE_EFFECT: frozenset[str] = frozenset(
    t for table in TABLES.values() for t, h in table.items() if getattr(h, "no_state_effect", False)
)

#: The handlers each `VERSION_RULES` rule puts in place, (rule, value) -> type -> handler: a
#: profile whose rule has that value uses them instead of `TABLES`' (docs/profiles.md).
RULE_HANDLERS: RuleHandlers = merge_rule_handlers(
    session.RULE_HANDLERS,
    chat.RULE_HANDLERS,
    terminal.RULE_HANDLERS,
    changeset.RULE_HANDLERS,
    annotations.RULE_HANDLERS,
)


def tables_for(profile: Profile) -> dict[str, dict[str, Handler]]:
    """The handler tables of `profile`: the types its version knows, each with the handler its
    rules put in place."""
    chosen: dict[str, Handler] = {}
    for (rule, value), handlers in RULE_HANDLERS.items():
        if profile.rule(rule) == value:
            chosen.update(handlers)
    return {
        kind: {t: chosen.get(t, h) for t, h in table.items() if is_known_to(t, profile.version)}
        for kind, table in TABLES.items()
    }


class MalformedAction(ValueError):
    """A known action whose payload is schema-invalid (a required field, nested ones included,
    is absent — `payloads.REQUIRED` — or, with a schema configured, anything the spec's action
    schema rejects), or a state the reducer cannot read.

    The spec leaves reducer behaviour on schema-invalid payloads unspecified (REDUCERS.md §2.3
    item 4); the model reports it as this error instead of guessing.
    """


PayloadCheck = Callable[[Mapping[str, Any]], "str | None"]


def _silent(_: str) -> None:
    return None


class Model:
    """The reference reducers bound to one profile (cheap to call in a hot loop).

    The per-kind tables are filtered once by the profile's version, so a type introduced later
    than the negotiated version is simply not in the table (an unknown action, a no-op).
    """

    def __init__(
        self,
        profile: Profile = DEFAULT_PROFILE,
        warn: Callable[[str], None] = _silent,
        overrides: Mapping[str, Handler] | None = None,
        *,
        check_payloads: bool = False,
        schema: PayloadCheck | None = None,
    ):
        """`overrides` replaces handlers by action type (how mutants of the model are built).

        `check_payloads=True` makes the model the oracle the engine needs: every schema-invalid
        payload of a known type raises `MalformedAction` before a handler sees it — a required
        field absent, nested ones included (`payloads.REQUIRED`), and, when `schema` is given
        (e.g. `ActionSchema.problem` of a spec directory), anything that schema rejects. The
        default (off) keeps the handlers' own, shallower checks for unit tests that use
        shortcut payloads; every engine path (campaign, replay, shrinking, conformance, the
        reference adapter) turns it on.
        """
        self.profile = profile
        self.warn = warn
        self.check_payloads = check_payloads or schema is not None
        self.schema = schema
        self._tables = {
            kind: {t: (overrides or {}).get(t, h) for t, h in table.items()}
            for kind, table in tables_for(profile).items()
        }

    def handler(self, kind: str, action: Any) -> Handler | None:
        """The handler that would apply `action` to state kind `kind`, or None for a no-op type."""
        table = self._tables.get(kind)
        if table is None:
            raise ValueError(f"unknown state kind {kind!r} (want one of {', '.join(TABLES)})")
        if not isinstance(action, Mapping):
            return None
        t = action.get("type")
        return table.get(t) if isinstance(t, str) else None

    def owner(self, action: Any) -> str | None:
        """The state kind whose reducer handles `action`'s type under this profile (None: no
        kind's; an unknown or too-new type)."""
        for kind in self._tables:
            if self.handler(kind, action) is not None:
                return kind
        return None

    def payload_problem(self, kind: str, action: Any) -> str | None:
        """Why `action` is a schema-invalid payload of a type the `kind` reducer handles (None:
        valid, or not a type this reducer handles — that is a no-op, not a malformed action)."""
        if self.handler(kind, action) is None:
            return None
        return (self.schema and self.schema(action)) or payloads.problem(action, self.profile.version)

    def wire_problem(self, kind: str, action: Any) -> str | None:
        """Why `action` is not one every conformant implementation must accept, as sent (None:
        it is, or its type is a no-op for this reducer): a schema-invalid payload, an integer
        beyond ±(2⁵³−1), an integral float, or — with a schema — a `null` the schema does not
        allow (harness/spec/interop.py). The engine sends such a step as a probe. Without a
        schema a `null` is trusted where the generators put it (JSON-any values only); a
        mutation that writes one makes a probe by itself (harness/engine/fast.py)."""
        if self.handler(kind, action) is None:
            return None
        return self.payload_problem(kind, action) or self.value_problem(action)

    def value_problem(self, action: Any) -> str | None:
        """`wire_problem` without the payload check `reduce` makes anyway: the numbers and the
        `null`s of `action` as sent."""
        bad, null = interop.scan(action)  # one walk: this runs on every step
        if bad is None and null:
            wire = getattr(self.schema, "wire_problem", None)
            bad = wire(action) if wire is not None else None
        return bad

    def reduce(self, kind: str, state: State, action: Any, now_ms: int) -> State:
        h = self.handler(kind, action)
        if h is None:
            t = action.get("type") if isinstance(action, Mapping) else type(action).__name__
            self.warn(f"{kind} reducer: ignoring unknown action type {t!r}")
            return state
        if self.check_payloads:
            bad = (self.schema and self.schema(action)) or payloads.problem(action, self.profile.version)
            if bad:
                raise MalformedAction(f"{action.get('type')}: schema-invalid payload: {bad}")
        try:
            return h(state, action, Ctx(now_ms, self.profile, self.warn))
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
            raise MalformedAction(
                f"{action.get('type')}: payload or state not of the schema shape ({type(e).__name__}: {e})"
            ) from e


_DEFAULT_MODELS: dict[Profile, Model] = {}


def reduce(
    kind: str,
    state: State,
    action: Any,
    *,
    now_ms: int,
    profile: Profile = DEFAULT_PROFILE,
) -> State:
    """Apply one action to a state of `kind` under `profile`; pure (inputs are never mutated)."""
    model = _DEFAULT_MODELS.get(profile)
    if model is None:
        model = _DEFAULT_MODELS[profile] = Model(profile)
    return model.reduce(kind, state, action, now_ms)

