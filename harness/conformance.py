"""`ahp-fuzz conformance`: run a spec directory's fixtures against the reference model or a target.

Reducer fixtures fold their actions from `initial` (clock fixed at 9999 ms, JSON null read as
absent) and compare with `expected`, key presence included. On the model the fold uses the
model's payload checks (a fixture action it refuses as malformed fails the fixture); on a
target it goes through a target session, as a fuzz run does.

Round-trip fixtures pass the wire input through a codec and compare key-presence-sensitively
with the canonical output (group A), or with the canonical or the preserved output (group B: a
typed decoder gives the canonical form, an untyped path keeps unmodelled keys). The model uses
its untyped JSON codec (preserved output for group B). A target is asked with the adapter
protocol's optional `roundTrip` request when its announcement offers it (docs/adapters.md);
otherwise its round trips are skipped, with a note saying so.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.diff import json_diff
from harness.reference import MalformedAction, Model, Profile, codec
from harness.reference.profile_rule import choose_profile
from harness.spec.specdir import (
    ReducerFixture,
    RoundTripFixture,
    SpecDir,
    SpecDirError,
    strip_nulls,
)

FIXTURE_NOW_MS = 9999


@dataclass
class Result:
    family: str  # "reducer:<kind>" or "round-trip"
    name: str
    passed: bool
    problems: list[str] = field(default_factory=list)


def profile_for(spec: SpecDir, version: str | None = None) -> tuple[Profile, str]:
    """The reducer profile a spec directory's fixtures are written for, and why — the profile
    rule (`harness.reference.profile_rule`) on the folder alone. Without a CHANGELOG and
    without `version` there is nothing to go on: `SpecDirError`."""
    if version is None and spec.release.released is None:
        raise SpecDirError(
            f"{spec.path}: no CHANGELOG.md to tell the protocol version; pass --profile (e.g. 0.8.0)"
        )
    choice = choose_profile(version, spec=spec)
    return choice.profile, choice.why


def run_reducer_fixture(fx: ReducerFixture, model: Model) -> Result:
    state: dict[str, Any] = fx.initial
    try:
        for action in fx.actions:
            state = model.reduce(fx.kind, state, action, FIXTURE_NOW_MS)
    except (MalformedAction, ValueError) as e:
        return Result(f"reducer:{fx.kind}", fx.name, False, [f"raised {type(e).__name__}: {e}"])
    problems = json_diff(fx.expected, strip_nulls(state))
    return Result(f"reducer:{fx.kind}", fx.name, not problems, problems)


def run_reducer_fixture_on(fx: ReducerFixture, target: Any) -> Result:
    """One reducer fixture through a target session (any `Target`)."""
    from harness.targets.base import TargetError

    family = f"reducer:{fx.kind}"
    try:
        session = target.session(fx.kind, fx.initial)
    except TargetError as e:
        return Result(family, fx.name, False, [f"the target could not load the initial state: {e}"])
    try:
        state: Any = fx.initial
        for i, action in enumerate(fx.actions):
            try:
                state = session.step(action, FIXTURE_NOW_MS)
            except TargetError as e:
                return Result(family, fx.name, False, [f"action {i} ({action.get('type')}): the target answered an error: {e}"])
    finally:
        session.close()
    problems = json_diff(fx.expected, strip_nulls(state))
    return Result(family, fx.name, not problems, problems)


def run_round_trip_fixture(fx: RoundTripFixture, codec_fn: Callable[[str, str], str] | None = None) -> Result:
    """`codec_fn(type, wire text) -> wire text`; the model's untyped codec by default."""
    wire = json.dumps(fx.input)
    try:
        text = codec_fn(fx.type, wire) if codec_fn is not None else codec.encode(codec.decode(wire))
        output = codec.decode(text)
    except (codec.WireDecodeError, _RoundTripFailed) as e:
        return Result("round-trip", fx.name, False, [f"round trip failed: {e}"])
    if fx.group == "B" and fx.preserved is None:
        return Result("round-trip", fx.name, False, ["group B fixture without preservedOutput"])
    if codec_fn is None:
        targets = [fx.preserved if fx.group == "B" else fx.canonical]
    else:
        targets = [fx.canonical] + ([fx.preserved] if fx.group == "B" else [])
    best: list[str] = []
    for want in targets:
        problems = json_diff(want, output)
        changed = _type_change(want, output)
        if changed is not None:
            where, ta, tb = changed
            problems.append(f"{where}: a value changed JSON type ({ta} became {tb})")
        if not problems:
            return Result("round-trip", fx.name, True)
        best = best or problems
    return Result("round-trip", fx.name, False, best)


class _RoundTripFailed(Exception):
    pass


def _type_change(a: Any, b: Any, path: str = "$") -> tuple[str, str, str] | None:
    """(path, type before, type after) of the first value whose Python JSON type changed
    (`1` → `1.0`: integer became float), or None."""
    if type(a) is not type(b):
        return path, _type_name(a), _type_name(b)
    if isinstance(a, dict):
        for k, v in a.items():
            if k in b:
                found = _type_change(v, b[k], f"{path}.{k}")
                if found is not None:
                    return found
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _type_change(x, y, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _type_name(v: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "list", dict: "object"}
    return names.get(type(v), "null" if v is None else type(v).__name__)


def target_codec(target: Any) -> Callable[[str, str], str] | None:
    """The target's `roundTrip` request as a codec function, when its announcement offers it."""
    announcement = getattr(target, "announcement", None) or {}
    if announcement.get("roundTrip") is not True or not callable(getattr(target, "call", None)):
        return None
    from harness.targets.base import TargetError

    def fn(type_name: str, wire: str) -> str:
        try:
            reply = target.call({"op": "roundTrip", "type": type_name, "wire": wire})
        except TargetError as e:
            raise _RoundTripFailed(str(e)) from e
        if "error" in reply:
            raise _RoundTripFailed(f"error reply: {json.dumps(reply['error'])[:300]}")
        if not isinstance(reply.get("wire"), str):
            raise _RoundTripFailed(f"reply has no wire text: {json.dumps(reply)[:300]}")
        return str(reply["wire"])

    return fn


def run(
    spec: SpecDir | None,
    profile: Profile,
    target: Any = None,
    *,
    notes: list[str] | None = None,
    fixtures: list[ReducerFixture] | None = None,
) -> list[Result]:
    """Every fixture of `spec` (or just the reducer `fixtures` given, e.g. a folder written by
    `export-fixture`), on the model (`target` None) or through `target`. Lines worth telling
    the user (round trips skipped) are appended to `notes`.

    The fixtures are the reducers' reference behaviour: their payloads go to the model with its
    structural payload checks only, never judged by the spec's schema — some upstream fixtures
    use shapes their own folder's schema rejects (0.6.0: `ContentRef` file contents, object
    `changes.items`), and that disagreement is upstream's, not the reducer's."""
    reducers = fixtures if fixtures is not None else spec.reducer_fixtures() if spec else []
    trips = spec.round_trip_fixtures() if spec is not None and fixtures is None else []
    if target is None:
        model = Model(profile, check_payloads=True)
        results = [run_reducer_fixture(fx, model) for fx in reducers]
        results += [run_round_trip_fixture(fx) for fx in trips]
        return results
    results = [run_reducer_fixture_on(fx, target) for fx in reducers]
    if getattr(target, "model", None) is not None and not hasattr(target, "announcement"):
        results += [run_round_trip_fixture(fx) for fx in trips]  # the in-process model's codec
        return results
    fn = target_codec(target)
    if fn is None:
        if trips and notes is not None:
            notes.append(
                f"round trips: {len(trips)} fixture(s) skipped — the target does not announce "
                '"roundTrip": true (docs/adapters.md, "Round trips")'
            )
        return results
    results += [run_round_trip_fixture(fx, fn) for fx in trips]
    return results


def _print_report(results: list[Result], header: str, as_json: bool, notes: list[str] | None = None) -> None:
    if as_json:
        print(json.dumps([r.__dict__ for r in results], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)  # a log keeps each line whole, whatever the terminal width
    console.print(header, markup=False, highlight=False)
    for line in notes or []:
        console.print(line, markup=False, highlight=False)
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
