"""The embedded host answers every command as WIRE.md says (issue 24): our own command fuzzing
found it raising FileNotFoundError for a `resourceWrite` with `ifMatch` on a missing file (a
server error, -32603) and accepting schema-invalid params (`subscribe` with a `view` that is not
an object, `listSessions` with a boolean `_meta`, `createSession` with a `fork` lacking its
`turnId`). The reference host must be the one host that passes: a fixed-seed
`commands --target host:embedded` run is clean (bounded by the examples drawn, not the clock)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from harness.bridge.app import Reply
from harness.bridge.fuzz import CommandRunConfig, CommandSession, run_commands
from harness.host.params import CommandParams
from harness.spec.specdir import ENV_VAR, SpecDir

ROOT = "ahp-root://"


def _code(r: Reply) -> Any:
    return (r.error or {}).get("code")


def _embedded(spec_dir: SpecDir | None) -> Iterator[CommandSession]:
    s = CommandSession("host:embedded", spec_dir)
    try:
        s.setup()
        yield s
    finally:
        s.close()


@pytest.fixture()
def host(spec_dir: SpecDir, monkeypatch: pytest.MonkeyPatch) -> Iterator[CommandSession]:
    """The embedded host given the spec folder, as `ahp-fuzz commands` and `run` give it."""
    monkeypatch.setenv(ENV_VAR, str(spec_dir.path))
    yield from _embedded(spec_dir)


@pytest.fixture()
def bare_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[CommandSession]:
    """The embedded host without a spec folder: its handlers check what they read."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    yield from _embedded(None)


@pytest.mark.parametrize("which", ["host", "bare_host"])
def test_if_match_on_a_missing_file_is_a_conflict(which: str, request: pytest.FixtureRequest) -> None:
    """No file, no current etag: nothing matches (ResourceWriteParams.ifMatch: Conflict), and
    nothing is written. Before: FileNotFoundError in `_etag`, answered -32603."""
    s: CommandSession = request.getfixturevalue(which)
    path = s.fixture.path("work/alpha/new.txt")
    r = s.call("resourceWrite", {"channel": ROOT, "uri": "file://" + path, "data": "x", "encoding": "utf-8",
                                 "ifMatch": "0-0"})
    assert _code(r) == -32011, r
    assert "does not exist" in r.error["message"]
    assert not os.path.exists(path)


@pytest.mark.parametrize("which", ["host", "bare_host"])
def test_a_subscribe_without_channel_is_invalid_params(which: str, request: pytest.FixtureRequest) -> None:
    s: CommandSession = request.getfixturevalue(which)
    assert _code(s.call("subscribe", {})) == -32602
    assert _code(s.call("subscribe", {"channel": ["ahp-root://"]})) == -32602
    assert s.call("subscribe", {"channel": ROOT}).ok


@pytest.mark.parametrize(("method", "params"), [
    ("subscribe", {"channel": ROOT, "view": "all"}),
    ("subscribe", {"channel": ROOT, "delivery": {"maxLatencyMs": "soon"}}),
    ("listSessions", {"channel": ROOT, "_meta": True}),
    ("createSession", {"channel": "ahp-session:/forked", "fork": {"session": "ahp-session:/base-alpha"}}),
    ("resourceWrite", {"channel": ROOT, "uri": "work/alpha/notes.txt", "data": "x", "encoding": "utf-8",
                       "contentType": 7}),
])
def test_schema_invalid_params_are_refused_with_the_spec_folder(
        host: CommandSession, method: str, params: dict[str, Any]) -> None:
    if method.startswith("resource"):
        params = {**params, "uri": "file://" + host.fixture.path(params["uri"])}
    r = host.call(method, params)
    assert _code(r) == -32602, r
    assert "schema" in r.error["message"]


def test_without_a_spec_folder_the_handlers_alone_judge(bare_host: CommandSession) -> None:
    """The host ships no spec data: without a folder an unread key is not checked."""
    assert bare_host.call("subscribe", {"channel": ROOT, "view": "all"}).ok


def test_command_params_name_the_place_and_the_schema(spec_dir: SpecDir) -> None:
    params = CommandParams.from_spec(spec_dir)
    assert params is not None
    assert params.problem("subscribe", {"channel": ROOT}) is None
    said = params.problem("subscribe", {"channel": ROOT, "delivery": {"maxLatencyMs": "soon"}})
    assert said is not None and said.startswith("params.delivery.maxLatencyMs: ") and "SubscribeParams" in said
    assert params.problem("noSuchCommand", {}) is None  # a method the schema does not define: unchecked
    assert CommandParams.from_spec(None) is None


def test_the_embedded_hosts_command_run_is_clean_with_a_fixed_seed(
        spec_dir: SpecDir, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every phase (positive, negative, stateful) over every command, a fixed seed, bounded by the
    examples drawn: no finding of any severity (the bench runs 60 s over three seeds:
    bench/results/commands.md)."""
    monkeypatch.setenv(ENV_VAR, str(spec_dir.path))
    result = run_commands(CommandRunConfig(target="host:embedded", spec=spec_dir, seed=3, budget_s=300,
                                           examples=6, stateful_examples=4, verify=False,
                                           operation_cap_s=None, max_rounds=1))
    assert [(f.invariant, f.severity, f.steps[f.failing_step].method, f.message[:200])
            for f in result.findings] == []
    assert result.phase_calls.get("negative", 0) > 0 and result.method_calls.get("resourceWrite", 0) > 0
