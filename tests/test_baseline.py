"""Target baselines (docs/baselines.md): format validation, normalisation, known entries, stale
entries, and one finding per root cause."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.corpus.baseline import BaselineError, load_baseline, parse_baseline
from harness.invariants.base import Violation

MUTANTS = Path(__file__).resolve().parent / "mutants.py"


def doc(*entries: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"format": "ahp-fuzz/baseline", "formatVersion": 1, "entries": list(entries), **extra}


LISTS = {"id": "lists", "reason": "omitempty encoder", "normalise": {"absentEquals": [], "paths": ["turns", "activeTurn.responseParts"]}}


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"format": "other"}, "not an ahp-fuzz baseline"),
        ({**doc(LISTS), "formatVersion": 3}, "format version 3; this ahp-fuzz reads 1 and 2"),
        (doc(), "non-empty list"),
        (doc({"id": "x", "normalise": LISTS["normalise"]}), '"reason"'),
        (doc({**LISTS, "known": {"invariant": "INV-D01"}}), "exactly one"),
        (doc({"id": "x", "reason": "r", "normalise": {"absentEquals": 0, "paths": ["**"]}}), "absentEquals"),
        (doc({"id": "x", "reason": "r", "normalise": {"absentEquals": [], "paths": []}}), "paths"),
        (doc({"id": "x", "reason": "r", "known": {"invariant": "INV-D01", "message": "("}}), "regular expression"),
        (doc({"id": "x", "reason": "r", "known": {"invariant": "INV-D01", "colour": "red"}}), "known"),
        (doc(LISTS, LISTS), "duplicate"),
        (doc({**LISTS, "extra": 1}), "unknown key"),
    ],
)
def test_invalid_baselines_are_refused_with_a_clear_message(data: Any, needle: str) -> None:
    with pytest.raises(BaselineError, match=None) as e:
        parse_baseline(data, "b.json")
    assert needle in str(e.value)


def test_load_baseline_reports_missing_and_non_json_files(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="no such baseline"):
        load_baseline(tmp_path / "none.json")
    (tmp_path / "b.json").write_text("{", encoding="utf-8")
    with pytest.raises(BaselineError, match="not JSON"):
        load_baseline(tmp_path / "b.json")
    # a folder or a file that is not UTF-8 is a usage error too, not a crash
    with pytest.raises(BaselineError, match="is a folder, not a baseline file"):
        load_baseline(tmp_path)
    (tmp_path / "latin1.json").write_bytes(b'{"x": "\xe9"}')
    with pytest.raises(BaselineError, match="cannot read"):
        load_baseline(tmp_path / "latin1.json")


def test_normalise_puts_back_only_the_accepted_value_at_the_given_paths() -> None:
    b = parse_baseline(doc(LISTS))
    expected = {"turns": [], "activeTurn": {"responseParts": []}, "queuedMessages": [], "title": ""}
    observed = {"activeTurn": {}, "title": ""}
    out = b.normalise(expected, observed)
    # turns and activeTurn.responseParts are put back; queuedMessages (not listed) and a
    # different value are not
    assert out == {"turns": [], "activeTurn": {"responseParts": []}, "title": ""}
    assert observed == {"activeTurn": {}, "title": ""}  # inputs are not mutated
    assert b.entries[0].hits == 2
    # the other direction: the target has [] where the reference has nothing
    assert b.normalise({"title": ""}, {"title": "", "turns": []}) == {"title": ""}
    # a real difference is left alone, and nothing matched returns the same object
    same = {"turns": [1]}
    assert b.normalise({"turns": []}, same) is same


def test_double_star_and_list_items_match_any_depth() -> None:
    b = parse_baseline(doc({"id": "all", "reason": "r", "normalise": {"absentEquals": [], "paths": ["**"]}}))
    exp = {"turns": [{"id": "a", "responseParts": []}], "x": {"y": {"z": []}}}
    obs = {"turns": [{"id": "a"}], "x": {"y": {}}}
    assert b.normalise(exp, obs) == exp
    one = parse_baseline(doc({"id": "one", "reason": "r", "normalise": {"absentEquals": [], "paths": ["turns[].responseParts"]}}))
    assert one.normalise(exp, obs) == {"turns": [{"id": "a", "responseParts": []}], "x": {"y": {}}}


def test_known_entries_classify_matching_violations_and_count_them() -> None:
    b = parse_baseline(doc({"id": "k", "reason": "upstream lag", "known": {"invariant": "INV-016", "kind": "chat", "message": "turns\\[-1\\]"}}))
    vs = [Violation("INV-016", "violation", "chat/turnCancelled: turns[-1].message is …"),
          Violation("INV-016", "violation", "something else"),
          Violation("INV-017", "violation", "turns[-1]")]
    out = b.classify("chat", "chat/turnCancelled", vs)
    assert [v.severity for v in out] == ["known", "violation", "violation"]
    assert "baseline k: upstream lag" in out[0].message
    assert b.entries[0].hits == 1 and b.stale == []
    assert b.classify("session", "x", vs[:1])[0].severity == "violation"  # kind must match


def test_an_entry_that_never_matched_is_stale() -> None:
    b = parse_baseline(doc(LISTS, {"id": "k", "reason": "r", "known": {"invariant": "INV-016"}}))
    b.normalise({"turns": []}, {})
    assert [e.id for e in b.stale] == ["k"]
    assert any("STALE" in line and "k" in line for line in b.summary())


def _run(tmp_path: Path, name: str, mutant: str, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    out = tmp_path / name
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--target",
         f"adapter:{sys.executable} -m harness.targets.reference_adapter --model {MUTANTS}:{mutant}",
         "--kinds", "chat", "--seed", "1", "--budget", "120s", "--out", str(out), "--quiet",
         # The fast lane reaches many more signatures of the systemic quirk (19 findings in 120 s,
         # each shrunk) and can spend the budget before the third defect: docs/lanes.md.
         "--lane", "hypothesis", *extra],
        capture_output=True, text=True, timeout=300,
    )
    findings = [json.loads(p.read_text()) for p in sorted((out / "findings").glob("*.json"))] if (out / "findings").is_dir() else []
    return proc.returncode, findings, proc.stdout + proc.stderr


@pytest.mark.slow
def test_three_defects_three_causes_and_the_baseline_silences_the_systemic_one(tmp_path: Path) -> None:
    # bench/bench_true_findings.py runs the same with a longer budget and records the figures.
    code, found, text = _run(tmp_path, "plain", "typed_client_with_two_bugs")
    assert code == 1, text
    messages = [f["message"] for f in found]
    assert any("reference=[] target=<absent>" in m or "=[]" in m for m in messages)  # the quirk
    assert any("chat/delta" in m for m in messages)  # delta ignores turnId
    assert any("chat/turnStarted" in m and "status" in m for m in messages)  # keeps IsRead
    base = tmp_path / "typed.json"
    base.write_text(json.dumps(doc({"id": "lists", "reason": "omitempty", "normalise": {"absentEquals": [], "paths": ["**"]}})))
    code, found, text = _run(tmp_path, "baselined", "typed_client_with_two_bugs", "--baseline", str(base))
    assert code == 1, text
    assert "baseline lists:" in text and "STALE" not in text
    assert not any("<absent>" in f["message"] and "[]" in f["message"] for f in found), [f["message"] for f in found]
    assert any("chat/delta" in f["message"] for f in found)
    assert any("chat/turnStarted" in f["message"] for f in found)


@pytest.mark.slow  # ~20 s: over the fuzz tier's share; the plugin test carries the fuzz tier
def test_the_typed_client_quirk_is_found_and_a_baseline_accepts_it(tmp_path: Path) -> None:
    code, found, text = _run(tmp_path, "plain", "drops_empty_lists", "--budget", "600s", "--max-findings", "1")
    assert code == 1 and found, text
    assert "[]" in found[0]["message"] and "<absent>" in found[0]["message"]
    base = tmp_path / "typed.json"
    base.write_text(json.dumps(doc({"id": "lists", "reason": "omitempty", "normalise": {"absentEquals": [], "paths": ["**"]}},
                                   {"id": "never", "reason": "r", "known": {"invariant": "INV-049"}})))
    code, found, text = _run(tmp_path, "baselined", "drops_empty_lists", "--budget", "600s", "--chunks", "2",
                             "--baseline", str(base))
    assert code == 0, [f["message"] for f in found]
    assert "baseline never: 0 match(es)  STALE" in text


def test_a_step_that_changed_only_the_accepted_quirk_stays_an_identity_no_op() -> None:
    # Checks compare parts by identity to skip unchanged ones (issue 9 (f): INV-018 fired on a
    # step where only lossy fields changed): the normalised state reuses the before objects.
    b = parse_baseline(doc({"id": "all", "reason": "r", "normalise": {"absentEquals": [], "paths": ["**"]}}))
    part = {"kind": "toolCall", "toolCall": {"status": "auth-required", "content": []}}
    before = {"turns": [], "activeTurn": {"id": "t", "responseParts": [part]}}
    observed = {"activeTurn": {"id": "t", "responseParts": [{"kind": "toolCall", "toolCall": {"status": "auth-required"}}]}}
    out = b.normalise(before, observed, before)
    assert out is before
    changed = {"activeTurn": {"id": "t2", "responseParts": [{"kind": "toolCall", "toolCall": {"status": "auth-required"}}]}}
    out = b.normalise({**before, "activeTurn": {**before["activeTurn"], "id": "t2"}}, changed, before)
    assert out is not before and out["activeTurn"]["responseParts"][0] is part


def test_an_object_of_nulls_is_the_empty_object_an_absent_equals_entry_accepts() -> None:
    # `null` is absent (docs/profiles.md decision 4): `{"vscode.id": null}` is an empty `_meta`, and
    # an encoder that drops empty objects drops it too (seen with the strict imitation and a baseline)
    b = parse_baseline(doc({"id": "objects", "reason": "r", "normalise": {"absentEquals": {}, "paths": ["**"]}}))
    expected = {"usage": {"_meta": {"vscode.id": None}, "inputTokens": 3}}
    assert b.normalise(expected, {"usage": {"inputTokens": 3}}) == expected
    kept = {"usage": {"_meta": {"vscode.id": 1}, "inputTokens": 3}}  # a value: not empty, not accepted
    assert b.normalise(kept, {"usage": {"inputTokens": 3}}) == {"usage": {"inputTokens": 3}}
