"""Relative paths mean the folder the command (or the pytest session) was started in, resolved
once at start-up (issue 24): `AHP_SPEC_DIR=../shared/ahp-spec/0.7.0`, the form the README and
the skip message suggest, works for tests that change directory or start processes elsewhere."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli._paths import resolve_at_start
from harness.spec.specdir import ENV_VAR, SpecDir, pin_env

ROOT = Path(__file__).resolve().parent.parent

#: The tests that failed with a relative AHP_SPEC_DIR (issue 24): each runs the CLI or pytest
#: from another folder, or changes directory, and so read the relative path from the wrong place.
FIVE = (
    "tests/test_baseline_holds.py::test_the_pytest_plugin_refuses_a_bad_baseline_as_a_usage_error",
    "tests/test_cli_conventions.py::test_a_run_report_records_the_folder_it_ran_in",
    "tests/test_cli_findings.py::test_regression_replays_on_its_recorded_target_from_another_folder",
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's harness, whatever folder the process starts in
    env.update(extra)
    return env


def test_the_five_tests_pass_with_a_relative_spec_dir(spec_dir: SpecDir) -> None:
    relative = os.path.relpath(spec_dir.path, ROOT)
    assert not os.path.isabs(relative)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *FIVE],
                          cwd=ROOT, env=_env(AHP_SPEC_DIR=relative), capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "5 passed" in done.stdout, done.stdout[-2000:]


def test_a_relative_spec_env_is_made_absolute_against_the_start_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "../spec/0.7.0")
    assert pin_env(tmp_path / "here") == str(tmp_path / "spec" / "0.7.0")
    assert os.environ[ENV_VAR] == str(tmp_path / "spec" / "0.7.0")
    monkeypatch.setenv(ENV_VAR, "/abs/spec")
    assert pin_env(tmp_path) == "/abs/spec"  # an absolute path is left as it is
    monkeypatch.delenv(ENV_VAR)
    assert pin_env(tmp_path) is None and ENV_VAR not in os.environ


def test_the_cli_resolves_its_path_options_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "spec")
    args = argparse.Namespace(spec="s/0.7.0", baseline="b.json", database="/db", fixtures=None,
                              out="reports/x")
    resolve_at_start(args, tmp_path)
    assert os.environ[ENV_VAR] == str(tmp_path / "spec")
    assert args.spec == str(tmp_path / "s" / "0.7.0") and args.baseline == str(tmp_path / "b.json")
    assert args.database == "/db" and args.fixtures is None
    assert args.out == "reports/x"  # printed back as given; the CLI never changes directory


def test_the_cli_entry_pins_the_spec_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`main` resolves before the command runs: a command started in tmp_path with a relative
    AHP_SPEC_DIR leaves it absolute for every process it starts."""
    from harness.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, "no-such-spec")
    assert main(["invariants", "--severity", "known"]) == 0
    capsys.readouterr()
    assert os.environ[ENV_VAR] == str(tmp_path / "no-such-spec")


def _project(tmp_path: Path) -> Path:
    p = tmp_path / "their-client"
    p.mkdir()
    (p / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return p


def test_the_plugin_reads_a_relative_spec_env_from_its_start_folder(tmp_path: Path, spec_dir: SpecDir) -> None:
    project = _project(tmp_path)
    relative = os.path.relpath(spec_dir.path, project)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
                           "--ahp-target", "reference", "--ahp-kinds", "chat"],
                          cwd=project, env=_env(AHP_SPEC_DIR=relative), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "ahp-fuzz::conformance[reducer:" in done.stdout


def test_the_plugin_names_a_spec_folder_that_is_not_there_as_a_usage_error(tmp_path: Path) -> None:
    """Before: pytest's INTERNALERROR traceback (SpecDirError) and exit 3."""
    project = _project(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
                           "--ahp-target", "reference"],
                          cwd=project, env=_env(AHP_SPEC_DIR="../no/such/spec"), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "INTERNALERROR" not in said
    assert f"spec directory not found: {tmp_path / 'no' / 'such' / 'spec'}" in said


def test_the_plugin_takes_a_ts_checkout_as_its_spec_folder(tmp_path: Path, spec_dir: SpecDir) -> None:
    """As `run` and `conformance` do: a `ts:DIR` target's checkout gives the conformance items
    (before, they skipped with "no spec directory")."""
    project = _project(tmp_path)
    env = _env()
    env.pop(ENV_VAR, None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
                           "--ahp-target", f"ts:{spec_dir.path}", "--ahp-kinds", "chat"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "ahp-fuzz::conformance[reducer:" in done.stdout
    assert "conformance[no-spec-dir]" not in done.stdout


def test_the_plugin_resolves_its_corpus_against_its_start_folder(tmp_path: Path) -> None:
    """`--ahp-corpus` relative: the items name the files, and replay them, from the folder pytest
    started in, even when a test of the project changes directory before they run."""
    project = _project(tmp_path)
    (project / "corpus").mkdir()
    regression = ROOT / "corpora" / "regressions" / "inv-d01-session-4fcda5233c3c.json"
    (project / "corpus" / regression.name).write_bytes(regression.read_bytes())
    (project / "test_a_wanderer.py").write_text(
        "import os\n\ndef test_a_wanderer(tmp_path):\n    os.chdir(tmp_path)\n", encoding="utf-8")
    env = _env()
    env.pop(ENV_VAR, None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--ahp-target", "reference", "--ahp-kinds", "root", "--ahp-chunks", "1",
                           "--ahp-examples", "2", "--ahp-corpus", "corpus", "-k", "wanderer or corpus"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-2000:]
