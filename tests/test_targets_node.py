"""The Node bridge: a tiny JavaScript reducer module (no tsx), and the `ts:` checkout target."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.targets import TargetError, TargetProtocolError, TargetSetupError, open_target
from harness.targets.adapter import AdapterTarget, FastSession
from harness.targets.typescript import ensure_tsx

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

TINY_REDUCERS = """
// A tiny reducer module written for the bridge tests: structural sharing like the real ones.
export function terminalReducer(state, action, log) {
  switch (action.type) {
    case 'terminal/titleChanged':
      return { ...state, title: action.title };
    case 'terminal/data':
      return { ...state, content: [...state.content, { type: 'unclassified', value: action.data }] };
    case 'terminal/stamp':
      return { ...state, title: new Date().toISOString(), stampedAt: Date.now() };
    case 'terminal/forgetTitle':
      return { ...state, title: undefined };
    case 'terminal/throw':
      throw new TypeError('boom: ' + action.why);
    case 'terminal/mutate':
      state.title = 'mutated in place';
      return state;
    default:
      log('unknown action ' + action.type);
      return state;
  }
}

export const reducers = {
  changeset(state, action) {
    return action.type === 'changeset/cleared' ? { ...state, files: [] } : state;
  },
};
"""

TERMINAL = {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c1"}}


@pytest.fixture
def tiny_module(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.mjs"
    path.write_text(TINY_REDUCERS)
    return path


@pytest.fixture
def js_target(tiny_module: Path) -> Iterator[AdapterTarget]:
    target = open_target(f"js:{tiny_module}")
    assert isinstance(target, AdapterTarget)
    yield target
    target.close()


def test_bridge_announces_the_kinds_it_found(js_target: AdapterTarget, tiny_module: Path) -> None:
    ann = js_target.announcement
    assert ann["forms"] == ["simple", "fast"]
    assert sorted(ann["kinds"]) == ["changeset", "terminal"]
    assert js_target.kinds is not None and set(js_target.kinds) == {"changeset", "terminal"}
    assert ann["reducers"]["terminal"] == str(tiny_module)
    assert js_target.description.startswith(f"js:{tiny_module} (javascript reducers")


def test_simple_form(js_target: AdapterTarget) -> None:
    after = js_target.reduce("terminal", TERMINAL, {"type": "terminal/titleChanged", "title": "x"}, 5)
    assert after == {**TERMINAL, "title": "x"}
    files = js_target.reduce("changeset", {"status": "ready", "files": [{"id": "f"}]}, {"type": "changeset/cleared"}, 5)
    assert files == {"status": "ready", "files": []}


def test_date_now_is_the_steps_now(js_target: AdapterTarget) -> None:
    after = js_target.reduce("terminal", TERMINAL, {"type": "terminal/stamp"}, 9999)
    assert after["title"] == "1970-01-01T00:00:09.999Z"
    assert after["stampedAt"] == 9999


def test_fast_form_matches_simple_form(js_target: AdapterTarget) -> None:
    actions: list[dict[str, Any]] = []
    for i in range(60):
        actions.append({"type": "terminal/data", "data": f"line {i}\n"})
        if i % 7 == 0:
            actions.append({"type": "terminal/titleChanged", "title": f"t{i}"})
        if i % 11 == 0:
            actions.append({"type": "terminal/stamp"})
        if i % 13 == 0:
            actions.append({"type": "terminal/unknown"})
    js_target.checkpoint_every = 16
    state = TERMINAL
    with js_target.session("terminal", TERMINAL) as session:
        assert isinstance(session, FastSession)
        for n, a in enumerate(actions):
            state = js_target.reduce("terminal", state, a, n)
            mirrored = session.step(a, n)
            assert mirrored == state
        assert session.read() == state
    assert len(state["content"]) == 60


def test_undefined_is_absent_in_both_forms(js_target: AdapterTarget) -> None:
    action = {"type": "terminal/forgetTitle"}
    assert "title" not in js_target.reduce("terminal", TERMINAL, action, 0)
    with js_target.session("terminal", TERMINAL) as session:
        assert "title" not in session.step(action, 0)
        assert "title" not in session.read()


def test_a_throwing_reducer_is_a_step_error(js_target: AdapterTarget) -> None:
    with js_target.session("terminal", TERMINAL) as session:
        with pytest.raises(TargetError) as info:
            session.step({"type": "terminal/throw", "why": "test"}, 0)
        assert info.value.error_type == "TypeError"
        assert "boom: test" in str(info.value)
        assert session.step({"type": "terminal/titleChanged", "title": "ok"}, 0)["title"] == "ok"


def test_kind_without_reducer_is_reported(js_target: AdapterTarget) -> None:
    with pytest.raises(TargetError, match="no chatReducer") as info:
        js_target.reduce("chat", {}, {"type": "chat/x"}, 0)
    assert info.value.code == "unknownKind"


def test_a_reducer_mutating_its_input_is_caught_at_the_checkpoint(js_target: AdapterTarget) -> None:
    js_target.checkpoint_every = 1
    session = js_target.session("terminal", TERMINAL)
    with pytest.raises(TargetProtocolError, match="diverged"):
        session.step({"type": "terminal/mutate"}, 0)


def test_module_without_reducers_says_what_it_looked_for(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mjs"
    empty.write_text("export const nothing = 1;\n")
    with pytest.raises(TargetSetupError, match=r"no reducer exports found[\s\S]*terminalReducer"):
        open_target(f"js:{empty}")


def test_missing_js_module(tmp_path: Path) -> None:
    with pytest.raises(TargetSetupError, match="module not found"):
        open_target(f"js:{tmp_path / 'nope.mjs'}")


# -- ts:<checkout> ------------------------------------------------------------------------------


def test_ts_target_needs_a_checkout_with_types(tmp_path: Path) -> None:
    with pytest.raises(TargetSetupError, match="checkout not found"):
        open_target(f"ts:{tmp_path / 'missing'}")
    with pytest.raises(TargetSetupError, match="has no types/ folder"):
        open_target(f"ts:{tmp_path}")
    (tmp_path / "types").mkdir()
    with pytest.raises(TargetSetupError, match="no reducer module"):
        open_target(f"ts:{tmp_path}")


def test_ts_target_says_when_node_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "types").mkdir()
    (tmp_path / "types" / "reducers.ts").write_text("export {};\n")
    monkeypatch.setattr("harness.targets.typescript.shutil.which", lambda name: None)
    with pytest.raises(TargetSetupError, match="node is not installed"):
        open_target(f"ts:{tmp_path}")


TS_STATE = """
export interface TerminalState { title: string; content: unknown[]; modifiedAt?: string }
export function stamp(): string { return new Date(Date.now()).toISOString(); }
"""

TS_REDUCERS = """
import { stamp, type TerminalState } from './state.js';

type Action = { type: 'terminal/titleChanged'; title: string } | { type: string };

export function terminalReducer(state: TerminalState, action: Action, log?: (m: string) => void): TerminalState {
  if (action.type === 'terminal/titleChanged' && 'title' in action) {
    return { ...state, title: action.title as string, modifiedAt: stamp() };
  }
  log?.(`unhandled ${action.type}`);
  return state;
}
"""


@pytest.fixture(scope="module")
def tsx_available() -> None:
    try:
        ensure_tsx()
    except TargetSetupError as e:
        pytest.skip(f"tsx cannot be installed here: {e}")


def test_ts_target_runs_typescript_reducers_of_a_checkout(tsx_available: None, tmp_path: Path) -> None:
    types = tmp_path / "types"
    types.mkdir()
    (types / "state.ts").write_text(textwrap.dedent(TS_STATE))
    (types / "reducers.ts").write_text(textwrap.dedent(TS_REDUCERS))
    with open_target(f"ts:{tmp_path}") as target:
        assert target.announcement["kinds"] == ["terminal"]
        action = {"type": "terminal/titleChanged", "title": "x"}
        after = target.reduce("terminal", TERMINAL, action, 9999)
        assert after == {**TERMINAL, "title": "x", "modifiedAt": "1970-01-01T00:00:09.999Z"}
        with target.session("terminal", TERMINAL) as session:
            assert session.step(action, 9999) == after
            assert session.step({"type": "terminal/other"}, 1) == after


def test_ts_reducer_modules_are_found_by_layout_then_by_export(tmp_path: Path) -> None:
    from harness.targets.typescript import reducer_modules

    types = tmp_path / "types"
    for rel, text in {
        "channels-chat/reducer.ts": "export function chatReducer(s: any) { return s; }\n",
        "channels-chat/state.ts": "export interface ChatState { title: string }\n",
        "common/root.ts": "export const rootReducer = (s: any) => s;\n",
        "common/again.ts": "export function chatReducer(s: any) { return s; }\n",
        "reducers.test.ts": "export function terminalReducer(s: any) { return s; }\n",
    }.items():
        (types / rel).parent.mkdir(parents=True, exist_ok=True)
        (types / rel).write_text(text)
    found = [p.relative_to(types.resolve()).as_posix() for p in reducer_modules(tmp_path)]
    assert found == ["channels-chat/reducer.ts", "common/root.ts"]
