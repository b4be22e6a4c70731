"""Slow tier: the host engineer's `subset-unchecked` defect found by CMD-CHAT-SUBSET through
`ahp-fuzz commands` (createChat bodies — messages, attachments — are slow to draw)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.bridge.fuzz import CommandRunConfig, run_commands

pytestmark = pytest.mark.slow


def test_subset_unchecked_is_found_and_reproduces(spec_dir: Any) -> None:
    def hit(f: Any) -> bool:
        return f.invariant == "CMD-CHAT-SUBSET" and f.steps[f.failing_step].method == "createChat"

    result = run_commands(CommandRunConfig(
        target="host:embedded?defect=subset-unchecked", spec=spec_dir, seed=3, budget_s=120,
        methods=("createChat",), operation_cap_s=None, stop_when=hit,
    ))
    found = [f for f in result.findings if hit(f)]
    assert found, [f.invariant for f in result.findings]
    assert found[0].extra["reproduced"] is True and found[0].severity == "violation"
