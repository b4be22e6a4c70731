"""Output for people and for logs: no markup read from data, severity always shown, no hard
wrapping, progress on stderr and results on stdout, replay commands a person can paste, run
folders that are never silently mixed, files others can read, and quiet ends of a closed pipe."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import main
from harness.cli._common import program_name
from harness.corpus.finding import load_finding
from harness.engine.events import FindingFound, Notice, RunFinished, RunStarted
from harness.report.console import ConsoleReporter
from harness.report.writers import FindingWriter, JsonReport, JunitReport

ROOT = Path(__file__).resolve().parent.parent
KNOWN = sorted((ROOT / "corpora" / "known").glob("*.json"))


def _consoles(width: int = 40) -> tuple[io.StringIO, io.StringIO, ConsoleReporter]:
    err, out = io.StringIO(), io.StringIO()
    reporter = ConsoleReporter(
        Console(file=err, width=width, markup=False, highlight=False, soft_wrap=True),
        out=Console(file=out, width=width, markup=False, highlight=False, soft_wrap=True),
    )
    return err, out, reporter


def test_data_is_never_read_as_markup_and_severity_is_shown() -> None:
    err, out, console = _consoles()
    finding = load_finding(KNOWN[0])
    finding.severity = "violation"
    finding.message = "state [/bold] had [red]x[/red] at $.turns[0]"
    console(RunStarted("adapter:node a[/b].js [b]", "0.7.0", 1, 5.0, ("chat",)))
    console(FindingFound(finding, True))
    console(Notice("kinds [terminal] only"))
    text = out.getvalue()
    assert f"FINDING {finding.invariant} [violation] on chat" in text
    assert "state [/bold] had [red]x[/red] at $.turns[0]" in text
    assert "adapter:node a[/b].js [b]" in err.getvalue()
    assert "kinds [terminal] only" in err.getvalue()


def test_lines_are_not_wrapped_when_not_a_terminal() -> None:
    _, out, console = _consoles(width=40)
    finding = load_finding(KNOWN[0])
    finding.message = "x" * 200
    console(FindingFound(finding, True))
    lines = out.getvalue().splitlines()
    assert any(line.strip() == "x" * 200 for line in lines), lines


def test_run_puts_progress_on_stderr_and_results_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--out", str(tmp_path / "o"), "--budget", "600s", "--chunks", "1", "--kinds", "terminal",
                 "--seed", "3"]) == 0
    cap = capsys.readouterr()
    assert "ahp-fuzz run: target reference" in cap.err
    assert "clean: 0 finding(s)" in cap.out and "clean:" not in cap.err
    assert f"report: {tmp_path / 'o' / 'report.json'}" in cap.out


def test_replay_puts_its_result_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(KNOWN[0])]) == 1
    cap = capsys.readouterr()
    assert "reproduced:" in cap.out and "reproduced:" not in cap.err


def test_junit_and_report_name_the_real_finding_file_and_the_program(tmp_path: Path) -> None:
    finding = load_finding(KNOWN[0])
    writer = FindingWriter(tmp_path / "findings", program=".venv/bin/ahp-fuzz")
    report = JsonReport(tmp_path / "report.json", writer)
    junit = JunitReport(tmp_path / "junit.xml", writer)
    for sink in (writer, report, junit):
        sink(FindingFound(finding, True))
        sink(RunFinished(1.0, 1, 1, [finding], {}))
    path = writer.paths[finding.signature]
    assert path.is_file()
    command = f".venv/bin/ahp-fuzz replay {path}"
    assert command in (tmp_path / "junit.xml").read_text()
    assert json.loads((tmp_path / "report.json").read_text())["findings"][0]["replay"] == command
    assert json.loads(path.read_text())["replay"] == command
    assert "corpora/" not in (tmp_path / "junit.xml").read_text()


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        (".venv/bin/ahp-fuzz", ".venv/bin/ahp-fuzz"),
        ("/usr/lib/python3/dist-packages/harness/cli/__main__.py", "-m harness.cli"),
        ("pytest", "ahp-fuzz"),
    ],
)
def test_printed_commands_name_ahp_fuzz_as_it_was_invoked(argv0: str, expected: str) -> None:
    assert program_name(argv0).endswith(expected)


def test_program_name_on_path_is_the_bare_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "bin" / "ahp-fuzz"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(exe.parent))
    assert program_name(str(exe)) == "ahp-fuzz"
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.chdir(tmp_path)
    assert program_name(str(exe)) == "bin/ahp-fuzz"


def _fake_earlier_run(out: Path) -> Path:
    (out / "findings").mkdir(parents=True)
    old = out / "findings" / KNOWN[0].name
    shutil.copy(KNOWN[0], old)
    (out / "report.json").write_text(json.dumps({"format": "ahp-fuzz/report", "status": "finished",
                                                 "startedAt": "2026-01-01T00:00:00Z", "findings": [{}]}))
    return old


def test_an_earlier_run_is_refused_then_overwritten_or_appended(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    old = _fake_earlier_run(out)
    (out / "notes.txt").write_text("mine")  # not a run output: never removed
    args = ["run", "--out", str(out), "--budget", "600s", "--chunks", "1", "--chunk", "3", "--kinds", "terminal"]
    assert main(args) == 2
    assert "holds a run started 2026-01-01T00:00:00Z (finished, 1 finding(s))" in capsys.readouterr().err
    assert old.is_file()

    assert main([*args, "--append"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["earlierFindings"] == [str(old)] and old.is_file()

    assert main([*args, "--overwrite"]) == 0
    assert not old.exists() and (out / "notes.txt").read_text() == "mine"
    assert "earlierFindings" not in json.loads((out / "report.json").read_text())


def test_output_files_are_readable_by_others(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        finding = load_finding(KNOWN[0])
        writer = FindingWriter(tmp_path / "findings")
        report = JsonReport(tmp_path / "report.json", writer)
        junit = JunitReport(tmp_path / "junit.xml", writer)
        for sink in (writer, report, junit):
            sink(RunStarted("reference", "0.7.0", 1, 1.0, ("chat",)))
            sink(FindingFound(finding, True))
            sink(RunFinished(1.0, 1, 1, [finding], {}))
    finally:
        os.umask(old)
    for p in (tmp_path / "report.json", tmp_path / "junit.xml", writer.paths[finding.signature]):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


def test_a_closed_stdout_pipe_ends_quietly() -> None:
    """`ahp-fuzz strategies --json | head -0`: the reader is gone before the first write."""
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "strategies", "--json"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_lint_exits_1_when_it_reports_an_error(tmp_path: Path, spec_dir: object) -> None:
    """The pinned spec has a dangling $ref in a union (repaired for generation, still reported):
    the lint says so and exits 1; with that member removed it exits 0."""
    copy = tmp_path / "spec"
    shutil.copytree(spec_dir.path, copy)  # type: ignore[attr-defined]
    run = [sys.executable, "-m", "harness.cli", "strategies", "--lint", "--spec", str(copy)]
    broken = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "dangling-ref" in broken.stdout
    assert broken.returncode == 1
    actions = copy / "schema" / "actions.schema.json"
    data = json.loads(actions.read_text())
    union = data["$defs"]["StateAction"]["oneOf"]
    data["$defs"]["StateAction"]["oneOf"] = [m for m in union if m.get("$ref") != "#/$defs/"]
    actions.chmod(0o644)
    actions.write_text(json.dumps(data))
    fixed = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "dangling-ref" not in fixed.stdout
    assert fixed.returncode == 0, fixed.stdout[-2000:] + fixed.stderr


def test_a_folder_of_a_run_still_running_is_never_cleared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    old = _fake_earlier_run(out)
    (out / "report.json").write_text(json.dumps({"format": "ahp-fuzz/report", "status": "running",
                                                 "pid": os.getpid(), "startedAt": "2026-01-01T00:00:00Z"}))
    import socket

    data = json.loads((out / "report.json").read_text())
    data["host"] = socket.gethostname()
    (out / "report.json").write_text(json.dumps(data))
    assert main(["run", "--out", str(out), "--budget", "1s", "--overwrite"]) == 2
    assert "still running" in capsys.readouterr().err
    assert old.is_file()



@pytest.mark.parametrize("command", ["invariants", "strategies"])
def test_tables_do_not_wrap_when_piped(command: str) -> None:
    """README: no line is wrapped. Piped, a row of `invariants` or `strategies` is one line
    (before: rich wrapped them at 80 columns, a row's cells continued on lines of their own)."""
    done = subprocess.run([sys.executable, "-m", "harness.cli", command], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parent.parent, stdin=subprocess.DEVNULL,
                          env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")})
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    continued = [line for line in rows if line.split("│")[1].strip() == ""]
    assert rows and continued == [], continued[:3]
    if command == "invariants":
        from harness.invariants.registry import REGISTRY

        assert len(rows) == len(REGISTRY)


def test_report_json_carries_each_findings_time_to_exposure(tmp_path: Path) -> None:
    import dataclasses

    import jsonschema

    finding = load_finding(KNOWN[0])
    exposed = dataclasses.replace(finding, extra={**finding.extra, "exposure": {"seconds": 2.5, "steps": 41, "chunk": 0}})
    plain = dataclasses.replace(finding, extra={k: v for k, v in finding.extra.items() if k != "exposure"})
    for name, f in (("exposed", exposed), ("plain", plain)):
        writer = FindingWriter(tmp_path / name / "findings")
        report = JsonReport(tmp_path / name / "report.json", writer)
        for sink in (writer, report):
            sink(FindingFound(f, True))
            sink(RunFinished(1.0, 1, 41, [f], {}))
    data = json.loads((tmp_path / "exposed" / "report.json").read_text())
    assert data["findings"][0]["exposure"] == {"seconds": 2.5, "steps": 41, "chunk": 0}
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    assert "exposure" not in json.loads((tmp_path / "plain" / "report.json").read_text())["findings"][0]
