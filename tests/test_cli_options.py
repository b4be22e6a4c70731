"""`ahp-fuzz run` refuses bad input before anything starts, and its exit codes mean what they
say: 0 clean, 1 found, 2 usage or setup error, 3 internal error (traceback saved to a file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse rejects a bad value with exit status 2
        return int(e.code or 0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-steps", "0"], "--max-steps: must be at least 1"),
        (["--chunk", "0"], "--chunk: must be at least 1"),
        (["--timeout", "0"], "--timeout: must be a number of seconds greater than zero"),
        (["--timeout", "nan"], "--timeout: must be a number of seconds greater than zero"),
        (["--budget", "0s"], "--budget: must be longer than zero"),
        (["--budget", "soon"], "not a duration"),
        (["--adversarial", "150"], "--adversarial: must be between 0 and 100"),
        (["--probe-every", "-1"], "--probe-every: must be at least 0"),
        (["--max-findings", "0"], "--max-findings: must be at least 1"),
        (["--seed", "-3"], "--seed: must be at least 0"),
        (["--kinds", "chat,bogus"], "unknown state kind bogus"),
        (["--kinds", ","], "name at least one state kind"),
        (["--overwrite", "--append"], "not allowed with"),
        (["--target", "nonsense:x"], "unknown target"),
    ],
)
def test_bad_option_is_a_usage_error_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "out"
    assert exit_code(["run", "--out", str(out), "--budget", "1s", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (out / "report.json").exists()


def test_out_naming_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "report.txt"
    a_file.write_text("not a folder")
    assert exit_code(["run", "--out", str(a_file), "--budget", "1s"]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "not a folder"


def test_internal_error_exits_3_finalizes_the_report_and_saves_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the harness is never exit 1 ("found something")."""
    import harness.engine.run as campaign

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom: a bug in the engine")

    monkeypatch.setattr(campaign, "build_machine", broken)
    out = tmp_path / "out"
    # The Hypothesis lane's machine is the broken part (tests/test_fast_lane.py breaks the fast lane's);
    # a long budget so that a loaded machine's start-up never spends it first (a 2 s budget did)
    assert exit_code(["run", "--out", str(out), "--budget", "60s", "--lane", "hypothesis"]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom: a bug in the engine" in err
    assert "Traceback" not in err
    saved = (out / "internal-error.txt").read_text()
    assert "Traceback" in saved and "boom" in saved
    report = (out / "report.json").read_text()
    assert '"status": "error"' in report and "boom" in report
    assert "<error" in (out / "junit.xml").read_text()


def test_a_clean_run_exits_0_and_a_finding_exits_1(tmp_path: Path) -> None:
    assert exit_code(["run", "--out", str(tmp_path / "clean"), "--budget", "600s", "--chunks", "1",
                      "--kinds", "terminal"]) == 0
    from tests.faults import adapter

    # it stops at its first finding: the long budget only keeps a loaded machine from deciding it
    rc = exit_code(["run", "--out", str(tmp_path / "found"), "--budget", "600s", "--kinds", "chat",
                    "--max-findings", "1", "--target", adapter("--diverge-on", "chat/turnStarted")])
    assert rc == 1


def test_a_target_stays_usable_after_a_run_spent_its_budget() -> None:
    """The run's deadline binds the target only during the run: a replay afterwards (the CLI's
    confirmation, a test, the next run) must not see the expired budget."""
    import shlex
    import sys

    from harness.engine.events import EventBus
    from harness.engine.run import RunConfig, run_campaign
    from harness.reference import Profile
    from harness.targets.base import open_target
    from tests.faults import FAULT_ADAPTER

    profile = Profile.named("0.7.0")
    target = open_target("adapter:" + shlex.join([sys.executable, str(FAULT_ADAPTER)]), profile=profile)
    try:
        run_campaign(RunConfig(target=target, target_spec="fault", target_is_model=False, profile=profile,
                               budget_s=0.5, kinds=("terminal",)), EventBus())
        state = {"resource": "ahp-terminal:/t1", "title": "t", "content": []}
        assert target.reduce("terminal", state, {"type": "future/unknownAction"}, 1) == state
    finally:
        target.close()
