"""The live fast lane: the live machine's choices from pools that Hypothesis fills, a seeded PRNG.

The Hypothesis live lane (`machine.build_live_machine`) pays a Hypothesis draw for every choice
of every step — the scenario, the client, the channel, and the state-aware action (≈2 ms on a
third of the steps, bench/results/live.md). This lane makes the same examples (`example.py`)
and runs the same scenarios (`ops.py`) through `PoolDraws`, the in-process fast lane's split
(`harness/engine/fast.py`, whose machinery it reuses):

* **Scenario and simple choices** (a client, a channel, a mode, an integer) come from one
  `random.Random` seeded by the run's seed.
* **State-aware actions** (`action`, `race`): the type is chosen by the strategies' own
  applicability weights for the client's fold (`generation.type_offers`, as the fast lane's
  `PICK`), the payload from that type's pool (per kind, profile and type; filled `TYPE_FILL` at
  a time by Hypothesis with the type's strategy for the state met, refreshed now and then), its
  ids retargeted to ids of the fold (`Mutator.retarget`), and now and then one field mutated
  (`Mutator.mutate`: ids from the state, URI spellings, boundary numbers, seen values, absent /
  null).
* **Compound values** that do not depend on the state (attachment collections) and server-only
  actions come from pools per strategy, filled the same way.

Truth (as in process): the live valid lane dispatches only what a conformant host must accept
as sent. A mutated or retargeted action is checked before it is sent — `Model.wire_problem`
(schema, numbers beyond ±(2⁵³−1), integral floats, nulls), an emptied container, a repeated id
in the payload, an id that would name two objects of one collection in the fold (`FastLane.
_collides`) — and one that fails is never dispatched on the valid lane: the retargeted parent
is sent instead, or, when that fails too, an action drawn by Hypothesis for this very state
(what the Hypothesis lane sends). The counts are in report.json (`extra.livePools`).

Memory: every pool is bounded (`SLOT_MAX` per type, `VALUE_MAX` per strategy; the keys are
kinds × profiles × action types), so the lane's memory is flat over a night.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from hypothesis import strategies as st

from harness.engine import generation
from harness.engine.control import RunControl
from harness.engine.fast import (
    FIELD_MUTATION,
    TYPE_FILL,
    TYPE_REFRESH,
    FastLane,
    FastStats,
    _VerdictCache,
    fill,
)
from harness.engine.mutation import EMPTY_CONTAINER, Mutator, _is_id_key, repeats_an_id
from harness.reference import Model, Profile
from strategies.actions import ActionContext, action_of_type, actions_for

from .example import HostDown, LiveExample, LiveFindingFailure, LiveRecorder
from .loop import EventLoopThread
from .ops import SCENARIOS
from .pool import ConnectionPool
from .run import LiveRun
from .settle import SettlePolicy

if TYPE_CHECKING:
    from .config import LiveConfig

T = TypeVar("T")

#: Pooled actions kept per (kind, profile, type), and values per compound strategy.
SLOT_MAX: Final = 64
VALUE_MAX: Final = 32
VALUE_FILL: Final = 4


class LivePools:
    """The campaign's pools, PRNG and counters (one per `run_live_campaign`)."""

    def __init__(
        self, seed: int, schema: Callable[[Any], str | None] | None, weights: Mapping[str, int]
    ) -> None:
        self.rng = random.Random(f"ahp-fuzz-live-fast:{seed}")
        self.stats = FastStats()
        self.mutator = Mutator(self.rng, self.stats)
        #: The schema check, cached by the action's content (as in process: the lane asks, the
        #: model asks again inside `reduce` for `_collides`).
        self.schema = _VerdictCache(schema) if schema is not None else None
        self.models: dict[str, Model] = {}
        self.actions: dict[tuple[str, str, str], list[Any]] = {}
        self.values: dict[str, list[Any]] = {}
        self.counts: Counter[str] = Counter()
        self.names = [n for n in SCENARIOS if weights.get(n, 0) > 0]
        if not self.names:
            raise ValueError("every live scenario has weight 0")
        self.weights = [weights[n] for n in self.names]

    def scenario(self) -> str:
        return self.rng.choices(self.names, weights=self.weights)[0]

    def model(self, profile: Profile) -> Model:
        m = self.models.get(profile.label)
        if m is None:
            m = self.models[profile.label] = Model(profile, check_payloads=True, schema=self.schema)
        return m

    def to_json(self) -> dict[str, Any]:
        return {
            "pooledActions": self.counts["pooled"],
            "freshDraws": self.counts["fresh"],
            "typeFills": self.stats.type_fills,
            "valueFills": self.counts["valueFills"],
            "fieldMutations": dict(sorted(self.stats.field_mutations.items())),
            "mutantsSent": self.counts["mutantsSent"],
            # the truth rule: mutated / retargeted actions a conformant host need not accept,
            # never dispatched on the valid lane
            "mutantsOffLane": self.counts["mutantsOffLane"],
            "retargetsOffLane": self.counts["retargetsOffLane"],
            # of those, sent with their repeated ids made fresh instead of drawn again
            "idsRenamed": self.counts["idsRenamed"],
            "slots": len(self.actions),
            "pooled": sum(len(v) for v in self.actions.values()),
            "valuePools": len(self.values),
        }


class PoolDraws:
    """`draws.Draws` from the campaign's pools and PRNG (the fast lane)."""

    def __init__(self, pools: LivePools) -> None:
        self.pools = pools
        self.rng = pools.rng
        #: The example being drawn for (`run_fast_chunk` sets it): what it already dispatched.
        self.run: LiveRun | None = None
        #: (type, id key, id) of every action the run dispatched (`_sent`), and how far each
        #: client's dispatches were read into it (client index -> its view and the count read).
        self._sent_ids: set[tuple[Any, str, str]] = set()
        self._sent_run: Any = None
        self._sent_read: dict[int, tuple[Any, int]] = {}
        #: Fresh ids made by `_renamed` in this campaign (their numbers never repeat).
        self._renames = 0

    def choice(self, options: Sequence[T], label: str) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self, label: str) -> bool:
        return self.rng.random() < 0.5

    def permutation(self, values: Sequence[T], label: str) -> list[T]:
        return self.rng.sample(list(values), len(values))

    def subset(self, values: Sequence[T], label: str) -> list[T]:
        distinct = list(dict.fromkeys(values))
        return self.rng.sample(distinct, self.rng.randint(1, len(distinct)))

    def value(self, key: str, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self._pooled(
            self.pools.values.setdefault(key, []), lambda: strategy, VALUE_MAX, VALUE_FILL
        )

    def typed_action(self, action_type: str, state: dict[str, Any] | None, label: str) -> Any:
        slot = self.pools.values.setdefault(f"type {action_type}", [])
        return self._pooled(slot, lambda: action_of_type(action_type, state), VALUE_MAX, VALUE_FILL)

    def _pooled(
        self, slot: list[Any], make: Callable[[], st.SearchStrategy[Any]], cap: int, n: int
    ) -> Any:
        rng = self.rng
        if len(slot) < n or rng.random() < TYPE_REFRESH:
            drawn = fill(make(), n, rng.getrandbits(64))
            self.pools.counts["valueFills"] += 1
            for v in drawn:
                slot.append(v) if len(slot) < cap else slot.__setitem__(rng.randrange(cap), v)
        return slot[rng.randrange(len(slot))]

    def action(
        self,
        kind: str,
        state: dict[str, Any],
        types: Sequence[str],
        context: ActionContext,
        label: str,
    ) -> Any:
        pools, rng = self.pools, self.rng
        profile = context.profile
        allowed = set(types)
        offers = [
            o
            for o in generation.type_offers(kind, state, profile, context.session_directories)
            if o[0] in allowed
        ]
        if not offers:  # nothing applies here by the weights: what the strategy itself would draw
            pools.counts["fresh"] += 1
            return fill(
                actions_for(kind, state, profile, types=list(types), context=context),
                1,
                rng.getrandbits(64),
            )[0]
        t, _, make = rng.choices(offers, weights=[w for _, w, _ in offers])[0]
        slot = pools.actions.setdefault((kind, profile.label, t), [])
        if not slot or rng.random() < TYPE_REFRESH:
            drawn = fill(make(), TYPE_FILL, rng.getrandbits(64))
            pools.stats.type_fills += 1
            for a in drawn:
                pools.mutator.learn(a)
                slot.append(a) if len(slot) < SLOT_MAX else slot.__setitem__(
                    rng.randrange(SLOT_MAX), a
                )
            if drawn:
                pools.counts["fresh"] += 1
                return drawn[0]  # drawn for this very state: the Hypothesis lane's action
        pools.counts["pooled"] += 1
        model = pools.model(profile)
        parent = slot[rng.randrange(len(slot))]
        action = pools.mutator.retarget(parent, state)
        if action is not parent and not self._on_lane(model, kind, state, action, mutated=False):
            pools.counts["retargetsOffLane"] += 1
            action = parent
        if rng.random() < FIELD_MUTATION:
            mutant, op = pools.mutator.mutate(action, state)
            if (
                op is not None
                and op != EMPTY_CONTAINER
                and self._on_lane(model, kind, state, mutant, mutated=True)
                and not self._sent_before(mutant)
            ):
                pools.counts["mutantsSent"] += 1
                return mutant
            if op is not None:
                pools.counts["mutantsOffLane"] += 1  # a probe: never sent on the valid lane
        off_lane = action is parent and not self._on_lane(model, kind, state, action, mutated=False)
        if off_lane or self._sent_before(action):
            # drawn for another state, its ids collide here, or its ids repeat an action of this
            # type the run sent already (a pooled turnStarted twice: one turn id for two turns):
            # the repeated ids made fresh when they name nothing in this state, else one drawn
            # for this very state
            pools.counts["retargetsOffLane"] += 1
            if (action is not parent  # a retarget that named a repeated id: the pooled one?
                    and self._on_lane(model, kind, state, parent, mutated=False)
                    and not self._sent_before(parent)):
                return parent
            candidates = [parent] if off_lane else [action] if action is parent else [action, parent]
            for candidate in candidates:
                renamed = self._renamed(model, kind, state, candidate)
                if renamed is not None:
                    pools.counts["idsRenamed"] += 1
                    return renamed
            pools.counts["fresh"] += 1
            drawn = fill(make(), 1, rng.getrandbits(64))
            return drawn[0] if drawn else action
        return action

    def _renamed(self, model: Model, kind: str, state: dict[str, Any], action: Any) -> Any:
        """`action` with each top-level id the run sent before in an action of this type, and
        that names nothing in `state`, replaced by a fresh id of its family (`t21` -> `t21x3`):
        the action a Hypothesis draw with another fresh id would be — without the draw's cost.
        None when a repeated id names something in the state (a reference: only a draw for this
        state can help), is a URI (a directory must be one of a set the lane cannot tell from
        the action alone), or the renamed action is off the valid lane."""
        if not isinstance(action, dict):
            return None
        sent = self._sent()
        t = action.get("type")
        repeated = [k for k, v in _id_fields(action) if (t, k, v) in sent]
        if not repeated or any(":" in action[k] or _holds(state, action[k]) for k in repeated):
            return None
        out = dict(action)
        for k in repeated:
            while (t, k, out[k]) in sent:  # a number this lane gave before may have been sent
                self._renames += 1
                out[k] = f"{action[k]}x{self._renames}"
        if self._sent_before(out) or not self._on_lane(model, kind, state, out, mutated=False):
            return None
        return out

    def _sent(self) -> set[tuple[Any, str, str]]:
        """(type, id key, id) of the run's dispatches so far, read incrementally."""
        run = self.run
        if run is not self._sent_run:
            self._sent_run, self._sent_ids, self._sent_read = run, set(), {}
        if run is None:
            return self._sent_ids
        for i, c in run.clients.items():
            view = c.view
            seen_view, n = self._sent_read.get(i, (None, 0))
            if seen_view is not view:
                n = 0  # a new view (a reconnect): read it from the start (the set only grows)
            for d in view.dispatches[n:]:
                a = d.action
                if isinstance(a, dict):
                    at = a.get("type")
                    self._sent_ids.update((at, k, v) for k, v in _id_fields(a))
            self._sent_read[i] = (view, len(view.dispatches))
        return self._sent_ids

    def _sent_before(self, action: Any) -> bool:
        """The run already dispatched an action of this type naming one of this action's ids
        (top-level id fields): a pooled action reused, or one retargeted to an id of the fold, may
        give a second object an id the run created (two turns `fz-t21`) — a state the Hypothesis
        lane's fresh ids never make and no conformant client sends. Off the valid lane."""
        if self.run is None or not isinstance(action, dict):
            return False
        t = action.get("type")
        sent = self._sent()
        return any((t, k, v) in sent for k, v in _id_fields(action))

    @staticmethod
    def _on_lane(
        model: Model, kind: str, state: dict[str, Any], action: Any, *, mutated: bool
    ) -> bool:
        """Would every conformant host have to take `action` as sent, on `state`? (The in-process
        fast lane's valid-lane test: `Model.wire_problem`, no repeated id in the payload, no id
        that the fold already gives another object of one collection.) Without a schema check a
        mutated field may have the wrong type or range, which the model alone cannot tell: only
        retargeted actions (the same JSON types as drawn) pass then."""
        if mutated and model.schema is None:
            return False
        if repeats_an_id(action) or model.wire_problem(kind, action) is not None:
            return False
        return not FastLane._collides(model, kind, state, action, 0)


def _id_fields(action: dict[str, Any]) -> list[tuple[str, str]]:
    """An action's top-level id fields (key, id): what `_sent_before` compares."""
    return [(k, v) for k, v in action.items() if k != "type" and isinstance(v, str) and _is_id_key(k)]


def _holds(value: Any, text: str) -> bool:
    """`text` is a string somewhere in `value` (a key aside): an id the state names."""
    if isinstance(value, str):
        return value == text
    if isinstance(value, dict):
        return any(_holds(v, text) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, text) for v in value)
    return False


def run_fast_chunk(
    cfg: LiveConfig,
    rec: LiveRecorder,
    loop: EventLoopThread,
    control: RunControl,
    pool: ConnectionPool | None,
    pools: LivePools,
    policy: SettlePolicy,
    salt: str,
) -> None:
    """`cfg.chunk_examples` machine runs of `cfg.max_steps` scenario draws each, every choice
    from `pools`; a finding (`rec.failure`) or the host's death ends the chunk, as a failing
    example ends the Hypothesis lane's."""
    draws = PoolDraws(pools)
    for _ in range(cfg.chunk_examples):
        control.check()
        example = LiveExample(cfg, rec, loop, control, pool, policy, salt)
        draws.run = example.run
        try:
            example.start(draws)
            for _ in range(cfg.max_steps):
                example.step(draws, pools.scenario())
        except (LiveFindingFailure, HostDown):
            return
        finally:
            example.teardown()
