"""Finding files are validated on load (a bad one is refused with exit 2 and the field named,
never a traceback or "not reproduced"), and a finding replays from any working directory."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.corpus.finding import expand_target, load_finding, portable_target

ROOT = Path(__file__).resolve().parent.parent
KNOWN = sorted((ROOT / "corpora" / "known").glob("*.json"))
REGRESSIONS = sorted((ROOT / "corpora" / "regressions").glob("*.json"))


def _good() -> dict[str, Any]:
    return json.loads(KNOWN[0].read_text())


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = data
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    if value is _DELETE:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        ("kind", "bogus", "'kind'"),
        ("failingStep", 99, "'failingStep'"),
        ("failingStep", -1, "'failingStep'"),
        ("failingStep", "0", "'failingStep'"),
        ("steps", [], "'steps'"),
        ("steps.0.nowMs", "soon", "'steps[0].nowMs'"),
        ("steps.0.action", _DELETE, "'steps[0]'"),
        ("steps.0.probe", "yes", "'steps[0].probe'"),
        ("invariant.severity", "fatal", "'invariant.severity'"),
        ("invariant", "INV-001", "'invariant'"),
        ("profile", "9.9.9", "'profile'"),
        ("initial", [], "'initial'"),
        ("formatVersion", 2, "format version 2"),
        ("format", "something/else", "not an ahp-fuzz finding"),
    ],
)
def test_a_bad_finding_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, named: str
) -> None:
    data = copy.deepcopy(_good())
    _set(data, path, value)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(data))
    assert main(["replay", str(f)]) == 2
    err = capsys.readouterr().err
    assert named in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("content", ["", "{not json", "[]"])
def test_a_file_that_is_not_a_finding_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 content: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(content)
    assert main(["replay", str(f)]) == 2
    assert "ahp-fuzz: error:" in capsys.readouterr().err


def test_a_folder_or_a_missing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path)]) == 2
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "no such finding file" in err


def test_every_checked_in_finding_is_valid() -> None:
    for path in KNOWN + REGRESSIONS:
        load_finding(path)


def test_recorded_targets_are_portable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative paths become absolute and this interpreter becomes {python} at record time;
    {python} and {here} are filled in at replay."""
    import sys

    monkeypatch.chdir(ROOT)
    recorded = portable_target(
        "adapter:.venv/bin/python -m harness.targets.reference_adapter --model tests/mutants.py:x"
        if Path(".venv/bin/python").resolve() == Path(sys.executable).resolve()
        and Path(".venv/bin/python").absolute() == Path(sys.executable).absolute()
        else f"adapter:{sys.executable} -m m --model tests/mutants.py:x"
    )
    assert recorded.startswith("adapter:{python} -m ")
    assert f"{ROOT / 'tests' / 'mutants.py'}:x" in recorded
    assert portable_target("ts:tests") == f"ts:{ROOT / 'tests'}"
    assert portable_target("reference") == "reference"
    assert portable_target("adapter:node no/such/file.js") == "adapter:node no/such/file.js"
    expanded = expand_target("adapter:{python} -m m --model {here}/../x.py:y", tmp_path / "f" / "a.json")
    assert expanded == f"adapter:{sys.executable} -m m --model {tmp_path / 'f'}/../x.py:y"


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_regression_replays_on_its_recorded_target_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    """The recorded target (a seeded-defect model served over the adapter protocol) starts from
    any working directory and from a copy of the corpus elsewhere: replay exits 0 or 1, never 2."""
    elsewhere = tmp_path / "corpora" / "regressions"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(path)]) in (0, 1), capsys.readouterr().err
    out = capsys.readouterr().out
    assert f"--model {ROOT}/corpora/regressions/../../tests/mutants.py:" in out
    # A copy of the whole checkout layout elsewhere resolves {here} against the copy.
    shutil.copy(path, elsewhere / path.name)
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "mutants.py", tmp_path / "tests" / "mutants.py")
    assert main(["replay", str(elsewhere / path.name)]) in (0, 1), capsys.readouterr().err
    assert f"--model {tmp_path}/corpora/regressions/../../tests/mutants.py:" in capsys.readouterr().out
