"""`ahp-fuzz campaign`: a long, parallel fuzz campaign with coverage feedback and an HTML report."""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

from harness.errors import UsageError

from . import _profiles
from ._common import (
    add_out_arguments,
    open_target_or_usage,
    prepare_out,
    profile_or_usage,
    program_name,
    record_verdict,
)


def _positive(text: str, what: str, kind: type = float) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, got {text!r}") from None
    if value <= 0:
        raise UsageError(f"{what} must be positive, got {text!r}")
    return value


def campaign_command(args: argparse.Namespace) -> int:
    # The budget counts from here, as `run`'s does: checking the targets and starting the
    # workers included (every worker gets this deadline, not a budget of its own).
    started = time.monotonic()
    from harness.campaign.live import Display
    from harness.campaign.results import report_document
    from harness.campaign.supervisor import CampaignSpec, Supervisor, default_workers, parse_shard
    from harness.engine.run import DEFAULT_KINDS
    from harness.report.coverage import combine
    from harness.report.merge import write_report_folder
    from harness.report.writers import run_verdict, write_atomic
    from harness.spec.versions import KINDS

    minutes = _positive(args.minutes, "--minutes")
    workers = _positive(args.workers, "--workers", int) if args.workers is not None else default_workers()
    if workers > 256:
        raise UsageError(f"--workers {workers}: at most 256")
    targets = args.target or ["reference"]
    if workers < len(targets):
        raise UsageError(f"{len(targets)} targets need at least as many workers (--workers {workers})")
    profile = profile_or_usage(args.profile)
    # The workers read $AHP_SPEC_DIR (the published-schema checks): loaded and validated here,
    # so a corrupt spec folder is a usage error before any worker starts.
    env_spec = _profiles.env_spec_or_usage()
    kinds = tuple(k.strip() for k in args.kinds.split(",")) if args.kinds else DEFAULT_KINDS
    for k in kinds:
        if k not in KINDS:
            raise UsageError(f"unknown state kind {k!r} (want one of {', '.join(KINDS)})")
    for t in targets:  # fail fast on a target that cannot start, before any worker does
        open_target_or_usage(t, profile, args.timeout).close()
    shard = None
    if args.shard:
        try:
            shard = parse_shard(args.shard)
        except ValueError as e:
            raise UsageError(str(e)) from e
    for name, value in (("--max-steps", args.max_steps), ("--chunk", args.chunk)):
        if value < 1:
            raise UsageError(f"{name} must be at least 1")
    if not 0 <= args.adversarial <= 100:
        raise UsageError("--adversarial is a percentage (0–100)")
    if args.coverage_every < 0:
        raise UsageError("--coverage-every must be 0 (off) or more")
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    shard_tag = f"-shard{shard[0]}of{shard[1]}" if shard else ""
    out = Path(args.out) if args.out else Path("reports") / f"campaign-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}{shard_tag}"
    # `run`'s --out rules: an earlier run or campaign there is refused unless --overwrite
    # (its outputs removed; the example database kept) or --append (its findings kept);
    # an unwritable place is a usage error before any worker starts.
    from harness.report.writers import CAMPAIGN_OUTPUTS

    earlier = prepare_out(out, overwrite=args.overwrite, append=args.append, outputs=CAMPAIGN_OUTPUTS)
    earlier_files = sorted(str(p) for p in (out / "findings").glob("*.json")) if earlier else []
    database = Path(args.database) if args.database else out / "example-db"
    spec = CampaignSpec(
        targets=targets, budget_s=minutes * 60.0, workers=workers, seed=seed, out=out, database=database,
        profile=args.profile, kinds=kinds, max_steps=args.max_steps, chunk_examples=args.chunk,
        adversarial_percent=args.adversarial, probe_every=args.probe_every, timeout_s=args.timeout,
        coverage=args.coverage_every > 0, coverage_every=max(1, args.coverage_every), coverage_mode=args.coverage_mode,
        steer=not args.no_steer,
        lane=args.lane,
        shard=shard,
        program=program_name(),
    )
    argv = [*shlex.split(spec.program), *sys.argv[1:]]
    # What the workers judge with: no payload schema (their runs take none), the published-schema
    # checks when $AHP_SPEC_DIR has a state schema (the engine reads it there).
    from harness.spec.verdict import VerdictSwitches, spec_version

    published = spec_version(env_spec) if env_spec is not None and env_spec.schema_path("state").is_file() else None
    schema_checks = VerdictSwitches(None, published).to_json()
    display = Display(quiet=args.quiet)
    display.console.print(
        f"ahp-fuzz campaign: {', '.join(targets)}, {workers} worker(s), {minutes:g} min, seed {seed}"
        f"{f', shard {shard[0]}/{shard[1]}' if shard else ''}; database {database}"
        f"{' (unused: the fast lane does not read or write it; --lane hypothesis does)' if args.lane == 'fast' else ''}"
        f"; report in {out}"
    )

    def document(state: Any) -> dict[str, Any]:
        doc = report_document(state, argv, profile.version)
        doc["schemaChecks"] = schema_checks
        if earlier_files:  # --append: the earlier run's findings stay, listed apart from this one's
            doc["earlierFindings"] = earlier_files
            doc["findings"] = [f for f in doc["findings"] if not (f.get("fromDisk") and f.get("file") in earlier_files)]
            doc["verdict"] = run_verdict(status=doc["status"], findings=len(doc["findings"]), steps=doc["steps"])
        return doc

    def checkpoint(state: Any) -> None:
        write_atomic(out / "report.json", json.dumps(document(state), indent=2, ensure_ascii=False) + "\n")

    supervisor = Supervisor(spec, on_update=display.update, on_checkpoint=checkpoint, started=started)
    with display:
        state = supervisor.run()  # SIGINT and SIGTERM stop it cleanly (its own handlers)
        display.update(state, force=True)
    # the report is being written: a late signal is noted by nobody and cuts nothing short
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    cov_files = [p for s in state.slots for p in s.coverage_files]
    if cov_files:
        full = combine(cov_files, out / "coverage" / "combined.coverage")
        if full is not None:
            state.branches = full
            if state.timeline:
                state.timeline[-1]["branchPercent"] = full["percentBranches"]
    doc = document(state)
    if doc["verdict"] == "untested":  # no worker ran a step: nothing was tested, never "clean"
        doc["untested"] = untested_reason(doc, minutes, out)
    write_report_folder(out, doc)
    record_verdict("campaign", out, doc["verdict"], doc.get("untested"))
    # Results on stdout (progress went to stderr): the verdict, the replay commands, and last the
    # path of the HTML report alone on its line (`ahp-fuzz campaign … | tail -1`). With --json
    # they go to stderr and stdout is the JSON document alone.
    said = sys.stderr if args.json else sys.stdout
    print(summary_line(doc), file=said)
    for f in doc["findings"]:
        print(f"replay: {f['replay']}", file=said)
    print(f"report: {out / 'report.json'}", file=said)
    print(out / "index.html", file=said, flush=True)
    if doc["verdict"] == "untested":
        print(f"ahp-fuzz: error: nothing was tested: {doc['untested']}", file=sys.stderr)
        code = 2
    elif doc["findings"]:
        code = 1
    elif state.status == "interrupted":
        code = 143 if state.stopped_because == "SIGTERM" else 130
    else:
        code = 0
    if args.json:
        from harness.report import result

        result.write(result.from_report("campaign", doc, out, code))
    return code


def summary_line(doc: dict[str, Any]) -> str:
    """The campaign's verdict line, in the words and order of `run`'s (report/console.py), with
    the workers' restarts after it."""
    verdict = {"found": "FOUND", "interrupted": f"interrupted ({doc.get('stoppedBecause')})"}.get(
        doc["verdict"], doc["verdict"])
    elapsed = float(doc.get("elapsedSeconds") or 0.0)
    return (f"{verdict}: {len(doc['findings'])} finding(s), {doc.get('knownHits', 0)} known-issue hit(s) in "
            f"{doc.get('examples', 0)} runs / {doc.get('steps', 0)} steps, {elapsed:.1f}s "
            f"({doc.get('stepsPerSecond') or 0:,.0f} steps/s); stopped: {doc.get('stoppedBecause')}; "
            f"{doc['campaign']['workers']} worker(s), {doc['campaign']['restarts']} restart(s)")


def untested_reason(doc: dict[str, Any], minutes: float, out: Path) -> str:
    """Why a campaign whose workers ran no step tested nothing."""
    crashes = doc["campaign"]["crashes"]
    if crashes:
        return f"no worker ran a step: {len(crashes)} worker crash(es); see the logs in {out / 'workers'}"
    return (f"no worker ran a step in {float(doc.get('elapsedSeconds') or 0):.1f}s: start-up took the "
            f"{minutes:g} min budget; give a longer --minutes (worker logs: {out / 'workers'})")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "campaign",
        help="a long parallel fuzz campaign (workers, shared example database, coverage, HTML report)",
        description="Run worker processes (one per core by default) that fuzz the targets until the "
        "time is up, sharing one Hypothesis example database; findings are saved as they are "
        "confirmed; report.json, junit.xml and index.html go to the run folder. A second run with the "
        "same --database (or the same --out, with --overwrite or --append) resumes from the database. Ctrl-C stops cleanly and still writes the "
        "report. An --out folder holding an earlier run is refused unless --overwrite or --append. "
        "Exit 0 clean, 1 findings, 2 usage/setup error or nothing tested (no worker ran a step).",
    )
    p.add_argument("--minutes", required=True, help="wall-clock budget in minutes (e.g. 1, 0.5, 480)")
    p.add_argument("--workers", help="worker processes (default: one per core)")
    p.add_argument("--target", action="append",
                   help="reference | adapter:<command> | ts:<checkout> | js:<module>; repeat for several "
                   "(workers take them in turn; default: reference)")
    p.add_argument("--seed", type=int, help="run seed; worker i fuzzes the seed stream (seed, i)")
    p.add_argument("--shard", help="i/N: this is shard i of N (one per CI job); merge the folders with "
                   "'ahp-fuzz report --merge'")
    p.add_argument("--profile", default="0.7.0", help="protocol version or named profile (default 0.7.0)")
    p.add_argument("--kinds", help="comma-separated state kinds (default: all seven)")
    p.add_argument("--max-steps", type=int, default=40, help="max actions per sequence (default 40)")
    p.add_argument("--chunk", type=int, default=25, help="sequences per seed chunk (default 25)")
    p.add_argument("--adversarial", type=int, default=10, metavar="PCT", help="adversarial share (default 10)")
    p.add_argument("--probe-every", type=int, metavar="N", help="probe checks every N steps (as in 'run')")
    p.add_argument("--timeout", type=float, default=5.0, help="per-step target timeout, seconds (default 5)")
    p.add_argument("--coverage-every", type=int, default=1, metavar="N",
                   help="measure reference-model branches in one chunk of every N (default 1; 0 = off)")
    p.add_argument("--coverage-mode", choices=("replay", "trace"), default="replay",
                   help="replay: every worker records its reducer calls and replays them under coverage "
                   "between chunks (cheap, exact for the reducers); trace: worker 0 runs under the tracer "
                   "(default replay)")
    p.add_argument("--lane", choices=("fast", "hypothesis"), default="fast",
                   help="how workers draw steps: fast (pools and seeded mutation) or hypothesis "
                   "(every step a Hypothesis draw); default fast (docs/lanes.md)")
    p.add_argument("--no-steer", action="store_true",
                   help="no outcome feedback (no event()/target() on (type, outcome) pairs)")
    add_out_arguments(p, "reports/campaign-<time>-seed<seed>", "run or campaign", " (its example database stays)")
    p.add_argument("--database", help="Hypothesis example database folder (default: <out>/example-db)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--json", action="store_true",
                   help="print the result as one JSON document on stdout (docs/report.md); the verdict "
                   "lines go to stderr")
    p.set_defaults(func=campaign_command)
