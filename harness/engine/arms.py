"""What a run spends its time on: lanes (profile, model, target), arms (kind × lane), and the
bandit that weights the arms by the new coverage they still yield.

A *lane* is one profile the target supports, with the reference model of that profile and the
target serving it: the in-process reference model supports every profile of `RUN_PROFILES`; any
other target the one it was opened with (or the `profiles` it announces through `for_profile`).
An *arm* is a state kind (or `group`: a session with its chats in one sequence) on one lane.

The bandit: after every chunk, each arm that ran scores the (kind, action type, outcome) pairs
it saw for the first time in the run, decayed; its weight for the next chunk is 1 + score, so an
arm that stopped finding anything new still runs (never starved), and one that does runs more.
The arms of a chunk are a tuple in which each arm appears in proportion to its weight: the
machine draws one per example with Hypothesis (`sampled_from`), so the choice shrinks and replays.
Everything here is deterministic given the run's history (no clock, no `random`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from harness.reference import Model, Profile
from harness.spec.versions import kinds_of
from harness.targets.base import Target
from harness.targets.reference import ReferenceTarget

#: The 0.x profiles a reference run exercises: the pinned release, main after it, 0.8.0 (replace).
RUN_PROFILES: Final = ("0.7.0", "0.7.0-main", "0.8.0")
#: The two baselines 1.0.0 hosts advertise (CHANGELOG 1.0.0: "Advertise only the 1.0.0 and
#: 0.9.0 protocol compatibility baselines").
RUN_PROFILES_1X: Final = ("1.0.0", "0.9.0")
#: The profiles the in-process model is fuzzed in, whatever the run's profile (a target is
#: fuzzed in every profile it announces, issue 32): the run's own profile first. With only its
#: era's lanes a 0.7.0 run never reached the model's 0.9.0/1.0.0 rules nor the 0.6.0 ones.
#: Not: 0.5.x (the 0.6.0 rules, fewer types) and the 0.8.0 draft snapshot `0.8.0-c840a57`, which
#: moves index 0 on a replace — what INV-035 forbids and released 0.8.0 fixed.
MODEL_PROFILES: Final = (*RUN_PROFILES_1X, *RUN_PROFILES, "0.6.0")

#: The pseudo-kind of a multi-channel example: a session and 1–3 of its chats.
GROUP: Final = "group"
DECAY: Final = 0.5
SLOTS: Final = 8  # slots of the least weighted arm in a chunk's arm tuple


@dataclass(frozen=True)
class Lane:
    profile: Profile
    model: Model
    target: Any  # a Target (the campaign's guarded wrapper included)


Arm = tuple[str, int]  # (kind or GROUP, lane index)


def lane_schema(schema: Any, lane: Profile, run: Profile) -> Any:
    """The spec folder's action schema for a lane: the folder describes the run's profile's
    version (the profile rule chose it from that folder), so a lane of another version is judged
    by the model's own per-version payload rules instead, as a run without a spec folder is. A
    0.7.0 schema would make every 0.8.0-only payload shape (`session/customizationToggled
    {id, enablement[]}` lacks the 0.7.0 `enabled`) schema-invalid: sent as a probe, never judged."""
    return schema if judged_by_folder(lane, run) else None


def judged_by_folder(lane: Profile, run: Profile) -> bool:
    """Whether a lane is judged by the spec folder's action schema: the folder describes the
    run's profile's version only (`lane_schema`)."""
    return lane.version == run.version


def lanes_for(
    target: Target,
    *,
    target_is_model: bool,
    profile: Profile,
    profiles: Sequence[Profile] | None = None,
    make_model: Callable[[Profile], Model] = Model,
) -> tuple[Lane, ...]:
    """The lanes of a run: `profile` first, then every other profile the target supports
    (`profiles` overrides what the target announces)."""
    ordered = lane_profiles(target, target_is_model=target_is_model, profile=profile, profiles=profiles)
    lanes = []
    for p in ordered:
        t = target if p == profile else _target_for(target, p, target_is_model)
        if t is None:
            continue
        lanes.append(Lane(p, make_model(p), t))
    return tuple(lanes)


def lane_profiles(
    target: Any, *, target_is_model: bool, profile: Profile, profiles: Sequence[Profile] | None = None,
) -> list[Profile]:
    """The profiles of a run's lanes, `profile` first (a lane whose target cannot be made for
    its profile is dropped later, by `lanes_for`)."""
    wanted = list(profiles) if profiles is not None else _supported(target, target_is_model, profile)
    return [profile, *(p for p in wanted if p != profile)]


def _supported(target: Any, target_is_model: bool, profile: Profile) -> list[Profile]:
    if target_is_model:
        return [Profile.named(n) for n in MODEL_PROFILES]
    announced = getattr(target, "profiles", None)
    if isinstance(announced, tuple) and hasattr(target, "for_profile"):
        return [Profile.named(n) for n in announced if isinstance(n, str)]
    return [profile]


def _target_for(target: Any, profile: Profile, target_is_model: bool) -> Any:
    if target_is_model:
        return ReferenceTarget(profile)
    maker = getattr(target, "for_profile", None)
    return maker(profile) if callable(maker) else None


def arms_for(kinds: Sequence[str], lanes: Sequence[Lane]) -> tuple[Arm, ...]:
    """Every kind on every lane whose profile has that kind (the automation channels from
    0.9.0, the canvas from 1.0.0), plus `group` when both session and chat are fuzzed."""
    names = list(kinds)
    if "session" in names and "chat" in names:
        names.append(GROUP)
    return tuple(
        (k, i) for i in range(len(lanes)) for k in names
        if k == GROUP or k in kinds_of(lanes[i].profile.version)
    )


@dataclass
class Bandit:
    """Weights arms by the new (kind, type, outcome) pairs they found recently."""

    arms: tuple[Arm, ...]
    score: dict[Arm, float] = field(default_factory=dict)

    def chunk_arms(self, allowed: Sequence[Arm] | None = None) -> tuple[Arm, ...]:
        """The arms of the next chunk (those `allowed`, default all), each repeated in
        proportion to its weight."""
        live = [a for a in self.arms if allowed is None or a in allowed]
        if not live:
            return ()
        weights = {a: 1.0 + self.score.get(a, 0.0) for a in live}
        low = min(weights.values())
        out: list[Arm] = []
        for a in live:
            out.extend([a] * max(1, round(SLOTS * weights[a] / low)))
        return tuple(out)

    def update(self, ran: Counter[Arm], new_pairs: Counter[Arm]) -> None:
        """After a chunk: `ran` examples per arm, `new_pairs` first-seen pairs per arm."""
        for a in ran:
            self.score[a] = DECAY * self.score.get(a, 0.0) + new_pairs.get(a, 0)
