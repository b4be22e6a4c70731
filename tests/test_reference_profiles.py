"""Profiles 0.9.0 and 1.0.0 (issue 34): what each version changed is data — the rules of
`VERSION_RULES`, the handlers each rule puts in place, the kinds and action types per version —
and a run of a 1.x profile fuzzes its channels on its own baselines."""

from __future__ import annotations

from harness.engine.arms import MODEL_PROFILES, arms_for, lanes_for
from harness.engine.run import DEFAULT_KINDS, _profile_kinds
from harness.reference import Model, Profile
from harness.reference.dispatch import tables_for
from harness.reference.profile import VERSION_RULES, rules_for
from harness.spec.versions import action_types, kinds_of, parse_version
from harness.targets.reference import ReferenceTarget


def test_every_rule_flips_at_its_version_and_only_there() -> None:
    for name, (before, version, since) in VERSION_RULES.items():
        v = parse_version(version)
        older = (v[0], v[1] - 1, 0) if v[1] else (v[0] - 1, 9, 0)
        assert rules_for(older)[name] == before and rules_for(v)[name] == since, name
        assert Profile.for_version(version).rule(name) == since


def test_a_rule_puts_its_handler_in_place() -> None:
    old, new = tables_for(Profile.named("0.8.0")), tables_for(Profile.named("0.9.0"))
    assert old["chat"]["chat/error"] is not new["chat"]["chat/error"]
    assert old["terminal"]["terminal/exited"] is not new["terminal"]["terminal/exited"]
    assert "chat/turnResume" not in old["chat"] and "chat/turnResume" in new["chat"]
    assert "chat/isReadChanged" not in new["chat"]  # 1.0.0
    assert "chat/isReadChanged" in tables_for(Profile.named("1.0.0"))["chat"]


def test_versions_know_their_kinds_and_types() -> None:
    assert "automation" not in kinds_of("0.8.0") and "canvas" not in kinds_of("0.9.0")
    assert {"automation", "automationRun", "canvas"} <= set(kinds_of("1.0.0"))
    added = set(action_types("1.0.0")) - set(action_types("0.7.0"))
    assert len(added) == 21  # DELTA-1.0.0.md: 21 action types since 0.7.0, none removed


def test_a_chat_error_of_0_9_0_is_a_durable_part_and_of_0_8_0_a_turn_error() -> None:
    chat = {"resource": "ahp-chat:/c", "title": "t", "status": 8, "modifiedAt": "x", "turns": [],
            "activeTurn": {"id": "t1", "startedAt": "2026-01-01T00:00:00.000Z",
                           "message": {"text": "hi", "origin": {"kind": "user"}}, "responseParts": []}}
    part = {"kind": "error", "error": {"errorType": "x", "message": "m"}, "resumable": True}
    new = Model(Profile.named("0.9.0"), check_payloads=True).reduce(
        "chat", chat, {"type": "chat/error", "turnId": "t1", "duration": 1500, "part": part}, 5)
    assert new["turns"][0]["responseParts"] == [part] and "error" not in new["turns"][0]
    assert new["modifiedAt"] == "2026-01-01T00:00:01.500Z"  # startedAt + duration, no clock
    old = Model(Profile.named("0.8.0"), check_payloads=True).reduce(
        "chat", chat, {"type": "chat/error", "turnId": "t1", "duration": 1500, "error": part["error"]}, 5)
    assert old["turns"][0]["error"] == part["error"] and old["modifiedAt"] == "1970-01-01T00:00:00.005Z"


def test_a_1_x_run_fuzzes_its_channels_on_the_1_x_baselines() -> None:
    v1 = Profile.named("1.0.0")
    kinds = _profile_kinds(DEFAULT_KINDS, v1)
    assert {"automation", "automationRun", "canvas"} <= set(kinds)
    assert _profile_kinds(DEFAULT_KINDS, Profile.named("0.7.0")) == DEFAULT_KINDS
    assert _profile_kinds(("chat",), v1) == ("chat",)  # kinds asked for by name are kept
    lanes = lanes_for(ReferenceTarget(v1), target_is_model=True, profile=v1)
    assert [lane.profile for lane in lanes] == [Profile.named(n) for n in MODEL_PROFILES]
    arms = arms_for(kinds, lanes)
    assert ("canvas", 0) in arms and ("automation", 1) in arms  # 1.0.0 lane, 0.9.0 lane
    assert not [a for a in arms if a[0] == "automation" and lanes[a[1]].profile.version < (0, 9, 0)]


def test_a_model_run_of_any_profile_fuzzes_every_profile_the_model_serves() -> None:
    # issue 32: a 0.7.0 run of the model reached none of its 0.9.0/1.0.0 or 0.6.0 rules
    old = Profile.named("0.7.0")
    lanes = lanes_for(ReferenceTarget(old), target_is_model=True, profile=old)
    assert lanes[0].profile == old
    assert {lane.profile for lane in lanes} == {Profile.named(n) for n in MODEL_PROFILES}
    assert {"1.0.0", "0.9.0", "0.6.0"} <= set(MODEL_PROFILES)
    assert "0.8.0-c840a57" not in MODEL_PROFILES  # the draft moves index 0: INV-035
    newest = max((lane.profile for lane in lanes), key=lambda p: p.version)
    assert {"automation", "canvas"} <= set(_profile_kinds(DEFAULT_KINDS, newest))
    # an adapter is fuzzed in the profiles it announces only: the model's list is not its
    assert len(lanes_for(ReferenceTarget(old), target_is_model=False, profile=old)) == 1
