"""A pytest plugin (loaded by tests/conftest.py): a test fails when an `ahp-fuzz run` or
`campaign` it started ended `untested` (no step ran), unless it is marked `expect_untested`.

A run that tested nothing is never a pass: on a loaded machine a run bounded by a few seconds
of wall clock spends them starting up, and a test that only checks "exit 0 or 2" (or nothing)
would pass without having tested anything. Every run started in the session — in this process
or in a subprocess that inherits the environment — appends its verdict to the file named by
`AHP_FUZZ_VERDICT_LOG` (harness/cli/_common.py `record_verdict`); the lines a test's setup and
call added are read after its call. tests/test_untested_guard.py shows that it bites.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from harness.cli._common import VERDICT_LOG_ENV

MARKER = "expect_untested"
_OFFSET = pytest.StashKey[int]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: the test stages an ahp-fuzz run that tests nothing "
                            "(otherwise a run that ended untested fails the test)")
    if not os.environ.get(VERDICT_LOG_ENV):
        fd, name = tempfile.mkstemp(prefix="ahp-fuzz-verdicts-", suffix=".jsonl")
        os.close(fd)
        os.environ[VERDICT_LOG_ENV] = name
        config.add_cleanup(lambda: _forget(name))


def _forget(name: str) -> None:
    Path(name).unlink(missing_ok=True)
    if os.environ.get(VERDICT_LOG_ENV) == name:
        del os.environ[VERDICT_LOG_ENV]


def _log() -> Path:
    return Path(os.environ[VERDICT_LOG_ENV])


def _size() -> int:
    try:
        return _log().stat().st_size
    except OSError:
        return 0


def untested_since(offset: int) -> list[dict[str, Any]]:
    """The verdict lines written after `offset` bytes that say `untested`."""
    try:
        with _log().open("rb") as fh:
            fh.seek(offset)
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    return [x for x in lines if x.get("verdict") == "untested"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_OFFSET] = _size()  # before the fixtures: a module fixture's runs count too


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    result = yield  # a test that failed on its own raised already
    if item.get_closest_marker(MARKER) is None:
        bad = untested_since(item.stash.get(_OFFSET, 0))
        if bad:
            said = "; ".join(f"{x['command']} --out {x['out']}: {x.get('why') or 'no step ran'}" for x in bad)
            pytest.fail(f"an ahp-fuzz run of this test tested nothing (untested): {said} — bound the run by "
                        f"--chunks or an injected clock, or mark the test {MARKER}", pytrace=False)
    return result
