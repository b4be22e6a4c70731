"""The reference model against the upstream fixtures (INV-009), by spec folder.

Needs $AHP_SPEC_DIR (the 0.7.0 folder); 0.6.0 and `later` are read from beside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.conformance import profile_for, run, run_reducer_fixture
from harness.reference import Model, Profile
from harness.spec.specdir import SpecDir
from harness.targets.base import open_target

from .conftest import sibling_spec

MUTANTS = Path(__file__).resolve().parent / "mutants.py"


def _failures(results: list) -> list[str]:
    return [f"{r.family} {r.name}: {r.problems[:3]}" for r in results if not r.passed]


def test_pinned_folder_is_detected_as_main_after_0_7_0(spec_dir: SpecDir) -> None:
    # The 0.7.0 folder is upstream main just after the 0.7.0 release: its CHANGELOG has an
    # Unreleased 0.8.0 heading, and fixtures 225, 261 and 262 already encode the 0.8.0
    # InputNeeded rule (REDUCERS.md §7b row 10). The model runs it with that rule on.
    profile, why = profile_for(spec_dir)
    assert profile == Profile.named("0.7.0-main")
    assert profile.version == (0, 7, 0) and not profile.client_execution_blocks
    assert "pending" in why


def test_all_0_7_0_fixtures_pass(spec_dir: SpecDir) -> None:
    profile, _ = profile_for(spec_dir)
    results = run(spec_dir, profile)
    reducers = [r for r in results if r.family.startswith("reducer:")]
    assert len(reducers) == 249
    assert len(results) - len(reducers) == 39
    assert _failures(results) == []


def test_exec_rule_fixtures_fail_without_the_0_8_rule(spec_dir: SpecDir) -> None:
    # Proof that the switch is real: released 0.7.0 (every inputNeeded entry counts) fails
    # exactly the three row-10 fixtures of the 0.7.0 folder.
    results = run(spec_dir, Profile.named("0.7.0"))
    failed = sorted(r.name for r in results if not r.passed)
    assert failed == [
        "225-session-inputneededset-replaces-existing",
        "261-session-inputneededset-client-execution-keeps-inprogress",
        "262-session-inputneededremoved-client-execution-remains-inprogress",
    ]


def test_all_1_0_0_fixtures_pass_under_1_0_0() -> None:
    # The folder's CHANGELOG (1.0.0 released, an empty 1.1.0 stub) selects the 1.0.0 profile;
    # every recovered reducer fixture and round trip passes (docs/profiles.md, decisions 10–17).
    spec = sibling_spec("1.0.0")
    profile, _ = profile_for(spec)
    assert profile == Profile.named("1.0.0")
    results = run(spec, profile)
    assert len([r for r in results if r.family.startswith("reducer:")]) == 235
    assert len([r for r in results if r.family == "round-trip"]) == 66
    assert _failures(results) == []


def test_the_1_0_0_rules_are_what_the_1_0_0_fixtures_need() -> None:
    # Under 0.8.0 (no 0.9.0/1.0.0 rules, no 1.0.0 types) the fixtures that changed or are new
    # in 1.x fail: the rules, not the fixtures, make them pass.
    spec = sibling_spec("1.0.0")
    failed = {r.name for r in run(spec, Profile.named("0.8.0")) if not r.passed}
    assert {"004-session-creationfailed", "016-session-error-finalizes-turn-with-error",
            "081-terminal-exited", "263-chat-turn-resume-reopens-turn", "271-turn-end-normalizes-offset-and-rollover",
            "277-session-chatsreordered-authoritative-order-to-start", "283-chat-backgroundworkset-keeps-unknown-kind",
            "286-chat-isreadchanged-marks-default-chat-as-read"} <= failed
    assert len(failed) >= 50


def test_all_0_6_0_fixtures_pass_under_0_6_0() -> None:
    spec = sibling_spec("0.6.0")
    profile, _ = profile_for(spec)
    assert profile == Profile.named("0.6.0")
    results = run(spec, profile)
    assert len([r for r in results if r.family.startswith("reducer:")]) == 232
    assert _failures(results) == []


def test_the_readme_conformance_commands_pass_on_both_spec_folders(spec_dir: SpecDir) -> None:
    """`ahp-fuzz conformance` on the pinned folder and on 0.6.0, as the README runs them: the
    fixtures' payloads are not judged by the folder's schema (0.6.0's own fixtures 138, 139, 158,
    159 and 200 use shapes its schema rejects)."""
    from harness.cli import main

    assert main(["conformance", "--spec", str(spec_dir.path)]) == 0
    assert main(["conformance", "--spec", str(sibling_spec("0.6.0").path)]) == 0


def test_0_7_0_fixtures_that_discriminate_versions_fail_under_0_6_0(spec_dir: SpecDir) -> None:
    # REDUCERS.md §7b.4: the 0.6.0 reducers fail 12 of the 0.7.0 fixtures. The model under the
    # 0.6.0 profile fails the same 11 by behaviour; 220 and four more send a content-less
    # `chat/toolCallDelta`, which 0.6.0's schema forbids: the model refuses them as malformed
    # (a probe), never as a behaviour (docs/profiles.md decision 3).
    results = run(spec_dir, Profile.named("0.6.0"))

    def short(name: str) -> str:
        return name.split("-")[0] + ("wd" if "workingdirectory" in name else "")

    malformed = {short(r.name) for r in results if not r.passed and "raised MalformedAction" in r.problems[0]}
    failed = {short(r.name) for r in results if not r.passed} - malformed
    assert failed == {"241wd", "242wd", "244wd", "247wd", "248wd", "250wd", "225", "261", "262", "257", "260"}
    assert malformed == {"019", "025", "090", "095", "220"}
    assert all("chat/toolCallDelta" in r.problems[0] and "content" in r.problems[0]
               for r in results if not r.passed and short(r.name) in malformed)


@pytest.mark.parametrize(
    ("profile", "expect_pass"),
    [("0.8.0-c840a57", {"267", "270"}), ("0.8.0", {"267"})],
)
def test_replace_fixtures_from_later(profile: str, expect_pass: set[str]) -> None:
    # Fixture 270 (proposal commit c840a57) moves an earlier duplicate to the target position;
    # released 0.8.0 fixed that ("retains an earlier duplicate replacement so a later replacement
    # cannot move a protected primary"). Both rules are modelled; 270 passes only under the draft.
    spec = sibling_spec("later")
    model = Model(Profile.named(profile))
    results = {fx.name[:3]: run_reducer_fixture(fx, model) for fx in spec.reducer_fixtures()}
    assert {k for k, r in results.items() if r.passed} == expect_pass


# -- through a target (ahp-fuzz conformance --target), the profile rule ---------------------------

ADAPTER = f"adapter:{sys.executable} -m harness.targets.reference_adapter"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_every_fixture_passes_through_the_adapter_served_reference(spec_dir: SpecDir) -> None:
    profile, _ = profile_for(spec_dir)
    notes: list[str] = []
    with open_target(ADAPTER, profile=profile) as target:
        results = run(spec_dir, profile, target, notes=notes)
    assert len(results) == 288 and notes == []  # round trips included: the adapter offers them
    assert _failures(results) == []


def test_a_target_without_round_trips_skips_them_with_a_note(spec_dir: SpecDir) -> None:
    profile, _ = profile_for(spec_dir)
    notes: list[str] = []
    with open_target(f"{ADAPTER} --forms simple", profile=profile) as target:
        target.announcement.pop("roundTrip")  # as an adapter that does not offer the request
        results = run(spec_dir, profile, target, notes=notes)
    assert len(results) == 249 and _failures(results) == []
    assert notes and "39 fixture(s) skipped" in notes[0]


def test_a_defective_target_fails_its_fixtures(spec_dir: SpecDir) -> None:
    r = _cli("conformance", "--target", f"{ADAPTER} --model {MUTANTS}:turn_started_keeps_read")
    assert r.returncode == 1
    assert "FAIL reducer:chat" in r.stdout and "$.status" in r.stdout


def test_profile_rule_order(spec_dir: SpecDir) -> None:
    from harness.reference.profile_rule import choose_profile, mismatch

    assert choose_profile("0.6.0", spec=spec_dir).profile == Profile.named("0.6.0")
    assert choose_profile(None, recorded="0.8.0", spec=spec_dir).source == "finding"
    assert choose_profile(None, spec=spec_dir).profile == Profile.named("0.7.0-main")
    checkout = choose_profile(None, target=f"ts:{spec_dir.path}")
    assert checkout.source == "checkout" and checkout.profile == Profile.named("0.7.0-main")
    said = choose_profile(None, announcement={"protocolVersion": "0.8.0"})
    assert said.source == "announcement" and said.profile == Profile.named("0.8.0")
    assert choose_profile(None).source == "pinned"
    note = mismatch(choose_profile("0.7.0"), {"profile": "0.8.0"})
    assert note and "announces profile 0.8.0" in note and "0.7.0" in note
    assert mismatch(choose_profile("0.7.0"), {"profile": "0.7.0"}) is None


def test_run_replay_and_conformance_read_the_profile_the_same_way(spec_dir: SpecDir, tmp_path: Path) -> None:
    env = {**os.environ, "AHP_SPEC_DIR": str(spec_dir.path)}
    bounded = ("--budget", "600s", "--chunks", "1", "--chunk", "2", "--max-steps", "5")  # never by seconds
    run_out = _cli("run", *bounded, "--seed", "1", "--kinds", "terminal", "--out", str(tmp_path / "r"), "--quiet", env=env)
    assert "profile: 0.7.0-main" in run_out.stderr, run_out.stderr
    conf = _cli("conformance", "--json", env=env)
    assert conf.returncode == 0
    explicit = _cli("conformance", "--profile", "0.7.0", "--json", env=env)
    assert explicit.returncode == 1  # released 0.7.0 fails the three row-10 fixtures
    alias = _cli("conformance", "--version", "0.7.0", "--json", env=env)
    assert alias.returncode == 1 and alias.stdout == explicit.stdout
    # a target announcing another profile than the run's: said at the start
    mism = _cli("run", *bounded, "--seed", "1", "--kinds", "terminal", "--profile", "0.7.0",
                "--target", f"{ADAPTER} --profile 0.8.0", "--out", str(tmp_path / "m"), "--quiet", env=env)
    assert "announces profile 0.8.0 but this run models 0.7.0" in mism.stderr, mism.stderr
    bad = _cli("replay", str(tmp_path / "none.json"), "--profile", "0.7.0", env=env)
    assert bad.returncode == 2
