"""The fast lane: Hypothesis fills pools, a seeded PRNG mutates from them, the same Stepper judges.

The Hypothesis lane (engine/machine.py) pays a Hypothesis draw for every action of every step;
most of a step's time is that draw. This lane pays it once per *seed trace* and reuses it:

* **Pools** (per arm: kind or group × profile lane), filled lazily and refilled in chunks with
  the project's own strategies through Hypothesis: seed traces (a valid start state and a
  sequence of state-aware actions folded through the reference model), and adversarial actions.
  Every action of a seed trace also goes into a pool per (kind, action type).
* **Mutation** with `random.Random(seed)`: a parent from the arm's corpus (seed traces and the
  executed traces that found a new (kind, type, outcome) pair: coverage feedback) is spliced
  with another, steps are swapped, duplicated, deleted, or inserted from the type pools; while
  it runs, single fields are mutated the ways that matter to AHP — ids taken from the current
  state (reused, duplicated), boundary numbers (2³¹, 2³², 2⁵³, −1, 0, an integral float such
  as `8.0`), absent ↔ null ↔ [] ↔ {}, URI spellings (`strategies.uris`), and values seen for
  the same key elsewhere (e.g. `contributor.kind`).
* **Judging**: every step goes through the same `Stepper` and checks as the Hypothesis lane. A
  mutated action the model calls schema-invalid is a probe, never a valid-lane step (findings
  must be true). A failure is shrunk by the same ddmin `TraceShrinker`, confirmed and saved
  through `_confirm` (engine/chunks.py, as the Hypothesis lane's are), in the same finding
  format.
* **Steering**: the same `Bandit` weights the arms by the new pairs they found; within an arm,
  traces that found new pairs become parents.

Deterministic given the seed: every choice comes from the run's PRNG or a seeded Hypothesis
fill; the clock only decides when the run stops.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import strategies as st

from harness.causes import StepView
from harness.corpus.finding import TraceStep
from harness.invariants._json import COPY_STATS
from harness.reference import NO_STATE_EFFECT, MalformedAction, Model
from harness.targets.base import TargetSetupError

from . import draws, generation
from .arms import GROUP, Arm, Bandit, Lane, arms_for, lane_schema, lanes_for
from .chunks import (
    _SessionFailed,
    chunk_seed,
    drop_hopeless,
    drop_kind,
    end_chunk,
    lane_arms,
    report_failure,
    run_ends,
    target_unusable,
)
from .config import RunConfig, RunSummary
from .control import RunControl
from .effects import effect, near_miss
from .events import Notice
from .machine import FindingFailure, Recorder, Trace, group_trace, judge_step
from .mutation import EMPTY_CONTAINER, Mutator, id_repeats, ids_by_key, repeats_an_id
from .pools import Deferred
from .retired import action_label
from .stepper import TARGET_TIMEOUT, Stepper

#: Seed traces drawn per fill of an arm, and their length (actions per channel group).
FILL_TRACES: Final = 2
SEED_STEPS: Final = 20
FIRST_FILL_TRACES: Final = 2  # an arm's first fill (the simplest trace and a random one): small, so that every arm starts soon
#: Executions of an arm between two fills (so ~1 in this many traces costs Hypothesis draws).
REFILL_EVERY: Final = 64
ADVERSARIAL_FILL: Final = 12
#: At each later fill of an arm whose adversarial actions were used, this many of them are
#: drawn anew (random slots): a pool drawn once held the same 12 for the whole run, so a tactic
#: that came out once in them (a list item of the wrong type, a field required one level in
#: removed) was met by no other probe of the run.
ADVERSARIAL_ROLL: Final = 3
#: Traces kept per arm (seeds and new-coverage traces), and pooled actions per (arm, type). The
#: pools are what a long campaign holds on to: filled toward these caps for an hour and more
#: (≈35 MB at 64 and 64 over 24 arms), they are most of a worker's growth (issue 25,
#: bench/results/campaign.md); at 32 and 16 they are full within minutes and then flat.
CORPUS_CAP: Final = 32
TYPE_POOL_CAP: Final = 16
FIELD_MUTATION: Final = 0.2  # chance that a step's action gets one field mutation
RETARGET: Final = 0.3  # chance that a step's id fields are set to ids of the current state
#: A step chosen at run time (`PICK`): its type by the strategies' applicability weights for the
#: current state, its payload from the type's pool (ids retargeted); a type with no pooled
#: action yet, and now and then any type, gets a few drawn by Hypothesis for this very state.
PICK: Final[Any] = object()  # a marker, never sent (an adversarial action may be JSON null)
#: Reach (issue 32): a type whose guard holds in the current state (weight ≥ `APPLIES`: the
#: strategies' HOT) is weighted by 1 + RARE_BOOST / (1 + the times it changed a state in this
#: run): a type that never did is drawn 9× as often where it applies, one that did 80 times alike.
RARE_BOOST: Final = 8.0
APPLIES: Final = 0.5
#: The effect hunt also looks at the types a strategy weighs down on purpose where they apply
#: (weight ≥ `HUNTS_FROM`: the turn ends weigh HOT/4 so that turns live long), but sends one only
#: for an effect this run has never seen: a clamped duration (`path≠`, engine/effects.py) once,
#: not each turn-end variant 8 times. At `APPLIES` a turn's end was never hunted, and a clamp never
#: sent (11 effective turn ends in 26,620 steps). Measured on six turn and tool-call bugs, 10 seeds
#: (bench/results/recall.md): boosting them like the others (`APPLIES` at 0.25) ended turns so
#: often that the tool-call bugs took up to 10× the steps; the type hunt or the effect hunt at
#: `EFFECT_RARE` cost a seed of 10 here and there and 2–3× the steps. Above the guard probes
#: (`COLD` 0.08, `WRONG_CALL` 0.2).
HUNTS_FROM: Final = 0.25
#: Below `HUNTS_FROM` are the guard probes (`COLD`: the action is a certain no-op here): which
#: guard turns it away is a branch too (a resume of a turn that did not fail, backgrounding a
#: child server that is not starting, a 0.6.0 re-ready that keeps the pending input). With this
#: chance a hunt also looks at one of them, pooled and retargeted, and sends it only for a no-op
#: signature (`near_miss`) this run has never seen: a bounded number of sends per run, so the
#: hunts for the bugs above lose next to nothing to it.
COLD_LOOK: Final = 0.25
TYPE_FILL: Final = 3
TYPE_REFRESH: Final = 0.02
#: A pooled payload was drawn for another state: its ids may name nothing here, and a type whose
#: guard needs a specific state (a turn end naming the active turn, an auth request on a running
#: MCP call) rarely becomes effective from the pool. Until a type applying here has changed a
#: state `RARE_FRESH` times in the run, its payload is drawn for this very state (a state-aware
#: draw, ~4 ms) — at most `RARE_FRESH_CAP` times per type and run, so that a type the reducers
#: never apply (a request the host alone handles) costs a bounded few draws.
RARE_FRESH: Final = 12
RARE_FRESH_CAP: Final = 48
#: Reaching a state a rare type needs is half of it; sending that type there is the other. Before
#: this share of a trace's steps the lane asks which types apply to the state the step meets
#: (`type_offers`, ~0.1 ms) and, when one of them is still rare (`RARE_FRESH`), sends it first,
#: drawn for that state: a running MCP call gets its auth request, two queued messages a reorder.
HUNT: Final = 0.25
#: Reach by behaviour, not only by type (`engine/effects.py`): on this share of the steps (inside
#: `HUNT`'s, when no type is rare) the lane looks ahead. It takes up to `EFFECT_CANDIDATES` pooled
#: payloads of types that apply here (half of one type, half one each of others), retargeted to
#: this state, runs each through the model
#: (a pure reduce, ~50 µs) and sends the one whose effect — the reducer branch seen from outside:
#: the list shrank instead of changing in place, the queue key went, a call's `running` became
#: `cancelled` — this run has seen least, if it has seen it fewer than `EFFECT_RARE` times.
EFFECT_HUNT: Final = 0.25
EFFECT_CANDIDATES: Final = 8
EFFECT_RARE: Final = 8
#: Chance that a mutated trace starts from a state whose bitsets got a high bit (`Mutator.edge_state`):
#: a status with bit 31 set comes from the initial state alone (no valid action writes one into a
#: chat or a session), and a drawn state has it in about one draw in six.
STATE_EDGE: Final = 0.25
#: Chance, beside `STATE_EDGE`, that it starts from a state with a status flag flipped (`FLAG_BITS`).
FLAG_EDGE: Final = 0.15


@dataclass
class Entry:
    """One trace of an arm: its channels (kind, initial state) and steps (channel, action, probe)."""

    channels: tuple[tuple[str, dict[str, Any]], ...]
    steps: list[tuple[int, Any, bool]]
    group_uri: str | None = None


@dataclass
class ArmPool:
    corpus: list[Entry] = field(default_factory=list)
    by_type: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)
    adversarial: dict[str, Sequence[Any]] = field(default_factory=dict)  # per kind, drawn on first use
    fills: int = 0
    since_fill: int = 0
    pending: list[Entry] = field(default_factory=list)  # seed traces not yet run as drawn


@dataclass
class FastStats:
    """What the lane did, for `report.json`'s `extra.fastLane`."""

    fills: int = 0
    seed_traces: int = 0
    mutated_traces: int = 0
    field_mutations: Counter[str] = field(default_factory=Counter)
    probes_from_mutation: int = 0
    corpus_additions: int = 0
    type_fills: int = 0
    fresh_draws: Counter[str] = field(default_factory=Counter)  # per type: payloads drawn for a state (RARE_FRESH)
    hunted: int = 0  # rare types sent where they applied (HUNT)
    effect_hunted: int = 0  # payloads sent for a rarely seen effect (EFFECT_HUNT)
    distinct_effects: int = 0  # (type, effect) pairs the valid steps had

    def to_json(self) -> dict[str, Any]:
        return {
            "fills": self.fills, "seedTraces": self.seed_traces, "mutatedTraces": self.mutated_traces,
            "fieldMutations": dict(sorted(self.field_mutations.items())),
            "mutatedActionsProbed": self.probes_from_mutation, "corpusAdditions": self.corpus_additions,
            "typeFills": self.type_fills, "freshDraws": sum(self.fresh_draws.values()),
            "hunted": self.hunted, "effectHunted": self.effect_hunted, "distinctEffects": self.distinct_effects,
        }


def fill(strategy: st.SearchStrategy[Any], n: int, fill_seed: int, *, simplest_first: bool = False) -> list[Any]:
    """`n` values of `strategy`, deterministic given `fill_seed` (engine/draws.py: random draws,
    the simplest value one in eight, or first with `simplest_first`)."""
    return draws.values(strategy, n, fill_seed, simplest_first=simplest_first)


def _deferred_fill(strategy: st.SearchStrategy[Any], n: int, fill_seed: int) -> Deferred:
    """`fill`, drawn when a step first needs one of the values (engine/pools.py)."""
    return Deferred(lambda: fill(strategy, n, fill_seed))


def _deferred_roll(held: Sequence[Any], strategy: st.SearchStrategy[Any], n: int, fill_seed: int) -> Deferred:
    """`held` with `n` of its values (slots chosen by `fill_seed`) replaced by new draws, drawn
    when a step first needs one (as `_deferred_fill`)."""

    def make() -> list[Any]:
        values = list(held)
        new = fill(strategy, n, fill_seed)
        slots = random.Random(fill_seed).sample(range(len(values)), min(len(new), len(values)))
        for slot, value in zip(slots, new, strict=False):
            values[slot] = value
        return values

    return Deferred(make)


def _fold(model: Model, kind: str, state: dict[str, Any], action: Any, now: int) -> dict[str, Any]:
    try:
        return model.reduce(kind, state, action, now)
    except MalformedAction:
        return state


@st.composite
def seed_traces(draw: st.DrawFn, kind: str, lane: Lane, steps: int = SEED_STEPS,
                should_stop: Callable[[], bool] | None = None) -> Entry:
    """A valid start state (or a session with its chats) and state-aware actions folded
    through the lane's model: the raw material the fast lane mutates. `should_stop` (the
    run's deadline or a signal) cuts the trace short, so a fill never outlasts the budget."""
    profile, model = lane.profile, lane.model
    if kind == GROUP:
        group = draw(generation.channel_groups(profile))
        channels = (("session", group.session), *(("chat", c) for c in group.chats))
        uri: str | None = group.session_uri
    else:
        channels, uri = ((kind, draw(generation.initial_states(kind, profile))),), None
    states = [s for _, s in channels]
    out: list[tuple[int, Any, bool]] = []
    for i in range(steps):
        if should_stop is not None and should_stop():
            break
        ch = draw(st.integers(0, len(channels) - 1)) if len(channels) > 1 else 0
        k = channels[ch][0]
        dirs = _dirs(states[0]) if ch > 0 and k == "chat" else None
        action = draw(generation.state_aware_actions(k, states[ch], profile, dirs))
        states[ch] = _fold(model, k, states[ch], action, 1_000 + 1_000 * i)
        out.append((ch, action, False))
    return Entry(channels, out, uri)


def _dirs(session: dict[str, Any]) -> tuple[str, ...]:
    d = session.get("workingDirectories")
    return tuple(x for x in d if isinstance(x, str)) if isinstance(d, list) else ()


# -- the loop -------------------------------------------------------------------------------


class FastLane:
    """Runs arms by mutating pooled traces; the campaign's `run_campaign` calls `loop`."""

    def __init__(
        self,
        *,
        config: RunConfig,
        lanes: tuple[Lane, ...],
        recorder: Recorder,
        on_failure: Callable[[FindingFailure], None],
        run_seed: int,
        control: Any = None,  # the run's RunControl, checked before every step
    ) -> None:
        self.config = config
        self.control = control
        self.lanes = lanes
        self.rec = recorder
        self.on_failure = on_failure
        self.rng = random.Random(run_seed)
        self.stats = FastStats()
        self.mutator = Mutator(self.rng, self.stats)
        self.pools: dict[Arm, ArmPool] = {}
        self.valid_cache: dict[int, tuple[Any, bool]] = {}  # id(action) -> (action, schema-valid)
        #: (kind, profile label) -> every type the strategies offer there: once none of them is rare
        #: any more, a hunt need not ask which apply (`_hunt`, on a quarter of all steps)
        self.offered: dict[tuple[str, str], frozenset[str]] = {}
        #: (action type, effect signature) -> valid steps that had it (`engine/effects.py`)
        self.effects: Counter[tuple[str, tuple[str, ...]]] = Counter()
        #: Reach per lane (issue 32 item 7): profile label -> action type -> effective sends in that
        #: lane, and fresh draws there. A type is rare, boosted and hunted per lane: another
        #: version's rule for the type is other reducer code (0.8.0's `customizationToggled
        #: {id, enablement[]}` beside 0.7.0's `{id, enabled}`), and a run-wide count let the
        #: lane whose fixtures send the type often make it common for every lane.
        self.changed_in: dict[str, Counter[str]] = {}
        self.fresh_in: dict[str, Counter[str]] = {}
        #: (state, what was asked, the offers) of the last `_offers` call
        self._last_offers: tuple[Any, tuple[Any, ...], list[tuple[str, float, Any]]] | None = None

    # pools ------------------------------------------------------------------------------------

    def _pool(self, arm: Arm) -> ArmPool:
        pool = self.pools.setdefault(arm, ArmPool())
        if not pool.corpus or pool.since_fill >= REFILL_EVERY:
            self._fill(arm, pool)
        return pool

    def _fill(self, arm: Arm, pool: ArmPool) -> None:
        kind, lane_index = arm
        lane = self.lanes[lane_index]
        fill_seed = self.rng.getrandbits(64)
        stop = self.control.should_stop if self.control is not None else None
        # An arm's first fill starts with the simplest trace (its initial state without any
        # optional key: no directory subset, no queue), then a random one.
        entries = fill(seed_traces(kind, lane, SEED_STEPS, stop), FILL_TRACES if pool.fills else FIRST_FILL_TRACES,
                       fill_seed, simplest_first=not pool.fills)
        for e in entries:
            for ch, action, _ in e.steps:
                self.mutator.learn(action)
                t = action.get("type") if isinstance(action, dict) else None
                if isinstance(t, str):
                    slot = pool.by_type.setdefault(t, [])
                    if len(slot) < TYPE_POOL_CAP:
                        slot.append((ch, action))
                    else:
                        slot[self.rng.randrange(TYPE_POOL_CAP)] = (ch, action)
            for _, initial in e.channels:
                self.mutator.learn(initial)
            self._add(pool, e, seed_entry=True)
        # In channel order (never a set's: string hashing differs between processes).
        for k in dict.fromkeys(k for k, _ in (entries[0].channels if entries else ())):
            if self.config.adversarial_percent <= 0:
                continue
            held = pool.adversarial.get(k)
            if held is None:
                pool.adversarial[k] = _deferred_fill(generation.adversarial_actions(k, lane.profile),
                                                     ADVERSARIAL_FILL, self.rng.getrandbits(64))
            elif isinstance(held, Deferred) and held.drawn:
                pool.adversarial[k] = _deferred_roll(held, generation.adversarial_actions(k, lane.profile),
                                                     ADVERSARIAL_ROLL, self.rng.getrandbits(64))
        pool.fills += 1
        pool.since_fill = 0
        self.stats.fills += 1
        self.stats.seed_traces += len(entries)
        pool.pending = list(entries)  # each seed trace runs once as drawn, then is mutated

    def _add(self, pool: ArmPool, entry: Entry, *, seed_entry: bool = False) -> None:
        if len(pool.corpus) < CORPUS_CAP:
            pool.corpus.append(entry)
        else:
            pool.corpus[self.rng.randrange(CORPUS_CAP)] = entry
        if not seed_entry:
            self.stats.corpus_additions += 1

    # mutation of a whole trace -------------------------------------------------------------------

    def _next_trace(self, pool: ArmPool) -> tuple[Entry, bool]:
        if pool.pending:
            return pool.pending.pop(0), False
        rng = self.rng
        recent = pool.corpus[-8:]
        parent = rng.choice(recent) if rng.random() < 0.5 else rng.choice(pool.corpus)
        steps = list(parent.steps)
        for _ in range(rng.randint(1, 3)):
            steps = self._restructure(pool, parent, steps)
        limit = self.config.max_steps
        channels = parent.channels
        edge = rng.random()
        if len(channels) == 1 and edge < STATE_EDGE + FLAG_EDGE:
            # one channel only: a group's catalog mirrors its chats' statuses (INV-031)
            channels = ((channels[0][0], self.mutator.edge_state(channels[0][1], flag=edge >= STATE_EDGE)),)
        return Entry(channels, steps[:limit], parent.group_uri), True

    def _restructure(self, pool: ArmPool, parent: Entry, steps: list[tuple[int, Any, bool]]) -> list[tuple[int, Any, bool]]:
        rng, n = self.rng, len(steps)
        op = rng.random()
        if op < 0.2:  # keep a prefix, then steps chosen at run time (a state-aware tail)
            picks = [(rng.randrange(len(parent.channels)), PICK, False) for _ in range(rng.randint(4, 16))]
            return steps[: rng.randint(0, n)] + picks
        if op < 0.35:  # splice with another trace of the arm (same channels when possible)
            other = rng.choice(pool.corpus)
            if len(other.channels) != len(parent.channels) or not other.steps:
                return steps
            return steps[: rng.randint(0, n)] + other.steps[rng.randrange(len(other.steps)):]
        if op < 0.6:  # insert steps chosen at run time for the state they meet (PICK)
            at = rng.randint(0, n)
            picks = [(rng.randrange(len(parent.channels)), PICK, False) for _ in range(rng.randint(1, 4))]
            return [*steps[:at], *picks, *steps[at:]]
        if n == 0:
            return steps
        i = rng.randrange(n)
        if op < 0.7:  # duplicate a step (ids reused; a repeat right away or later)
            at = rng.randint(i, n)
            return [*steps[:at], steps[i], *steps[at:]]
        if op < 0.85:  # reorder: swap two steps
            j = rng.randrange(n)
            out = list(steps)
            out[i], out[j] = out[j], out[i]
            return out
        return steps[:i] + steps[i + 1:]  # delete a step

    # running --------------------------------------------------------------------------------------

    def run_arm(self, arm: Arm) -> None:
        pool = self._pool(arm)
        entry, mutated = self._next_trace(pool)
        pool.since_fill += 1
        if mutated:
            self.stats.mutated_traces += 1
        sent = self._execute(arm, entry, mutated, pool)
        if sent is not None and mutated:
            self._add(pool, sent)

    def _offers(self, lane: Lane, channels: list[tuple[Stepper, Trace]], ch: int) -> list[tuple[str, float, Any]]:
        """The strategies' typed offers for channel `ch` in its current state (a group's chat
        sees its session's directories). The last answer is kept for the state it was asked on:
        a step that meets the type hunt, the effect hunt and a pick asks once."""
        stepper = channels[ch][0]
        kind, state = stepper.kind, stepper.reference
        dirs = _dirs(channels[0][0].reference) if ch > 0 and kind == "chat" else None
        asked = (kind, dirs, lane.profile)
        last = self._last_offers
        if last is not None and last[0] is state and last[1] == asked:
            return last[2]
        offers = generation.type_offers(kind, state, lane.profile, dirs)
        self._last_offers = (state, asked, offers)  # the state held: its id is not reused meanwhile
        return offers

    def _rare_here(self, lane: Lane, t: str, w: float) -> bool:
        """Type `t`, offered with weight `w`, applies here and is still rare in this lane: fewer
        than `RARE_FRESH` effective sends, fewer than `RARE_FRESH_CAP` fresh draws, and a state
        effect to have at all."""
        return (w >= APPLIES and self._changed(lane)[t] < RARE_FRESH
                and self.fresh_in.get(lane.profile.label, _NONE)[t] < RARE_FRESH_CAP and t not in NO_STATE_EFFECT)

    def _changed(self, lane: Lane) -> Counter[str]:
        """Effective sends per type in `lane` so far (`changed_in`)."""
        return self.changed_in.get(lane.profile.label, _NONE)

    def _draw_fresh(self, lane: Lane, t: str, make: Any) -> Any | None:
        """One payload of type `t` drawn for the state at hand (counted against `RARE_FRESH_CAP`)."""
        self.stats.fresh_draws[t] += 1
        self.fresh_in.setdefault(lane.profile.label, Counter())[t] += 1
        drawn = fill(make(), 1, self.rng.getrandbits(64))
        if not drawn:
            return None
        self.mutator.learn(drawn[0])
        return drawn[0]

    def _pick(self, pool: ArmPool, lane: Lane, channels: list[tuple[Stepper, Trace]], ch: int) -> tuple[Any, bool]:
        """An action for channel `ch` in its current state: the type weighted as the
        strategies weight it (`HOT` when the state holds what the guard needs), the payload
        from the type's pool, or drawn for this state (then True) when the type is rare here
        (`RARE_FRESH`) or the pool has none."""
        offers = self._offers(lane, channels, ch)
        t, w, make = self.rng.choices(offers, weights=reach_weights(offers, self._changed(lane)))[0]
        slot = pool.by_type.setdefault(t, [])
        if self._rare_here(lane, t, w):
            fresh = self._draw_fresh(lane, t, make)
            if fresh is not None:
                return fresh, True
        if not slot or self.rng.random() < TYPE_REFRESH:
            drawn = fill(make(), TYPE_FILL, self.rng.getrandbits(64))
            self.stats.type_fills += 1
            for a in drawn:
                self.mutator.learn(a)
                if len(slot) < TYPE_POOL_CAP:
                    slot.append((ch, a))
                else:
                    slot[self.rng.randrange(TYPE_POOL_CAP)] = (ch, a)
            if drawn:
                return drawn[0], True
        return self.rng.choice(slot)[1], False

    def _hunt(self, lane: Lane, channels: list[tuple[Stepper, Trace]], ch: int) -> Any | None:
        """A type that applies to channel `ch`'s current state and is still rare in this run
        (`HUNT`), drawn for that state; None when there is none."""
        key = (channels[ch][0].kind, lane.profile.label)
        known = self.offered.get(key)
        if known is not None and not any(self._rare_here(lane, t, APPLIES) for t in known):
            return None  # nothing of this kind is rare any more: the offers could not give one
        offers = self._offers(lane, channels, ch)
        self.offered[key] = (known or frozenset()) | {t for t, _, _ in offers}
        rare = [(t, make) for t, w, make in offers if self._rare_here(lane, t, w)]
        if not rare:
            return None
        t, make = self.rng.choice(rare)
        self.stats.hunted += 1
        return self._draw_fresh(lane, t, make)

    def _effect_hunt(self, pool: ArmPool, lane: Lane, channels: list[tuple[Stepper, Trace]], ch: int,
                     now: int) -> Any | None:
        """A pooled payload, retargeted to channel `ch`'s state, whose effect there (looked ahead
        in the model) this run has seen least (`EFFECT_HUNT`); None when every candidate's effect
        is common or none is a valid step."""
        stepper = channels[ch][0]
        kind, state, model = stepper.kind, stepper.reference, lane.model
        weights = {t: w for t, w, _ in self._offers(lane, channels, ch)
                   if t not in NO_STATE_EFFECT and pool.by_type.get(t)}
        offers = [t for t, w in weights.items() if w >= HUNTS_FROM]
        if not offers:
            return None
        cold = [t for t, w in weights.items() if w < HUNTS_FROM]
        # Half the candidates of one type (its branches), half one each of other types (which of
        # them has a rare effect in this very state: a turn's end while a call runs).
        t = self.rng.choice(offers)
        slot = pool.by_type[t]
        half = EFFECT_CANDIDATES // 2
        candidates = [(t, a) for _, a in self.rng.sample(slot, min(half, len(slot)))]
        for u in self.rng.sample(offers, min(half, len(offers))):
            if u != t:
                candidates.append((u, self.rng.choice(pool.by_type[u])[1]))
        if cold and self.rng.random() < COLD_LOOK:
            u = self.rng.choice(cold)
            candidates.append((u, self.rng.choice(pool.by_type[u])[1]))
        ids = ids_by_key(state)  # once for every candidate
        ranked: list[tuple[int, int, Any, Any]] = []
        looks: list[tuple[str, Any]] = []
        for n, (t, pooled) in enumerate(candidates):
            action = self.mutator.retarget(pooled, state, ids)
            looks.append((t, action))
            if n < half:  # the hunted type's guards, one id right and one wrong (`miss_one`)
                missed = self.mutator.miss_one(action, ids)
                if missed is not None:
                    looks.append((t, missed))
            if n == 0:  # and its bounds: one integer at an edge (`edge_number`), once per hunt
                edged = self.mutator.edge_number(action)
                if edged is not None:
                    looks.append((t, edged))
        for i, (t, action) in enumerate(looks):
            try:
                after = model.reduce(kind, state, action, now)
            except MalformedAction:
                continue
            seen = self.effects[(t, effect(state, after, action) or near_miss(action, ids))]
            if seen < (EFFECT_RARE if weights[t] >= APPLIES else 1):
                ranked.append((seen, i, action, after))
        # The rarest first; the costlier checks only until one passes: schema-valid, and no id
        # this state holds elsewhere (a probe, not a step: `_collides`).
        ranked.sort(key=lambda r: (r[0], r[1]))
        repeats = None
        for _, _, action, after in ranked:
            if not self._valid(model, kind, action):
                continue
            if repeats is None:
                repeats = id_repeats(state)
            if id_repeats(after) > repeats:
                continue
            self.stats.effect_hunted += 1
            return action
        return None

    def _valid(self, model: Model, kind: str, action: Any) -> bool:
        """Schema-valid for the valid lane? Cached by the action's identity (pooled actions
        are never changed in place: a mutation builds a new object)."""
        hit = self.valid_cache.get(id(action))
        if hit is not None and hit[0] is action:
            return hit[1]
        ok = model.wire_problem(kind, action) is None  # schema, numbers, nulls (harness/spec/interop.py)
        if len(self.valid_cache) > 4_096:
            self.valid_cache.clear()
        self.valid_cache[id(action)] = (action, ok)
        return ok

    @staticmethod
    def _collides(model: Model, kind: str, state: Any, action: Any, now_ms: int) -> bool:
        """`action`, spliced into a state it was not drawn for, would give one object `id` to two
        objects of one collection's tree (a child customization named like a top-level one, …):
        ids are unique (INV-027) and the reducers rely on it, so such a step is a probe. A
        state-aware draw (the Hypothesis lane) never names an id the state already holds."""
        try:
            after = model.reduce(kind, state, action, now_ms)
        except MalformedAction:
            return False  # the stepper reports what the model refuses
        return id_repeats(after) > id_repeats(state)

    def _execute(self, arm: Arm, entry: Entry, mutated: bool, pool: ArmPool) -> Entry | None:
        """Run one trace through the steppers. Returns the trace as sent when it found a new
        (kind, type, outcome) pair (a parent for later mutations), else None."""
        config, rec, rng = self.config, self.rec, self.rng
        lane = self.lanes[arm[1]]
        control = self.control
        channels: list[tuple[Stepper, Trace]] = []
        order: list[tuple[int, int]] = []
        sent: list[tuple[int, Any, bool]] = []
        gained = False
        try:
            for k, initial in entry.channels:
                stepper = Stepper(
                    kind=k, state=initial, model=lane.model, session=lane.target.session(k, initial),
                    target=lane.target, target_is_model=config.target_is_model,
                    probe_every=config.probe_every, baseline=config.baseline, retired=rec.retired,
                    folder_schema=config.schema,
                )
                channels.append((stepper, Trace(k, initial, profile=lane.profile.label, target=lane.target)))
            rec.examples += 1
            rec.arm_examples[arm] += 1
            now = 1_000
            group = len(channels) > 1
            steps = list(entry.steps)
            i = 0
            while i < len(steps):
                ch, action, probe = steps[i]
                i += 1
                if control is not None:
                    control.check()
                stepper, trace = channels[ch]
                k = stepper.kind
                fresh = False
                roll = rng.random() if not probe else 1.0
                if roll < HUNT:
                    hunted = self._hunt(lane, channels, ch)
                    if hunted is None and roll < EFFECT_HUNT:
                        hunted = self._effect_hunt(pool, lane, channels, ch, now)
                    if hunted is not None:  # sent first; the step it met comes next
                        i -= 1
                        action, fresh = hunted, True
                if not fresh and config.adversarial_percent and rng.randrange(100) < config.adversarial_percent:
                    adv = pool.adversarial.get(k)
                    if adv:
                        probe, action = True, rng.choice(adv)
                spliced = mutated  # a payload met a state it was not drawn for
                if action is PICK:
                    action, fresh = self._pick(pool, lane, channels, ch)
                    if not fresh:  # a pooled payload names another state's ids
                        action, spliced = self.mutator.retarget(action, stepper.reference), True
                elif mutated and not probe and not fresh and rng.random() < RETARGET:
                    action = self.mutator.retarget(action, stepper.reference)
                pooled, op = action, None  # retargeted: the same JSON types, valid by construction
                if mutated and not fresh and rng.random() < FIELD_MUTATION:
                    action, op = self.mutator.mutate(action, stepper.reference)
                if rec.retired(k, action):
                    continue  # a value class the target hung on: not sent again (the kind goes on)
                now += rng.randrange(5_001) if rng.random() < 0.9 else 0
                # Valid lane only when the schema says so; without a schema validator (no spec
                # folder) only the pooled actions, valid by construction, are: a mutated field
                # may have the wrong type or range, which the model alone cannot tell.
                # Ids are unique within a collection (INV-027; the reducers assume it): a mutation
                # that repeats one inside the payload makes the action a probe too.
                checkable = action is pooled or (
                    lane.model.schema is not None and op != EMPTY_CONTAINER and not repeats_an_id(action)
                )
                valid = not probe and checkable and self._valid(lane.model, k, action)
                if valid and spliced and self._collides(lane.model, k, stepper.reference, action, now):
                    valid = False  # an id this state already holds elsewhere: a state no host makes
                if not probe and not valid:
                    self.stats.probes_from_mutation += 1
                adversarial = not valid
                trace.steps.append(TraceStep(action, now, probe=adversarial))
                sent.append((ch, action, adversarial))
                if group:
                    order.append((ch, len(trace.steps) - 1))
                before, target_before = stepper.reference, stepper.state
                if adversarial:
                    # a mutated field no schema can judge in this lane: any answer but a crash
                    # or a hang is acceptable (the model's payload rules do not check types)
                    result = stepper.probe(action, now, judged=op is None or lane.model.schema is not None)
                elif group:
                    cross = ({"chats": tuple(c.reference for c, _ in channels[1:])} if ch == 0
                             else {"session": channels[0][0].reference})
                    result = stepper.step(action, now, **cross)
                else:
                    result = stepper.step(action, now)
                gained |= self._record(arm, k, before, action, result, adversarial)
                rec.retired.saw(k, action, any(v.invariant == TARGET_TIMEOUT for v in result.violations))
                if result.violations:
                    view = StepView(k, action, target_before if adversarial else before, target_before,
                                    result.expected, result.observed, probe=adversarial)
                    context = ({"chats": tuple(c.reference for c, _ in channels[1:])} if ch == 0
                               else {"session": channels[0][0].reference}) if group else {}
                    judged = judge_step(rec, stepper, result, view, action_label(action, adversarial), now, context)
                    if judged is not None:
                        cause, v = judged
                        self.on_failure(FindingFailure(v, result, _finding_trace(channels, ch, order, entry, context), cause))
                        return None  # the rest of this trace ran from a state the finding explains
        finally:
            for stepper, _ in channels:
                stepper.session.close()
        return Entry(entry.channels, sent, entry.group_uri) if gained else None

    def _record(self, arm: Arm, kind: str, before: Any, action: Any, result: Any, adversarial: bool) -> bool:
        """The Hypothesis lane's bookkeeping (machine.py): counters, outcome hook, new pairs."""
        rec = self.rec
        rec.steps += 1
        label = action_label(action, adversarial)
        rec.sent[label] += 1
        changed = not adversarial and result.expected is not None and result.expected is not before
        if changed:
            rec.changed[label] += 1
            self.changed_in.setdefault(self.lanes[arm[1]].profile.label, Counter())[label] += 1
        if not adversarial and result.expected is not None:
            key = (label, effect(before, result.expected, action) or near_miss(action, ids_by_key(before)))
            if key not in self.effects:
                self.stats.distinct_effects += 1
            self.effects[key] += 1
        outcome = None
        if not adversarial and rec.on_step is not None:
            outcome = rec.on_step(kind, before, action, result.expected, result.malformed)
            if outcome is not None:
                rec.outcomes_seen.add(outcome)
        pair = (kind, label, outcome or ("changed" if changed else "malformed" if result.malformed else "same"))
        if pair in rec.pairs_seen:
            return False
        rec.pairs_seen.add(pair)
        rec.arm_new_pairs[arm] += 1
        return True


#: An empty count (a lane that changed nothing yet).
_NONE: Final[Counter[str]] = Counter()


def reach_weights(offers: list[tuple[str, float, Any]], changed: Counter[str]) -> list[float]:
    """The offers' weights for a pick, raised for reach: of the types whose guard holds here, those
    that rarely changed a state in this run so far are drawn more (a running MCP call to require
    auth on is a rare state: the type it enables must not wait for chance once the state is there)."""
    return [w * (1.0 + RARE_BOOST / (1 + changed[t])) if w >= APPLIES and t not in NO_STATE_EFFECT else w
            for t, w, _ in offers]


def _finding_trace(channels: list[tuple[Stepper, Trace]], index: int, order: list[tuple[int, int]],
                   entry: Entry, context: dict[str, Any]) -> Trace:
    """As machine.py's: the failing channel's trace; a group adds itself (`group_trace`)."""
    if len(channels) == 1:
        return channels[index][1]
    return group_trace([t for _, t in channels], index, order, entry.group_uri, context)


def run_fast(
    config: RunConfig,
    control: RunControl,
    recorder: Recorder,
    guarded: Any,
    summary: RunSummary,
    kinds: tuple[str, ...],
    model: Model,
    database: Any,
    emit: Callable[[Any], None],
    reported: dict[str, Any],
) -> None:
    """`run_campaign`'s loop for `lane="fast"`: the same arms, bandit, findings, progress and
    stopping rules as the Hypothesis lane's `_campaign_loop`."""
    active = list(kinds)
    schema = _VerdictCache(config.schema) if config.schema is not None else None
    lanes = lanes_for(
        guarded, target_is_model=config.target_is_model, profile=config.profile, profiles=config.profiles,
        make_model=lambda p: Model(p, check_payloads=True, schema=lane_schema(schema, p, config.profile)),
    )
    bandit = Bandit(arms_for(kinds, lanes))
    failures: list[FindingFailure] = []
    fast = FastLane(config=config, lanes=lanes, recorder=recorder, on_failure=failures.append,
                    run_seed=chunk_seed(config.seed, -1), control=control)
    copies = COPY_STATS.to_json()
    if database is not None:
        emit(Notice("the fast lane does not use the Hypothesis example database (--lane hypothesis does)"))
    try:
        _fast_chunks(config, control, recorder, summary, active, lanes, bandit, fast, failures, emit, reported)
    finally:
        summary.extra["fastLane"] = fast.stats.to_json()
        summary.extra["fastLane"]["probeEvery"] = config.probe_every
        summary.extra["probeCopies"] = {k: v - copies[k] for k, v in COPY_STATS.to_json().items()}
        if schema is not None:
            summary.extra["fastLane"]["schemaChecks"] = {"calls": schema.calls, "cachedByContent": schema.hits}


def _fast_chunks(config: RunConfig, control: RunControl, recorder: Recorder, summary: RunSummary, active: list[str],
                 lanes: tuple[Lane, ...], bandit: Bandit, fast: FastLane, failures: list[FindingFailure],
                 emit: Callable[[Any], None], reported: dict[str, Any]) -> None:
    while True:
        control.check()
        if run_ends(config, summary, active):
            return
        arms = bandit.chunk_arms(lane_arms(arms_for(active, lanes), lanes))
        ran, new_pairs = Counter(recorder.arm_examples), Counter(recorder.arm_new_pairs)
        for _ in range(config.chunk_examples):
            arm = fast.rng.choice(arms)
            try:
                fast.run_arm(arm)
            except _SessionFailed as e:
                drop_kind(e, active, emit)
            except TargetSetupError as e:
                target_unusable(e, summary, emit)
                return
            while failures:
                report_failure(failures.pop(), config, control, recorder, summary, active, emit, reported)
            drop_hopeless(recorder, active, emit)
            if config.max_findings is not None and len(summary.findings) >= config.max_findings:
                break
            arms = lane_arms(tuple(a for a in arms if a[0] in active or (a[0] == GROUP and {"session", "chat"} <= set(active))),
                             lanes)
            if not arms:
                break
        end_chunk(bandit, recorder, ran, new_pairs, summary, control, emit)


class _VerdictCache:
    """The payload check cached by the action's content. The lane asks whether an action is
    valid, the model asks again inside `reduce`, and every probe check re-reduces a fresh copy
    of the same action: one validation per distinct action instead of a dozen. The key is the
    action's pickle (exact: same keys in the same order, same types), a few microseconds where
    a validation costs tens; the check is a pure function of the content."""

    def __init__(self, check: Callable[[Any], str | None], size: int = 8_192) -> None:
        self.check = check
        #: The raw-payload check (`null`s as sent) the valid lane asks for when an action holds
        #: a `null` (Model.value_problem): rare enough to go uncached.
        self.wire_problem: Callable[[Any], str | None] | None = getattr(check, "wire_problem", None)
        self.size = size
        self.cache: dict[bytes, str | None] = {}
        self.hits = 0
        self.calls = 0

    def __call__(self, action: Any) -> str | None:
        self.calls += 1
        try:
            key = pickle.dumps(action, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # not plain data: check it every time
            return self.check(action)
        if key in self.cache:
            self.hits += 1
            return self.cache[key]
        verdict = self.check(action)
        if len(self.cache) >= self.size:
            self.cache.clear()
        self.cache[key] = verdict
        return verdict
