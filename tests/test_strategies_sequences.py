"""Sequences and multiroot scenarios: shapes, and what folding them through the model shows."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings

from harness.cli import main
from strategies.inventory import INVENTORY
from strategies.sequences import (
    ActionSequence,
    MultirootScenario,
    action_sequences,
    fold,
    multiroot_scenarios,
)

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@settings(max_examples=8, suppress_health_check=_SUPPRESS, deadline=None)
@given(action_sequences("chat", max_size=5))
def test_sequence_is_a_replayable_fixture(seq: ActionSequence) -> None:
    fx = seq.as_fixture("x")
    assert set(fx) == {"description", "reducer", "initial", "actions"} and fx["reducer"] == "chat"
    assert json.loads(json.dumps(fx)) == fx  # plain JSON
    assert fold("chat", seq.initial, seq.actions) == fold("chat", seq.initial, seq.actions)


@settings(max_examples=8, suppress_health_check=_SUPPRESS, deadline=None)
@given(multiroot_scenarios(["immutable-primary"]))
def test_reducer_applies_primary_removal_verbatim(sc: MultirootScenario) -> None:
    """INV-032 is host-level: the reducer removes index 0 even under immutablePrimary."""
    session, _ = sc.run()
    assert sc.notes["primary"] not in session["workingDirectories"]


@settings(max_examples=8, suppress_health_check=_SUPPRESS, deadline=None)
@given(multiroot_scenarios(["dangling-subset"]))
def test_session_removal_does_not_cascade_to_chats(sc: MultirootScenario) -> None:
    """INV-031 (expected to fail reducer-only): the chat still names the removed directory."""
    session, chats = sc.run()
    d = sc.notes["directory"]
    assert d not in session["workingDirectories"]
    assert d in chats[sc.notes["chat"]]["workingDirectories"]


def test_chat_subset_flavours_are_all_reached() -> None:
    seen: set[str] = set()

    @settings(max_examples=10, suppress_health_check=_SUPPRESS, deadline=None)
    @given(multiroot_scenarios(["chat-subsets"]))
    def collect(sc: MultirootScenario) -> None:
        seen.update(sc.notes["flavours"])

    collect()
    assert seen == {"absent", "empty", "partial"}


def test_replace_chains_run_under_0_8_0() -> None:
    versions: set[str] = set()

    @settings(max_examples=6, suppress_health_check=_SUPPRESS, deadline=None)
    @given(multiroot_scenarios(["replace-chains"]))
    def check(sc: MultirootScenario) -> None:
        session, _ = sc.run()
        dirs = session["workingDirectories"]
        assert len(dirs) == len(set(dirs)) or len(set(sc.session["workingDirectories"])) < len(
            sc.session["workingDirectories"]
        )
        versions.add(sc.version)

    check()
    assert versions == {"0.8.0"}


def test_cli_lists_every_strategy(capsys: Any) -> None:
    assert main(["strategies", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [x["name"] for x in listed] == [e.name for e in INVENTORY]
    assert all(x["targets"] for x in listed)
    assert main(["strategies", "--adversarial", "--json"]) == 0
    adversarial = json.loads(capsys.readouterr().out)
    assert adversarial and {x["nature"] for x in adversarial} == {"adversarial"}


def test_cli_table_names_every_strategy(capsys: Any) -> None:
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for e in INVENTORY:
        assert e.name in out, e.name
