"""docs/adapters.md stays true: its Node adapter runs, its Go adapter builds, its transcript is real."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.targets import TargetError
from harness.targets.adapter import AdapterTarget

DOC = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"


def listing(language: str, first_line: str) -> str:
    """The fenced code block in `language` whose first line starts with `first_line`."""
    for body in re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S):
        if body.startswith(first_line):
            return body
    raise AssertionError(f"no {language} listing starting with {first_line!r} in {DOC}")


REDUCERS = """
export function terminalReducer(state, action) {
  if (action.type === 'terminal/titleChanged') return { ...state, title: action.title, at: Date.now() };
  if (action.type === 'terminal/throw') throw new RangeError('bad');
  return state;
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_simple_adapter_listing_works(tmp_path: Path) -> None:
    adapter = listing("js", "// simple-adapter.mjs")
    assert 25 <= len(adapter.strip().splitlines()) <= 40
    (tmp_path / "simple-adapter.mjs").write_text(adapter)
    (tmp_path / "reducers.mjs").write_text(REDUCERS)
    with AdapterTarget(["node", "simple-adapter.mjs"], cwd=tmp_path) as target:
        assert target.forms == ("simple",)
        state = {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c"}}
        after = target.reduce("terminal", state, {"type": "terminal/titleChanged", "title": "x"}, 1234)
        assert after == {**state, "title": "x", "at": 1234}
        session = target.session("terminal", state)
        assert session.step({"type": "terminal/unknown"}, 1) == state
        with pytest.raises(TargetError) as info:
            target.reduce("terminal", state, {"type": "terminal/throw"}, 1)
        assert info.value.error_type == "RangeError"
        with pytest.raises(TargetError, match="no reducer for kind chat"):
            target.reduce("chat", {}, {"type": "chat/x"}, 1)
        proc = target._proc
    assert proc is not None and proc.returncode == 0


def test_go_simple_adapter_listing_is_complete() -> None:
    source = listing("go", "// simple-adapter.go")
    assert "package main" in source and "func main()" in source
    assert 25 <= len(source.strip().splitlines()) <= 75


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_go_simple_adapter_listing_builds_and_runs(tmp_path: Path) -> None:
    (tmp_path / "simple-adapter.go").write_text(listing("go", "// simple-adapter.go"))
    subprocess.run(["go", "build", "-o", "adapter", "simple-adapter.go"], cwd=tmp_path, check=True)
    with AdapterTarget([str(tmp_path / "adapter")]) as target:
        state = {"title": "sh", "content": []}
        assert target.reduce("terminal", state, {"type": "terminal/titleChanged", "title": "x"}, 1) == {
            **state,
            "title": "x",
        }


def test_wire_transcript_is_what_the_reference_adapter_says() -> None:
    text = DOC.read_text()
    block = text[text.index("### A session on the wire") :]
    block = block[block.index("```text\n") + 8 : block.index("```", block.index("```text\n") + 8)]
    sent = [line[2:] for line in block.splitlines() if line.startswith("→ ")]
    received = [line[2:] for line in block.splitlines() if line.startswith("← ")]
    done = subprocess.run(
        [sys.executable, "-m", "harness.targets.reference_adapter", "--profile", "0.7.0"],
        input="\n".join(sent) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.splitlines() == received
