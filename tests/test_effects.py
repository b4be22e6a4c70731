"""Reach by behaviour (issue 32): a step's effect in the model names the reducer branch it took
(harness/engine/effects.py), and the fast lane looks ahead for an effect it has rarely seen."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import strategies as st

from harness.engine import fast, mutation
from harness.engine.effects import effect, near_miss
from harness.engine.mutation import ids_by_key
from harness.reference import Model, Profile

P8 = Profile.named("0.8.0")
P7 = Profile.named("0.7.0")
P7 = Profile.named("0.7.0")
A, B, C = "file:///a", "file:///b", "file:///c"


def _replace(model: Model, state: dict[str, Any], directory: str, replacement: str) -> dict[str, Any]:
    return model.reduce("session", state, {"type": "session/workingDirectoryReplaced", "directory": directory,
                                           "replacement": replacement}, 5)


def test_two_branches_of_one_type_have_two_effects() -> None:
    model = Model(P8)
    session = {"workingDirectories": [A, B]}
    in_place = effect(session, _replace(model, session, B, C))
    earlier = effect(session, _replace(model, session, B, A))  # the replacement sits before: B removed
    assert in_place == ("/workingDirectories/*=",)
    assert earlier == ("/workingDirectories[2→1]",)
    assert effect(session, _replace(model, session, A, B)) == ("/workingDirectories[2→1]", "/workingDirectories[head]")
    assert effect(session, _replace(model, session, C, A)) == ()  # a no-op: nothing changed


def test_removing_the_last_queued_message_is_another_effect_than_removing_one_of_two() -> None:
    model = Model(P7)
    one = {"id": "m1", "message": {"text": "a"}}
    two = {"id": "m2", "message": {"text": "b"}}

    def removed(queue: list[Any]) -> tuple[str, ...]:
        state = {"status": 1, "turns": [], "queuedMessages": queue}
        after = model.reduce("chat", state, {"type": "chat/pendingMessageRemoved", "kind": "queued", "id": "m1"}, 5)
        return effect(state, after)

    assert removed([one, two]) == ("/queuedMessages[2→1]", "/queuedMessages[head]")
    assert removed([two, one]) == ("/queuedMessages[2→1]",)
    assert removed([one]) == ("/queuedMessages-",)


def test_enum_values_that_come_and_go_are_named_text_is_not() -> None:
    running = {"toolCall": {"status": "running", "toolCallId": "tc1", "invocationMessage": "doing it"}}
    before = {"activeTurn": {"id": "t1", "responseParts": [running]}, "turns": []}
    cancelled = {"toolCall": {"status": "cancelled", "toolCallId": "tc1", "invocationMessage": "done it"}}
    after = {"turns": [{"id": "t1", "responseParts": [cancelled], "state": "complete"}]}
    sig = effect(before, after)
    assert "/activeTurn-" in sig and "/turns[0→1]" in sig
    assert "status→cancelled" in sig and "status←running" in sig and "state→complete" in sig
    assert not any("done" in t or "doing" in t or "tc1" in t for t in sig)  # text and ids are not enums
    kept = {"status": "running", "text": "a"}
    assert effect({"x": kept, "y": 1}, {"x": kept, "y": 2}) == ("/y=",)  # a shared subtree is not walked


def test_a_reorder_is_its_own_effect() -> None:
    q = [{"id": "m1"}, {"id": "m2"}]
    assert effect({"queuedMessages": q}, {"queuedMessages": [q[1], q[0]]}) == ("/queuedMessages[reordered]",)


def _lane(profile: Profile, effects: Counter[Any]) -> Any:
    lane = fast.FastLane.__new__(fast.FastLane)
    lane.rng, lane.stats = random.Random(3), fast.FastStats()
    lane.mutator = mutation.Mutator(lane.rng, lane.stats)
    lane.valid_cache, lane.effects, lane._last_offers = {}, effects, None
    return lane


def test_the_effect_hunt_sends_the_pooled_payload_whose_effect_is_rare_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # the pool holds replaces drawn for other sessions (other directories); retargeted to this
    # session they name its entries, and the one that removes an entry (the replacement sits
    # earlier: the branch `replace_moves_primary` breaks) is sent, the swap in place seen often
    monkeypatch.setattr(mutation, "URI_RETARGET", 1.0)
    model = Model(P8)
    session = {"workingDirectories": [A, B]}
    t = "session/workingDirectoryReplaced"
    pooled = [(0, {"type": t, "directory": "file:///x", "replacement": "file:///y"}) for _ in range(8)]
    pool = fast.ArmPool(by_type={t: pooled})
    seen = Counter({(t, ("/workingDirectories/*=",)): 50, (t, ("noop",)): 50,
                    (t, ("/workingDirectories[2→1]", "/workingDirectories[head]")): 50})
    lane = _lane(P8, seen)
    channels = [(SimpleNamespace(kind="session", reference=session), None)]
    here = SimpleNamespace(profile=P8, model=model)
    monkeypatch.setattr(fast.FastLane, "_offers", staticmethod(lambda *a: [(t, 1.0, None)]))
    sent = lane._effect_hunt(pool, here, channels, 0, 5)  # type: ignore[arg-type]
    assert sent is not None and (sent["directory"], sent["replacement"]) == (B, A)
    assert lane.stats.effect_hunted == 1
    seen[(t, ("/workingDirectories[2→1]",))] = fast.EFFECT_RARE  # seen often enough now
    assert lane._effect_hunt(pool, here, channels, 0, 5) is None  # type: ignore[arg-type]


def test_a_uri_field_is_retargeted_to_a_member_of_the_states_uri_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mutation, "URI_RETARGET", 1.0)
    mutator = mutation.Mutator(random.Random(1), fast.FastStats())
    action = {"type": "session/workingDirectoryRemoved", "directory": "file:///elsewhere"}
    out = mutator.retarget(action, {"workingDirectories": [A, B]})
    assert out["directory"] in (A, B) and action["directory"] == "file:///elsewhere"  # a copy
    other = {"type": "session/workingDirectoryRemoved", "directory": "ahp-chat:/c1"}
    assert mutator.retarget(other, {"workingDirectories": [A, B]}) is other  # no member of its scheme
    assert mutation.uri_members({"workingDirectories": [A], "title": "x:y", "tags": ["plain"]}) == [A]


def test_a_fill_does_not_give_hypothesis_first_simplest_value_every_time() -> None:
    # Hypothesis tries the simplest value first whatever the seed; a fill of one was that value
    # every time (every integer 0, every one_of its first branch)
    firsts = {fast.fill(st.integers(0, 1_000), 1, s)[0] for s in range(8)}
    assert len(firsts) > 4
    either = st.one_of(st.integers(0, 99).map(lambda i: ("first", i)), st.integers(0, 99).map(lambda i: ("second", i)))
    branches = Counter(fast.fill(either, 1, s)[0][0] for s in range(40))
    assert branches["first"] >= 5 and branches["second"] >= 5
    assert fast.fill(st.just(7), 1, 0) == [7]  # a strategy of one value still gives it


def test_draws_are_seeded_random_values_with_filters_retried() -> None:
    from harness.engine import draws

    evens = st.integers(0, 10_000).filter(lambda i: i % 2 == 0)
    a, b = draws.values(evens, 20, 5), draws.values(evens, 20, 5)
    assert a == b and len(a) == 20 and all(i % 2 == 0 for i in a)  # deterministic; the filter held
    assert draws.values(evens, 20, 6) != a
    assert draws.values(st.nothing(), 2, 1) == []  # nothing to draw: no value, no error
    # the engine path (the fallback) drops the simplest-first values too
    assert len({draws._engine_values(st.integers(0, 1_000), 1, s)[0] for s in range(8)}) > 4


def test_the_simplest_value_is_still_drawn_first_when_asked_and_now_and_then() -> None:
    # the simplest value is an edge case of its own (every optional key absent)
    from harness.engine import draws

    assert [fast.fill(st.integers(0, 1_000), 2, s, simplest_first=True)[0] for s in range(4)] == [0, 0, 0, 0]
    drawn = [v for s in range(40) for v in fast.fill(st.integers(1, 1_000), 5, s)]
    assert 0 < drawn.count(1) < len(drawn) * draws.SIMPLEST * 2  # now and then, not every time


def test_draws_fall_back_to_the_engine_when_the_internal_api_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    # pyproject allows any Hypothesis 6.x; constraints.txt pins the one engine/draws.py was written
    # against. A conjecture layer of another shape is found once, and the engine path is used
    from harness.engine import draws

    assert draws._internal_ok()
    monkeypatch.setattr(draws, "ConjectureData", lambda **kw: (_ for _ in ()).throw(TypeError("changed")))
    draws._internal_ok.cache_clear()
    try:
        assert not draws._internal_ok()
        got = draws.values(st.integers(0, 1_000), 3, 7)
        assert got == draws._engine_values(st.integers(0, 1_000), 3, 7) and len(got) == 3
    finally:
        monkeypatch.undo()
        draws._internal_ok.cache_clear()
    assert draws._internal_ok()


def test_a_no_op_is_named_by_how_its_ids_missed() -> None:
    # the typed client's bug (issue 32): a delta naming an older turn while a part of its
    # partId streams in the active one; the reducer must ignore it, and one that matches the
    # part alone appends. As `()` it was the commonest effect of chat/delta, never hunted.
    state = {"turns": [{"id": "t1"}], "activeTurn": {"id": "t2", "responseParts": [{"kind": "markdown", "id": "p1"}]}}
    ids = ids_by_key(state)
    older = {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"}
    unknown = {"type": "chat/delta", "turnId": "t2", "partId": "p9", "content": "x"}
    assert near_miss(older, ids) == ("noop", "turnId∈", "partId=")
    assert near_miss(unknown, ids) == ("noop", "turnId=", "partId∉")
    assert near_miss({"type": "chat/delta", "content": "x"}, ids) == ("noop",)  # no id named
    assert effect(state, state, older) == ()  # a change's signature is never a near miss's


def test_a_part_id_is_retargeted_to_a_part_the_state_holds() -> None:
    # `partId` names a `responseParts` entry's `id`: without the last-word name a pooled delta
    # kept its drawn partId, matching no part of this state (the near miss above never came)
    state = {"turns": [{"id": "t1"}], "activeTurn": {"id": "t2", "responseParts": [{"kind": "markdown", "id": "p1"}]}}
    assert ids_by_key(state)["partId"] == ["p1"]
    m = mutation.Mutator(random.Random(3), fast.FastStats())
    out = m.retarget({"type": "chat/delta", "turnId": "t9", "partId": "p7", "content": "x"}, state)
    assert out["partId"] == "p1" and out["turnId"] in ("t1", "t2")


def test_the_effect_hunt_tries_one_id_right_and_one_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    # recall: the typed client's `chat/delta` matches the part alone (its turnId guard dropped).
    # Retargeting names what the state holds — the active turn and its part, or an older turn
    # only when the state has one — so a delta naming the streaming part under a turn id that
    # names nothing never came (seed 5: 0 in 27,516 steps). `miss_one` makes that guard's
    # other side, and the hunt sends it while its near miss is rare.
    state = {"resource": "ahp-chat:/c1", "title": "t", "status": 8, "modifiedAt": "1970-01-01T00:00:00.000Z",
             "turns": [], "activeTurn": {"id": "t2", "startedAt": "1970-01-01T00:00:00.000Z",
                                         "message": {"text": "", "origin": {"kind": "user"}},
                                         "responseParts": [{"kind": "markdown", "id": "p1", "content": "a"}]}}
    m = mutation.Mutator(random.Random(1), fast.FastStats())
    ids = ids_by_key(state)
    delta = {"type": "chat/delta", "turnId": "t2", "partId": "p1", "content": "x"}
    missed = m.miss_one(delta, ids)
    assert missed is not None and near_miss(missed, ids) in (("noop", "turnId∉", "partId="), ("noop", "turnId=", "partId∉"))
    assert m.miss_one({"type": "chat/delta", "turnId": "t2", "content": "x"}, ids) is None  # one id: no such branch
    t = "chat/delta"
    pool = fast.ArmPool(by_type={t: [(0, dict(delta)) for _ in range(8)]})
    seen = Counter({(t, effect(state, Model(P7).reduce("chat", state, delta, 5), delta)): 50})
    lane = _lane(P7, seen)
    monkeypatch.setattr(fast.FastLane, "_offers", staticmethod(lambda *a: [(t, 1.0, None)]))
    here = SimpleNamespace(profile=P7, model=Model(P7))
    sent = lane._effect_hunt(pool, here, [(SimpleNamespace(kind="chat", reference=state), None)], 0, 5)  # type: ignore[arg-type]
    assert sent is not None and sent != delta and Model(P7).reduce("chat", state, sent, 5) is state


def test_an_active_turn_under_a_finished_turns_id_repeats_an_id() -> None:
    # the recall run of cfaae50 (turn_end_no_duration_clamp, seed 2): a retargeted turnStarted
    # named the history's `t3`; ended, the two turns of one id read as namesakes (`duplicate-id`)
    # — a state no host makes, so the step must be a probe (`_collides`, the effect hunt)
    history = [{"id": "t3", "state": "error", "responseParts": []}]
    assert mutation.id_repeats({"turns": history, "activeTurn": {"id": "t3"}}) == 1
    assert mutation.id_repeats({"turns": history, "activeTurn": {"id": "t4"}}) == 0
    assert mutation.id_repeats({"turns": [*history, {"id": "t3"}]}) == 1
    model = Model(Profile.named("0.7.0"))
    state = {"resource": "ahp-chat:/c1", "title": "t", "status": 1, "modifiedAt": "1970-01-01T00:00:00.000Z",
             "turns": history}
    again = {"type": "chat/turnStarted", "turnId": "t3", "startedAt": "1970-01-01T00:00:00.000Z",
             "message": {"text": "", "origin": {"kind": "user"}}}
    assert fast.FastLane._collides(model, "chat", state, again, 5)
    assert not fast.FastLane._collides(model, "chat", state, {**again, "turnId": "t4"}, 5)


_ACTIVE = {"resource": "ahp-chat:/c1", "title": "t", "status": 8, "modifiedAt": "1970-01-01T00:00:00.000Z",
           "turns": [], "activeTurn": {"id": "t2", "startedAt": "1970-01-01T00:00:00.000Z",
                                       "message": {"text": "", "origin": {"kind": "user"}}, "responseParts": []}}


def test_a_value_stored_other_than_the_action_sent_is_its_own_effect() -> None:
    # recall: `turn_end_no_duration_clamp` (a turn's end keeps a negative duration) was found by
    # chance, 4 seeds of 5: the ended turn is a new object in `turns`, and its clamped `duration`
    # (−5 sent, 0 stored) read as the same effect as any other turn's end
    model = Model(P7)
    ended = {"type": "chat/turnCancelled", "turnId": "t2", "duration": 5}
    clamped = {**ended, "duration": -5}
    plain = effect(_ACTIVE, model.reduce("chat", _ACTIVE, ended, 5), ended)
    sig = effect(_ACTIVE, model.reduce("chat", _ACTIVE, clamped, 5), clamped)
    assert "/turns/*/duration≠" in sig and "/turns/*/duration≠" not in plain
    assert set(sig) - set(plain) == {"/turns/*/duration≠"}
    kept = model.reduce("chat", _ACTIVE, ended, 5)
    unclamped = {**kept, "turns": [{**kept["turns"][0], "duration": -5}]}  # the defect: stored as sent
    assert effect(_ACTIVE, unclamped, clamped) == plain
    # a scalar rewritten in place to another value than the action's is named too
    assert effect({"x": {"cols": 3}}, {"x": {"cols": 0}}, {"type": "t", "cols": -1}) == ("/x/cols=", "/x/cols≠")
    assert effect({"x": {"cols": 3}}, {"x": {"cols": 4}}, {"type": "t", "cols": 4}) == ("/x/cols=",)


def test_the_effect_hunt_tries_an_integer_at_its_edge() -> None:
    # the pooled turn ends hold small positive durations (a draw's favourites): the hunt's edge
    # candidate gives one a boundary number, and a negative one — clamped, a rare effect — is sent
    t = "chat/turnCancelled"
    ended = {"type": t, "turnId": "t2", "duration": 5}
    model = Model(P7)
    pool = fast.ArmPool(by_type={t: [(0, dict(ended)) for _ in range(8)]})
    seen = Counter({(t, effect(_ACTIVE, model.reduce("chat", _ACTIVE, ended, 5), ended)): 50})
    lane = _lane(P7, seen)
    lane._offers = lambda *a: [(t, 1.0, None)]  # type: ignore[method-assign]
    here = SimpleNamespace(profile=P7, model=model)
    channels = [(SimpleNamespace(kind="chat", reference=_ACTIVE), None)]
    sent = [lane._effect_hunt(pool, here, channels, 0, 5) for _ in range(40)]  # type: ignore[arg-type]
    negative = [a for a in sent if a is not None and a["duration"] < 0]
    assert negative and all(model.reduce("chat", _ACTIVE, a, 5)["turns"][-1]["duration"] == 0 for a in negative)
    assert all(a is None or a["duration"] < 0 for a in sent)  # a positive edge is the common effect
    assert lane.stats.field_mutations["edge number"] == 40
    m = mutation.Mutator(random.Random(1), fast.FastStats())
    assert m.edge_number({"type": "chat/delta", "turnId": "t2", "content": "x"}) is None  # no integer
    assert m.edge_number({"type": "session/chatUpdated", "status": 8}) is None  # a bitset has its own edges
