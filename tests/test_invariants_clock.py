"""Clock probes (INV-002.clock, INV-002.wallclock; REDUCERS.md §11 item 1): observing the clock
reads of an in-process reducer and of a reducer behind the Node bridge."""

from __future__ import annotations

import copy
import datetime
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.invariants import Step, check_step
from harness.invariants.clock import observe, watching
from harness.reference import Model
from harness.targets import open_target
from harness.targets.adapter import AdapterTarget
from harness.targets.reference import ReferenceTarget
from tests.invariant_cases import (
    NOW,
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    session,
    step,
)

REF = Model().reduce
TITLE = {"type": "session/titleChanged", "title": "New"}
START = {
    "type": "chat/turnStarted",
    "turnId": "t1",
    "startedAt": "2026-01-01T00:00:01.000Z",
    "message": {"text": "Hello", "origin": {"kind": "user"}},
}
DELTA = {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"}


def _reads_time_for_title(kind: str, state: Any, action: Any, now: int) -> Any:
    """A session reducer that stamps the title with the wall clock (time.time)."""
    result = REF(kind, state, action, now)
    return {**result, "title": f"{result.get('title')} @ {int(time.time())}"}


def _reads_datetime(kind: str, state: Any, action: Any, now: int) -> Any:
    """A reducer that reads datetime.now() and throws the value away."""
    datetime.datetime.now(datetime.UTC)
    return REF(kind, state, action, now)


#: A chat reducer fixed like client 0.9.0: for this one input it returns a precomputed state
#: whose modifiedAt comes from the action's startedAt, reading no clock at all.
_FIXED_AFTER = {**Model().reduce("chat", chat(), START, NOW), "modifiedAt": START["startedAt"]}


def _derives_from_action(kind: str, state: Any, action: Any, now: int) -> Any:
    return copy.deepcopy(_FIXED_AFTER)


FAILING = [
    Case(
        "INV-002.clock",
        Step("session", session(), TITLE, _reads_time_for_title("session", session(), TITLE, NOW), NOW),
        "title-from-time.time",
        _reads_time_for_title,
    ),
    Case("INV-002.clock", step("chat", chat(), DELTA), "delta-reads-datetime.now", _reads_datetime),
    Case("INV-002.wallclock", step("chat", chat(), START), "reference-stamps-modifiedAt", REF),
    Case(
        "INV-002.wallclock",
        step("chat", chat(), START),
        "reference-target-stamps-modifiedAt",
        ReferenceTarget().reduce,
    ),
]

PASSING = [
    Case("INV-002.clock", step("session", session(), TITLE), "reference-reads-no-clock", REF),
    Case("INV-002.clock", step("chat", chat(), START), "documented-read-is-not-a-violation", REF),
    Case("INV-002.wallclock", step("chat", chat(), DELTA), "no-turn-no-stamp", REF),
    Case(
        "INV-002.wallclock",
        Step("chat", chat(), START, copy.deepcopy(_FIXED_AFTER), NOW),
        "modifiedAt-from-action-data",
        _derives_from_action,
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_watching_counts_each_kind_of_read_and_restores_the_clocks() -> None:
    real_time = time.time
    with watching() as reads:
        time.time()
        time.time_ns()
        Model().reduce("chat", chat(), START, NOW)
    assert (reads.wall, reads.injected) == (2, 1)
    assert time.time is real_time
    assert datetime.datetime.now(datetime.UTC).year >= 2024  # the real class is back


def test_wall_clock_message_names_the_read() -> None:
    [v] = assert_fails(FAILING[0])
    assert "wall-clock" in v.message and "session/titleChanged" in v.message


def test_known_message_is_the_same_however_the_read_was_observed() -> None:
    # the engine keeps a target's known violation known only when the model says the same
    [model] = assert_fails(FAILING[2])
    [target] = assert_fails(FAILING[3])
    assert model.message == target.message and "modifiedAt" in model.message


def test_only_observable_targets_are_judged() -> None:
    class Remote:
        in_process = False

        def reduce(self, kind: str, state: Any, action: Any, now: int) -> Any:
            time.time()  # a read, but made by a target that says it runs elsewhere
            return REF(kind, state, action, now)

    remote = Remote()
    s = step("session", session(), TITLE)
    assert observe(remote.reduce, "session", session(), TITLE, NOW) is None
    assert check_step(s, reducer=remote.reduce, only={"INV-002.clock"}) == []
    remote.in_process = True  # type: ignore[misc]
    assert len(check_step(s, reducer=remote.reduce, only={"INV-002.clock"})) == 1
    remote.observe_clock = lambda *a: None  # type: ignore[attr-defined]
    assert check_step(s, reducer=remote.reduce, only={"INV-002.clock"}) == []


# --- through the Node bridge --------------------------------------------------------------------

CLOCKED_REDUCERS = """
// Reducers that read the clock the way the upstream chat reducer does (Date.now for modifiedAt),
// plus a terminal reducer that reads it where no reducer should.
export function chatReducer(state, action) {
  if (action.type === 'chat/turnStarted') {
    return { ...state, modifiedAt: new Date(Date.now()).toISOString(), status: 8,
             activeTurn: { id: action.turnId, startedAt: action.startedAt, message: action.message, responseParts: [] } };
  }
  return state;
}
export function terminalReducer(state, action) {
  if (action.type === 'terminal/titleChanged') return { ...state, title: action.title, at: Date.now() };
  return state;
}
"""

TERMINAL = {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c1"}}
TERMINAL_TITLE = {"type": "terminal/titleChanged", "title": "zsh"}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(scope="module")
def bridged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdapterTarget]:
    path: Path = tmp_path_factory.mktemp("clock") / "clocked.mjs"
    path.write_text(CLOCKED_REDUCERS)
    target = open_target(f"js:{path}")
    assert isinstance(target, AdapterTarget)
    yield target
    target.close()


@needs_node
def test_bridge_counts_date_now_reads(bridged: AdapterTarget) -> None:
    assert bridged.announcement.get("observesClock") is True
    got = bridged.observe_clock("chat", chat(), START, NOW)
    assert got is not None and got[1] == 1  # Date.now(); new Date(x) with a value is no read
    assert got[0]["modifiedAt"] == "1970-01-01T00:00:09.999Z"
    plain = bridged.observe_clock("terminal", TERMINAL, {"type": "terminal/other"}, NOW)
    assert plain is not None and plain[1] == 0


@needs_node
def test_bridged_upstream_read_is_known(bridged: AdapterTarget) -> None:
    after = bridged.reduce("chat", chat(), START, NOW)
    s = Step("chat", chat(), START, after, NOW)
    found = check_step(s, reducer=bridged.reduce, only={"INV-002.wallclock", "INV-002.clock"})
    assert [(v.invariant, v.severity) for v in found] == [("INV-002.wallclock", "known")]
    [model] = check_step(s, reducer=REF, only={"INV-002.wallclock"})
    assert found[0].message == model.message


@needs_node
def test_bridged_read_elsewhere_is_a_violation(bridged: AdapterTarget) -> None:
    after = bridged.reduce("terminal", TERMINAL, TERMINAL_TITLE, NOW)
    s = Step("terminal", TERMINAL, TERMINAL_TITLE, after, NOW)
    found = check_step(s, reducer=bridged.reduce, only={"INV-002.clock"})
    assert [(v.invariant, v.severity) for v in found] == [("INV-002.clock", "violation")]


def test_reads_on_other_threads_are_not_the_reducers() -> None:
    import threading

    with watching() as reads:
        t = threading.Thread(target=time.time)
        t.start()
        t.join()
    assert reads.total == 0
