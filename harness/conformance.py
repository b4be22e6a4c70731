"""`ahp-fuzz conformance`: run a spec directory's fixtures against the reference model.

Reducer fixtures fold their actions from `initial` with the model (clock fixed at 9999 ms,
JSON null read as absent) and compare with `expected`. Round-trip fixtures pass the wire input
through the model's untyped JSON codec and compare key-presence-sensitively with the canonical
output (group A) or the preserved output (group B: an untyped path keeps unmodelled keys, as the
TypeScript path does).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.diff import json_diff
from harness.reference import MalformedAction, Model, Profile, codec
from harness.spec.specdir import (
    ReducerFixture,
    RoundTripFixture,
    SpecDir,
    SpecDirError,
    strip_nulls,
)
from harness.spec.versions import format_version

FIXTURE_NOW_MS = 9999


@dataclass
class Result:
    family: str  # "reducer:<kind>" or "round-trip"
    name: str
    passed: bool
    problems: list[str] = field(default_factory=list)


def profile_for(spec: SpecDir, version: str | None = None) -> tuple[Profile, str]:
    """The reducer profile a spec directory's fixtures are written for, and why.

    `--version` wins. Otherwise the CHANGELOG decides: the newest released version; if a newer
    version is listed as Unreleased, the folder is main after that release and carries the
    reducer rules queued for it. The only such rule known (REDUCERS.md §7b row 10, shipped in
    0.8.0) is that `toolClientExecution` entries do not raise InputNeeded.
    """
    if version is not None:
        return Profile.named(version), f"--version {version}"
    release = spec.release
    if release.released is None:
        raise SpecDirError(
            f"{spec.path}: no CHANGELOG.md to tell the protocol version; pass --version (e.g. 0.8.0)"
        )
    base = Profile.for_version(release.released)
    if release.pending is not None and release.pending >= (0, 8, 0) > release.released:
        return (
            Profile(version=base.version, client_execution_blocks=False),
            f"CHANGELOG: {format_version(release.released)} released, "
            f"{format_version(release.pending)} pending — main after the release, so the "
            "0.8.0 InputNeeded rule (§7b row 10) is on",
        )
    return base, f"CHANGELOG: {format_version(release.released)}"


def run_reducer_fixture(fx: ReducerFixture, model: Model) -> Result:
    state: dict[str, Any] = fx.initial
    try:
        for action in fx.actions:
            state = model.reduce(fx.kind, state, action, FIXTURE_NOW_MS)
    except (MalformedAction, ValueError) as e:
        return Result(f"reducer:{fx.kind}", fx.name, False, [f"raised {type(e).__name__}: {e}"])
    problems = json_diff(fx.expected, strip_nulls(state))
    return Result(f"reducer:{fx.kind}", fx.name, not problems, problems)


def run_round_trip_fixture(fx: RoundTripFixture) -> Result:
    wire = json.dumps(fx.input)
    try:
        output = codec.decode(codec.encode(codec.decode(wire)))
    except codec.WireDecodeError as e:
        return Result("round-trip", fx.name, False, [f"decode failed: {e}"])
    target = fx.preserved if fx.group == "B" else fx.canonical
    if target is None:
        return Result("round-trip", fx.name, False, ["group B fixture without preservedOutput"])
    problems = json_diff(target, output)
    if _types_differ(target, output):
        problems.append("$: a value changed JSON type (e.g. integer became float)")
    return Result("round-trip", fx.name, not problems, problems)


def _types_differ(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return True
    if isinstance(a, dict):
        return any(k in b and _types_differ(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return any(_types_differ(x, y) for x, y in zip(a, b, strict=False))
    return False


def run(spec: SpecDir, profile: Profile) -> list[Result]:
    model = Model(profile)
    results = [run_reducer_fixture(fx, model) for fx in spec.reducer_fixtures()]
    results += [run_round_trip_fixture(fx) for fx in spec.round_trip_fixtures()]
    return results


def _print_report(results: list[Result], header: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps([r.__dict__ for r in results], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(header)
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in results:
        total[r.family] += 1
        passed[r.family] += r.passed
    table = Table(title="conformance")
    table.add_column("fixtures")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    for fam in sorted(total):
        failed = total[fam] - passed[fam]
        table.add_row(fam, str(passed[fam]), f"[red]{failed}[/red]" if failed else "0")
    table.add_row("[b]total[/b]", f"[b]{sum(passed.values())}[/b]", str(sum(total.values()) - sum(passed.values())))
    console.print(table)
    for r in results:
        if not r.passed:
            console.print(f"[red]FAIL[/red] {r.family} {r.name}", highlight=False)
            for line in r.problems:
                console.print(f"    {line}", highlight=False, markup=False)
