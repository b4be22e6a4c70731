"""The `pytest11` plugin other projects' CI uses: `pytest -m fuzz --ahp-target T`.

Given `--ahp-target`, it adds ordinary pytest items, each marked `fuzz`, with stable names:

* `ahp-fuzz::conformance[<fixture>]` — every upstream reducer and round-trip fixture of the spec
  directory (`--ahp-spec` / `$AHP_SPEC_DIR`) through the target (`ahp-fuzz conformance --target`);
* `ahp-fuzz::fuzz[<kind>]` — a seeded, bounded fuzz run per state kind (`--ahp-seed`,
  `--ahp-chunks` × `--ahp-examples` sequences, `--ahp-budget` as a hard ceiling); a failure lists each finding's summary and
  the `ahp-fuzz replay …` command that reproduces it (finding files under `--ahp-out`);
* `ahp-fuzz::corpus[<file>]` — each finding of the project's own corpus folder (`--ahp-corpus`)
  replayed on the target: a `known` finding must still reproduce, any other must not.

The profile follows the one rule of the command line (docs/profiles.md); `--ahp-baseline` applies
a target baseline (docs/baselines.md). Without `--ahp-target` it adds nothing, so a project's
ordinary test run is untouched.
"""

from __future__ import annotations

import json
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
        if self.spec is None:
            return None
        from harness.spec.action_schema import ActionSchema

        return ActionSchema.from_spec(self.spec)  # callable: its `problem`

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
        from harness.corpus.finding import portable_target
        from harness.engine.events import EventBus, FindingFound
        from harness.engine.run import RunConfig, run_campaign

        cfg = self.config.getoption
        run = self.run_state
        target = run.target()
        folder = run.out / "findings"
        written: dict[str, Path] = {}

        def save(event: Any) -> None:
            if isinstance(event, FindingFound):
                folder.mkdir(parents=True, exist_ok=True)
                f = event.finding
                path = folder / f.file_name
                path.write_text(json.dumps(f.to_json(path), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
                written[f.signature] = path

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
        )
        summary = run_campaign(config, EventBus(save))
        if summary.findings:
            lines = [
                f"{len(summary.findings)} finding(s) on {self.param} "
                f"(target {run.target_spec}, profile {run.choice.profile.label}, seed {config.seed}):"
            ]
            lines += [f"  note: {n}" for n in run.notes]
            for f in summary.findings:
                lines.append(f"  {f.invariant} [{f.severity}] {f.title}: {f.message}")
                lines.append(f"    replay: {f.replay_command(written.get(f.signature), replay_program())}")
            raise AhpFailure("\n".join(lines))

    # -- corpus --------------------------------------------------------------------------------

    def _corpus(self) -> None:
        from harness.corpus.load import load_finding
        from harness.engine.replay import replay

        run = self.run_state
        finding = load_finding(self.job)
        result = replay(
            finding, run.target(), target_is_model=run.is_model, schema=run.schema(),
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
    config.add_cleanup(run.close)
    added = list(_items(session, run))
    items.extend(added)
    # Items made here were not part of any collector's report: report them as collected, so that
    # the header says "collected N items" and `--collect-only` counts them like any test.
    config.hook.pytest_collectreport(report=pytest.CollectReport("ahp-fuzz", "passed", None, added))
