"""What a newcomer is told (issue 35, item 8): a spec folder whose CHANGELOG names no version is
named in the profile line (not "no spec folder"), `conformance --json` says the profile it used,
a finding whose valid-lane action has no `type` is refused (exit 2, one line) instead of
"not reproducing" with exit 0, and the how-to installs from a checkout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.reference.profile_rule import choose_profile
from harness.spec.specdir import SpecDir

ROOT = Path(__file__).resolve().parent.parent
REGRESSION = ROOT / "corpora" / "regressions" / "inv-d01-session-4fcda5233c3c.json"


def _folder_without_a_version(tmp_path: Path, spec_dir: SpecDir, changelog: str | None) -> Path:
    folder = tmp_path / "spec"
    shutil.copytree(spec_dir.path / "schema", folder / "schema")
    if changelog is not None:
        (folder / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    return folder


@pytest.mark.parametrize(("changelog", "says"), [
    ("# Changelog\n\nNothing released yet.\n", "names no released version"),
    (None, "has no CHANGELOG.md"),
])
def test_a_spec_folder_whose_changelog_names_no_version_is_named_in_the_profile_line(
        tmp_path: Path, spec_dir: SpecDir, changelog: str | None, says: str,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder_without_a_version(tmp_path, spec_dir, changelog)
    # `run --spec` sets $AHP_SPEC_DIR for the processes it starts: restored after this test (it
    # leaked into every later test's spec folder before)
    monkeypatch.setenv("AHP_SPEC_DIR", str(spec_dir.path))
    choice = choose_profile(spec=SpecDir(folder))
    assert choice.source == "pinned" and str(folder) in choice.why and says in choice.why
    assert "no --profile, spec folder" not in choice.why  # it had a spec folder
    assert choose_profile().why.startswith("pinned 0.7.0 (no --profile, spec folder")  # none at all: as before
    code = main(["run", "--spec", str(folder), "--kinds", "root", "--chunks", "1", "--chunk", "2", "--seed", "1",
                 "--budget", "600s", "--quiet", "--out", str(tmp_path / "run")])
    assert code == 0
    err = capsys.readouterr().err
    assert "profile: 0.7.0 (pinned 0.7.0: the " in err and says in err and str(folder) in err


def test_conformance_json_says_the_profile_it_used(spec_dir: SpecDir, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conformance", "--spec", str(spec_dir.path), "--json"])
    cap = capsys.readouterr()
    assert code == 0
    json.loads(cap.out)  # stdout: the JSON alone
    assert cap.err.startswith("profile: ") and str(spec_dir.path) in cap.err


def _untyped(tmp_path: Path, *, probe: bool) -> Path:
    data = json.loads(REGRESSION.read_text(encoding="utf-8"))
    data["target"] = "reference"
    for step in data["steps"]:
        step["action"].pop("type")
        if probe:
            step["probe"] = True
    path = tmp_path / ("probe.json" if probe else "untyped.json")
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_finding_whose_action_has_no_type_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _untyped(tmp_path, probe=False)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'step 0: the action has no "type"' in err and str(path) in err


def test_an_untyped_probe_replays_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An adversarial step is sent as it is, type or not: its replay is judged, not refused."""
    assert main(["replay", str(_untyped(tmp_path, probe=True))]) in (0, 1)
    assert "has no" not in capsys.readouterr().err


def test_the_howto_installs_from_a_checkout() -> None:
    howto = (ROOT / "docs" / "howto.md").read_text(encoding="utf-8")
    assert "pip install ahp-fuzz" not in howto
    assert "pip install -e path/to/ahp-fuzz" in howto and "not published on PyPI" in howto
