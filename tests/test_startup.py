"""Start-up out of the way (issue 35): what a run loads and writes before its first step, and
when it says it began. Nothing here measures time: the loaded modules and written folders are
checked, and a slow start-up is staged with an injected clock (bench/bench_startup.py measures)."""

from __future__ import annotations

import calendar
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness.cli.run as run_cli
from harness.cli import OptionError, build_parser, main
from harness.hypothesis_home import ENV_VAR, use_storage, user_cache

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json, sys
from harness.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run_in(cwd: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_VAR, "AHP_SPEC_DIR")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def test_a_reference_run_loads_no_live_half_and_leaves_no_hypothesis_folder(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = _run_in(work, _env(tmp_path), "run", "--target", "reference", "--seed", "1", "--chunks", "1",
                     "--chunk", "2", "--budget", "600s", "--kinds", "root", "--quiet", "--out", "r")
    assert result["code"] == 0
    modules = set(result["modules"])  # type: ignore[arg-type]
    assert "harness.cli.run" in modules
    # Only the command named is loaded, and a run on the model needs no live half or host.
    for unneeded in ("harness.cli.host", "harness.cli.commands", "harness.host", "harness.live", "harness.bridge"):
        assert unneeded not in modules, unneeded
    # Hypothesis' Unicode tables went to the per-user cache, not into the folder the run ran in.
    assert sorted(p.name for p in work.iterdir()) == ["r"]
    assert (tmp_path / "cache" / "ahp-fuzz" / "hypothesis" / "unicode_data").is_dir()


def test_a_storage_folder_the_user_chose_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "mine"))
    assert use_storage(tmp_path / "other") == tmp_path / "mine"
    assert os.environ[ENV_VAR] == str(tmp_path / "mine")
    monkeypatch.delenv(ENV_VAR)
    assert use_storage(tmp_path / "other") == tmp_path / "other"
    assert os.environ[ENV_VAR] == str(tmp_path / "other")


def test_the_user_cache_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache() == tmp_path / "ahp-fuzz" / "hypothesis"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG rule: absolute paths only
    assert user_cache() == Path.home() / ".cache" / "ahp-fuzz" / "hypothesis"


def test_the_parser_of_a_named_command_is_the_full_one_for_that_command() -> None:
    only = build_parser(["run"])
    full = build_parser()
    argv = ["run", "--target", "reference", "--budget", "5s", "--chunks", "3"]
    assert vars(only.parse_args(argv)).keys() == vars(full.parse_args(argv)).keys()
    assert build_parser(["export-fixture"]).parse_args(["export-fixture", "f.json"]).findings == ["f.json"]
    with pytest.raises(OptionError) as refused:  # an unknown command: the full parser names every command
        build_parser(["nonsense"]).parse_args(["nonsense"])
    assert "export-fixture" in str(refused.value) and "completion" in str(refused.value)


def test_started_at_the_progress_and_the_budget_count_from_the_same_moment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Start-up staged at 600 s (injected clock): report.json's `startedAt` is when the budget
    clock started — 600 s before the run's first report, not when the report was created —
    and its elapsed seconds count from the same moment."""
    ticks = itertools.count()

    def clock() -> float:  # the first reading starts the budget; start-up then takes 600 s
        n = next(ticks)
        return 1000.0 if n == 0 else 1600.0 + n / 1000

    monkeypatch.setattr(run_cli, "CLOCK", clock)
    monkeypatch.setenv(ENV_VAR, str(user_cache()))  # main() leaves the environment as it was
    out = tmp_path / "run"
    before = time.time()
    code = main(["run", "--budget", "900s", "--seed", "1", "--kinds", "root", "--chunks", "1", "--chunk", "2",
                 "--quiet", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    started = calendar.timegm(time.strptime(report["startedAt"], "%Y-%m-%dT%H:%M:%SZ"))
    assert before - 600 - 2 <= started <= before - 600 + 2
    assert report["elapsedSeconds"] >= 600 and report["progress"]["elapsedSeconds"] >= 600
