"""The pytest plugin in a throwaway project whose only configuration is the plugin: it passes on
the reference adapter, fails with a paste-able replay command on a seeded defect, and the
finding it saves, exported as a fixture, fails the defect and passes the reference."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

MUTANTS = Path(__file__).resolve().parent / "mutants.py"
ADAPTER = f"adapter:{sys.executable} -m harness.targets.reference_adapter"


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "their-client"
    p.mkdir()
    (p / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (p / "test_own.py").write_text("def test_own():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    return p


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    names = {ep.value for ep in entry_points(group="pytest11")}
    assert "harness.pytest_plugin" in names, "reinstall: pip install -e . (pyproject declares the entry point)"


def test_without_a_target_the_plugin_adds_nothing(project: Path) -> None:
    r = _pytest(project, "--collect-only")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 test collected" in r.stdout
    assert "ahp-fuzz" not in r.stdout


def test_item_names_are_stable_and_marked_fuzz(project: Path) -> None:
    r = _pytest(project, "--collect-only", "-m", "fuzz", "--ahp-target", ADAPTER, "--ahp-kinds", "chat,session")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ahp-fuzz::fuzz[chat]" in r.stdout and "ahp-fuzz::fuzz[session]" in r.stdout
    assert "test_own" not in r.stdout  # not marked fuzz: deselected by -m fuzz
    # the count tells the truth: every item listed is counted ("no tests collected" it said)
    listed = r.stdout.count("ahp-fuzz::")
    assert f"{listed}/{listed + 1} tests collected (1 deselected)" in r.stdout, r.stdout[-500:]
    header = _pytest(project, "--co", "--ahp-target", ADAPTER, "--ahp-kinds", "chat")
    assert "collected 0 items" not in header.stdout and "no tests collected" not in header.stdout


@pytest.mark.fuzz
def test_pass_on_the_reference_fail_with_a_replay_command_on_a_defect(project: Path, tmp_path: Path) -> None:
    ok = _pytest(project, "-m", "fuzz", "--ahp-target", ADAPTER, "--ahp-kinds", "chat", "--ahp-chunks", "1",
                 "--ahp-examples", "8")
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", ok.stdout).group(1))  # type: ignore[union-attr]
    assert passed >= 1

    defect = f"{ADAPTER} --model {MUTANTS}:turn_started_keeps_read"
    bad = _pytest(project, "-m", "fuzz", "--ahp-target", defect, "--ahp-kinds", "chat", "--ahp-chunks", "1",
                  "--ahp-examples", "8", "-k", "fuzz[")
    assert bad.returncode == 1, bad.stdout[-3000:]
    assert "FAILED ahp-fuzz::fuzz[chat]" in bad.stdout
    m = re.search(r"replay: ((\S+) replay (\S+\.json))", bad.stdout)
    assert m, bad.stdout[-3000:]
    finding = Path(m.group(3))
    assert finding.is_file()
    # the command is paste-able, also where the virtualenv is not on PATH (a CI log read later):
    # it names ahp-fuzz by its full path and reproduces the finding on the recorded target
    assert Path(shlex.split(m.group(2))[0]).is_absolute(), m.group(1)
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}
    again = subprocess.run(shlex.split(m.group(1)), capture_output=True, text=True, timeout=120, env=bare,
                           cwd=project)
    assert again.returncode == 1, again.stdout + again.stderr

    fixtures = tmp_path / "fixtures"
    exported = _cli("export-fixture", str(finding), "--out", str(fixtures))
    assert exported.returncode == 0, exported.stderr
    on_defect = _cli("conformance", "--fixtures", str(fixtures), "--target", defect)
    assert on_defect.returncode == 1, on_defect.stdout
    on_reference = _cli("conformance", "--fixtures", str(fixtures), "--target", ADAPTER)
    assert on_reference.returncode == 0, on_reference.stdout
