"""Smoke test of bench/bench_mutation.py: enumeration with cosmic-ray, a seeded sample, and a
mutant served from a temporary copy of the package (not from this checkout)."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

from harness.reference import Model, Profile
from harness.targets.base import open_target

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_mutation.py"
pytestmark = [
    pytest.mark.fuzz,
    pytest.mark.skipif(
        importlib.util.find_spec("cosmic_ray") is None,
        reason="cosmic-ray is not installed (pip install -e '.[bench]')",
    ),
]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_mutation", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_mutation"] = module
    spec.loader.exec_module(module)
    return module


def test_a_seeded_sample_of_two_compiling_mutants(bench: ModuleType) -> None:
    sites, in_annotations = bench.enumerate_sites()
    assert len(sites) > 500 and in_annotations > 0
    assert all(s.module.endswith(".py") for s in sites)
    first, _ = bench.choose_mutants(sites, sample=2, seed=3)
    again, _ = bench.choose_mutants(sites, sample=2, seed=3)
    assert [m.id for m in first] == [m.id for m in again] and len(first) == 2
    for m in first:
        assert m.original != m.mutated
        source = (bench.TARGET_DIR / m.module).read_text(encoding="utf-8")
        assert m.original in source


def test_the_mutant_is_served_from_the_copy(bench: ModuleType, tmp_path: Path) -> None:
    sites, _ = bench.enumerate_sites()
    # `bits(status) | flag` → `bits(status) << flag`: the flag setter of the status bitset
    candidates = (
        bench.realize(s)
        for s in sites
        if s.module == "status.py" and s.operator.endswith("BitOr_LShift")
    )
    mutant = next(m for m in candidates if m is not None and "<< flag if on" in m.mutated)
    ws = bench.Workspace(tmp_path / "w")
    diff = ws.apply(mutant)
    assert "<<" in diff
    profile = Profile.named("0.7.0")
    state = {"provider": "p", "title": "t", "status": 1, "lifecycle": "ready",
             "activeClients": [], "chats": []}
    action = {"type": "session/isReadChanged", "isRead": True}
    pristine = Model(profile).reduce("session", state, action, 1)
    target = open_target(ws.adapter_spec(), profile=profile)
    try:
        served = target.reduce("session", state, action, 1)
    finally:
        target.close()
    ws.restore(mutant)
    assert served["status"] != pristine["status"] == 33
    assert "<<" not in (tmp_path / "w" / "harness" / "reference" / "status.py").read_text()
    assert shlex.split(ws.adapter_spec().removeprefix("adapter:"))[1].startswith("PYTHONPATH=")


def test_the_equivalence_file_loads(bench: ModuleType) -> None:
    judged = bench.load_equivalent()
    assert all(isinstance(k, str) and v for k, v in judged.items())


def test_plain_mode_runs_the_cli_as_a_user_would(bench: ModuleType, tmp_path: Path) -> None:
    """`--plain`: the fuzz step is `ahp-fuzz run --target … --seed … --budget …` and nothing that
    changes what is fuzzed; the served copy announces the versions it is fuzzed in."""
    cmd = bench.plain_command("adapter:x", 60.0, 7, "/tmp/o")
    assert cmd[1:5] == ["-m", "harness.cli", "run", "--target"]
    options = {a for a in cmd if a.startswith("--")}
    assert options == {"--target", "--seed", "--budget", "--out", "--json", "--quiet"}
    assert cmd[cmd.index("--budget") + 1] == "60s" and cmd[cmd.index("--seed") + 1] == "7"
    ws = bench.Workspace(tmp_path / "w")
    argv = shlex.split(ws.adapter_spec(("0.7.0", "0.8.0")).removeprefix("adapter:"))
    assert argv[-2:] == ["--announce-versions", "0.7.0,0.8.0"]
    assert "--announce-versions" not in ws.adapter_spec()


def test_plain_scope_leaves_out_what_a_0x_run_cannot_tell(bench: ModuleType) -> None:
    sites, _ = bench.enumerate_sites()
    kept, left = bench.plain_scope(sites)
    assert len(kept) + sum(left.values()) == len(sites)
    # judged equivalent as a whole (bench/mutation_equivalent.json), and reached only by 1.x kinds
    assert {"profile_rule.py", "collections.py", "automation.py", "automation_run.py", "canvas.py"} <= set(left)
    assert {"tool_calls.py", "session.py", "status.py", "codec.py"} <= {s.module for s in kept}


def test_a_judged_1x_only_mutant_is_out_of_profile_not_equivalent(bench: ModuleType) -> None:
    judged = {"chat_flags.py:28:X:0": "a 1.0.0 action", "profile.py:9:Y:0": "label only"}
    later = {"chat_flags.py:28:X:0": "only from 1.0.0"}
    assert bench.verdict_unkilled("chat_flags.py:28:X:0", judged, later) == (
        "out-of-profile", "only from 1.0.0: a 1.0.0 action")
    assert bench.verdict_unkilled("profile.py:9:Y:0", judged, later) == ("equivalent", "label only")
    assert bench.verdict_unkilled("turns.py:1:Z:0", judged, later) == ("survived", None)
    s = bench.summarize([bench.Outcome("a", "out-of-profile"), bench.Outcome("b", "killed"),
                         bench.Outcome("c", "survived")])
    assert s["outOfProfile"] == 1 and s["nonEquivalent"] == 2 and s["fuzzerScore"] == 0.5
