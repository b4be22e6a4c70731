"""The `pytest11` plugin other projects' CI uses: `pytest -m fuzz --ahp-target T`.

Given `--ahp-target`, it adds ordinary pytest items, each marked `fuzz`, with stable names:

* `ahp-fuzz::conformance[<fixture>]` — every upstream reducer and round-trip fixture of the spec
  directory (`--ahp-spec` / `$AHP_SPEC_DIR`) through the target (`ahp-fuzz conformance --target`);
* `ahp-fuzz::fuzz[<kind>]` — a seeded, bounded fuzz run per state kind (`--ahp-seed`,
  `--ahp-chunks` × `--ahp-examples` sequences, `--ahp-budget` as a hard ceiling); a failure lists each finding's summary and
  the `ahp-fuzz replay …` command that reproduces it (finding files under `--ahp-out`);
* `ahp-fuzz::corpus[<file>]` — each finding of the project's own corpus folder (`--ahp-corpus`)
  replayed on the target: a `known` finding must still reproduce, any other must not.

The items judge a target exactly as `ahp-fuzz run` and `ahp-fuzz replay` do: the same spec folder
(`--ahp-spec`, else a `ts:` target's checkout, else `$AHP_SPEC_DIR`), the same profile rule
(docs/profiles.md), the same schema checks (the action schema for the valid lane, INV-007 and
INV-007.published with the folder's published schemas; a corpus finding replays with the
switches it records), and the same finding files, whose replay command is the one a failure
prints. `--ahp-baseline` applies a target baseline (docs/baselines.md). Hypothesis' own files
go under `--ahp-out` (`.ahp-fuzz/hypothesis/`), never a `.hypothesis/` in the project. Without
`--ahp-target` it adds nothing, so a project's ordinary test run is untouched.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_OPTIONS = (
    ("--ahp-target", None, "target to fuzz: reference | adapter:<command line> | ts:<checkout> | js:<module>"),
    ("--ahp-spec", None, "spec directory for conformance and the schema (default: $AHP_SPEC_DIR)"),
    ("--ahp-profile", None, "profile to model (default: the profile rule, docs/profiles.md)"),
    ("--ahp-budget", "60s", "hard time ceiling per fuzz item (default 60s)"),
    ("--ahp-chunks", "2", "seeded chunks per state kind (default 2)"),
    ("--ahp-examples", "25", "sequences per chunk (default 25)"),
    ("--ahp-seed", "0", "run seed (default 0: the same steps every run)"),
    ("--ahp-kinds", None, "comma-separated state kinds to fuzz (default: all seven)"),
    ("--ahp-corpus", None, "a folder of finding files to replay on the target"),
    ("--ahp-baseline", None, "the target's accepted differences (docs/baselines.md)"),
    ("--ahp-out", ".ahp-fuzz", "folder for finding files (default .ahp-fuzz)"),
    ("--ahp-timeout", "5", "per-step target timeout in seconds (default 5)"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ahp-fuzz", "Agent Host Protocol fuzzing (ahp-fuzz)")
    for flag, default, text in _OPTIONS:
        group.addoption(flag, default=default, help=text)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: bounded, deterministic fuzz tier (pytest -m fuzz)")
    from harness.spec.specdir import pin_env

    # A relative $AHP_SPEC_DIR means the folder pytest was started in, for the whole session: a
    # test that changes directory, or starts a process elsewhere, still sees that folder.
    pin_env(config.invocation_params.dir)
    if config.getoption("ahp_target"):
        from harness.hypothesis_home import use_storage

        # Hypothesis' Unicode tables under the plugin's own folder, not a `.hypothesis/` in the
        # project (a HYPOTHESIS_STORAGE_DIRECTORY the user set wins; harness/hypothesis_home.py).
        out = _path_option(config, "ahp_out") or Path(config.invocation_params.dir) / ".ahp-fuzz"
        use_storage(out / "hypothesis")


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    """After "collected N items": how the items judge, as `run` says it — target, spec folder,
    profile, and the checks that are off."""
    run = config.stash.get(_RUN, None)
    if run is None:
        return []
    from harness.cli._profiles import checks_off_notices

    where = f"spec folder {run.spec.path}" if run.spec is not None else "no spec folder"
    lines = [f"ahp-fuzz: target {run.target_spec}, {where}, profile {run.choice.profile.label} ({run.choice.why})"]
    lines += [f"ahp-fuzz: note: {n}" for n in checks_off_notices(run.spec)]
    return lines


def _path_option(config: pytest.Config, name: str) -> Path | None:
    """A path option, resolved against the folder pytest was started in (None: not given)."""
    value = config.getoption(name)
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def replay_program() -> str:
    """ahp-fuzz as a replay line spells it: the console script beside this interpreter, by its
    full path (a CI log's line works without the virtualenv on PATH), else this interpreter's
    `-m harness.cli` (it has ahp-fuzz: it loaded this plugin)."""
    script = Path(sys.executable).with_name("ahp-fuzz")
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script.absolute()))
    return f"{shlex.quote(sys.executable)} -m harness.cli"


_RUN = pytest.StashKey["_Run"]()


class AhpFailure(Exception):
    """An ahp-fuzz item failed; the text is what pytest shows (no traceback)."""


class _Run:
    """What the items of one pytest session share: options, the open target, the profile."""

    def __init__(self, config: pytest.Config) -> None:
        from harness.cli._profiles import spec_or_usage
        from harness.errors import UsageError
        from harness.reference.profile_rule import choose_profile

        opt = config.getoption
        self.target_spec: str = opt("ahp_target")
        spec = _path_option(config, "ahp_spec")
        # Usage errors, not INTERNALERROR tracebacks (pytest exits 4 and says why).
        try:  # --ahp-spec, else a ts: target's checkout, else $AHP_SPEC_DIR (as the command line)
            self.spec = spec_or_usage(str(spec) if spec is not None else None, target=self.target_spec)
        except UsageError as e:
            raise pytest.UsageError(f"{'--ahp-spec' if spec is not None else 'spec folder'}: {e}") from e
        try:
            self.choice = choose_profile(opt("ahp_profile"), spec=self.spec, target=self.target_spec)
        except ValueError as e:
            raise pytest.UsageError(f"--ahp-profile: {e}") from e
        self.timeout = float(opt("ahp_timeout"))
        self.out = _path_option(config, "ahp_out") or Path(config.invocation_params.dir) / ".ahp-fuzz"
        self.corpus = _path_option(config, "ahp_corpus")
        self._target: Any = None
        self.notes: list[str] = []
        baseline = _path_option(config, "ahp_baseline")
        if baseline:
            from harness.corpus.baseline import BaselineError, load_baseline

            try:
                self.baseline: Any = load_baseline(baseline)
            except BaselineError as e:  # a usage error, not an INTERNALERROR traceback
                raise pytest.UsageError(f"--ahp-baseline: {e}") from e
        else:
            self.baseline = None

    @property
    def is_model(self) -> bool:
        return self.target_spec.strip() == "reference"

    def target(self) -> Any:
        if self._target is None:
            from harness.reference.profile_rule import choose_profile, mismatch
            from harness.targets.base import open_target

            self._target = open_target(self.target_spec, profile=self.choice.profile, timeout_s=self.timeout)
            announcement = getattr(self._target, "announcement", None)
            if self.choice.source == "pinned" and announcement:
                self.choice = choose_profile(target=self.target_spec, announcement=announcement)
            note = mismatch(self.choice, announcement)
            if note:
                self.notes.append(note)
        return self._target

    def schema(self) -> Any:
        from harness.cli._profiles import schema_of

        return schema_of(self.spec)  # as `run`: the valid lane's payload validator

    def close(self) -> None:
        if self._target is not None:
            self._target.close()
            self._target = None


class AhpItem(pytest.Item):
    def __init__(self, *, run: _Run, what: str, param: str, job: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run_state = run
        self.what = what
        self.param = param
        self.job = job
        self.add_marker("fuzz")

    def runtest(self) -> None:
        getattr(self, f"_{self.what}")()

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, AhpFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path(self.run_state.target_spec.split()[0]), 0, f"ahp-fuzz {self.what} {self.param}"

    # -- conformance ---------------------------------------------------------------------------

    def _conformance(self) -> None:
        from harness import conformance

        fx = self.job
        if fx is None:
            pytest.skip("no spec directory: pass --ahp-spec DIR or set AHP_SPEC_DIR")
        target = self.run_state.target()
        if hasattr(fx, "kind"):
            result = conformance.run_reducer_fixture_on(fx, target)
        else:
            fn = conformance.target_codec(target)
            if fn is None and hasattr(target, "announcement"):
                pytest.skip('the target does not announce "roundTrip": true (docs/adapters.md)')
            result = conformance.run_round_trip_fixture(fx, fn)
        if not result.passed:
            raise AhpFailure(
                f"fixture {fx.name} ({result.family}) fails on {self.run_state.target_spec} "
                f"(profile {self.run_state.choice.profile.label}):\n  " + "\n  ".join(result.problems)
            )

    # -- fuzz ----------------------------------------------------------------------------------

    def _fuzz(self) -> None:
        from harness.cli._common import parse_duration
        from harness.cli._profiles import run_switches
        from harness.corpus.finding import portable_target
        from harness.engine.events import EventBus
        from harness.engine.run import RunConfig, run_campaign
        from harness.invariants.published_schema import judged_with
        from harness.report.writers import FindingWriter

        cfg = self.config.getoption
        run = self.run_state
        target = run.target()
        program = replay_program()
        # The finding files `run` writes: their `replay` is the command a failure prints.
        written = FindingWriter(run.out / "findings", program=program)

        config = RunConfig(
            target=target,
            target_spec=portable_target(run.target_spec),
            target_is_model=run.is_model,
            profile=run.choice.profile,
            seed=int(cfg("ahp_seed")),
            budget_s=parse_duration(cfg("ahp_budget")),
            max_chunks=int(cfg("ahp_chunks")),
            chunk_examples=int(cfg("ahp_examples")),
            kinds=(self.param,),
            probe_every=1 if run.is_model else 25,
            schema=run.schema(),
            baseline=run.baseline,
            verdict=run_switches(run.spec),  # recorded in each finding, as `run` records them
            # The Hypothesis lane (every step a draw: more found per sequence in a tier bounded
            # by sequences): `run --lane hypothesis` with the same seed, chunks and kind draws
            # the same steps.
            lane="hypothesis",
        )
        with judged_with(run.spec):  # INV-007 and INV-007.published: the spec folder's schemas, as in `run`
            summary = run_campaign(config, EventBus(written))
        if summary.findings:
            lines = [
                f"{len(summary.findings)} finding(s) on {self.param} "
                f"(target {run.target_spec}, profile {run.choice.profile.label}, seed {config.seed}):"
            ]
            lines += [f"  note: {n}" for n in run.notes]
            for f in summary.findings:
                lines.append(f"  {f.invariant} [{f.severity}] {f.title}: {f.message}")
                lines.append(f"    replay: {f.replay_command(written.paths.get(f.signature), program)}")
            raise AhpFailure("\n".join(lines))

    # -- corpus --------------------------------------------------------------------------------

    def _corpus(self) -> None:
        from harness.cli._profiles import replay_switches
        from harness.cli.replay import untyped_step
        from harness.corpus.load import load_finding
        from harness.engine.replay import replay
        from harness.errors import UsageError
        from harness.invariants.published_schema import judged_with

        run = self.run_state
        finding = load_finding(self.job)
        untyped = untyped_step(finding)  # as `ahp-fuzz replay`: never a silent "does not reproduce"
        if untyped is not None:
            raise AhpFailure(f"{self.job}: {untyped}")
        try:  # the switches recorded in the finding, as `ahp-fuzz replay` judges it
            schema, published, _ = replay_switches(finding, run.spec)
        except UsageError as e:
            raise AhpFailure(f"{self.job}: {e}") from e
        with judged_with(published):
            result = replay(
                finding, run.target(), target_is_model=run.is_model, schema=schema,
                baseline=run.baseline, profile=run.choice.profile if self.config.getoption("ahp_profile") else None,
            )
        command = f"{replay_program()} replay {shlex.quote(str(self.job))} --target {shlex.quote(run.target_spec)}"
        if finding.severity == "known" and not result.reproduced:
            raise AhpFailure(f"stale known finding {self.job}: {result.summary(finding)}\n  replay: {command}")
        if finding.severity != "known" and result.reproduced:
            raise AhpFailure(
                f"{self.job}: {finding.invariant} [{finding.severity}] {finding.message}\n"
                f"  {result.summary(finding)}\n  replay: {command}"
            )


def _items(session: pytest.Session, run: _Run) -> Iterator[AhpItem]:
    from harness.engine.run import DEFAULT_KINDS

    def item(what: str, param: str, job: Any = None) -> AhpItem:
        name = f"{what}[{param}]"
        return AhpItem.from_parent(session, name=name, nodeid=f"ahp-fuzz::{name}", run=run, what=what, param=param, job=job)

    if run.spec is None:
        yield item("conformance", "no-spec-dir")
    else:
        for fx in run.spec.reducer_fixtures():
            yield item("conformance", f"reducer:{fx.kind}:{fx.name}", fx)
        for rt in run.spec.round_trip_fixtures():
            yield item("conformance", f"round-trip:{rt.name}", rt)
    kinds = session.config.getoption("ahp_kinds")
    for kind in [k.strip() for k in kinds.split(",") if k.strip()] if kinds else DEFAULT_KINDS:
        yield item("fuzz", kind)
    corpus = run.corpus
    if corpus is not None:
        for path in sorted(corpus.rglob("*.json")):
            yield item("corpus", path.relative_to(corpus).as_posix(), str(path))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("ahp_target"):
        return
    run = _Run(config)
    config.stash[_RUN] = run
    config.add_cleanup(run.close)
    added = list(_items(session, run))
    items.extend(added)
    # Items made here were not part of any collector's report: report them as collected, so that
    # the header says "collected N items" and `--collect-only` counts them like any test.
    config.hook.pytest_collectreport(report=pytest.CollectReport("ahp-fuzz", "passed", None, added))
