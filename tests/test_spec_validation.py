"""A spec folder is validated when it is loaded (issue 24): every schema parses as a JSON object
and every fixture is JSON. A corrupt file is exit 2 naming the file and the error from every
command — before, a corrupt `schema/actions.schema.json` gave exit 3 (internal error) from `run`
and exit 0, "288 passed", from `conformance`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.specdir import ENV_VAR, SpecDir, SpecDirCorrupt

ROOT = Path(__file__).resolve().parent.parent
REGRESSION = ROOT / "corpora" / "regressions" / "inv-d01-session-4fcda5233c3c.json"


def _copy(spec_dir: SpecDir, into: Path) -> Path:
    copy = into / "spec-0.7.0"
    shutil.copytree(spec_dir.path, copy, ignore=shutil.ignore_patterns("docs"))
    return copy


@pytest.fixture
def corrupt(spec_dir: SpecDir, tmp_path: Path) -> Path:
    """A copy of the spec folder whose actions schema is cut off half-way."""
    copy = _copy(spec_dir, tmp_path)
    schema = copy / "schema" / "actions.schema.json"
    text = schema.read_text(encoding="utf-8")
    schema.write_text(text[: len(text) // 2], encoding="utf-8")
    return copy


def _said_the_file(capsys: pytest.CaptureFixture[str], corrupt: Path) -> str:
    err = capsys.readouterr().err
    assert f"{corrupt / 'schema' / 'actions.schema.json'}: not valid JSON (" in err, err
    assert "internal error" not in err
    return err


def test_loading_a_corrupt_folder_names_the_file_and_the_error(corrupt: Path) -> None:
    with pytest.raises(SpecDirCorrupt, match=r"actions\.schema\.json: not valid JSON \(.*line \d+ column \d+\)"):
        SpecDir(corrupt)


def test_a_fixture_that_is_not_json_or_not_an_object_is_named(spec_dir: SpecDir, tmp_path: Path) -> None:
    copy = _copy(spec_dir, tmp_path)
    fixture = sorted((copy / "types" / "test-cases" / "reducers").glob("*.json"))[0]
    fixture.write_text("{ not json", encoding="utf-8")
    with pytest.raises(SpecDirCorrupt, match=rf"{fixture.name}: not valid JSON"):
        SpecDir(copy)
    fixture.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SpecDirCorrupt, match=rf"{fixture.name}: a JSON list where a fixture"):
        SpecDir(copy)


def test_a_sound_folder_loads_and_keeps_its_parsed_schemas(spec_dir: SpecDir) -> None:
    again = SpecDir(spec_dir.path)
    assert set(again.schemas) == {"actions", "commands", "errors", "notifications", "state"}
    on_disk = json.loads(again.schema_path("actions").read_text(encoding="utf-8"))
    assert again.schemas["actions"] == on_disk


def test_run_exits_2_on_a_corrupt_spec(corrupt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--spec", str(corrupt), "--budget", "5s", "--kinds", "root", "--out", str(tmp_path / "r")])
    assert code == 2
    _said_the_file(capsys, corrupt)
    assert not (tmp_path / "r").exists()  # refused before anything started


def test_conformance_exits_2_on_a_corrupt_spec(corrupt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--spec", str(corrupt)]) == 2
    _said_the_file(capsys, corrupt)


def test_replay_exits_2_on_a_corrupt_spec(corrupt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(REGRESSION), "--target", "reference", "--spec", str(corrupt)]) == 2
    _said_the_file(capsys, corrupt)


def test_campaign_exits_2_on_a_corrupt_spec_before_any_worker_starts(
        corrupt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(ENV_VAR, str(corrupt))
    out = tmp_path / "c"
    assert main(["campaign", "--minutes", "0.1", "--workers", "1", "--out", str(out), "--quiet"]) == 2
    assert "AHP_SPEC_DIR: " in _said_the_file(capsys, corrupt)
    assert not (out / "workers").exists()


def test_commands_exits_2_on_a_corrupt_spec(corrupt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["commands", "--target", "host:embedded", "--spec", str(corrupt), "--budget", "2s",
                 "--out", str(tmp_path / "c")]) == 2
    _said_the_file(capsys, corrupt)


def test_the_plugin_names_a_corrupt_spec_as_a_usage_error(corrupt: Path, tmp_path: Path) -> None:
    project = tmp_path / "their-client"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
                           "--ahp-target", "reference", "--ahp-spec", str(corrupt)],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    said = done.stdout + done.stderr
    assert done.returncode == 4, said[-3000:]
    assert "INTERNALERROR" not in said
    assert f"--ahp-spec: {corrupt / 'schema' / 'actions.schema.json'}: not valid JSON" in said
