"""`ahp-fuzz commands`: fuzz a live host's commands with schemathesis through the bridge.

The logic lives in `harness.bridge.fuzz`; this module only parses options and wires the run
to the findings folder, `report.json`, `junit.xml` and the console. Exit codes: 0 clean (no
finding at or above `--fail-on`), 1 found, 2 usage/setup error.

Output as for `run`: its own header and progress on stderr; the findings, the verdict, the
report path and the replay commands on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from harness.engine.events import RunStarted
from harness.errors import UsageError
from harness.report.console import ConsoleReporter, by_severity

from ._common import check_out_folder, parse_duration, program_name

SEVERITY_RANK = {"warning": 0, "divergence": 1, "violation": 2}


def commands_command(args: argparse.Namespace) -> int:
    from harness.bridge.fuzz import CommandRunConfig, CommandSetupError, run_commands
    from harness.bridge.openapi import commands_of
    from harness.engine.events import EventBus, Notice, RunFinished
    from harness.report.console import make_console
    from harness.report.writers import FindingWriter, JsonReport, JunitReport
    from harness.spec.specdir import ENV_VAR, SpecDir, SpecDirError

    try:
        budget = parse_duration(args.budget)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if budget <= 0:
        raise UsageError("--budget must be positive")
    for name in ("examples", "stateful_examples"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 0")
    try:
        spec = SpecDir.from_env(args.spec)
    except SpecDirError as e:
        raise UsageError(str(e)) from e
    if spec is None or not spec.has_schemas():
        raise UsageError("the OpenAPI view is generated from the spec's commands schema: give --spec DIR "
                         "or set AHP_SPEC_DIR (e.g. ../shared/ahp-spec/0.7.0)")
    # Every process of the run reads the spec folder from the environment (as `run`'s): the
    # embedded host, or one `host-cmd:` starts, checks command params against its schema.
    os.environ[ENV_VAR] = str(spec.path)
    methods = None
    if args.methods:
        methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
        known = commands_of(spec.schemas.get("commands", {}).get("$defs", {}))
        unknown = [m for m in methods if m not in known]
        if unknown:
            raise UsageError(f"unknown command(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    phases = tuple(p for p in ("positive", "negative", "stateful")
                   if not (p == "stateful" and args.no_stateful) and not (p == "negative" and args.no_negative))
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    out = Path(args.out) if args.out else Path("reports") / f"commands-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"
    check_out_folder(out)
    program = program_name()
    findings = FindingWriter(out / "findings", program=program)
    report = JsonReport(out / "report.json", findings, [program, *sys.argv[1:]])
    stdout = make_console(stderr=False)
    console = _CommandsConsole(out=stdout, quiet=args.quiet,
                               replay_for=lambda f: f.replay_command(findings.paths.get(f.signature), program))
    bus = EventBus(console, findings, report, JunitReport(out / "junit.xml"))
    config = CommandRunConfig(
        target=args.target, spec=spec, seed=seed, budget_s=budget, examples=args.examples,
        stateful_examples=args.stateful_examples, methods=methods, phases=phases,
        allow_remote=args.allow_remote, timeout_s=args.timeout, max_findings=args.max_findings,
        profile=args.profile, confinement_severity=args.confinement,
        stop_when=(lambda f: SEVERITY_RANK.get(f.severity, 2) >= SEVERITY_RANK[args.fail_on])
        if args.stop_on_first else None,
    )
    bus.emit(RunStarted(args.target, args.profile, seed, budget, ("commands",)))
    try:
        result = run_commands(config, bus.emit)
    except CommandSetupError as e:
        raise UsageError(str(e)) from e
    for note in result.notices:
        bus.emit(Notice(note))
    failing = [f for f in result.findings if SEVERITY_RANK.get(f.severity, 2) >= SEVERITY_RANK[args.fail_on]]
    bus.emit(RunFinished(result.elapsed_s, result.calls, result.calls, list(result.findings), {},
                         stopped_because=result.stopped_because,
                         extra={"rounds": result.rounds, "failOn": args.fail_on,
                                "failingFindings": len(failing),
                                "commandCoverage": result.coverage_json()}))
    stdout.print(f"report: {out / 'report.json'}", markup=False)
    for f in by_severity(list(result.findings)):
        stdout.print(f"replay: {f.replay_command(findings.paths.get(f.signature), program)}", markup=False)
    return 1 if failing else 0


class _CommandsConsole(ConsoleReporter):
    """The run's console with the command's own header ("ahp-fuzz commands: …")."""

    def __call__(self, event: Any) -> None:
        if isinstance(event, RunStarted):
            self.console.print(f"ahp-fuzz commands: target {event.target}, profile {event.profile}, "
                               f"seed {event.seed}, budget {event.budget_s:g}s", markup=False)
            return
        super().__call__(event)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "commands",
        help="fuzz a live host's commands (schemathesis over an OpenAPI view of the host)",
        description="Expose each command of a live host as POST /rpc/<method> (an ASGI bridge over one "
        "WebSocket JSON-RPC connection, OpenAPI generated from the spec's commands schema) and run "
        "schemathesis against it in process, with its checks and ours (file confinement on a real "
        "temporary tree with a canary outside it, chat directory subsets, multiroot capability, error "
        "codes, no partial state). See docs/commands.md. Exit 0 clean, 1 findings, 2 usage/setup error.",
    )
    p.add_argument("--target", required=True,
                   help="host:embedded[?defect=NAME] | ws://127.0.0.1:PORT/ | host-cmd:'<starts a host>'")
    p.add_argument("--spec", help="spec directory (default: $AHP_SPEC_DIR)")
    p.add_argument("--budget", default="60s", help="wall-clock budget, e.g. 30s, 5m (default 60s)")
    p.add_argument("--seed", type=int, help="run seed (default: from the clock; printed)")
    p.add_argument("--profile", default="0.7.0", help="protocol version offered at initialize (default 0.7.0)")
    p.add_argument("--methods", help="comma-separated commands to fuzz (default: all the spec defines)")
    p.add_argument("--examples", type=int, default=15,
                   help="examples per command, per generation mode, per round (default 15)")
    p.add_argument("--stateful-examples", type=int, default=8, help="stateful scenarios per round (default 8)")
    p.add_argument("--no-stateful", action="store_true", help="skip the stateful (linked) phase")
    p.add_argument("--no-negative", action="store_true", help="skip schema-invalid bodies")
    p.add_argument("--fail-on", choices=("violation", "divergence", "warning"), default="divergence",
                   help="lowest severity that makes the exit status 1 (default divergence: warnings such as "
                   "accepted schema-invalid params are reported but do not fail the run)")
    p.add_argument("--confinement", choices=("violation", "divergence"),
                   help="severity of a resource* escape (default: violation on host:embedded, whose "
                   "documented policy it breaks; divergence elsewhere, the spec being silent)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback host (the on-disk checks then see only this machine's disk)")
    p.add_argument("--timeout", type=float, default=5.0, help="per-command timeout in seconds (default 5)")
    p.add_argument("--max-findings", type=int, help="stop after this many findings")
    p.add_argument("--stop-on-first", action="store_true",
                   help="stop at the first finding at or above --fail-on (fail fast in CI)")
    p.add_argument("--out", help="output folder (default: reports/commands-<time>-seed<seed>)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=commands_command)
