"""What a target baseline accepts (docs/baselines.md), applied to the violations of one step.

The stepper hands every step's and probe's violations through `judge`, so an accepted
difference is `known` — counted, never failing — in a run, a replay and a shrink alike:

* a `known` entry turns a matching violation `known`, tagged `[baseline <id>: <reason>]`;
* a divergence (INV-D01) is judged per differing path: accepted when every difference is,
  otherwise it names only the differences no entry accepts, so an accepted quirk on the same
  step never hides a real difference;
* once a step's divergence is accepted (`accepted_divergence`), the per-step checks that fire
  only because of it — the reference model does not show them on the same step — are accepted
  with it (`follows_from_accepted`), and the stepper lets the reference go on from the target's
  state.
"""

from __future__ import annotations

from typing import Any

from harness.corpus.baseline import Baseline
from harness.diff import diff_paths, render
from harness.invariants._json import fmt_path
from harness.invariants.base import Step, Violation
from harness.invariants.divergence import agrees_with_reference
from harness.invariants.registry import REGISTRY, check_step

#: The differential check (the target's state against the reference model's).
DIVERGENCE = agrees_with_reference.id
#: At most this many differences of one divergence are judged one by one.
MAX_DIFFERENCES = 200


def judge(
    baseline: Baseline, kind: str, action: Any, violations: list[Violation], expected: Any = None, observed: Any = None
) -> list[Violation]:
    """`violations` (one per entry, in order) as the baseline judges them. `expected` /
    `observed`: the reference's and the target's states after the step, for the per-path
    judgement of a divergence."""
    atype = action.get("type") if isinstance(action, dict) else None
    atype = atype if isinstance(atype, str) else ""
    out = []
    for v in violations:
        if (
            v.invariant == DIVERGENCE and v.severity != "known" and isinstance(expected, dict)
            and isinstance(observed, dict) and baseline.accepts_any(kind, atype, DIVERGENCE)
        ):
            lines = difference_lines(atype, expected, observed)
            entry, left = baseline.split(kind, atype, DIVERGENCE, lines) if lines else (None, lines)
            if entry is not None:
                if not left:
                    v = Violation(v.invariant, "known", f"{v.message} {entry.tag}")
                else:
                    v = Violation(v.invariant, v.severity, f"{atype}: " + "; ".join(x[len(atype) + 2 :] for x in left[:3]))
        out.append(v)
    return baseline.classify(kind, atype, out)


def difference_lines(atype: str, expected: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """`<type>: <path>: reference=… target=…` for each path where the states differ (as INV-D01
    compares them: a `null`-valued key counts as absent), worded as the divergence message; past
    `MAX_DIFFERENCES`, one line saying there are more (which only an entry without a `message`
    pattern accepts)."""
    out = []
    for p, a, b in diff_paths(expected, observed, null_is_absent=True):
        if len(out) >= MAX_DIFFERENCES:
            out.append(f"{atype}: more than {MAX_DIFFERENCES} differences")
            break
        out.append(f"{atype}: {fmt_path(p)}: reference={render(a, 80)} target={render(b, 80)}")
    return out


def accepted_divergence(raw: list[Violation], judged: list[Violation], baseline: Baseline | None) -> str | None:
    """The tag of the entry that turned the step's failing divergence into an accepted one;
    None when there was none or it still fails."""
    if baseline is None or any(v.invariant == DIVERGENCE and v.severity != "known" for v in judged):
        return None
    for before, after in zip(raw, judged, strict=True):
        if before.invariant == DIVERGENCE and before.severity != "known" and after.severity == "known":
            entry = baseline.entry_for(after.message)
            return entry.tag if entry is not None else None
    return None


def follows_from_accepted(judged: list[Violation], tag: str, reference_step: Step) -> list[Violation]:
    """`judged` with each failing per-step check that the reference model does not show on
    `reference_step` (the same step from the reference's state) turned `known` under `tag`:
    with the step's state accepted, it follows from an accepted difference. Probe checks (they
    call the target again and can show what the state does not) and target failures stay."""
    failing = [v for v in judged if v.severity != "known" and _step_check(v.invariant)]
    if not failing:
        return judged
    on_model = {v.invariant for v in check_step(reference_step, probes=False, only={v.invariant for v in failing})}
    return [
        Violation(v.invariant, "known", f"{v.message} {tag} (follows from the accepted difference)")
        if v in failing and v.invariant not in on_model
        else v
        for v in judged
    ]


def _step_check(invariant: str) -> bool:
    """A catalogue invariant checked per step from the states alone (not a probe, not the
    divergence itself, not a target failure)."""
    inv = REGISTRY.get(invariant)
    return inv is not None and inv.check is not None and not inv.probe and invariant != DIVERGENCE
