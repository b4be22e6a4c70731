"""`ahp-fuzz run`: fuzz a target against the reference model and the invariant catalogue.

Exit codes: 0 clean, 1 findings, 2 usage or setup error (nothing was fuzzed, or the target
could not be restarted and nothing was found), 3 internal error, 130 / 143 interrupted by
SIGINT / SIGTERM (report finalized as "interrupted", findings so far kept).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.errors import (
    EXIT_CLEAN,
    EXIT_FOUND,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
    RunStopped,
    UsageError,
)
from harness.spec.specdir import ENV_VAR as SPEC_ENV

from . import _profiles
from ._common import (
    add_out_arguments,
    duration_type,
    int_range,
    open_target_or_usage,
    prepare_out,
    program_name,
    record_verdict,
    seconds_type,
)

#: Targets that start a process: their start-up is bounded by the budget too.
_PROCESS_PREFIXES = ("adapter:", "ts:", "js:")

#: Live hosts a run starts or connects to: waiting for them is bounded by the budget too, and by
#: a host's own start-up timeout when the budget is longer (`targets.live.startup_wait`).
_STARTED_HOSTS = ("host-cmd:", "ws://", "wss://")

#: The run's clock (monotonic seconds): the budget is measured on it. Tests inject a fake one
#: to stage a slow start-up without depending on how fast the machine is.
CLOCK: Callable[[], float] = time.monotonic


def run_command(args: argparse.Namespace) -> int:
    from harness.engine.control import RunControl

    # The budget counts from here: loading the engine and starting the target included.
    control = RunControl(args.budget, clock=CLOCK)

    from harness.corpus.finding import FindingFormatError, portable_target
    from harness.engine.events import EventBus
    from harness.engine.run import DEFAULT_KINDS, RunConfig, run_campaign
    from harness.report.console import ConsoleReporter, make_console
    from harness.report.writers import FindingWriter, JsonReport, JunitReport
    from harness.spec.versions import KINDS

    kinds = _kinds(args.kinds, DEFAULT_KINDS, KINDS)
    offer = _offer(args.offer)
    spec_dir = _profiles.spec_or_usage(args.spec, target=args.target)
    if spec_dir is not None:
        # The per-step schema checks (INV-007, INV-007.published) read the spec directory from
        # the environment, as every process of the run (adapters, workers) can.
        os.environ[SPEC_ENV] = str(spec_dir.path)
    choice = _profiles.choose_or_usage(args.profile, spec=spec_dir, target=args.target)
    profile = choice.profile
    baseline = _profiles.baseline_or_usage(args.baseline)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    out = Path(args.out) if args.out else Path("reports") / f"run-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    earlier = prepare_out(out, overwrite=args.overwrite, append=args.append)
    args.crash_dir = out  # an internal error leaves its traceback here
    program = program_name()
    is_model = args.target.strip() == "reference"
    options: dict[str, Any] = {}
    if args.target.strip().startswith(_PROCESS_PREFIXES):
        options["startup_timeout_s"] = min(30.0, args.budget)
    elif args.target.strip().startswith(_STARTED_HOSTS):
        # a host's start-up is bounded by what the budget leaves (before: 20 s whatever the budget)
        from harness.targets.live import startup_wait

        options.update(startup_wait(control.time_left() or 0.0))
    if args.allow_remote:
        options["allow_remote"] = True  # live targets only: a non-loopback host
    with _stop_on_signals(control):
        try:
            target = open_target_or_usage(args.target, profile, args.timeout, **options)
        except RunStopped as e:
            print(f"ahp-fuzz: interrupted ({e.reason}) while starting the target: nothing was fuzzed, "
                  "no report written (the target was stopped)", file=sys.stderr)
            return EXIT_SIGTERM if e.reason == "SIGTERM" else EXIT_SIGINT
        opened_after = control.elapsed()  # loading ahp-fuzz and starting the target took this
        try:
            # A live host's version is negotiated by the run, which names it in its header (the
            # profile here is only what is offered first): no "profile: …" line before it.
            quiet_profile = io.StringIO() if getattr(target, "is_live", False) else None
            profile = _profiles.after_open(choice, target, args.target, out=quiet_profile).profile
            findings = FindingWriter(out / "findings", program=program)
            try:
                earlier_files = [str(p) for p, _ in findings.store.findings()] if earlier else []
            except FindingFormatError as e:
                raise UsageError(f"--append: {e}") from e
            report = JsonReport(out / "report.json", findings, [program, *sys.argv[1:]],
                                earlier_findings=earlier_files, started_at=time.time() - control.elapsed())
            report.data["schemaChecks"] = _profiles.run_switches(spec_dir).to_json()  # what INV-007 had
            report.data["announced"] = announced(target)  # what the target said it is (the matrix's columns)
            stdout = make_console(stderr=args.json)  # --json: stdout is the JSON document alone
            console = ConsoleReporter(
                out=stdout, quiet=args.quiet,
                replay_for=lambda f: f.replay_command(findings.paths.get(f.signature), program),
            )
            bus = EventBus(console, findings, report, JunitReport(out / "junit.xml", findings))
            config = RunConfig(
                target=target,
                target_spec=portable_target(args.target),
                target_is_model=is_model,
                profile=profile,
                seed=seed,
                budget_s=args.budget,
                max_steps=args.max_steps,
                max_chunks=args.chunks,
                chunk_examples=args.chunk,
                kinds=kinds,
                adversarial_percent=args.adversarial,
                probe_every=args.probe_every if args.probe_every is not None else (1 if is_model else 25),
                max_findings=args.max_findings,
                database=Path(args.database) if args.database else None,
                control=control,
                schema=_profiles.schema_of(spec_dir),
                baseline=baseline,
                verdict=_profiles.run_switches(spec_dir),
                notices=(*_profiles.checks_off_notices(spec_dir), *_database_notice(args)),
                lane=args.lane,
                offer=offer,
            )
            runner: Callable[..., Any] = run_campaign
            if getattr(target, "is_live", False):
                from harness.live import run_live  # live hosts: the live machine (live/machine.py)

                runner = run_live
            try:
                summary = runner(config, bus)
            except ValueError as e:
                raise UsageError(str(e)) from e
        finally:
            # On a stop, no grace for the adapter: its process group is ended at once.
            with _stop_on_signals(None):
                _close(target, quick=control.reason is not None)
    _profiles.report_baseline(baseline)
    from harness.report.html import write_html  # every run folder gets a self-contained index.html
    from harness.report.writers import run_verdict

    verdict = run_verdict(status=summary.status, findings=len(summary.findings), steps=summary.steps)
    untested = untested_reason(summary, args.budget, opened_after) if verdict == "untested" else None
    if untested is not None:
        report.untested_because(untested)  # report.json, and the HTML page written next, say why
    record_verdict("run", out, verdict, untested)
    stdout.print(f"report: {out / 'report.json'} ({write_html(out)})", markup=False)
    if summary.status == "interrupted":
        code = EXIT_SIGTERM if summary.stopped_because == "SIGTERM" else EXIT_SIGINT
    elif summary.findings:
        code = EXIT_FOUND
    elif summary.target_unusable:
        code = EXIT_USAGE
    elif untested is not None:  # nothing was tested: not clean (exit 2, as for a setup error)
        print(f"ahp-fuzz: error: nothing was tested: {untested}", file=sys.stderr)
        code = EXIT_USAGE
    else:
        code = EXIT_CLEAN
    if args.json:
        from harness.report import result

        result.write(result.from_report("run", report.data, out, code))
    return code


def announced(target: Any) -> dict[str, Any] | None:
    """What a target announced about itself — its name, protocol version, profile and state
    kinds (docs/adapters.md) — or None for a target that announces nothing (the in-process model)."""
    ann = getattr(target, "announcement", None)
    if not isinstance(ann, dict) or not ann:
        return None
    return {k: ann[k] for k in ("name", "protocolVersion", "profile", "kinds") if k in ann}


def untested_reason(summary: Any, budget_s: float, opened_after_s: float) -> str:
    """Why a run that executed no step tested nothing, in words a user can act on."""
    if summary.stopped_because == "budget":
        return (f"the {budget_s:g}s budget ran out before the first step: start-up took it "
                f"({opened_after_s:.1f}s loading ahp-fuzz and starting the target, "
                f"{max(0.0, summary.elapsed_s - opened_after_s):.1f}s preparing the run); "
                "give a longer --budget")
    if summary.examples:
        return (f"{summary.examples} generated sequence(s) ran no step (stopped: {summary.stopped_because}); "
                "the target or the options left nothing to send")
    return f"the run stopped ({summary.stopped_because}) before the first step"


#: Said when `--database` is given to a lane that does not use it (before: a silent no-op).
DATABASE_UNUSED = ("--database is read and written by --lane hypothesis only: the fast lane (the default) "
                   "draws from its own seeded pools and neither reads nor writes it (docs/lanes.md)")


def _offer(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    from harness.live.versions import check_offer

    try:
        return check_offer(text)
    except ValueError as e:
        raise UsageError(f"--offer: {e}") from e


def _database_notice(args: argparse.Namespace) -> tuple[str, ...]:
    return (DATABASE_UNUSED,) if args.database and args.lane == "fast" else ()


def _close(target: Any, *, quick: bool) -> None:
    """Close the target; after a stop, with a short grace (its process group is then killed)."""
    if quick and "grace_s" in inspect.signature(target.close).parameters:
        target.close(grace_s=0.5)
    else:
        target.close()


def _kinds(text: str | None, default: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, ...]:
    if text is None:
        return default
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if not kinds:
        raise UsageError("--kinds: name at least one state kind")
    bad = [k for k in kinds if k not in known]
    if bad:
        raise UsageError(f"--kinds: unknown state kind {', '.join(bad)} (want some of {', '.join(known)})")
    return tuple(dict.fromkeys(kinds))


@contextlib.contextmanager
def _stop_on_signals(control: Any) -> Iterator[None]:
    """SIGINT and SIGTERM ask `control` to stop (None: they are noted and ignored meanwhile,
    so that closing the target and writing the last lines are not cut short)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def handler(signum: int, frame: Any) -> None:
        if control is not None:
            control.request_stop(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="fuzz a target against the reference model and the invariant catalogue",
        description="Fuzz a target: generated action sequences go through the target and the "
        "reference model together; every step is checked; failures are shrunk and saved as "
        "replayable findings. Exit 0 clean (known upstream issues do not count), 1 findings, "
        "2 usage/setup error, 3 internal error, 130/143 interrupted (SIGINT/SIGTERM).",
    )
    p.add_argument("--target", default="reference",
                   help="reference | adapter:<command line> | ts:<AHP checkout> | js:<module> | "
                   "ws://HOST:PORT | host-cmd:<command> | host:embedded[?defect=NAME] (default: reference)")
    p.add_argument("--allow-remote", action="store_true",
                   help="live targets: allow a host that is not on loopback (127.0.0.1/::1)")
    p.add_argument("--budget", default="60s", type=duration_type,
                   help="hard wall-clock limit for the whole run, e.g. 30s, 5m, 1h (default: 60s)")
    p.add_argument("--seed", type=int_range(0), help="run seed (default: derived from the clock; printed)")
    _profiles.add_options(p)
    p.add_argument("--kinds", help="comma-separated state kinds to fuzz (default: all seven, or those "
                   "the target announces)")
    p.add_argument("--max-steps", type=int_range(1), default=40,
                   help="max actions per generated sequence (default 40)")
    p.add_argument("--chunk", type=int_range(1), default=25, help="sequences per seed chunk (default 25)")
    p.add_argument("--chunks", type=int_range(1), metavar="N",
                   help="stop after N seed chunks (within --budget, which still bounds the run): with --seed, "
                   "a run of the same sequences whatever the machine's speed")
    p.add_argument("--adversarial", type=int_range(0, 100), default=10, metavar="PCT",
                   help="percentage of adversarial actions, 0–100 (default 10)")
    p.add_argument("--probe-every", type=int_range(0), metavar="N",
                   help="run each probe check (purity, determinism, …) once per N steps, on the "
                   "next step it applies to; 0 = never (default: 1 for the reference model, 25 for "
                   "other targets, whose probes cost a full-state round trip)")
    p.add_argument("--max-findings", type=int_range(1), help="stop after this many findings")
    p.add_argument("--timeout", type=seconds_type, default=5.0,
                   help="per-step target timeout in seconds, > 0 (default 5; never past the budget)")
    add_out_arguments(p, "reports/run-<time>-seed<seed>", "run")
    p.add_argument("--offer", metavar="V[,V…]",
                   help="live hosts: protocol versions to offer besides those with rules (0.5.1 … 0.8.0), for "
                   "a host that speaks only another version: it is fuzzed on the nearest rules' subset (docs/live.md)")
    p.add_argument("--lane", choices=("fast", "hypothesis"), default="fast",
                   help="fast: Hypothesis fills pools, steps are mutated from them with a seeded PRNG; "
                   "hypothesis: every step a Hypothesis draw (default fast: more found per CPU-minute, "
                   "docs/lanes.md; live targets too: their scenarios and actions from pools, or every "
                   "choice a Hypothesis draw)")
    p.add_argument("--database", help="a Hypothesis example database folder shared across runs (an "
                   "accelerator of --lane hypothesis; the fast lane does not use it, and says so)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--json", action="store_true",
                   help="print the result as one JSON document on stdout (verdict, findings with their files "
                   "and replay commands, known issues, report paths; docs/report.md); everything else goes "
                   "to stderr")
    p.set_defaults(func=run_command)
