"""§11 items 2 and 5 are reported against an external target (issue 15 item 7).

Their checks (INV-014, INV-030.chat-absent) are probes that apply to one rare action each. With
probes rationed per sequence step (every 25th step of a sequence ran every probe), a target
other than the in-process model almost never ran them; rationed per check
(`harness/engine/probes.py`), each probe runs on the next step it applies to once it has
earned a run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from harness.engine.events import EventBus, KnownSeen
from harness.engine.probes import ProbeRations, applicable_probes
from harness.engine.run import RunConfig, run_campaign
from harness.engine.stepper import Stepper
from harness.reference import Model, Profile
from harness.targets.base import open_target

P = Profile.named("0.7.0")
SESSION = {"provider": "p", "title": "S", "status": 1, "lifecycle": "ready",
           "activeClients": [], "chats": []}
INPUT_NEEDED = {"type": "session/inputNeededSet",
                "request": {"kind": "chatInput", "id": "in-1", "chat": "ahp-chat:/c1", "request": {"id": "r1"}}}


@pytest.fixture(scope="module")
def adapter() -> Iterator[object]:
    target = open_target(f"adapter:{sys.executable} -m harness.targets.reference_adapter",
                         profile=P, timeout_s=60)
    yield target
    target.close()


def test_rations_give_each_check_one_run_per_interval_spent_where_it_applies() -> None:
    rations = ProbeRations(every=4)
    assert "INV-014" in applicable_probes("session", "session/inputNeededSet")
    assert "INV-014" not in applicable_probes("session", "session/titleChanged")
    due = [rations.due("session", t) for t in ["session/titleChanged"] * 6 + ["session/inputNeededSet"] * 3]
    runs = [("INV-014" in d, "INV-001" in d) for d in due]
    # INV-001 applies to every step: steps 4 and 8. INV-014 only to inputNeededSet: its first
    # occurrence (step 7) has credit; the next two (8, 9) have spent it.
    assert [i for i, (_, generic) in enumerate(runs, 1) if generic] == [4, 8]
    assert [i for i, (rare, _) in enumerate(runs, 1) if rare] == [7]


def _stepper(target: object, rations: ProbeRations | None) -> Stepper:
    return Stepper(kind="session", state=SESSION, model=Model(P, check_payloads=True),
                   session=target.session("session", SESSION),  # type: ignore[attr-defined]
                   target=target, target_is_model=False, probe_every=25,  # type: ignore[arg-type]
                   rations=rations)


def test_a_rare_action_s_probe_runs_on_an_external_target(adapter: object) -> None:
    title = {"type": "session/titleChanged", "title": "x"}
    old = _stepper(adapter, None)  # every probe on every 25th step of the sequence
    new = _stepper(adapter, ProbeRations(25))
    for s in (old, new):
        for i in range(30):  # the run earns every check a probe after 25 steps
            s.step(title, 1_000 + i)
    fired_old = {v.invariant for v in old.step(INPUT_NEEDED, 2_000).violations}
    fired_new = {v.invariant for v in new.step(INPUT_NEEDED, 2_000).violations}
    assert "INV-014" not in fired_old
    assert "INV-014" in fired_new
    old.session.close()
    new.session.close()


def test_a_bounded_run_against_the_reference_adapter_reports_items_2_and_5(
    adapter: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AHP_SPEC_DIR", raising=False)
    seen: set[str] = set()

    def on(event: object) -> None:
        if isinstance(event, KnownSeen):
            seen.add(event.invariant)

    config = RunConfig(target=adapter, target_spec="adapter:reference", target_is_model=False,  # type: ignore[arg-type]
                       profile=P, seed=1, budget_s=None, max_chunks=4, chunk_examples=10,
                       kinds=("session", "chat"), probe_every=25)
    summary = run_campaign(config, EventBus(on))
    assert summary.chunks == 4 and not summary.findings
    assert {"INV-014", "INV-030.chat-absent"} <= seen, sorted(seen)
