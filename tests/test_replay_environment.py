"""Replays are independent of the environment (issue 15 item 5).

A finding records the schema-derived switches its verdict depends on (`extra["verdict"]`,
harness/spec/verdict.py) and `ahp-fuzz replay` uses exactly those, whatever `$AHP_SPEC_DIR`
says. Every corpus file replays to the same exit code with the variable unset, set to 0.6.0 and
set to 0.7.0 (in process, through the command line's `main`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.chunks import _switches
from harness.engine.run import RunConfig
from harness.reference import Profile
from harness.spec.specdir import ENV_VAR, SpecDir
from harness.spec.verdict import OFF, VerdictSwitches, checks_off
from harness.targets.reference import ReferenceTarget

from .conftest import sibling_spec

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
FILES = sorted(CORPORA.glob("*/*.json"))
INV014 = CORPORA / "known" / "inv-014-session-ce4c27b1cdd5.json"


def _environments() -> list[str | None]:
    return [None, str(sibling_spec("0.6.0").path), str(sibling_spec("0.7.0").path)]


def _replay(path: Path, env: str | None, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    if env is None:
        monkeypatch.delenv(ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(ENV_VAR, env)
    return main(["replay", str(path), *extra])


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_every_corpus_file_replays_to_the_same_verdict_in_every_environment(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    codes = {env: _replay(path, env, monkeypatch) for env in _environments()}
    capsys.readouterr()
    assert len(set(codes.values())) == 1, f"{path.name}: exit codes by $AHP_SPEC_DIR: {codes}"
    assert set(codes.values()) <= {0, 1}


def _typo_finding(tmp_path: Path) -> Path:
    """The INV-014 known finding with a request whose `chat` is a number: the built-in payload
    facts accept it (types are not judged), the action schema does not."""
    data = json.loads(INV014.read_text(encoding="utf-8"))
    data["steps"][0]["action"]["request"]["chat"] = 42
    out = tmp_path / "inv-014-typed.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_a_finding_judged_without_a_spec_replays_without_one_whatever_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _typo_finding(tmp_path)  # no "verdict" key: judged with the switches off
    codes = [_replay(path, env, monkeypatch) for env in _environments()]
    assert codes == [1, 1, 1]  # before: 1 unset, 0 with the spec (the step became a probe)
    assert "recorded in the finding" in capsys.readouterr().err


def test_a_finding_judged_with_a_schema_needs_that_spec_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _typo_finding(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["extra"]["verdict"] = {"payloadSchema": "0.7.0", "publishedSchema": "0.7.0"}
    path.write_text(json.dumps(data), encoding="utf-8")
    unset, v060, v070 = _environments()
    assert _replay(path, unset, monkeypatch) == 2  # cannot judge it as it was judged
    assert "0.7.0 spec folder" in capsys.readouterr().err
    assert _replay(path, v060, monkeypatch) == 2
    assert _replay(path, v070, monkeypatch) == 0  # the schema makes the step a probe
    assert _replay(path, unset, monkeypatch, "--spec", str(v070)) == 0


def test_a_malformed_verdict_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(INV014.read_text(encoding="utf-8"))
    data["extra"]["verdict"] = {"payloadSchema": 7}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _replay(path, None, monkeypatch) == 2
    assert "verdict" in capsys.readouterr().err


def test_a_run_records_the_switches_it_judged_with(monkeypatch: pytest.MonkeyPatch) -> None:
    v070 = sibling_spec("0.7.0")
    profile = Profile.named("0.7.0")
    config = RunConfig(target=ReferenceTarget(profile), target_spec="reference", target_is_model=True,
                       profile=profile, verdict=VerdictSwitches.of_spec(v070))
    assert _switches(config).to_json() == {"payloadSchema": "0.7.0", "publishedSchema": "0.7.0"}
    # Without the command line's record: what this process's checks use.
    monkeypatch.delenv(ENV_VAR, raising=False)
    bare = RunConfig(target=ReferenceTarget(profile), target_spec="reference", target_is_model=True,
                     profile=profile)
    assert _switches(bare) == OFF
    monkeypatch.setenv(ENV_VAR, str(v070.path))
    assert _switches(bare) == VerdictSwitches(None, "0.7.0")


def test_a_finding_of_another_versions_lane_records_no_payload_schema() -> None:
    """A 0.8.0 lane of a 0.7.0 run is judged without the folder's 0.7.0 action schema
    (`arms.lane_schema`), so its findings record that switch off: replayed with the 0.7.0 schema,
    a `session/customizationToggled {id, enablement[]}` step is schema-invalid, a probe, and the
    finding `did not reproduce` (seen replaying a crafted 0.8.0-lane finding)."""
    v070 = sibling_spec("0.7.0")
    profile = Profile.named("0.7.0-main")
    config = RunConfig(target=ReferenceTarget(profile), target_spec="reference", target_is_model=True,
                       profile=profile, verdict=VerdictSwitches.of_spec(v070))
    assert _switches(config, Profile.named("0.8.0")) == VerdictSwitches(None, "0.7.0")
    assert _switches(config, Profile.named("0.7.0")) == VerdictSwitches("0.7.0", "0.7.0")  # same version
    assert _switches(config) == VerdictSwitches("0.7.0", "0.7.0")


def test_a_run_without_a_spec_says_which_checks_are_off(tmp_path: Path) -> None:
    line = checks_off(None)
    assert line is not None and "INV-007" in line and "required-key" in line
    assert checks_off(sibling_spec("0.7.0")) is None
    # A folder with fixtures but no schema: both off, and it says why.
    fake = tmp_path / "fixtures-only"
    (fake / "types" / "test-cases").mkdir(parents=True)
    said = checks_off(SpecDir(fake))
    assert said is not None and "actions schema or state schema" in said


def test_run_prints_the_checks_off_line_once_at_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    code = main(["run", "--target", "reference", "--budget", "600s", "--chunks", "1", "--seed", "1", "--max-steps", "3",
                 "--chunk", "1", "--kinds", "terminal", "--max-findings", "1", "--out", str(tmp_path / "r"),
                 "--quiet"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code in (0, 1)
    assert text.count("INV-007 and INV-007.published are off") == 1
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert [n for n in report["notices"] if "INV-007" in n] == [checks_off(None)]
