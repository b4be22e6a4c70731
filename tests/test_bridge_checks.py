"""Our command checks, each shown failing on a crafted counterexample and passing on the real thing;
the fixture's fence and placeholders; the type-preserving generation hints."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.bridge.app import Reply
from harness.bridge.checks import (
    Observation,
    chat_subset,
    confinement,
    error_code,
    multiroot,
    partial_state,
    run_ours,
    st_verdicts,
)
from harness.bridge.fixture import FileFixture
from harness.bridge.hints import hinted_body


@pytest.fixture()
def fx() -> Iterator[FileFixture]:
    f = FileFixture.create(seed=7)
    try:
        yield f
    finally:
        f.close()


def _sessions(fx: FileFixture, **extra: list[str]) -> dict[str, dict[str, Any]]:
    alpha, beta = fx.session_uris
    out = {
        "ahp-session:/a": {"resource": "ahp-session:/a", "workingDirectories": [alpha]},
        "ahp-session:/b": {"resource": "ahp-session:/b", "workingDirectories": [beta]},
    }
    for uri, dirs in extra.items():
        out[f"ahp-session:/{uri}"] = {"resource": f"ahp-session:/{uri}", "workingDirectories": dirs}
    return out


def _obs(fx: FileFixture, method: str, params: Any, reply: Reply, *, before: Any = None, after: Any = None,
         sessions_after: Any = None, multiroot_cap: bool = True, disk_after: Any = None) -> Observation:
    disk = fx.snapshot()
    sessions = before if before is not None else _sessions(fx)
    return Observation(method, params, reply, fx, disk, disk if disk_after is None else disk_after,
                       sessions, sessions_after if sessions_after is not None else sessions,
                       multiroot=multiroot_cap)


# -- confinement -----------------------------------------------------------------------------


def test_confinement_fails_when_the_canary_is_in_an_answer(fx: FileFixture) -> None:
    leak = Reply(result={"data": fx.token + "\n", "encoding": "utf-8"})
    v = confinement(_obs(fx, "resourceRead", {"uri": "x"}, leak))
    assert v is not None and v.check == "CMD-CONFINEMENT" and v.severity == "violation"
    names = Reply(result={"entries": [{"name": f"{fx.token}.txt", "type": "file"}]})
    assert confinement(_obs(fx, "resourceList", {"uri": "x"}, names)) is not None


def test_confinement_fails_when_the_protected_zone_changes_on_disk(fx: FileFixture) -> None:
    before = fx.snapshot()
    with open(fx.path("outside/new.txt"), "w") as fh:
        fh.write("x")
    obs = _obs(fx, "resourceWrite", {"uri": "x"}, Reply(result={}), disk_after=fx.snapshot())
    obs.disk_before = before
    v = confinement(obs)
    assert v is not None and "outside/new.txt appeared" in v.message


def test_confinement_passes_inside_and_when_a_session_covers_the_zone(fx: FileFixture) -> None:
    inside = Reply(result={"data": "alpha notes\n", "encoding": "utf-8"})
    assert confinement(_obs(fx, "resourceRead", {"uri": "x"}, inside)) is None
    before = fx.snapshot()
    with open(fx.path("work/alpha/new.txt"), "w") as fh:
        fh.write("x")
    obs = _obs(fx, "resourceWrite", {"uri": "x"}, Reply(result={}), disk_after=fx.snapshot())
    obs.disk_before = before
    assert confinement(obs) is None  # a session directory may change
    granted = _sessions(fx, wide=["file://" + fx.path()])
    leak = Reply(result={"data": fx.token})
    assert confinement(_obs(fx, "resourceRead", {"uri": "x"}, leak, before=granted)) is None


# -- partial state ---------------------------------------------------------------------------


def test_partial_state_fails_when_a_failed_command_leaves_a_session(fx: FileFixture) -> None:
    failed = Reply(error={"code": -32002, "message": "no provider"})
    after = _sessions(fx, ghost=[])
    v = partial_state(_obs(fx, "createSession", {"channel": "ahp-session:/ghost"}, failed, sessions_after=after))
    assert v is not None and v.check == "CMD-PARTIAL-STATE" and "ahp-session:/ghost" in v.message


def test_partial_state_fails_when_a_failed_command_changed_the_disk(fx: FileFixture) -> None:
    before = fx.snapshot()
    with open(fx.path("work/alpha/notes.txt"), "w"):
        pass  # truncated, as the createonly-clobber defect does
    obs = _obs(fx, "resourceWrite", {}, Reply(error={"code": -32010, "message": "exists"}), disk_after=fx.snapshot())
    obs.disk_before = before
    v = partial_state(obs)
    assert v is not None and "work/alpha/notes.txt" in v.message


def test_partial_state_passes_on_success_and_on_clean_failures(fx: FileFixture) -> None:
    assert partial_state(_obs(fx, "createSession", {}, Reply(result=None), sessions_after=_sessions(fx, new=[]))) is None
    assert partial_state(_obs(fx, "createSession", {}, Reply(error={"code": -32002, "message": "x"}))) is None


# -- createChat subset, multiroot --------------------------------------------------------------


def test_chat_subset_fails_when_a_directory_outside_the_session_is_accepted(fx: FileFixture) -> None:
    alpha, beta = fx.session_uris
    params = {"channel": "ahp-session:/a", "chat": "ahp-chat:/c", "workingDirectories": [alpha, beta]}
    v = chat_subset(_obs(fx, "createChat", params, Reply(result=None)))
    assert v is not None and beta in v.message
    spelled = {**params, "workingDirectories": [alpha + "/"]}  # exact string identity (REDUCERS.md §8.7)
    assert chat_subset(_obs(fx, "createChat", spelled, Reply(result=None))) is not None


def test_chat_subset_passes_for_a_subset_or_a_refusal(fx: FileFixture) -> None:
    alpha, beta = fx.session_uris
    params = {"channel": "ahp-session:/a", "chat": "ahp-chat:/c", "workingDirectories": [alpha]}
    assert chat_subset(_obs(fx, "createChat", params, Reply(result=None))) is None
    wrong = {**params, "workingDirectories": [beta]}
    assert chat_subset(_obs(fx, "createChat", wrong, Reply(error={"code": -32602, "message": "x"}))) is None


def test_multiroot_fails_when_extra_directories_are_kept_without_the_capability(fx: FileFixture) -> None:
    alpha, beta = fx.session_uris
    params = {"channel": "ahp-session:/m", "workingDirectories": [alpha, beta]}
    kept_both = _sessions(fx, m=[alpha, beta])
    v = multiroot(_obs(fx, "createSession", params, Reply(result=None), sessions_after=kept_both, multiroot_cap=False))
    assert v is not None and v.check == "CMD-MULTIROOT"
    kept_first = _sessions(fx, m=[alpha])
    assert multiroot(_obs(fx, "createSession", params, Reply(result=None), sessions_after=kept_first,
                          multiroot_cap=False)) is None
    assert multiroot(_obs(fx, "createSession", params, Reply(result=None), sessions_after=kept_both,
                          multiroot_cap=True)) is None


# -- error codes -----------------------------------------------------------------------------


def test_error_code_requires_session_already_exists(fx: FileFixture) -> None:
    params = {"channel": "ahp-session:/a"}
    v = error_code(_obs(fx, "createSession", params, Reply(error={"code": -32602, "message": "x"})))
    assert v is not None and v.severity == "violation" and v.expected == -32003
    accepted = error_code(_obs(fx, "createSession", params, Reply(result=None)))
    assert accepted is not None and "success" in accepted.message
    assert error_code(_obs(fx, "createSession", params, Reply(error={"code": -32003, "message": "x"}))) is None


def test_error_code_takes_invalid_params_for_a_create_that_is_schema_invalid_besides(
        fx: FileFixture, spec_dir: Any) -> None:
    """A host may check the params first (issue 24: the embedded host refuses schema-invalid
    params before its handler runs): -32602 answers a createSession on an existing URI whose
    params are invalid anyway; with valid params only -32003 does."""
    from dataclasses import replace

    from harness.bridge.openapi import build_openapi

    doc = build_openapi(spec_dir, methods=("createSession",))
    invalid = {"channel": "ahp-session:/a", "_meta": True}
    obs = replace(_obs(fx, "createSession", invalid, Reply(error={"code": -32602, "message": "x"})), document=doc)
    assert error_code(obs) is None
    valid = replace(_obs(fx, "createSession", {"channel": "ahp-session:/a"}, Reply(error={"code": -32602, "message": "x"})),
                    document=doc)
    assert error_code(valid) is not None


def test_error_code_survives_a_channel_that_is_not_a_string(fx: FileFixture) -> None:
    """Before: TypeError (unhashable list) in the check, an internal error of the whole run."""
    obs = _obs(fx, "createSession", {"channel": ["ahp-session:/a"]}, Reply(error={"code": -32602, "message": "x"}))
    assert error_code(obs) is None


def test_error_code_requires_not_found_for_a_missing_path_in_a_session(fx: FileFixture) -> None:
    params = {"channel": "ahp-root://", "uri": "file://" + fx.path("work/alpha/missing.txt")}
    v = error_code(_obs(fx, "resourceResolve", params, Reply(error={"code": -32603, "message": "boom"})))
    assert v is not None and v.expected == -32008
    assert error_code(_obs(fx, "resourceResolve", params, Reply(error={"code": -32008, "message": "x"}))) is None


def test_error_code_warns_on_an_undocumented_code(fx: FileFixture) -> None:
    v = error_code(_obs(fx, "resourceRead", {"uri": "x"}, Reply(error={"code": -32004, "message": "busy"})))
    assert v is not None and v.severity == "warning"
    assert error_code(_obs(fx, "resourceRead", {"uri": "x"}, Reply(error={"code": -32009, "message": "no"}))) is None


def test_run_ours_is_quiet_on_a_plain_success(fx: FileFixture) -> None:
    assert run_ours(_obs(fx, "listSessions", {"channel": "ahp-root://"}, Reply(result={"items": []}))) == []


# -- schemathesis' checks, as judged on replay -------------------------------------------------


def test_st_verdicts_judge_server_errors_schemas_and_negative_data(spec_dir: Any) -> None:
    from harness.bridge.openapi import build_openapi

    doc = build_openapi(spec_dir, methods=("resourceRead", "listSessions"))
    crash = st_verdicts("resourceRead", {"channel": "ahp-root://", "uri": "file:///x"},
                        Reply(error={"code": -32603, "message": "Internal error"}), doc)
    assert {v.check for v in crash} == {"ST-SERVER-ERROR"}
    shape = st_verdicts("resourceRead", {"channel": "ahp-root://", "uri": "file:///x"}, Reply(result={"data": 5}), doc)
    assert {v.check for v in shape} == {"ST-RESPONSE-SCHEMA"}
    undocumented = st_verdicts("resourceRead", {"channel": "ahp-root://", "uri": "file:///x"},
                               Reply(error={"code": -32003, "message": "x"}), doc)
    assert {v.check for v in undocumented} == {"ST-STATUS-CODE"}
    negative = st_verdicts("listSessions", {"channel": "ahp-root://", "limit": "ten"}, Reply(result={"items": []}), doc)
    assert {v.check for v in negative} == {"ST-NEGATIVE-DATA"}
    fine = st_verdicts("resourceRead", {"channel": "ahp-root://", "uri": "file:///x"},
                       Reply(result={"data": "x", "encoding": "utf-8"}), doc)
    assert fine == []


# -- the fixture -----------------------------------------------------------------------------


def test_fence_lets_reads_through_and_keeps_writes_inside_the_tree(fx: FileFixture) -> None:
    assert fx.fenced("resourceRead", {"uri": "file:///etc/passwd"}) is None
    assert fx.fenced("resourceWrite", {"uri": "file://" + fx.path("work/alpha/x")}) is None
    assert fx.fenced("resourceWrite", {"uri": "file://" + fx.path("work/alpha/%2e%2e/%2e%2e/outside/x")}) is None
    for bad in ("file:///etc/x", "file://" + fx.path("work/alpha/../../../x"), "relative.txt", "",
                "file://" + fx.path() + "/%252e%252e/%252e%252e/x", 5):
        assert fx.fenced("resourceWrite", {"uri": bad}) is not None, bad
    assert fx.fenced("resourceMove", {"source": "file://" + fx.path("work/alpha/x"), "destination": "file:///tmp/y"})


def test_placeholders_round_trip_and_hide_the_tree(fx: FileFixture) -> None:
    value = {"uri": "file://" + fx.path(f"outside/{fx.token}.txt"), "n": [1, fx.root]}
    templ = fx.template(value)
    assert fx.root not in str(templ) and fx.token not in str(templ)
    assert fx.untemplate(templ) == value


def test_restore_puts_the_tree_back(fx: FileFixture) -> None:
    pristine = fx.snapshot()
    os.unlink(fx.path("work/alpha/notes.txt"))
    os.mkdir(fx.path("work/alpha/extra"))
    assert fx.snapshot() != pristine
    fx.restore()
    assert fx.snapshot() == pristine


# -- hints never change what is valid ---------------------------------------------------------

HINTS = {"uri": ["file:///a", "file:///b"], "workingDirectories[]": ["file:///d"], "chat": ["ahp-chat:/c"]}
PROPS = {"channel", "uri", "workingDirectories", "chat"}


@settings(max_examples=60)
@given(body=st.fixed_dictionaries({}, optional={"uri": st.one_of(st.integers(), st.text(max_size=3)),
                                                  "workingDirectories": st.one_of(st.none(), st.lists(st.text(max_size=2))),
                                                  "other": st.integers()}),
       data=st.data())
def test_hints_are_type_preserving(body: dict[str, Any], data: st.DataObject) -> None:
    out = data.draw(hinted_body(body, HINTS, required={"uri"}, properties=PROPS))
    if "uri" not in body:
        assert "uri" not in out  # a missing required field stays missing
    elif not isinstance(body["uri"], str):
        assert out["uri"] == body["uri"]  # a broken field stays broken
    else:
        assert isinstance(out["uri"], str)
    if "workingDirectories" in body and not isinstance(body["workingDirectories"], list):
        assert out["workingDirectories"] == body["workingDirectories"]
    assert out.get("other") == body.get("other")
    assert set(out) <= set(body) | {"workingDirectories", "chat"}
