"""Every error of the command line reads the same and is exit 2 where it is a setup problem
(issue 35): an option argparse refuses is one line naming it and one line of `--help` advice
(no usage block first); with `--json` every error — argparse's included — is one JSON document
on stdout; a target announcing a version without rules is a setup error, not our crash."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.specdir import ENV_VAR

ANNOUNCES_999 = ("import json, sys\n"
                 "print(json.dumps({'ahpAdapter': 1, 'forms': ['simple'], 'name': 'future', "
                 "'protocolVersion': '9.9.9'}), flush=True)\n"
                 "for line in sys.stdin:\n    pass\n")


@pytest.mark.parametrize(("argv", "said", "help_of"), [
    (["run", "--budget", "0"], "argument --budget: must be longer than zero, got '0'", "ahp-fuzz run"),
    (["run", "--budget", "-5s"], "argument --budget: must be longer than zero, got '-5s'", "ahp-fuzz run"),
    (["run", "--seed", "abc"], "argument --seed: not an integer: 'abc'", "ahp-fuzz run"),
    (["run", "--no-such-option"], "unrecognized arguments: --no-such-option", "ahp-fuzz run"),
    (["replay"], "the following arguments are required: file", "ahp-fuzz replay"),
    (["export-fixture"], "the following arguments are required: FINDING", "ahp-fuzz export-fixture"),
])
def test_an_option_error_is_one_line_then_the_help_advice(
        capsys: pytest.CaptureFixture[str], argv: list[str], said: str, help_of: str) -> None:
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.err.splitlines() == [f"ahp-fuzz: error: {said}", f"  see: {help_of} --help"], cap.err
    assert cap.out == ""  # no --json: nothing on stdout


@pytest.mark.parametrize("argv", [
    ["run", "--budget", "0", "--json"],
    ["run", "--seed", "abc", "--json"],
    ["run", "--json", "--no-such-option"],
    ["campaign", "--minutes", "1", "--workers", "0", "--json"],
    ["replay", "--json"],
])
def test_json_prints_one_document_for_every_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 2
    cap = capsys.readouterr()
    doc = json.loads(cap.out)  # the whole of stdout is one document
    assert doc["format"] == "ahp-fuzz/result" and doc["command"] == argv[0]
    assert doc["verdict"] == "usage-error" and doc["exitCode"] == 2
    assert doc["error"] and doc["error"] in cap.err


def test_an_adapter_announcing_a_version_without_rules_is_exit_2_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "internal error: ValueError … this is a bug in ahp-fuzz", exit 3. Without a spec
    folder the announcement chooses the profile (with one, its CHANGELOG does, and a different
    announcement is a note)."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    script = tmp_path / "future_adapter.py"
    script.write_text(ANNOUNCES_999, encoding="utf-8")
    out = tmp_path / "run"
    code = main(["run", "--target", f"adapter:{sys.executable} {script}", "--budget", "600s", "--chunks", "1",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("ahp-fuzz: error: unknown profile announced by the target: "
                                                     "'9.9.9'"), err
    assert "internal error" not in err and not (out / "internal-error.txt").exists()
