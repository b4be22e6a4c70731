"""A finding as an upstream reducer conformance fixture (REDUCERS.md §7).

The fixture format every language's fixture runner reads: `{description, reducer, initial,
actions, expected}`, actions applied left to right with the clock fixed at 9999 ms and JSON
`null` read as absent. A finding becomes one by keeping its valid-lane steps up to the failing
one (probes are stateless: they are not part of the state's history) and folding them with the
reference model under the finding's profile: `expected` is the state the reference — and so the
upstream reducers — produce. A target with the finding's defect fails the fixture; the
reference passes it.

A finding about a known upstream contradiction (REDUCERS.md §11) exports all the same, marked:
the `ahpFuzz.knownContradiction` block names the issue and quotes what the spec requires, and
the description starts with `KNOWN UPSTREAM CONTRADICTION`. Its `expected` is still the
upstream behaviour (which the spec does not pin to one state), so upstream's runners pass it
until upstream changes the behaviour, at which point the fixture fails and is revisited — the
same contract as `corpora/known/`.

Extra metadata lives under `ahpFuzz` (fixture runners ignore unknown keys).
"""

from __future__ import annotations

import re
from typing import Any

from harness.reference import MalformedAction, Model, Profile
from harness.spec.specdir import strip_nulls

from .finding import Finding

FIXTURE_NOW_MS = 9999
FIXTURE_FORMAT = "ahp-fuzz/exported-fixture"


class ExportError(ValueError):
    """The finding cannot be written as a reducer fixture (nothing to fold, or a step the
    model refuses)."""


def fixture_from_finding(finding: Finding, *, statement: str | None = None) -> dict[str, Any]:
    """The reducer fixture for `finding` (see the module docstring)."""
    profile = Profile.named(finding.profile)
    model = Model(profile, check_payloads=True)
    last = finding.failing_step if 0 <= finding.failing_step < len(finding.steps) else len(finding.steps) - 1
    actions = [strip_nulls(s.action) for s in finding.steps[: last + 1] if not s.probe]
    if not actions:
        raise ExportError(
            f"{finding.file_name}: the trace has no valid-lane step (only probes): a reducer fixture "
            "folds state-changing actions; a probe finding has nothing to fold"
        )
    initial = strip_nulls(finding.initial)
    state = initial
    for i, action in enumerate(actions):
        try:
            state = model.reduce(finding.kind, state, action, FIXTURE_NOW_MS)
        except MalformedAction as e:
            raise ExportError(f"{finding.file_name}: action {i} is not a valid payload: {e}") from e
    text = f"{finding.invariant} [{finding.severity}] {finding.title}: {finding.message}"
    meta: dict[str, Any] = {
        "format": FIXTURE_FORMAT,
        "formatVersion": 1,
        "finding": finding.signature,
        "invariant": finding.invariant,
        "severity": finding.severity,
        "profile": profile.label,
        "foundOn": finding.target,
    }
    if finding.severity == "known" or finding.known_issue:
        meta["knownContradiction"] = {
            "issue": finding.known_issue,
            "specRequires": statement or finding.title,
            "expectedIs": "the upstream reducers' behaviour (the reference model); the spec "
            "requires otherwise — see specRequires",
        }
        text = f"KNOWN UPSTREAM CONTRADICTION ({finding.known_issue}): {text}"
    return {
        "description": f"ahp-fuzz finding {finding.signature} (profile {profile.label}): {text}",
        "reducer": finding.kind,
        "initial": initial,
        "actions": actions,
        "expected": strip_nulls(state),
        "ahpFuzz": meta,
    }


def fixture_file_name(finding: Finding) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", f"{finding.invariant}-{finding.kind}".lower()).strip("-")
    return f"ahp-fuzz-{slug}-{finding.signature}.json"
