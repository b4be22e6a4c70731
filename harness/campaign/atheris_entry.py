"""The fuzz machine as a libFuzzer-compatible entry point (Hypothesis `fuzz_one_input`).

    python -m harness.campaign.atheris_entry [libFuzzer flags, e.g. -runs=200 -max_len=4096 CORPUS_DIR]

Atheris (optional: `pip install 'ahp-fuzz[atheris]'`) feeds bytes; Hypothesis turns each buffer
into one run of the differential state machine (a state kind, an initial state, a sequence of
state-aware and adversarial actions) against the target. A broken invariant is saved as a JSON
finding (shrunk for a few seconds, first writer wins) in `AHP_FUZZ_FINDINGS` (default
`./ahp-fuzz-findings`) and then re-raised, so libFuzzer records the crashing input too. The JSON
finding is the record: it replays without the bytes (`ahp-fuzz replay`).

Environment: `AHP_FUZZ_KINDS` (comma-separated state kinds, default all seven; ClusterFuzzLite
builds one fuzzer per kind), `AHP_FUZZ_TARGET` (default `reference`), `AHP_FUZZ_PROFILE`
(default `0.7.0`), `AHP_FUZZ_FINDINGS`, `AHP_FUZZ_MAX_STEPS` (default 20).

With Atheris present, the reference model's modules are instrumented, so libFuzzer's coverage
feedback sees the reducers' branches. `one_input(data)` works without Atheris too (tests).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # instrument the reference model for libFuzzer's coverage feedback, when Atheris is here
    import atheris

    with atheris.instrument_imports(include=["harness.reference"]):
        import harness.reference  # noqa: F401
except ImportError:  # pragma: no cover - exercised when atheris is absent
    atheris = None

from hypothesis import HealthCheck, Verbosity, settings
from hypothesis.stateful import get_state_machine_test

from harness.corpus.finding import Finding
from harness.engine.machine import FindingFailure, MachineConfig, Recorder, build_machine
from harness.engine.run import DEFAULT_KINDS
from harness.engine.shrink import TraceShrinker
from harness.invariants.registry import REGISTRY
from harness.reference import Model, Profile
from harness.targets.base import open_target

from .findings import save_once


def build(
    kinds: tuple[str, ...] = DEFAULT_KINDS,
    target_spec: str = "reference",
    profile_name: str = "0.7.0",
    findings_dir: Path = Path("ahp-fuzz-findings"),
    max_steps: int = 20,
    shrink_budget_s: float = 3.0,
) -> Callable[[bytes], None]:
    """A `bytes -> None` function: one machine run per buffer; raises on a finding."""
    profile = Profile.named(profile_name)
    target = open_target(target_spec, profile=profile)
    is_model = target_spec.strip() == "reference"
    recorder = Recorder()
    machine = build_machine(MachineConfig(
        model=Model(profile), target=target, target_is_model=is_model, kinds=kinds, recorder=recorder,
    ))
    test: Any = get_state_machine_test(machine, settings=settings(
        database=None, deadline=None, stateful_step_count=max_steps, verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
    ))
    fuzz = test.hypothesis.fuzz_one_input

    def one_input(data: bytes) -> None:
        try:
            fuzz(data)
        except FindingFailure as failure:
            finding = _finding(failure, target_spec, profile.label)
            shrunk = TraceShrinker(target, target_is_model=is_model, budget_s=shrink_budget_s).shrink(finding)
            path, written = save_once(findings_dir, shrunk)
            print(f"ahp-fuzz: finding {shrunk.invariant} on {shrunk.kind} "
                  f"{'saved to' if written else 'already in'} {path}", file=sys.stderr)
            raise

    return one_input


def _finding(failure: FindingFailure, target: str, profile: str) -> Finding:
    v, trace = failure.violation, failure.trace
    inv = REGISTRY.get(v.invariant)
    return Finding(
        invariant=v.invariant, severity=v.severity,
        title=inv.title if inv else v.invariant.replace("-", " ").lower(), message=v.message,
        profile=profile, target=target, kind=trace.kind, initial=trace.initial, steps=list(trace.steps),
        failing_step=len(trace.steps) - 1, expected=failure.result.expected,
        observed=failure.result.observed if failure.result.observed is not None else failure.result.error,
        known_issue=inv.known_issue if inv else None, extra={"engine": "libFuzzer"},
    )


def from_env() -> Callable[[bytes], None]:
    kinds = tuple(k.strip() for k in os.environ.get("AHP_FUZZ_KINDS", "").split(",") if k.strip())
    return build(
        kinds=kinds or DEFAULT_KINDS,
        target_spec=os.environ.get("AHP_FUZZ_TARGET", "reference"),
        profile_name=os.environ.get("AHP_FUZZ_PROFILE", "0.7.0"),
        findings_dir=Path(os.environ.get("AHP_FUZZ_FINDINGS", "ahp-fuzz-findings")),
        max_steps=int(os.environ.get("AHP_FUZZ_MAX_STEPS", "20")),
    )


def main(argv: list[str] | None = None) -> int:
    if atheris is None:
        print("ahp-fuzz: atheris is not installed (pip install 'ahp-fuzz[atheris]')", file=sys.stderr)
        return 2
    one_input = from_env()
    atheris.Setup([sys.argv[0], *(argv if argv is not None else sys.argv[1:])], one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
