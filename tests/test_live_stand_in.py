"""Stand-in rules are notes, not accusations (issue 33, item 2): a host that speaks a version
without rules here and does what its own version documents (0.3.0: the session title in
`summary.title`) gets a PROFILE note, never a finding; and it is never sent an action type newer
than the version it speaks. Runs bounded by chunks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from harness.engine.events import EventBus, FindingFound, KnownSeen, RunFinished
from harness.invariants.base import Violation
from harness.live.client import SimClient
from harness.live.config import LiveConfig
from harness.live.machine import run_live_campaign
from harness.live.signing import stand_in
from harness.spec.older import older_rules
from harness.spec.versions import is_newer_than

pytestmark = [pytest.mark.live]

TITLE = ('client 0: ahp-session:/fz-0a1b2c3d-s1 folded from its snapshot and envelopes up to serverSeq 9 differs '
         'from a fresh snapshot at .title: "Renamed" vs "New Session"')


def test_a_documented_difference_of_the_clients_version_is_the_stand_ins() -> None:
    v = Violation("INV-042", "violation", TITLE)
    older = stand_in(v, {0: "0.3.0", 1: "0.3.0"})
    assert older is not None and older[1].name == "session-title-in-summary"
    assert stand_in(v, {0: "0.7.0"}) is None  # a host speaking 0.7.0: the difference is its own
    assert stand_in(v, {0: "0.5.0"}) is None  # 0.5.0 keeps the title where 0.7.0 does
    assert stand_in(Violation("INV-041", "violation", TITLE), {0: "0.3.0"}) is None  # not a state check
    assert older_rules("0.7.0") == () and older_rules(None) == ()


def _campaign(spec: str, sent: list[tuple[str, str]]) -> tuple[list[Any], list[KnownSeen], dict[str, Any]]:
    findings: list[Any] = []
    known: list[KnownSeen] = []
    extra: dict[str, Any] = {}

    def sink(event: object) -> None:
        if isinstance(event, FindingFound):
            findings.append(event.finding)
        elif isinstance(event, KnownSeen):
            known.append(event)
        elif isinstance(event, RunFinished):
            extra.update(event.extra)

    cfg = LiveConfig(url=None, target_spec=spec, seed=1, budget_s=600.0, max_chunks=4, chunk_examples=3,
                     shrink_budget_s=0.5, token_salt="stand-in", request_timeout_s=60.0)
    run_live_campaign(cfg, EventBus(sink))
    return findings, known, extra


def test_a_0_3_0_host_writing_its_own_title_field_gets_a_note_and_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, str]] = []
    real = SimClient.dispatch

    async def recording(self: SimClient, channel: str, action: Any) -> Any:
        t = action.get("type") if isinstance(action, dict) else None
        if isinstance(t, str):
            sent.append((self.speaks, t))
        return await real(self, channel, action)

    monkeypatch.setattr(SimClient, "dispatch", recording)
    findings, known, extra = _campaign("host:embedded?defect=older-only&defect=title-in-summary", sent)
    # older-only's own bug (0.7.0 state to a 0.3.0 connection) is found; the title is not a finding
    assert all(f.invariant == "INV-046" for f in findings), [(f.invariant, f.message) for f in findings]
    assert not any("title" in f.message for f in findings)
    assert any(k.invariant == "PROFILE:session-title-in-summary" for k in known), [k.invariant for k in known]
    assert any(t == "session/titleChanged" for _, t in sent)  # the title was asked for
    newer = sorted({(v, t) for v, t in sent if is_newer_than(t, v)})
    assert newer == []  # no type newer than the client's version (0.3.0) was sent
    # …and the report says what was left unsent and which scenarios never ran, and why
    unsent = extra["liveNeverRan"]["newerTypesNotSent"]
    assert any(k.startswith("chat/turnStarted (client speaks 0.3.0)") for k in unsent), unsent


def test_never_ran_says_why() -> None:
    from harness.live.coverage import headline, never_ran
    from harness.live.example import LiveRecorder
    from harness.live.ops import DEFAULT_WEIGHTS, FRAME_CLASSES

    rec = LiveRecorder()
    rec.scenarios.update({n: 1 for n in DEFAULT_WEIGHTS if n not in ("answer", "terminal", "race")})
    rec.empty["answer"] = 4
    rec.fatal["null frame"] = 2
    rec.sent_classes.update({c: 1 for c in FRAME_CLASSES if c != "string frame"})
    cfg = LiveConfig(url=None, target_spec="host:embedded", weights={**DEFAULT_WEIGHTS, "terminal": 0})
    report = never_ran(cfg, rec)
    assert report["scenarios"] == {"answer": "drawn 4×, never applicable to the run's state (no channel, client or "
                                             "turn it needs)", "terminal": "weight 0", "race": "never drawn",
                                  # the 1.0.0 scenarios (issue 34), weighted only in 0.9.0+ runs
                                  "resume": "0.9.0 and later: not drawn at this run's version",
                                  "move-chat": "0.9.0 and later: not drawn at this run's version"}
    assert report["frameClasses"] == {"null frame": "retired: it killed the host 2× (sent 1×)",
                                      "string frame": "never drawn"}
    line = headline(report)
    assert line is not None and "answer" in line and "null frame" in line
    assert "terminal" not in line and "race" not in line and "string frame" not in line
    # the precondition a scenario lacked, where one is known (issue 33: the ahpx mock's race,
    # session-dirs, create-chat said only "no channel, client or turn it needs")
    rec.empty_why["answer"] = Counter({"no chat channel": 4})
    assert never_ran(cfg, rec)["scenarios"]["answer"] == "drawn 4×, never applicable to the run's state (no chat channel)"
