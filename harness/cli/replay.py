"""`ahp-fuzz replay`: re-run a saved finding exactly and print what happens.

The result goes to stdout; notes (a run that died, an override of the recorded target) to
stderr. Exit 1 while the finding reproduces, 0 once it does not — also when its invariant fires
only as `known` (accepted by `--baseline`, or a listed upstream issue the reference shows too) —
2 for a file that is not a valid finding, a baseline that is not valid or a target that cannot
start.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.text import Text

from harness.errors import UsageError

from . import _profiles
from ._common import open_target_or_usage, seconds_type


def replay_command(args: argparse.Namespace) -> int:
    code, doc = _replay(args)
    if args.json:  # the one JSON document of stdout (everything else went to stderr)
        from harness.report import result

        result.write(result.replay_result(code, doc))
    return code


def _finding_doc(finding: Any, file: str) -> dict[str, Any]:
    return {"file": file, "invariant": finding.invariant, "severity": finding.severity, "kind": finding.kind,
            "message": finding.message, "signature": finding.signature}


def _replay(args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    """Replay the finding; the exit code and what the --json document says besides."""
    from harness.corpus.finding import FindingFormatError, expand_target
    from harness.corpus.load import load_finding
    from harness.engine.replay import replay
    from harness.report.console import make_console
    from harness.report.writers import earlier_run

    err, out = make_console(stderr=True), make_console(stderr=args.json)
    try:
        finding = load_finding(args.file)
    except FindingFormatError as e:
        raise UsageError(str(e)) from e
    run_folder = Path(args.file).resolve().parent.parent
    if (run_folder / "report.json").is_file():
        about = earlier_run(run_folder)
        if about and "died without finishing" in about:
            err.print(f"note: {about}", markup=False)
    spec = args.target or expand_target(finding.target, args.file)
    if finding.kind == "commands":  # a command trace (harness/bridge/fuzz.py)
        from harness.bridge.fuzz import CommandSetupError, replay_lines, replay_steps
        from harness.spec.specdir import ENV_VAR, SpecDir, SpecDirError

        try:
            spec_dir_c = SpecDir.from_env(args.spec)
        except SpecDirError as e:
            raise UsageError(str(e)) from e
        if spec_dir_c is not None:  # the host the trace replays on reads it, as in the run
            os.environ[ENV_VAR] = str(spec_dir_c.path)
        try:
            commands = replay_steps(finding, spec, spec_dir_c, timeout_s=args.timeout)  # type: ignore[arg-type]
        except CommandSetupError as e:
            raise UsageError(str(e)) from e
        lines = replay_lines(commands, finding, spec)  # type: ignore[arg-type]
        for line in lines:
            out.print(line, markup=False)
        return (1 if commands.reproduced else 0), {"finding": _finding_doc(finding, args.file), "target": spec,
                                                  "lines": list(lines)}
    if finding.kind == "live":  # re-run its ops over the wire (harness/live/replay.py)
        from harness.live import replay_on_target, result_lines
        from harness.reference import DEFAULT_PROFILE

        options = {"allow_remote": True} if args.allow_remote else {}
        live = open_target_or_usage(spec, DEFAULT_PROFILE, args.timeout, **options)
        try:
            live_result = replay_on_target(finding, live, request_timeout_s=args.timeout)
        finally:
            live.close()
        lines = result_lines(live_result, finding, spec)
        for line in lines:
            out.print(line, markup=False)
        return (1 if live_result.reproduced else 0), {"finding": _finding_doc(finding, args.file), "target": spec,
                                                     "lines": list(lines)}
    problem = untyped_step(finding)
    if problem is not None:
        raise UsageError(f"{args.file}: {problem}")
    spec_dir = _profiles.spec_or_usage(args.spec, target=spec)
    choice = _profiles.choose_or_usage(args.profile, recorded=finding.profile, spec=spec_dir, target=spec)
    baseline = _profiles.baseline_or_usage(args.baseline)
    note = _baseline_note(finding.extra.get("baseline"), baseline)
    if note:
        err.print(f"note: {note}", markup=False)
    # The schema switches recorded in the finding, never the environment's (docs/profiles.md).
    schema, published, checks = _profiles.replay_switches(finding, spec_dir)
    target = open_target_or_usage(spec, choice.profile, args.timeout)
    try:
        _profiles.after_open(choice, target, spec)
        err.print(checks, markup=False)
        from harness.invariants.published_schema import judged_with

        with judged_with(published):
            result = replay(finding, target, target_is_model=spec.strip() == "reference",
                            schema=schema, baseline=baseline, profile=choice.profile)
    finally:
        target.close()
    out.print(f"{args.file}: {finding.invariant} [{finding.severity}] on {finding.kind}, "
              f"{len(finding.steps)} steps, profile {choice.profile.label}, target {spec}", markup=False)
    out.print(f"  {finding.message}", markup=False)
    verdict_line = _verdict(result, finding, baseline)
    out.print(Text(verdict_line, style="red" if result.reproduced else "green"))
    for i, v in result.violations:
        out.print(f"  step {i}: {v.invariant} [{v.severity}] {v.message}", markup=False)
    if result.diff:
        out.print("  expected (reference) vs observed (target):", markup=False)
        for line in result.diff:
            out.print(f"    {line}", markup=False)
    doc: dict[str, Any] = {
        "finding": _finding_doc(finding, args.file), "target": spec, "profile": choice.profile.label,
        "summary": verdict_line, "step": result.step,
        "violations": [{"step": i, "invariant": v.invariant, "severity": v.severity, "message": v.message}
                       for i, v in result.violations],
        "diff": list(result.diff),
    }
    if not result.reproduced and verdict_line.startswith("known:"):
        doc["verdict"] = "known"
    return (1 if result.reproduced else 0), doc


def untyped_step(finding: Any) -> str | None:
    """Why a finding's trace cannot be replayed as it was found: a valid-lane step (not a probe)
    whose action has no string `type` — no run sends one, and every reducer ignores it, so its
    replay would "not reproduce" and exit 0 as if the bug were fixed. None: every step has one."""
    for i, step in enumerate(finding.steps):
        action = step.action
        if step.probe or (isinstance(action, dict) and isinstance(action.get("type"), str)):
            continue
        what = "has no \"type\"" if isinstance(action, dict) else f"is not an object ({type(action).__name__})"
        return (f"step {i}: the action {what}, so it replays as a no-op and says nothing about the finding; "
                "the file was edited or cut (a valid-lane action always has its type; an adversarial one is "
                "marked \"probe\": true)")
    return None


def _baseline_note(recorded: Any, given: Any) -> str | None:
    """A word when the finding was found under a baseline (`extra.baseline`) and the replay
    does not use that one: the verdict may differ from the run's."""
    if not isinstance(recorded, dict):
        return None
    source, digest = recorded.get("source"), recorded.get("digest")
    if given is None:
        return (f"found under baseline {source} ({digest}); replay with --baseline to judge it "
                "as the run did (accepted differences count as findings without it)")
    if digest and given.digest != digest:
        return f"found under baseline {source} ({digest}); --baseline {given.source} is another ({given.digest})"
    return None


def _verdict(result: Any, finding: Any, baseline: Any = None) -> str:
    """The replay's one-line verdict. A finding whose invariant fires again only as `known` —
    a difference the baseline accepts, or a listed upstream issue the reference shows too — is
    said to be known: not a finding (exit 0)."""
    if result.reproduced:
        return str(result.summary(finding))
    known = [(i, v) for i, v in result.violations if v.invariant == finding.invariant and v.severity == "known"]
    if not known:
        return str(result.summary(finding))
    i, v = known[0]
    entry = baseline.entry_for(v.message) if baseline is not None else None
    why = f"accepted by the baseline, entry {entry.id}" if entry is not None else \
        f"known upstream issue: {finding.known_issue or 'listed'}"
    return f"known: {finding.invariant} fires at step {i} only as known ({why}); not a finding, as in a run"


def register(sub: Any) -> None:
    r = sub.add_parser(
        "replay",
        help="re-run a saved finding exactly and print what happens",
        description="Replay a finding file: exit 1 if it still reproduces, 0 if it no longer does "
        "or its invariant fires only as known (accepted by --baseline, or a listed upstream issue), "
        "2 if the file is not a valid finding, the baseline not a valid baseline, or the target cannot start.",
    )
    r.add_argument("file", help="a finding JSON file")
    r.add_argument("--target", help="target to replay against (default: the one recorded in the finding)")
    r.add_argument("--allow-remote", action="store_true",
                   help="live findings: allow a host that is not on loopback")
    r.add_argument("--timeout", type=seconds_type, default=5.0,
                   help="per-step target timeout in seconds, > 0 (default 5)")
    _profiles.add_options(r)
    r.add_argument("--json", action="store_true",
                   help="print the result as one JSON document on stdout (verdict, the finding, what fired; "
                   "docs/report.md); everything else goes to stderr")
    r.set_defaults(func=replay_command)
