"""`ahp-fuzz commands` finds every command-level defect of the embedded host, and the clean host's
run is clean (fuzz tier: bounded, fixed seeds). Also: a host that is not ours (started with
`host-cmd:`), and the command line with its exit codes and replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.bridge.fuzz import CommandRunConfig, run_commands

pytestmark = pytest.mark.fuzz

#: defect → (the command it lives in, the check that must catch it, a seed that finds it early)
DEFECTS = {
    "resource-read-traversal": ("resourceRead", "CMD-CONFINEMENT", 2),
    "resource-encoded-traversal": ("resourceList", "CMD-CONFINEMENT", 3),
    "resource-symlink-write": ("resourceWrite", "CMD-CONFINEMENT", 1),
    "resource-prefix-confusion": ("resourceResolve", "CMD-CONFINEMENT", 1),
    "resource-read-dir-crash": ("resourceRead", "ST-SERVER-ERROR", 1),
    "resource-createonly-clobber": ("resourceWrite", "CMD-PARTIAL-STATE", 11),
    "no-ping": ("ping", "CMD-MUST-METHOD", 1),  # a MUST command answered -32601 (issue 23)
}
#: The host engineer's createChat defect is caught by CMD-CHAT-SUBSET in the slow tier
#: (tests/test_commands_slow.py): createChat bodies are slow to draw.
#: A bound that is never the reason a test passes: runs stop at the expected finding, and
#: without a per-operation time cap the examples tried depend on the seed only.
BOUND_S = 120


def _hit(check: str, method: str) -> Any:
    return lambda f: f.invariant == check and f.steps[f.failing_step].method == method


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_command_defect_is_found_and_reproduces(spec_dir: Any, defect: str) -> None:
    method, check, seed = DEFECTS[defect]
    result = run_commands(CommandRunConfig(
        target=f"host:embedded?defect={defect}", spec=spec_dir, seed=seed, budget_s=BOUND_S, methods=(method,),
        operation_cap_s=None, stop_when=_hit(check, method),
    ))
    found = [f for f in result.findings if _hit(check, method)(f)]
    assert found, f"{defect}: {check} not found in {result.calls} calls ({[f.invariant for f in result.findings]})"
    assert result.stopped_because == "stop-when"
    assert found[0].extra["reproduced"] is True
    assert found[0].severity == "violation"


def test_clean_host_command_run_is_clean(spec_dir: Any) -> None:
    # bounded by the examples drawn, not by the clock: a 5 s budget made the number of calls
    # the machine's speed (fewer than 20 on a loaded machine)
    result = run_commands(CommandRunConfig(target="host:embedded", spec=spec_dir, seed=1, budget_s=BOUND_S,
                                           examples=4, stateful_examples=4, verify=False,
                                           operation_cap_s=None, max_rounds=1))
    serious = [(f.invariant, f.steps[f.failing_step].method, f.message) for f in result.findings
               if f.severity in ("violation", "divergence")]
    assert serious == []
    assert result.calls > 20
    assert result.phase_calls.get("positive", 0) > 0 and result.phase_calls.get("negative", 0) > 0


def test_stateful_phase_chains_linked_commands(spec_dir: Any) -> None:
    result = run_commands(CommandRunConfig(
        target="host:embedded", spec=spec_dir, seed=2, budget_s=BOUND_S, phases=("stateful",), operation_cap_s=None,
        methods=("createSession", "createChat", "fetchTurns", "listSessions", "disposeSession", "resourceList"),
        stateful_examples=6, verify=False, max_rounds=1))
    assert result.phase_calls.get("stateful", 0) > 0, result.notices
    assert {"createSession", "createChat"} <= set(result.method_calls)
    assert [f for f in result.findings if f.severity == "violation"] == []


def test_a_host_that_is_not_ours_is_fuzzed_the_same_way(spec_dir: Any) -> None:
    target = f"host-cmd:{sys.executable} -m harness.cli host --port 0 --defect resource-read-traversal"
    result = run_commands(CommandRunConfig(target=target, spec=spec_dir, seed=2, budget_s=BOUND_S,
                                           methods=("resourceRead",), operation_cap_s=None,
                                           stop_when=_hit("CMD-CONFINEMENT", "resourceRead")))
    found = [f for f in result.findings if f.invariant == "CMD-CONFINEMENT"]
    assert found and found[0].severity == "divergence"  # not our host: its policy is not known to us
    assert found[0].extra["reproduced"] is True


def test_cli_exit_codes_findings_and_replay(spec_dir: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    monkeypatch.setenv("AHP_SPEC_DIR", str(spec_dir.path))
    out = tmp_path / "run"
    rc = main(["commands", "--target", "host:embedded?defect=resource-read-traversal", "--methods", "resourceRead",
               "--budget", "120s", "--seed", "2", "--stop-on-first", "--out", str(out), "--quiet"])
    assert rc == 1
    files = sorted((out / "findings").glob("cmd-confinement-*.json"))
    assert len(files) == 1
    # its own header on stderr; results (finding, verdict, report, replay command) on stdout
    printed = capsys.readouterr()
    assert printed.err.startswith("ahp-fuzz commands: target host:embedded?defect=resource-read-traversal")
    assert "ahp-fuzz run:" not in printed.err and "replay:" not in printed.err
    assert f"report: {out / 'report.json'}" in printed.out.splitlines()
    assert any(line.startswith("replay: ") and line.endswith(str(files[0])) for line in printed.out.splitlines())
    # the finding's header names the command; the verdict's cause lines replay by the full path
    assert "FINDING CMD-CONFINEMENT [" in printed.out and "] on resourceRead (commands) after" in printed.out
    summary = [line for line in printed.out.splitlines() if line.startswith("  CMD-") or line.startswith("  ST-")]
    assert summary and all(line.endswith(str(files[0])) or "/findings/" in line for line in summary)
    data = json.loads(files[0].read_text())
    assert data["format"] == "ahp-fuzz/command-finding" and data["invariant"]["id"] == "CMD-CONFINEMENT"
    assert "${ROOT}" in json.dumps(data["steps"]) and "/tmp/" not in json.dumps(data["steps"])
    report = json.loads((out / "report.json").read_text())
    assert "CMD-CONFINEMENT" in [f["invariant"] for f in report["findings"]]
    assert (out / "junit.xml").is_file()
    assert main(["replay", str(files[0])]) == 1
    assert main(["replay", str(files[0]), "--target", "host:embedded"]) == 0
    clean = main(["commands", "--target", "host:embedded", "--methods", "resourceRead,resourceList",
                  "--budget", "2s", "--seed", "1", "--no-stateful", "--out", str(tmp_path / "clean"), "--quiet"])
    assert clean == 0


def test_multiroot_check_on_a_host_without_the_capability() -> None:
    """A separate host process that does not advertise multipleWorkingDirectories keeps only the
    first directory (the spec's rule), so CMD-MULTIROOT stays quiet on it; keeping both is the
    counterexample (tests/test_bridge_checks.py)."""
    from harness.bridge.checks import multiroot
    from harness.bridge.fuzz import CommandSession

    s = CommandSession(f"host-cmd:{sys.executable} -m harness.cli host --port 0 --single-directory", None)
    try:
        assert s.multiroot is False
        s.setup()
        a, b = s.fixture.session_uris
        p = {"channel": "ahp-session:/two", "workingDirectories": [a, b]}
        obs = s.observe("createSession", p, lambda: s.call("createSession", p), "divergence")
        assert obs.reply.ok
        assert obs.sessions_after is not None
        assert obs.sessions_after["ahp-session:/two"]["workingDirectories"] == [a]
        assert multiroot(obs) is None
    finally:
        s.close()


class _FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_budget_is_hard_no_call_is_sent_after_it(spec_dir: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call to the host costs 1 s on an injected clock (a slow host, simulated) and the
    budget is 12 s: the run stops on the budget, no call reaches the host after it — not the rest
    of the example in flight, not a confirming replay of a finding made at the end — and a call
    cut short by the budget is not judged. (A 60 s budget once ran 66 s.)"""
    from harness.bridge.app import HostLink

    clock = _FakeClock()
    sent: list[tuple[float, str]] = []
    real = HostLink._call

    async def slow_call(self: HostLink, method: str, params: Any, timeout_s: float | None = None) -> Any:
        sent.append((clock.now, method))
        clock.now += 1.0
        return await real(self, method, params, timeout_s)

    monkeypatch.setattr(HostLink, "_call", slow_call)
    budget = 12.0
    result = run_commands(CommandRunConfig(
        target="host:embedded?defect=resource-read-traversal", spec=spec_dir, seed=2, budget_s=budget,
        methods=("resourceRead",), operation_cap_s=None, clock=clock))
    assert result.stopped_because == "budget"
    assert sent, "no call was made"
    late = [(t, m) for t, m in sent if t >= budget]
    assert late == [], f"calls sent after the {budget:g} s budget: {late}"
    # on the injected clock (no wall-clock time is measured): at most the call in flight when
    # the budget ran out, and the run's elapsed time is that clock's
    assert clock.now <= budget + 1.0
    assert result.elapsed_s == clock.now  # the injected clock's reading, which started at 0
    assert not any("budget" in f.message for f in result.findings)  # a cut-short call is not judged


def test_a_run_bounded_by_rounds_stops_on_them(spec_dir: Any) -> None:
    result = run_commands(CommandRunConfig(target="host:embedded", spec=spec_dir, seed=1, budget_s=BOUND_S,
                                           methods=("ping",), examples=2, phases=("positive",),
                                           operation_cap_s=None, max_rounds=2, verify=False))
    assert result.stopped_because == "rounds" and result.rounds == 2
    assert result.method_calls == {"ping": 5}  # one first (every method once), then 2 rounds × 2


def test_only_a_must_command_answered_32601_is_a_violation(spec_dir: Any) -> None:
    """-32601 for `ping` breaks a MUST (CMD-MUST-METHOD); for `createTerminal` it is a command the
    host lacks (a note, fuzzed no further), and another error code for ping is not this check's."""
    from harness.bridge.app import Reply
    from harness.bridge.checks import Observation, must_answer

    def obs(method: str, code: int | None) -> Observation:
        reply = Reply(result=None) if code is None else Reply(error={"code": code, "message": "x"})
        return Observation(method, {"channel": "ahp-root://"}, reply, None, {}, {}, None, None)  # type: ignore[arg-type]

    assert must_answer(obs("ping", -32601)) is not None and must_answer(obs("ping", None)) is None
    assert must_answer(obs("createTerminal", -32601)) is None and must_answer(obs("ping", -32602)) is None
    result = run_commands(CommandRunConfig(target="host:embedded?defect=no-ping", spec=spec_dir, seed=1,
                                           budget_s=BOUND_S, methods=("ping", "createSession"), examples=3,
                                           stateful_examples=0, phases=("positive",), verify=False,
                                           operation_cap_s=None, max_rounds=1))
    assert {f.invariant for f in result.findings if f.steps[f.failing_step].method == "ping"} == {"CMD-MUST-METHOD"}
    assert not [n for n in result.notices if "lacks ping" in n]
