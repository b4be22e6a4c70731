"""State-aware and adversarial action strategies do what they are for."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.engine.generation import pinned_constants
from harness.reference import MalformedAction, Profile, reduce
from harness.spec.versions import ACTION_INTRODUCED_IN, KINDS, action_types, kind_of
from strategies import actions as act
from strategies import initial_states
from strategies.actions import ActionContext, actions_for, valid_actions
from strategies.messages import TOOL_CALL_STATUSES, response_parts, tool_calls
from strategies.states import chat_states

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def _collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @settings(max_examples=n, suppress_health_check=_SUPPRESS, deadline=None)
    @given(strategy)
    def draw(x: Any) -> None:
        out.append(x)

    # Pinned like a run: otherwise what the derandomized draws are depends on which modules the
    # test session happened to import before (Hypothesis' local-constant pool).
    with pinned_constants():
        draw()
    return out


def _with_parts(
    parts: st.SearchStrategy[list[dict[str, Any]]],
) -> st.SearchStrategy[dict[str, Any]]:
    """Chat states whose active turn holds `parts` (built, not filtered: filters are slow)."""
    return st.builds(
        lambda s, ps: {**s, "activeTurn": {**s["activeTurn"], "responseParts": ps}},
        chat_states(active=True),
        parts,
    )


def _chat_with_markdown() -> st.SearchStrategy[dict[str, Any]]:
    return _with_parts(
        st.lists(response_parts(("markdown", "reasoning", "contentRef")), max_size=3).map(
            lambda ps: [*ps, {"kind": "markdown", "id": "p2", "content": "x"}]
        )
    )


def test_state_aware_actions_name_what_is_in_the_state() -> None:
    pairs = _collect(
        _chat_with_markdown().flatmap(
            lambda s: actions_for("chat", s, types=["chat/delta"]).map(lambda a: (s, a))
        ),
        250,  # Hypothesis favours a choice's first branch: the stale share needs a few hundred
    )
    hits = 0
    for s, a in pairs:
        markdown = {p["id"] for p in s["activeTurn"]["responseParts"] if p["kind"] == "markdown"}
        hits += a["turnId"] == s["activeTurn"]["id"] and a["partId"] in markdown
    share = hits / len(pairs)
    assert 0.7 <= share < 1.0, share  # mostly real ids, with a small share of stale/near misses


def test_stale_share_is_small_and_controllable() -> None:
    def draws(ctx: ActionContext) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return _collect(
            chat_states(active=True).flatmap(
                lambda s: actions_for("chat", s, types=["chat/usage"], context=ctx).map(
                    lambda a: (s, a)
                )
            ),
            50,
        )

    default = [a["turnId"] == s["activeTurn"]["id"] for s, a in draws(ActionContext())]
    never = [a["turnId"] == s["activeTurn"]["id"] for s, a in draws(ActionContext(stale=0.0))]
    always = [a["turnId"] == s["activeTurn"]["id"] for s, a in draws(ActionContext(stale=1.0))]
    assert all(never) and not any(always)
    assert 0.8 <= sum(default) / len(default) < 1.0


def _changed_share(kind: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> float:
    changed = 0
    for s, a in pairs:
        with contextlib.suppress(MalformedAction):
            changed += reduce(kind, s, a, now_ms=9999) != s
    return changed / len(pairs)


@pytest.mark.parametrize("kind", ["chat", "session", "annotations"])
def test_state_aware_changes_state_far_more_often(kind: str) -> None:
    states = initial_states(kind)
    aware = _collect(states.flatmap(lambda s: actions_for(kind, s).map(lambda a: (s, a))), 50)
    blind = _collect(states.flatmap(lambda s: valid_actions(kind).map(lambda a: (s, a))), 50)
    assert _changed_share(kind, aware) >= _changed_share(kind, blind) + 0.15


def test_tool_call_actions_target_the_status_they_need() -> None:
    want = {
        "chat/toolCallConfirmed": {"pending-confirmation"},
        "chat/toolCallResultConfirmed": {"pending-result-confirmation"},
        "chat/toolCallAuthResolved": {"auth-required"},
        "chat/toolCallContentChanged": {"running"},
    }
    calls = st.lists(st.sampled_from(TOOL_CALL_STATUSES), min_size=2, max_size=4).flatmap(
        lambda statuses: st.tuples(*(tool_calls(x) for x in statuses))
    )
    parts = calls.map(
        lambda tcs: [
            {"kind": "toolCall", "toolCall": {**tc, "toolCallId": f"tc{i}"}}
            for i, tc in enumerate(tcs)
        ]
    )
    state = _with_parts(parts)
    pairs = _collect(
        state.flatmap(lambda s: actions_for("chat", s, types=list(want)).map(lambda a: (s, a))), 120
    )
    on_target = applicable = 0
    for s, a in pairs:
        statuses = {
            p["toolCall"]["toolCallId"]: p["toolCall"]["status"]
            for p in s["activeTurn"]["responseParts"]
            if p["kind"] == "toolCall"
        }
        # Only states where one of the four types has a call in the status it needs: on the
        # others every choice is a no-op by construction.
        if any(st_ in w for w in want.values() for st_ in statuses.values()):
            applicable += 1
            on_target += statuses.get(a["toolCallId"]) in want[a["type"]]
    assert applicable >= 40
    # Not all: a share names calls in another status on purpose (guard probes, WRONG_CALL and
    # WRONG_STATUS in strategies/actions/chat.py), and a type without a target is still drawn.
    assert on_target / applicable >= 0.6, on_target / applicable


def test_a_ready_for_a_client_owned_call_often_names_another_contributor() -> None:
    # REDUCERS.md §7b.2: a client-owned call keeps its owner when a toolCallReady names another
    # one; independent optional draws sent that case once in ~16 readies (a mutant survived a
    # 60 s plain run for want of it, bench/results/mutation.md)
    owner = {"kind": "client", "clientId": "client-1"}
    call = {"toolCallId": "tc1", "toolName": "bash", "displayName": "Run", "status": "streaming", "contributor": owner}
    state = _with_parts(st.just([{"kind": "toolCall", "toolCall": call}]))
    readies = state.flatmap(lambda s: actions_for("chat", s, types=["chat/toolCallReady"]))
    drawn = [r for r in _collect(readies, 80) if r.get("toolCallId") == "tc1"]
    other = [a for a in drawn if a.get("contributor") not in (None, owner)]
    assert len(drawn) >= 40 and len(other) >= len(drawn) / 3, (len(other), len(drawn))


def test_a_delta_now_and_then_names_a_part_of_another_kind() -> None:
    # the reducers append only to a part of the action's own kind (REDUCERS.md §5.3): a delta
    # naming a tool call's id is the kind check's no-op (a mutant of that check survived a 60 s
    # plain run for want of it, bench/results/mutation.md)
    parts = [{"kind": "markdown", "id": "p1", "content": "hi"},
             {"kind": "toolCall", "toolCall": {"toolCallId": "tc1", "toolName": "bash", "displayName": "Run",
                                               "status": "streaming"}}]
    state = _with_parts(st.just(parts))
    drawn = _collect(state.flatmap(lambda s: actions_for("chat", s, types=["chat/delta"])), 120)
    named = [d.get("partId") for d in drawn]
    assert named.count("tc1") >= 3 and named.count("p1") > len(named) / 2, named


def test_profile_gates_action_types() -> None:
    session = {
        "provider": "p",
        "title": "t",
        "status": 1,
        "lifecycle": "ready",
        "activeClients": [],
        "chats": [],
        "workingDirectories": ["file:///a"],
    }
    replaced = ["session/workingDirectoryReplaced"]
    with pytest.raises(ValueError, match="no session action type known"):
        actions_for("session", session, types=replaced)
    drawn = _collect(
        actions_for("session", session, Profile.for_version("0.8.0"), types=replaced), 10
    )
    assert {a["type"] for a in drawn} == set(replaced)
    old = _collect(actions_for("session", session, Profile.for_version("0.6.0")), 60)
    assert not any(a["type"].startswith("session/workingDirectory") for a in old)


def test_directory_actions_include_equivalent_spellings() -> None:
    session = {
        "provider": "p",
        "title": "t",
        "status": 1,
        "lifecycle": "ready",
        "activeClients": [],
        "chats": [],
        "workingDirectories": ["file:///repo-a", "file:///C:/src/app"],
    }
    drawn = _collect(
        actions_for(
            "session",
            session,
            types=["session/workingDirectorySet", "session/workingDirectoryRemoved"],
        ),
        150,
    )
    from strategies.uris import DIRECTORIES

    assert any(a["directory"] not in DIRECTORIES for a in drawn)  # some spelling outside the pool
    assert any(
        a["type"] == "session/workingDirectoryRemoved"
        and a["directory"] in session["workingDirectories"]
        for a in drawn
    )


def test_required_fields_table_covers_every_known_type() -> None:
    assert set(act.REQUIRED_FIELDS) == set(ACTION_INTRODUCED_IN)
    assert set(action_types("1.0.0")) == {t for k in KINDS for t in act.BUILDERS[k]}


@pytest.mark.parametrize("action_type", sorted(ACTION_INTRODUCED_IN))
def test_near_miss_types_are_never_real(action_type: str) -> None:
    misses = act.near_miss_types(action_type)
    assert misses and not set(misses) & set(ACTION_INTRODUCED_IN)
    assert action_type not in misses
    assert any(m.lower() == action_type.lower() for m in misses)  # a case variant
    assert any(m.strip() == action_type for m in misses)  # a whitespace variant
    assert any(
        m.split("/", 1)[1] == action_type.split("/", 1)[1] and m != action_type
        for m in misses
        if "/" in m
    )


def test_adversarial_shapes() -> None:
    assert act.json_depth(act.nested_value(100)) == 100
    assert act.json_depth({"a": [1, {"b": []}]}) == 4
    missing = _collect(act.missing_field_actions("chat"), 30)
    assert all(act.missing_required(a, a["type"]) for a in missing if "type" in a)
    wrong = _collect(act.wrong_type_actions("session"), 30)
    assert all(kind_of(a["type"]) == "session" for a in wrong if isinstance(a.get("type"), str))


@pytest.mark.parametrize("kind", KINDS)
def test_reference_model_survives_adversarial_actions(kind: str) -> None:
    """Adversarial input must give a state or a `MalformedAction`, never another exception."""

    @settings(max_examples=30, suppress_health_check=_SUPPRESS, deadline=None)
    @given(initial_states(kind), act.adversarial_actions(kind))
    def check(state: dict[str, Any], action: dict[str, Any]) -> None:
        with contextlib.suppress(MalformedAction):
            reduce(kind, state, action, now_ms=9999)

    check()


def test_response_parts_cover_every_kind() -> None:
    kinds = {p["kind"] for p in _collect(response_parts(), 80)}
    assert kinds == {
        "markdown",
        "reasoning",
        "contentRef",
        "toolCall",
        "systemNotification",
        "inputRequest",
    }


@pytest.mark.parametrize("kind", ["chat", "session", "terminal", "changeset", "annotations", "root"])
def test_state_aware_actions_are_complete_payloads(kind: str) -> None:
    # Every valid-lane action carries its required fields, nested ones included (the model's
    # payload check, which the engine turns on): otherwise it would become a probe.
    from harness.reference import Model
    from strategies.sequences import action_sequences

    model = Model(Profile.named("0.8.0"), check_payloads=True)
    seqs = _collect(action_sequences(kind, min_size=5, max_size=15, profile=model.profile), 15)
    actions = [a for s in seqs for a in s.actions]
    assert len(actions) >= 75
    problems = [(a.get("type"), p) for a in actions if (p := model.payload_problem(kind, a))]
    assert problems == []


def test_group_chats_draw_directories_of_their_session() -> None:
    # A chat fuzzed with its session adds directories from the session's set (INV-031 paths).
    state = {"resource": "ahp-chat:/c", "title": "t", "status": 1, "modifiedAt": "x", "turns": [],
             "workingDirectories": []}
    dirs = ("file:///s1", "file:///s2")
    ctx = ActionContext(session_directories=dirs, stale=0, equivalent_spellings=0)
    drawn = _collect(actions_for("chat", state, types=["chat/workingDirectorySet"], context=ctx), 20)
    assert {a["directory"] for a in drawn} <= set(dirs)
    assert {a["directory"] for a in drawn} == set(dirs)


def _customization_ids(customizations: list[Any]) -> list[str]:
    out: list[str] = []
    for c in customizations:
        out.append(c["id"])
        out.extend(ch["id"] for ch in c.get("children") or [])
    return out


def test_customization_updates_keep_ids_session_unique() -> None:
    """A valid-lane `customizationUpdated` never reuses an id another entry (or a child) holds:
    ids are session-unique (guide/customizations.md), so breaking that is the generator's fault,
    not the reducer's (a 10-minute campaign once reported INV-028 from such a step)."""
    from strategies.states import customization_lists, session_states

    sessions = st.builds(
        lambda s, cs: {**s, "customizations": cs}, session_states(), customization_lists()
    )
    pairs = _collect(
        sessions.flatmap(
            lambda s: actions_for(
                "session", s, types=["session/customizationUpdated"], context=ActionContext(stale=0)
            ).map(lambda a: (s, a))
        ),
        150,
    )
    collided_before = 0
    for state, action in pairs:
        after = reduce("session", state, action, now_ms=1_000)
        ids = _customization_ids(after["customizations"])
        assert len(ids) == len(set(ids)), (state["customizations"], action)
        others = {
            i
            for c in state["customizations"]
            if c["id"] != action["customization"]["id"]
            for i in _customization_ids([c])
        }
        collided_before += bool(others & set(_customization_ids([action["customization"]])))
    assert collided_before == 0


def test_a_turn_is_never_started_under_a_finished_turns_id() -> None:
    # recall (turn_end_no_duration_clamp, seed 1): a drawn turnStarted named the history's `t1`
    # (the stale pick); ended, the chat held two turns of one id — a state no host makes, read
    # as namesakes (`duplicate-id`) and hiding the bug. The stale pick names the active turn only.
    history = [{"id": t, "state": "complete", "responseParts": [], "message": {"text": "", "origin": {"kind": "user"}}}
               for t in ("t1", "t2")]
    idle = {"resource": "ahp-chat:/c1", "title": "t", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
            "turns": history}
    active = {**idle, "activeTurn": {"id": "t3", "startedAt": "1970-01-01T00:00:00.000Z",
                                     "message": {"text": "", "origin": {"kind": "user"}}, "responseParts": []}}
    p7 = Profile.named("0.7.0")
    stale = ActionContext(profile=p7, stale=0.5)
    for state, allowed in ((idle, {"t4", "t1-5"}), (active, {"t3", "t4"})):
        drawn = _collect(actions_for("chat", state, p7, types=["chat/turnStarted"], context=stale), 60)
        ids = {a["turnId"] for a in drawn}
        assert not ids & {"t1", "t2"}
        assert ids & allowed
    assert "t3" in {a["turnId"] for a in _collect(
        actions_for("chat", active, p7, types=["chat/turnStarted"], context=stale), 60)}  # the active one, now and then


def test_a_0_9_response_part_now_and_then_carries_an_error_part_the_reducer_ignores() -> None:
    """0.9.0: an error enters a turn only through `chat/error` (fixture 270-chat): a
    `chat/responsePart` with an error part is a no-op. No draw made one, so the guard was never
    exercised (the reference model's branch stayed untaken). 0.7.0 has no error part at all."""
    active = {"resource": "ahp-chat:/c1", "title": "t", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
              "turns": [], "activeTurn": {"id": "t3", "startedAt": "1970-01-01T00:00:00.000Z",
                                          "message": {"text": "", "origin": {"kind": "user"}}, "responseParts": []}}
    p9, p7 = Profile.named("0.9.0"), Profile.named("0.7.0")
    drawn = _collect(actions_for("chat", active, p9, types=["chat/responsePart"],
                                 context=ActionContext(profile=p9, stale=0)), 400)
    errors = [a for a in drawn if a["part"]["kind"] == "error"]
    assert errors and len(errors) < len(drawn) / 4
    for a in errors:
        assert reduce("chat", active, a, now_ms=9999, profile=p9) == active
    older = _collect(actions_for("chat", active, p7, types=["chat/responsePart"],
                                 context=ActionContext(profile=p7, stale=0)), 200)
    assert not [a for a in older if a["part"]["kind"] == "error"]


def test_a_tool_call_delta_now_and_then_has_no_content_from_0_7_on() -> None:
    """§7b row 4: from 0.7.0 `content` is optional and an absent one appends nothing. No draw
    left it out, so code that concatenates whatever is there ("…undefined") was never met.
    0.6.0 requires it."""
    call = {"toolCallId": "tc1", "toolName": "ls", "displayName": "ls", "status": "streaming",
            "partialInput": "ab", "contributor": {"kind": "client", "clientId": "c1"}}
    active = {"resource": "ahp-chat:/c1", "title": "t", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
              "turns": [], "activeTurn": {"id": "t3", "startedAt": "1970-01-01T00:00:00.000Z",
                                          "message": {"text": "", "origin": {"kind": "user"}},
                                          "responseParts": [{"kind": "toolCall", "toolCall": call}]}}
    p7, p6 = Profile.named("0.7.0"), Profile.named("0.6.0")
    drawn = _collect(actions_for("chat", active, p7, types=["chat/toolCallDelta"],
                                 context=ActionContext(profile=p7, stale=0)), 300)
    bare = [a for a in drawn if "content" not in a]
    assert bare and len(bare) < len(drawn) / 3
    for a in bare:
        after = reduce("chat", active, a, now_ms=9999, profile=p7)
        assert after["activeTurn"]["responseParts"][0]["toolCall"]["partialInput"] == "ab"
    older = _collect(actions_for("chat", active, p6, types=["chat/toolCallDelta"],
                                 context=ActionContext(profile=p6, stale=0)), 150)
    assert all("content" in a for a in older)


def test_inner_tactics_reach_one_level_in() -> None:
    # issue 32: `wrong_type_actions` swapped top-level fields only; a list item that must be an
    # object, or a member an object requires, was never malformed (typed decoders read them).
    from harness.reference.payloads import _first_level
    from harness.spec.versions import parse_version

    v = parse_version("0.7.0")
    wrong = [_first_level(a, v) for a in _collect(act.wrong_inner_type_actions("root"), 60)]
    assert any(p and "] must be an object" in p for p in wrong)
    missing = [_first_level(a, v) for a in _collect(act.missing_inner_field_actions("root"), 60)]
    assert any(p and "]." in p and p.endswith("is absent") for p in missing)
    assert all(p for p in missing)  # each one lacks something its schema requires
