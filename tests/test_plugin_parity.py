"""The pytest plugin and `ahp-fuzz run` judge one target the same way (issue 35): on a `ts:`
checkout both take the checkout as the spec folder — the same verdict switches recorded in
their findings, INV-007 and INV-007.published on in both —, and with the plugin's lane
(`run --lane hypothesis`), seed, chunks and kind they find the same causes. The plugin's FAILED text names the replay
command its finding file holds, and it leaves no `.hypothesis/` in the project.

Bounded by chunks and examples, never by time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.spec.specdir import ENV_VAR, SpecDir
from harness.targets.base import TargetSetupError

#: A TypeScript terminal reducer that handles only the title: every other change is lost.
TS_STATE = """
export interface TerminalState { title: string; content: unknown[]; modifiedAt?: string }
export function stamp(): string { return new Date(Date.now()).toISOString(); }
"""
TS_REDUCERS = """
import { stamp, type TerminalState } from './state.js';

export function terminalReducer(state: TerminalState, action: { type: string; title?: string }): TerminalState {
  if (action.type === 'terminal/titleChanged' && typeof action.title === 'string') {
    return { ...state, title: action.title, modifiedAt: stamp() };
  }
  return state;
}
"""


@pytest.fixture(scope="module")
def tsx() -> None:
    from harness.targets.typescript import ensure_tsx

    try:
        ensure_tsx()
    except TargetSetupError as e:
        pytest.skip(f"tsx cannot be installed here: {e}")


def _checkout(tmp_path: Path, spec_dir: SpecDir) -> Path:
    """An AHP checkout: TypeScript reducers, the spec's schemas and CHANGELOG (no fixtures)."""
    root = tmp_path / "ahp"
    (root / "types").mkdir(parents=True)
    (root / "types" / "state.ts").write_text(textwrap.dedent(TS_STATE), encoding="utf-8")
    (root / "types" / "reducers.ts").write_text(textwrap.dedent(TS_REDUCERS), encoding="utf-8")
    shutil.copytree(spec_dir.path / "schema", root / "schema")
    shutil.copy(spec_dir.path / "CHANGELOG.md", root / "CHANGELOG.md")
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_")) and k != ENV_VAR}
    return env


def _finding(path: str | Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def test_plugin_and_run_judge_a_ts_checkout_alike(tsx: None, tmp_path: Path, spec_dir: SpecDir) -> None:
    target = f"ts:{_checkout(tmp_path, spec_dir)}"
    out = tmp_path / "run"
    ran = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--target", target, "--kinds", "terminal", "--seed", "0",
         "--chunks", "1", "--chunk", "8", "--lane", "hypothesis", "--budget", "600s", "--quiet", "--out", str(out)],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-2000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    version = report["schemaChecks"]["publishedSchema"]
    assert version and report["schemaChecks"] == {"payloadSchema": version, "publishedSchema": version}
    run_findings = [_finding(f["file"]) for f in report["findings"]]

    project = tmp_path / "their-client"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "fuzz", "--ahp-target", target,
         "--ahp-kinds", "terminal", "--ahp-seed", "0", "--ahp-chunks", "1", "--ahp-examples", "8",
         "--ahp-budget", "600s"],
        cwd=project, env=_env(), capture_output=True, text=True, timeout=600)
    assert tested.returncode == 1, tested.stdout[-3000:] + tested.stderr[-2000:]
    assert "FAILED ahp-fuzz::fuzz[terminal]" in tested.stdout
    assert f"spec folder {target[3:]}" in tested.stdout  # said after "collected N items", as `run` says it
    # Each distinct replay once: where `CI` is set, pytest repeats the whole failure message in
    # its short summary (not cut to the terminal's width), so each replay line appears twice.
    replays = sorted(set(re.findall(r"replay: (\S+ replay (\S+\.json))", tested.stdout)))
    assert replays, tested.stdout[-3000:]
    plugin_findings = []
    for command, path in replays:
        finding = _finding(path)
        assert finding["replay"] == command  # the FAILED text's replay is the finding file's
        plugin_findings.append(finding)

    # The same switches in every finding of both, and the same causes found.
    switches = {json.dumps(f["extra"]["verdict"], sort_keys=True) for f in run_findings + plugin_findings}
    assert switches == {json.dumps(report["schemaChecks"], sort_keys=True)}
    assert sorted(f["signature"] for f in plugin_findings) == sorted(f["signature"] for f in run_findings)

    # Hypothesis kept its files under .ahp-fuzz/, not in the project.
    assert not (project / ".hypothesis").exists()
    assert sorted(p.name for p in project.iterdir()) == [".ahp-fuzz", "pytest.ini"]
