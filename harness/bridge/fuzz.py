"""Command-surface fuzzing: schemathesis, in process, against the bridge of a live host.

`run_commands(config, emit)`:

1. builds the file fixture (fixture.py) and starts or reaches the target (`host:embedded`,
   `ws://…`, `host-cmd:…`; loopback only unless `allow_remote`);
2. opens one initialised connection (`HostLink`), creates the two baseline sessions (alpha,
   beta) — the trace's setup steps — and builds the OpenAPI document from the spec directory;
3. loads it with `schemathesis.openapi.from_asgi` over `BridgeApp`, adds the fixture's
   generation hints (hints.py) as a schema hook, and runs rounds until the
   budget is spent: every operation (the commands the hints aim at first, each group in a
   seeded order per round; each gets at most
   `budget / (2 × operations + 2)` seconds, capped at `operation_cap_s`, per mode and round) with
   positive then negative data (`operation.as_strategy`, Hypothesis-seeded from `--seed`, the
   round and the method), then the stateful phase
   (`schema.as_state_machine()`, links from the document);
4. before every example the host is reset to the setup state (`CommandSession.reset`); around
   every call: the disk snapshot and `listSessions` before and after; schemathesis'
   `not_a_server_error`, `response_schema_conformance`, `status_code_conformance`,
   `negative_data_rejection` and our checks (checks.py);
5. a failure becomes a `CommandFinding` (setup + the failing call, or the stateful scenario),
   replayed once on a fresh host and fixture (`reproduced`), one per (check, method) per run.

The budget is a hard limit: the link asks the run's time left before every call (`HostLink.
time_left`), sends nothing once it is spent and never waits past it; a call cut short that way
ends the run and is not judged, and a finding made with no time left is saved unconfirmed
(`reproduced: false`, with a notice) rather than replayed past the budget. The clock is
injectable (`CommandRunConfig.clock`) so that tests check this without timing the machine.

Everything is synchronous here; the asynchronous wire lives in `HostLink`'s own thread.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.corpus.command_finding import CommandFinding, CommandStep
from harness.spec.specdir import SpecDir

from .app import ROOT, BridgeApp, Exchange, HostLink, Reply
from .baseline import BASELINE_SESSIONS
from .checks import MUST_ANSWER, ST_CHECKS, Observation, Sessions, Verdict, run_ours, st_verdicts
from .fixture import FileFixture
from .openapi import build_openapi

#: How findings name the check families in titles.
TITLES = {
    "CMD-CONFINEMENT": "resource* reached outside the sessions' working directories",
    "CMD-PARTIAL-STATE": "a failed command left state behind",
    "CMD-CHAT-SUBSET": "createChat accepted directories outside the session's set",
    "CMD-MULTIROOT": "createSession kept several directories without the capability",
    "CMD-MUST-METHOD": "a command the host MUST answer is missing (-32601)",
    "CMD-ERROR-CODE": "an error code the protocol does not document here",
    "ST-SERVER-ERROR": "the host broke (internal error, lost connection or timeout)",
    "ST-RESPONSE-SCHEMA": "the reply does not match the spec's schema",
    "ST-STATUS-CODE": "an error family the command does not document",
    "ST-NEGATIVE-DATA": "schema-invalid params were accepted",
}
#: Commands left out of the negative phase: `ping` MUST be answered whatever its params
#: (WIRE.md §10), so schema-invalid params are not a finding there.
NEGATIVE_EXEMPT = frozenset({"ping"})
#: Commands that change no host state (the reset after them can be skipped when nothing changed).
READ_ONLY = frozenset({"ping", "listSessions", "fetchTurns", "subscribe", "resourceRead", "resourceList",
                       "resourceResolve", "resourceRequest", "completions", "resolveSessionConfig",
                       "sessionConfigCompletions"})


class CommandSetupError(Exception):
    """The target cannot be reached or set up (a usage/setup problem, exit 2)."""


@dataclass
class CommandRunConfig:
    target: str
    spec: SpecDir
    seed: int = 0
    budget_s: float = 60.0
    examples: int = 15  # per operation, per generation mode, per round
    stateful_examples: int = 8  # scenarios per round
    stateful_steps: int = 6
    #: seconds per operation, mode and round (some negative bodies are slow to draw); None: no
    #: time cap, so the examples tried depend on the seed only (tests use this)
    operation_cap_s: float | None = 3.0
    methods: tuple[str, ...] | None = None
    phases: tuple[str, ...] = ("positive", "negative", "stateful")
    allow_remote: bool = False
    timeout_s: float = 5.0
    max_findings: int | None = None
    profile: str = "0.7.0"
    confinement_severity: str | None = None  # default: violation on host:embedded, else divergence
    verify: bool = True
    stop_when: Callable[[CommandFinding], bool] | None = None
    #: Stop after this many rounds (None: rounds until the budget is spent); tests bound a run
    #: by what it draws, not by the machine's speed.
    max_rounds: int | None = None
    clock: Callable[[], float] = time.monotonic  # the budget's clock (monotonic seconds)


@dataclass
class CommandRunResult:
    findings: list[CommandFinding] = field(default_factory=list)
    reproduced: dict[str, bool] = field(default_factory=dict)
    calls: int = 0
    rounds: int = 0
    elapsed_s: float = 0.0
    stopped_because: str = "budget"
    notices: list[str] = field(default_factory=list)
    first_seen_s: dict[str, float] = field(default_factory=dict)
    #: calls per phase ("positive", "negative", "stateful") and per method
    phase_calls: dict[str, int] = field(default_factory=dict)
    method_calls: dict[str, int] = field(default_factory=dict)
    #: per method, how the host answered: "result", "error <code>", or the transport failure
    #: ("lost", "timeout"); report.json's `commandCoverage` (`coverage_json`)
    answers: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the methods the run was to try (the spec's, or `--methods`), and why any was never sent
    methods: tuple[str, ...] = ()
    untried: dict[str, str] = field(default_factory=dict)

    def coverage_json(self) -> dict[str, dict[str, Any]]:
        """Per method: examples sent to the host and the answers seen, and the examples the bridge
        answered itself (`notSent`: `refused`, a body that is not JSON; `fenced`) —
        `commandCoverage`, docs/commands.md."""
        out: dict[str, dict[str, Any]] = {}
        for method in sorted({*self.methods, *self.method_calls}):
            seen = self.answers.get(method, {})
            errors = {k.removeprefix("error "): n for k, n in sorted(seen.items()) if k.startswith("error ")}
            not_sent = {k: n for k, n in sorted(seen.items()) if k in NOT_SENT}
            entry: dict[str, Any] = {"sent": self.method_calls.get(method, 0) - sum(not_sent.values()),
                                     "results": seen.get("result", 0), "errors": errors,
                                     "unanswered": {k: n for k, n in sorted(seen.items()) if k != "result"
                                                    and not k.startswith("error ") and k not in NOT_SENT}}
            if not_sent:
                entry["notSent"] = not_sent
            if method in self.untried:
                entry["notTried"] = self.untried[method]
            out[method] = entry
        return out


#: What the bridge answered itself, never sent to the host (`coverage_json`'s `notSent`).
NOT_SENT = ("fenced", "refused")


def default_confinement_severity(target: str) -> str:
    return "violation" if target.strip().startswith("host:embedded") else "divergence"


# -- one connected target ------------------------------------------------------------------


class CommandSession:
    """A fixture, a reachable host, one initialised link and the bridge app over it."""

    def __init__(self, target: str, spec: SpecDir | None, *, seed: int = 0, allow_remote: bool = False,
                 timeout_s: float = 5.0, profile: str = "0.7.0", methods: tuple[str, ...] | None = None,
                 budget_s: float | None = None) -> None:
        from harness.targets.base import TargetSetupError
        from harness.targets.live import LiveTarget, startup_wait

        self.fixture = FileFixture.create(seed)
        self.handle: Any = None
        self.link: HostLink | None = None
        try:
            try:
                # a `host-cmd:` host's start-up wait is bounded by the budget, as `run`'s is
                live = LiveTarget(target, allow_remote=allow_remote, **startup_wait(budget_s))
                self.handle = live.start()
            except (ValueError, TargetSetupError) as e:
                raise CommandSetupError(str(e)) from e
            self.link = HostLink(self.handle.url, versions=(profile,), timeout_s=timeout_s)
            try:
                self.link.open()
            except Exception as e:
                raise CommandSetupError(f"{target}: cannot initialize a connection: {e}") from e
            self.multiroot = self.link.capability("multipleWorkingDirectories")
            self._pristine = self.fixture.snapshot()
            self._last: tuple[Sessions | None, Any] = (None, None)
            self._dirty = False
            self.document = build_openapi(spec, methods=methods) if spec is not None else None
            self.app = BridgeApp(self.link, self.document or {"paths": {}}, fence=self.fixture.fenced)
        except BaseException:
            self.close()
            raise

    def call(self, method: str, params: Any) -> Reply:
        assert self.link is not None
        why = self.fixture.fenced(method, params)
        if why is not None:
            return Reply(error={"code": -32009, "message": f"fenced by ahp-fuzz: {why}"}, transport="fenced")
        return self.link.call(method, params)

    def setup(self) -> list[CommandStep]:
        """The baseline sessions (alpha, beta); the steps a finding replays first."""
        steps = []
        for uri, directory in zip(BASELINE_SESSIONS, self.fixture.session_uris, strict=True):
            params = {"channel": uri, "provider": "scripted", "workingDirectories": [directory]}
            reply = self.call("createSession", params)
            if not reply.ok:
                params = {"channel": uri, "workingDirectories": [directory]}
                reply = self.call("createSession", params)
            steps.append(CommandStep("createSession", self.fixture.template(params),
                                     self.fixture.template(reply.to_json()), setup=True))
        return steps

    def reset(self) -> None:
        """Back to the state after `setup`: every other session disposed, the tree rebuilt.

        Skips what is already clean: the last observation's sessions and disk are remembered."""
        last_sessions, last_disk = self._last
        if self._dirty or last_sessions is None or set(last_sessions) != set(BASELINE_SESSIONS):
            # every session goes (their chats with them) and the baseline is made again
            for uri in sorted(self.sessions() or {}):
                self.call("disposeSession", {"channel": uri})
            self.setup()
            self._dirty = False
        if last_disk is None or last_disk != self._pristine:
            self.fixture.restore()
        self._last = (None, None)

    def sessions(self) -> Sessions | None:
        """Every session (all listSessions pages), by URI; None when listSessions fails."""
        out: Sessions = {}
        cursor: Any = None
        for _ in range(50):
            params: dict[str, Any] = {"channel": ROOT}
            if cursor is not None:
                params["cursor"] = cursor
            reply = self.call("listSessions", params)
            if not reply.ok or not isinstance(reply.result, dict):
                return None
            for s in reply.result.get("items") or []:
                if isinstance(s, dict) and isinstance(s.get("resource"), str):
                    out[s["resource"]] = s
            cursor = reply.result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return out

    def observe(self, method: str, params: Any, send: Callable[[], Reply], severity: str) -> Observation:
        fx = self.fixture
        known = self._last[0]  # the sessions after the previous observed call (nothing ran since)
        disk_before = self._last[1] if self._last[1] is not None else fx.snapshot()
        sessions_before = known if known is not None else self.sessions()
        reply = send()
        if method not in READ_ONLY and (reply.ok or reply.transport is not None):
            self._dirty = True  # it may have made chats or terminals listSessions does not show
        disk_after, sessions_after = fx.snapshot(), self.sessions()
        self._last = (sessions_after, disk_after)
        return Observation(method, params, reply, fx, disk_before, disk_after, sessions_before, sessions_after,
                           multiroot=self.multiroot, confinement_severity=severity, document=self.document)

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        self.fixture.close()


# -- replay (also used to confirm a new finding) --------------------------------------------


@dataclass
class CommandReplay:
    reproduced: bool
    verdicts: list[Verdict]
    replies: list[Reply]
    notices: list[str] = field(default_factory=list)


def replay_steps(finding: CommandFinding, target: str, spec: SpecDir | None, *, timeout_s: float = 5.0,
                 allow_remote: bool = False, time_left: Callable[[], float | None] | None = None,
                 ) -> CommandReplay:
    """Run a command trace on a fresh fixture and host; judge its failing step with every check
    (`time_left`: a run's budget, which the replay's calls do not outlive)."""
    if finding.invariant.startswith("ST-") and spec is None:
        raise CommandSetupError(f"{finding.invariant} is judged from the spec's schemas: give --spec DIR "
                                "or set AHP_SPEC_DIR")
    session = CommandSession(target, spec, seed=finding.seed or 0, allow_remote=allow_remote,
                             timeout_s=timeout_s, profile=finding.profile)
    if time_left is not None and session.link is not None:
        session.link.time_left = time_left
    severity = finding.severity if finding.invariant == "CMD-CONFINEMENT" else "violation"
    try:
        replies: list[Reply] = []
        verdicts: list[Verdict] = []
        for i, step in enumerate(finding.steps):
            params = session.fixture.untemplate(step.params)
            if i != finding.failing_step:
                replies.append(session.call(step.method, params))
                continue
            obs = session.observe(step.method, params, lambda p=params, m=step.method: session.call(m, p), severity)
            replies.append(obs.reply)
            if obs.reply.transport == "fenced":
                verdicts = []
            else:
                verdicts = run_ours(obs)
                if session.document is not None:
                    verdicts += st_verdicts(step.method, params, obs.reply, session.document)
            break
        return CommandReplay(any(v.check == finding.invariant for v in verdicts), verdicts, replies)
    finally:
        session.close()


def replay_lines(result: CommandReplay, finding: CommandFinding, target: str) -> list[str]:
    """What `ahp-fuzz replay` prints for a command finding."""
    step = finding.steps[finding.failing_step]
    lines = [
        f"{finding.invariant} [{finding.severity}] on {step.method}, {len(finding.steps)} commands "
        f"({sum(s.setup for s in finding.steps)} setup), target {target}",
        f"  {finding.message}",
        ("REPRODUCED" if result.reproduced else "did not reproduce")
        + f": {finding.invariant} {'fired' if result.reproduced else 'did not fire'} on the failing command",
    ]
    if result.replies:
        lines.append(f"  reply: {json.dumps(result.replies[-1].to_json(), ensure_ascii=False)[:400]}")
    for v in result.verdicts:
        lines.append(f"  {v.check} [{v.severity}] {v.message[:300]}")
    return lines


# -- the run --------------------------------------------------------------------------------


def _method(op: Any) -> str:
    """The AHP method an operation of the bridge's OpenAPI document stands for (its path's last
    segment: `/rpc/listSessions` → `listSessions`)."""
    return str(op.path).rsplit("/", 1)[-1]


def _seed_for(*parts: Any) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


class _Stop(Exception):
    """The run is over (budget, max findings, stop_when): unwinds out of Hypothesis."""


class CommandRun:
    def __init__(self, config: CommandRunConfig, emit: Callable[[Any], None] | None = None) -> None:
        self.config = config
        self.emit = emit or (lambda event: None)
        self.result = CommandRunResult()
        self.severity = config.confinement_severity or default_confinement_severity(config.target)
        self.seen: set[tuple[str, str]] = set()
        self.scenario: list[Exchange] = []
        self.start = 0.0
        self.no_stateful = False
        self.op_cap = config.operation_cap_s
        self.not_found: dict[str, list[int]] = {}
        self._scanned = 0

    # -- bookkeeping ---------------------------------------------------------------------

    def elapsed(self) -> float:
        return self.config.clock() - self.start

    def time_left(self) -> float:
        return self.config.budget_s - self.elapsed()

    def over(self) -> bool:
        return self.elapsed() >= self.config.budget_s

    def run(self) -> CommandRunResult:
        self.start = self.config.clock()
        self.session = CommandSession(self.config.target, self.config.spec, seed=self.config.seed,
                                      allow_remote=self.config.allow_remote, timeout_s=self.config.timeout_s,
                                      profile=self.config.profile, methods=self.config.methods,
                                      budget_s=self.config.budget_s)
        assert self.session.link is not None
        self.session.link.time_left = self.time_left
        try:
            self.setup_steps = self.session.setup()
            for step in self.setup_steps:
                if step.reply and "error" in step.reply:
                    self.result.notices.append(f"setup {step.method} failed: {step.reply['error']}")
            self._rounds()
        except _Stop:
            pass
        finally:
            self.session.close()
            self.result.elapsed_s = self.elapsed()
        return self.result

    def _rounds(self) -> None:
        import schemathesis

        from .hints import install

        schema = schemathesis.openapi.from_asgi("/openapi.json", self.session.app)
        hints = self.session.fixture.hints()
        hinted = set(hints)
        install(schema, hints, self.session.app.document)
        operations = [r.ok() for r in schema.get_all_operations()]
        self.result.methods = tuple(sorted(_method(op) for op in operations))
        try:
            self._rounds_of(operations, schema, hinted)
        finally:
            self._untried(operations)

    def _rounds_of(self, operations: list[Any], schema: Any, hinted: set[str]) -> None:
        # First every method once (one positive example each, in a seeded order), so that a
        # short budget spent on the first methods' examples still tries them all.
        for op in sorted(operations, key=lambda op: _seed_for(self.config.seed, -1, op.path)):
            if "positive" in self.config.phases and not self.over():
                self._fuzz_operation(op, "positive", -1, examples=1)
        missing: dict[str, bool] = {}
        slots = 2 * len(operations) + 2
        cap = self.config.operation_cap_s
        self.op_cap = None if cap is None else max(0.5, min(cap, self.config.budget_s / slots))
        rnd = 0
        while not self.over():
            if self.config.max_rounds is not None and rnd >= self.config.max_rounds:
                self.result.stopped_because = "rounds"
                return
            self.result.rounds = rnd + 1
            # the commands the fixture's hints aim at first (they reach the tree and the session
            # set), each group in a seeded order per round
            order = sorted(operations, key=lambda op: (_method(op) not in hinted,
                                                       _seed_for(self.config.seed, rnd, op.path)))
            for op in order:
                method = _method(op)
                if missing.get(method):
                    continue
                for mode in ("positive", "negative"):
                    if mode == "negative" and method in NEGATIVE_EXEMPT:
                        continue
                    if mode in self.config.phases and not self.over():
                        self._fuzz_operation(op, mode, rnd)
                if rnd == 0:
                    missing[method] = self._only_method_not_found(method)
                    if missing[method] and method not in MUST_ANSWER:  # an optional command it lacks
                        self.result.notices.append(f"the host lacks {method}: every call was answered -32601 "
                                                   "(Method not found); not fuzzed further")
            if "stateful" in self.config.phases and not self.over() and not self.no_stateful:
                self._stateful(schema, rnd)
            rnd += 1
        self.result.stopped_because = "budget"

    def _untried(self, operations: list[Any]) -> None:
        """Every method the run was to try is sent at least once: one never sent in the rounds
        (its examples all drawn away, a strategy that could not generate) gets one positive
        example now, while time is left; one still unsent is named with why."""
        for op in operations:
            method = _method(op)
            if self.result.method_calls.get(method) or self._finished():
                continue
            try:
                self._fuzz_operation(op, "positive", -2, examples=1)
            except _Stop:
                break
        for op in operations:
            method = _method(op)
            if not self.result.method_calls.get(method):
                self.result.untried[method] = (
                    f"the run stopped ({self.result.stopped_because}) before it was sent"
                    if self._finished() or self.over() else "no example of it could be generated")
        if self.result.untried:
            self.result.notices.append("not tried: " + ", ".join(
                f"{m} ({why})" for m, why in sorted(self.result.untried.items())))

    def _only_method_not_found(self, method: str, at_least: int = 1) -> bool:
        """The host answered every call of `method` so far with -32601 (it lacks the command)."""
        seen = self.not_found.setdefault(method, [0, 0])  # [calls, -32601 answers]
        exchanges = self.session.app.exchanges
        for e in exchanges[self._scanned:]:
            if e.fenced is None:
                counts = self.not_found.setdefault(e.method, [0, 0])
                counts[0] += 1
                counts[1] += (e.reply.error or {}).get("code") == -32601
        self._scanned = len(exchanges)
        return seen[0] >= at_least and seen[0] == seen[1]

    def _settings(self, n: int, **extra: Any) -> Any:
        from hypothesis import HealthCheck, Phase, Verbosity, settings

        return settings(max_examples=n, deadline=None, database=None, derandomize=False, print_blob=False,
                        phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                        verbosity=Verbosity.quiet, **extra)

    def _fuzz_operation(self, op: Any, mode: str, rnd: int, examples: int | None = None) -> None:
        from hypothesis import given, seed
        from hypothesis.errors import HypothesisException
        from schemathesis import GenerationMode

        strategy = op.as_strategy(generation_mode=GenerationMode(mode))
        method = _method(op)

        clock = self.config.clock
        op_deadline = clock() + self.op_cap if self.op_cap is not None else float("inf")

        @seed(_seed_for(self.config.seed, rnd, method, mode))
        @self._settings(self.config.examples if examples is None else examples)
        @given(strategy)
        def test(case: Any) -> None:
            if self._finished() or clock() > op_deadline or self._only_method_not_found(method, at_least=3):
                raise _Stop
            self.scenario = []
            self.session.reset()
            self._execute(case, stateful=False)

        try:
            test()
        except _Stop:
            if self._finished():
                raise
        except HypothesisException as e:  # e.g. a strategy that cannot generate
            self.result.notices.append(f"{method} {mode}: {type(e).__name__}: {str(e)[:200]}")

    def _stateful(self, schema: Any, rnd: int) -> None:
        from hypothesis import seed
        from hypothesis.errors import HypothesisException
        from hypothesis.stateful import run_state_machine_as_test

        run = self
        try:
            base = schema.as_state_machine()
        except Exception as e:  # no links among the selected methods
            self.result.notices.append(f"stateful phase skipped: {str(e).splitlines()[0]}")
            return

        class Machine(base):  # type: ignore[misc, valid-type]
            def setup(self) -> None:
                run.scenario = []
                run.session.reset()

            def call(self, case: Any, **kwargs: Any) -> Any:
                if run._finished():
                    raise _Stop
                return run._execute(case, stateful=True)

            def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kw: Any) -> None:
                return None  # judged in `call`

        seed(_seed_for(self.config.seed, rnd, "stateful"))(Machine)
        try:
            run_state_machine_as_test(
                Machine, settings=self._settings(self.config.stateful_examples,
                                                 stateful_step_count=self.config.stateful_steps),
            )
        except _Stop:
            if self._finished():
                raise
        except (HypothesisException, Exception) as e:  # e.g. NoLinksFound for a method subset
            self.no_stateful = self.no_stateful or type(e).__name__ == "NoLinksFound"
            self.result.notices.append(f"stateful phase: {type(e).__name__}: {str(e).splitlines()[0][:200]}")

    def _finished(self) -> bool:
        return self.over() or self.result.stopped_because in ("max-findings", "stop-when")

    # -- one call ------------------------------------------------------------------------

    def _execute(self, case: Any, *, stateful: bool) -> Any:
        session = self.session
        app = session.app
        method = _method(case.operation)
        holder: dict[str, Any] = {}

        def send() -> Reply:
            n = len(app.exchanges)
            holder["response"] = case.call()
            ex = app.exchanges[n] if len(app.exchanges) > n else None
            holder["exchange"] = ex
            return ex.reply if ex is not None else Reply(error={"code": -32603, "message": "bridge: no exchange"},
                                                         transport="refused")

        obs = session.observe(method, case.body, send, self.severity)
        if self.over() or obs.reply.transport == "budget":
            raise _Stop  # the budget ran out around this call: nothing after it is judged
        self.result.calls += 1
        phase = "stateful" if stateful else str(getattr(getattr(case.meta, "generation", None), "mode", "positive"))
        self.result.phase_calls[phase] = self.result.phase_calls.get(phase, 0) + 1
        self.result.method_calls[method] = self.result.method_calls.get(method, 0) + 1
        reply = obs.reply
        ex: Exchange | None = holder.get("exchange")
        # what the bridge answered itself never reached the host: a body that is not JSON (no
        # exchange), a call its fence stopped
        answer = ("refused" if ex is None else "fenced" if ex.fenced is not None else reply.transport
                  or ("result" if reply.error is None else f"error {(reply.error or {}).get('code')}"))
        seen = self.result.answers.setdefault(method, {})
        seen[answer] = seen.get(answer, 0) + 1
        response = holder["response"]
        if ex is None:
            return response
        self.scenario.append(ex)
        if ex.fenced is not None:
            return response
        obs.params = ex.params
        verdicts = run_ours(obs) + self._schemathesis_checks(case, response)
        for v in verdicts:
            self._found(v, method, stateful, obs)
        return response

    def _schemathesis_checks(self, case: Any, response: Any) -> list[Verdict]:
        from schemathesis.checks import not_a_server_error
        from schemathesis.core.failures import FailureGroup
        from schemathesis.specs.openapi.checks import (
            negative_data_rejection,
            response_schema_conformance,
            status_code_conformance,
        )

        out = []
        for check in (not_a_server_error, response_schema_conformance, status_code_conformance,
                      negative_data_rejection):
            try:
                case.validate_response(response, checks=[check])
            except (FailureGroup, AssertionError) as e:
                failures = getattr(e, "exceptions", None) or [e]
                text = "; ".join(str(getattr(f, "title", "")) + ": " + str(getattr(f, "message", f))[:300]
                                 for f in failures)
                fid, severity = ST_CHECKS[check.__name__]
                out.append(Verdict(fid, severity, f"schemathesis {check.__name__}: {text}"))
        return out

    def _found(self, v: Verdict, method: str, stateful: bool, obs: Observation) -> None:
        key = (v.check, method)
        if key in self.seen or self._finished():
            return
        self.seen.add(key)
        fx = self.session.fixture
        generated = self.scenario if stateful else self.scenario[-1:]
        steps = [*self.setup_steps] + [
            CommandStep(e.method, fx.template(e.params), fx.template(e.reply.to_json())) for e in generated
        ]
        finding = CommandFinding(
            invariant=v.check, severity=v.severity, title=TITLES.get(v.check, v.check),
            message=fx.template(v.message), profile=self.config.profile, target=self.config.target,
            steps=steps, failing_step=len(steps) - 1, fixture=fx.describe(),
            expected=fx.template(v.expected), observed=fx.template(obs.reply.to_json()),
            seed=self.config.seed, extra={"phase": "stateful" if stateful else "single", "method": method,
                                          "foundAfterSeconds": round(self.elapsed(), 3)},
        )
        reproduced = False
        if self.config.verify and self.over():
            self.result.notices.append(f"{v.check} on {method}: not replayed, the budget was spent")
        elif self.config.verify:
            try:
                reproduced = replay_steps(finding, self.config.target, self.config.spec,
                                          timeout_s=self.config.timeout_s,
                                          allow_remote=self.config.allow_remote,
                                          time_left=self.time_left).reproduced
            except Exception as e:
                self.result.notices.append(f"could not replay {v.check} on {method}: {e}")
        finding.extra["reproduced"] = reproduced
        self.result.findings.append(finding)
        self.result.reproduced[finding.signature] = reproduced
        self.result.first_seen_s.setdefault(v.check, self.elapsed())
        from harness.engine.events import FindingFound

        self.emit(FindingFound(finding, reproduced))  # type: ignore[arg-type]
        if self.config.stop_when is not None and self.config.stop_when(finding):
            self.result.stopped_because = "stop-when"
            raise _Stop
        if self.config.max_findings is not None and len(self.result.findings) >= self.config.max_findings:
            self.result.stopped_because = "max-findings"
            raise _Stop


def run_commands(config: CommandRunConfig, emit: Callable[[Any], None] | None = None) -> CommandRunResult:
    """Fuzz the target's commands (see the module docstring)."""
    return CommandRun(config, emit).run()
