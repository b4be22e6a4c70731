"""What `run`, `replay` and `conformance` share about the spec folder, the profile rule and
target baselines (docs/profiles.md, docs/baselines.md), as usage errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from harness.errors import UsageError
from harness.reference.profile_rule import ProfileChoice, choose_profile, mismatch
from harness.spec.specdir import SpecDir, SpecDirCorrupt, SpecDirError


def add_options(p: argparse.ArgumentParser, *, baseline: bool = True) -> None:
    """`--spec`, `--profile` (and `--baseline`) with the same meaning in every command."""
    p.add_argument("--spec", metavar="DIR",
                   help="spec directory or AHP checkout (default: $AHP_SPEC_DIR): its CHANGELOG "
                   "chooses the profile, its action schema keeps the valid lane schema-valid")
    p.add_argument("--profile", metavar="P",
                   help="protocol version or named profile (0.6.0, 0.7.0, 0.7.0-main, 0.8.0, …); "
                   "default: the profile rule (docs/profiles.md)")
    if baseline:
        p.add_argument("--baseline", metavar="FILE",
                       help="the target's accepted differences (docs/baselines.md)")


def spec_or_usage(explicit: str | None, target: str | None = None) -> SpecDir | None:
    """The spec folder of a command: `--spec DIR`; else the checkout of a `ts:DIR` target (its
    schema, fixtures and CHANGELOG — the target's own data); else `$AHP_SPEC_DIR`; else None."""
    try:
        if explicit is None:
            checkout = checkout_of(target)
            if checkout is not None:
                return checkout
        return SpecDir.from_env(explicit)
    except SpecDirError as e:
        raise UsageError(str(e)) from e


def checkout_of(target: str | None) -> SpecDir | None:
    """The spec folder a `ts:DIR` target names (None: not a `ts:` target, or DIR holds neither
    `schema/` nor `types/test-cases/`). A checkout whose schemas or fixtures do not parse is
    `SpecDirCorrupt`: an error, not a folder quietly passed over."""
    if not target or not target.strip().startswith("ts:"):
        return None
    try:
        return SpecDir(target.strip()[3:])
    except SpecDirCorrupt:
        raise
    except SpecDirError:
        return None


def env_spec_or_usage() -> SpecDir | None:
    """`$AHP_SPEC_DIR`, loaded (and so validated) at start-up, as a usage error when it is not
    a sound spec folder — for commands such as `campaign` whose processes read it later."""
    try:
        return SpecDir.from_env()
    except SpecDirError as e:
        raise UsageError(f"AHP_SPEC_DIR: {e}") from e


def choose_or_usage(explicit: str | None, **sources: Any) -> ProfileChoice:
    try:
        return choose_profile(explicit, **sources)
    except ValueError as e:
        raise UsageError(str(e)) from e


def after_open(choice: ProfileChoice, target: Any, target_spec: str, out: TextIO | None = None) -> ProfileChoice:
    """With the target open: take the profile it announces when nothing else chose one, and
    print a line when it announces another profile than the one in use."""
    announcement = getattr(target, "announcement", None)
    if choice.source == "pinned" and announcement:
        try:
            choice = choose_profile(target=target_spec, announcement=announcement)
        except ValueError as e:  # an announced version without rules: a setup error (exit 2), not our crash
            raise UsageError(str(e)) from e
    note = mismatch(choice, announcement)
    print(f"profile: {choice.profile.label} ({choice.why})", file=out or sys.stderr)
    if note:
        print(note, file=out or sys.stderr)
    return choice


def schema_of(spec: SpecDir | None) -> Callable[[Any], str | None] | None:
    """The spec folder's action-schema validator (None without a spec folder or schema)."""
    if spec is None:
        return None
    from harness.spec.action_schema import ActionSchema

    return ActionSchema.from_spec(spec)  # callable: its `problem`; `wire_problem` for the valid lane


def baseline_or_usage(path: str | None) -> Any:
    if path is None:
        return None
    from harness.corpus.baseline import BaselineError, load_baseline

    try:
        return load_baseline(path)
    except BaselineError as e:
        raise UsageError(str(e)) from e


def report_baseline(baseline: Any, out: TextIO | None = None) -> None:
    """Each entry's match count; an entry that never matched is reported stale."""
    if baseline is None:
        return
    for line in baseline.summary():
        print(line, file=out or sys.stderr)


def checks_off_notices(spec: SpecDir | None) -> tuple[str, ...]:
    """The line a run prints once at its start when a spec folder's checks are off."""
    from harness.spec.verdict import checks_off

    line = checks_off(spec)
    return (line,) if line else ()


def run_switches(spec: SpecDir | None) -> Any:
    """The schema-derived switches a run with `spec` records in its findings."""
    from harness.spec.verdict import VerdictSwitches

    return VerdictSwitches.of_spec(spec)


def replay_switches(finding: Any, spec: SpecDir | None) -> tuple[Callable[[Any], str | None] | None, SpecDir | None, str]:
    """The payload schema and the published-schema spec folder (None: off) a replay of `finding`
    uses — exactly the switches recorded in it (`extra["verdict"]`; none recorded: both off),
    whatever `$AHP_SPEC_DIR` says — and a line saying so. A finding judged with a spec folder's
    schemas needs a folder of that version (`--spec`, a `ts:` checkout or `$AHP_SPEC_DIR`)."""
    from harness.spec.verdict import VerdictSwitches, spec_version

    try:
        switches = VerdictSwitches.of_finding(finding.extra)
    except ValueError as e:
        raise UsageError(f"{getattr(finding, 'file_name', 'finding')}: {e}") from e
    needed = switches.needed
    line = f"checks: {switches.describe()} (recorded in the finding)"
    if needed is None:
        return None, None, line
    if spec is None or spec_version(spec) != needed:
        have = f"the spec folder {spec.path} is {spec_version(spec)}" if spec is not None else "no spec folder is given"
        raise UsageError(
            f"the finding was judged with {switches.describe()}, and {have}: pass --spec DIR "
            f"naming a {needed} spec folder to replay it as it was judged"
        )
    return (schema_of(spec) if switches.payload_schema else None,
            spec if switches.published_schema else None, line)
