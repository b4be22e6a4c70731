"""The same seed, target and budget generate the same steps, whatever else the process imported,
drew or hashed first.

Root cause of the old difference (a run inside pytest drew other steps than the same run in a
fresh process): Hypothesis mixes into its draws the literals of every *local* module imported
in the process (its "local constants" pool). `harness.engine.generation.pinned_constants` pins
that pool for the duration of a run; these tests compare whole traces across differently
prepared processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.engine.events import EventBus
from harness.engine.generation import pinned_constants
from harness.engine.run import RunConfig, run_campaign
from harness.reference import Profile
from harness.targets.reference import ReferenceTarget

ROOT = Path(__file__).resolve().parent.parent

#: Imports other modules and draws other strategies before the run (a "used" process).
_PREPARE = """
import strategies.inventory, strategies.schema, strategies.uris, tests.mutants  # noqa: F401
from hypothesis import HealthCheck, given, settings, strategies as st
from strategies import actions_for, initial_states

@settings(max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def _warm(data):
    s = data.draw(initial_states("chat"))
    data.draw(actions_for("chat", s))
    data.draw(st.text())
    data.draw(initial_states("session"))

_warm()
"""


def trace_digest() -> tuple[int, str]:
    """(valid steps, sha256 of every valid step's kind and action) of a small fixed run: chat
    and session (so multi-channel groups too) on every profile of the reference target."""
    seen: list[str] = []

    def hook(kind: str, before: Any, action: Any, after: Any, malformed: bool) -> None:
        seen.append(json.dumps([kind, action], sort_keys=True))

    p = Profile.named("0.7.0")
    config = RunConfig(
        target=ReferenceTarget(p), target_spec="reference", target_is_model=True, profile=p,
        seed=11, budget_s=None, max_chunks=2, chunk_examples=6, max_steps=12,
        kinds=("chat", "session"), step_hook=hook, heartbeat_s=0,
    )
    summary = run_campaign(config, EventBus())
    assert summary.findings == []
    return len(seen), hashlib.sha256("\n".join(seen).encode()).hexdigest()


def _in_subprocess(prelude: str, hash_seed: str) -> tuple[int, str]:
    code = prelude + "\nfrom tests.test_determinism import trace_digest\nprint(*trace_digest())\n"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    n, digest = out.stdout.split()[-2:]
    return int(n), digest


def test_same_trace_in_a_fresh_process_a_used_one_and_this_one() -> None:
    fresh = _in_subprocess("", "0")
    used = _in_subprocess(_PREPARE, "4242")
    here = trace_digest()  # the pytest process: test modules and other strategies imported
    assert fresh[0] > 50
    assert fresh == used == here


def test_pinned_constants_empties_hypothesis_local_pool_and_restores_it() -> None:
    # The mechanism the determinism rests on: if a Hypothesis upgrade moves it, this fails.
    from hypothesis.internal.conjecture import providers

    before = providers._get_local_constants()
    assert len(before) > 0  # this process imported project modules with literals
    with pinned_constants():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants() is before
