"""A target failure's cause does not depend on where the target is installed, nor on the first
raw error text a run happened to see (issue 35): the cause line of a crash once read
`adapter:…-T-fuzz/.T/python …/P: … is not JSON: bS` and its id changed with the install folder;
a probe failure's summary was its first occurrence's raw message, cut mid-word."""

from __future__ import annotations

from harness.causes import check_cause, failure_cause
from harness.causes.locations import SUMMARY_CHARS, short, without_locations


def _crash(home: str, garbage: str) -> str:
    return (f"target crashed: adapter:{home}/.venv/bin/python {home}/tests/fault_adapter.py --garbage-after 3 "
            f"--pidfile /tmp/pytest-of-x/faults0/garbage/adapter.pid: reply to 'step' is not JSON: b'{garbage}'")


def test_a_crash_cause_is_the_same_wherever_the_adapter_is_installed() -> None:
    one = failure_cause("TARGET-CRASH", _crash("/work/wt-a", "%%%"))
    two = failure_cause("TARGET-CRASH", _crash("/home/someone/src/ahp-fuzz", "###garbage"))
    assert one.id == two.id and one.summary == two.summary
    assert one.summary == "the target crashes: reply to 'step' is not JSON: bS"
    assert "/" not in one.summary and "adapter:" not in one.summary


def test_a_hang_cause_names_no_path() -> None:
    said = ("target hung: adapter:/opt/x/python /opt/x/fault_adapter.py --hang-after 3: no reply to 'step' within 1 s; "
            "adapter killed (restarts on next use)")
    cause = failure_cause("TARGET-TIMEOUT", said)
    assert cause.summary.startswith("the target hangs: no reply to 'step' within N s") and "/opt" not in cause.summary


def test_a_probe_failure_summary_is_built_from_its_key() -> None:
    first = ("the reducer raised during the probe: TargetTimeout: adapter:/work/wt-a/.venv/bin/python "
             "/work/wt-a/tests/fault_adapter.py --hang-after 3 --ignore-term: no reply to 'snapshot' within 1 s; "
             "adapter killed (restarts on next use)\n  stderr: something")
    later = first.replace("/work/wt-a", "/srv/ci/build-17").replace("within 1 s", "within 5 s")
    a, b = check_cause("INV-002", first), check_cause("INV-002", later)
    assert a.key == b.key and a.summary == b.summary  # the same in every run, wherever installed
    assert a.summary.startswith("INV-002: the reducer raised during the probe: TargetTimeout: no reply to")
    assert "/work" not in a.summary and len(a.summary) <= SUMMARY_CHARS
    assert a.summary.endswith("…") and not a.summary[:-1].endswith(" ")  # cut at a word


def test_without_locations_and_short() -> None:
    assert without_locations("ts:/src/ahp: Cannot read properties of undefined (reading 'x') at /src/ahp/a.ts") == (
        "Cannot read properties of undefined (reading 'x') at <path>")
    assert short("one two three", 9) == "one two…" and short("short", 9) == "short"
