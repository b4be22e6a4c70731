"""Turns on every host (issue 33, item 1): a campaign in which no turn could be started says so,
and why, in report.json (`liveNeverRan.turns`) and in a headline line — `turns: not reachable on
this host (why)` — naming what the host offered of each way to a chat channel. The embedded
host's `chat-is-the-session` defect has the ahpx mock's shape: a session's one chat is the
session itself, and no createChat. Runs bounded by chunks."""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine.events import EventBus, Notice, RunFinished
from harness.live.config import LiveConfig
from harness.live.machine import run_live_campaign

pytestmark = [pytest.mark.live]


def _campaign(spec: str) -> tuple[dict[str, Any], list[str]]:
    extra: dict[str, Any] = {}
    notices: list[str] = []

    def sink(event: object) -> None:
        if isinstance(event, RunFinished):
            extra.update(event.extra)
        elif isinstance(event, Notice):
            notices.append(event.message)

    cfg = LiveConfig(url=None, target_spec=spec, seed=1, budget_s=600.0, max_chunks=2, chunk_examples=3,
                     shrink_budget_s=0.5, token_salt="turns", request_timeout_s=60.0)
    run_live_campaign(cfg, EventBus(sink))
    return extra.get("liveNeverRan") or {}, notices


def test_a_host_whose_chat_is_its_session_says_why_no_turn_ran() -> None:
    unrun, notices = _campaign("host:embedded?defect=chat-is-the-session")
    turns = unrun.get("turns")
    assert isinstance(turns, str) and turns.startswith("not reachable on this host (")
    assert "names the session channel itself" in turns
    assert "createChat is not offered (the agent announces no multipleChats)" in turns
    assert f"turns: {turns}" in notices
    # each scenario that drew nothing names the precondition it lacked
    scenarios = unrun["scenarios"]
    assert scenarios["create-chat"].endswith("(the agent announces no multipleChats)"), scenarios
    assert scenarios["turn"].endswith("(no chat channel)"), scenarios


def test_a_host_with_chat_channels_runs_turns_and_says_nothing() -> None:
    unrun, notices = _campaign("host:embedded")
    assert "turns" not in unrun
    assert not any(n.startswith("turns:") for n in notices)
