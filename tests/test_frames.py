"""Frame-level fuzzing: the malformed-frame strategies say what they claim, and the driver
judges a host's answers correctly — clean host passes, crashes/wrong answers/corruption are
caught."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings

from harness.host import Host, RunningHost, start_host
from harness.host.connection import Connection
from harness.live.frames import HEALTHY_SESSION, judge, run_frames
from strategies.frames import Expect, FrameCase, draw_cases, frame_cases

LIMIT = 8192


def _decodes(frame: str | bytes) -> Any:
    text = frame.decode("utf-8") if isinstance(frame, bytes) else frame
    return json.loads(text)


@settings(max_examples=300)
@given(frame_cases(LIMIT))
def test_cases_are_what_their_kind_says(case: FrameCase) -> None:
    assert case.frames and case.expect
    first = case.frames[0]
    if case.kind == "invalid-json":
        with pytest.raises(ValueError):
            json.loads(first)
    elif case.kind == "binary-not-utf8":
        assert isinstance(first, bytes)
        with pytest.raises(UnicodeDecodeError):
            first.decode("utf-8")
    elif case.kind == "oversize":
        assert len(first.encode() if isinstance(first, str) else first) > LIMIT
        assert case.expect == (Expect("close", 1009),)
    elif case.kind == "batch":
        assert isinstance(_decodes(first), list)
    elif case.kind == "wrong-jsonrpc":
        assert _decodes(first).get("jsonrpc") != "2.0"
    elif case.kind == "id-reuse":
        assert len({_decodes(f)["id"] for f in case.frames}) == 1 and len(case.frames) >= 2
        assert len(case.expect) == len(case.frames)
    elif case.kind == "before-initialize":
        assert case.fresh and _decodes(first)["method"] not in ("ping", "initialize", "reconnect")
    elif case.kind in ("notification", "stray-response"):
        assert "id" not in _decodes(first) or "method" not in _decodes(first)
        assert case.expect == (Expect("silence"),)


def test_draw_cases_is_deterministic_per_seed() -> None:
    assert draw_cases(40, seed=5) == draw_cases(40, seed=5)


def test_judge() -> None:
    case = FrameCase("x", ("{",), (Expect("error", -32700, None),))
    assert judge(case, [{"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}}]) is None
    assert judge(case, []) is not None
    assert judge(case, [{"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "m"}}]) is not None
    silent = FrameCase("n", ("{}",), (Expect("silence"),))
    assert judge(silent, []) is None
    assert judge(silent, [{"jsonrpc": "2.0", "id": 1, "result": None}]) is not None
    either = FrameCase("b", ("[]",), (Expect("error-or-silence", -32600, None),))
    assert judge(either, []) is None
    assert judge(either, [{"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": ""}}]) is None
    assert judge(either, [{"jsonrpc": "2.0", "id": None, "result": None}]) is not None
    reuse = FrameCase("r", ("a", "b"), (Expect("result", None, 3), Expect("result", None, 3)))
    assert judge(reuse, [{"jsonrpc": "2.0", "id": 3, "result": None}]) is not None


@pytest.fixture(scope="module")
def clean_host() -> Iterator[RunningHost]:
    with start_host(max_message_bytes=LIMIT) as h:
        yield h


@pytest.mark.live
def test_clean_host_answers_every_malformed_frame(clean_host: RunningHost) -> None:
    cases = draw_cases(600, seed=11, max_message_bytes=LIMIT)
    report = run_frames(clean_host.url, cases, health_every=100)
    assert [f.describe() for f in report.failures] == []
    assert report.ok and report.host_crashes == 0 and report.health_checks >= 6
    assert {"invalid-json", "batch", "unknown-method", "bad-params", "id-reuse", "oversize", "before-initialize"} <= set(report.by_kind)


@pytest.mark.live
@settings(max_examples=25)
@given(frame_cases(LIMIT))
def test_every_drawn_case_is_answered_as_expected(clean_host: RunningHost, case: FrameCase) -> None:
    report = run_frames(clean_host.url, [case], health_every=1)
    assert report.ok, [f.describe() for f in report.failures]


@pytest.mark.live
def test_driver_counts_a_handler_crash() -> None:
    with start_host(defects=("crash-on-invalid-json",)) as h:
        cases = [FrameCase("invalid-json", ("{oops",), (Expect("error", -32700, None),))] * 3
        report = run_frames(h.url, cases)
    assert report.host_crashes == 3 and not report.ok


def _wrong_code(host: Host, conn: Connection, params: dict[str, Any]) -> Any:
    return None  # answers a method the case expects to be unknown


def _corrupt(host: Host, conn: Connection, params: dict[str, Any]) -> Any:
    host.apply_server(HEALTHY_SESSION, {"type": "session/titleChanged", "title": "clobbered"})
    return None


@pytest.mark.live
def test_driver_catches_wrong_answers_and_corrupted_sessions() -> None:
    with start_host(extra_methods={"x-private": _wrong_code, "x-corrupt": _corrupt}) as h:
        wrong = FrameCase("unknown-method", ('{"jsonrpc":"2.0","id":4,"method":"x-private","params":{"channel":"ahp-root://"}}',), (Expect("error", -32601, 4),))
        corrupt = FrameCase("corrupt", ('{"jsonrpc":"2.0","id":5,"method":"x-corrupt","params":{"channel":"ahp-root://"}}',), (Expect("result", None, 5),))
        report = run_frames(h.url, [wrong, corrupt])
    assert [f.kind for f in report.failures] == ["unknown-method"]
    assert report.corrupted_sessions == 1 and not report.ok


@pytest.mark.live
def test_values_nesting_numbers_and_fragments_are_answered(clean_host: RunningHost) -> None:
    from strategies.frames import bare_value, deep_nesting, fragmented, huge_number

    cases = [c for s in (bare_value(), deep_nesting(LIMIT), huge_number(), fragmented())
             for c in draw_from(s, 8)]
    report = run_frames(clean_host.url, cases, health_every=50)
    assert [f.describe() for f in report.failures] == [] and report.ok
    assert {"bare-value", "deep-nesting", "huge-number", "fragmented"} <= set(report.by_kind)
    assert all(how in ("result", "error -32600", "error -32700", "silence") for _, how in report.reactions)


def draw_from(strategy: Any, n: int) -> list[FrameCase]:
    out: list[FrameCase] = []

    @settings(max_examples=n, database=None, derandomize=True)
    @given(strategy)
    def collect(case: FrameCase) -> None:
        out.append(case)

    collect()
    return out


@pytest.mark.live
def test_a_host_that_dies_on_a_bare_null_is_classified_death() -> None:
    with start_host(defects=("dies-on-null",)) as h:
        cases = [FrameCase("bare-value", ("42",), (Expect("error", -32600, None),)),
                 FrameCase("bare-value", ("null",), (Expect("error", -32600, None),)),
                 FrameCase("bare-value", ("true",), (Expect("error", -32600, None),))]
        report = run_frames(h.url, cases)
    assert report.died is not None and not report.ok
    assert report.cases == 2  # stopped at the death
    assert [f.reaction for f in report.failures] == ["death"]
    assert report.reactions[("bare-value", "error -32600")] == 1
