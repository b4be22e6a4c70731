"""An imitation of a typed client, for the conformance matrix (issue 26).

    python tests/imitations/typed_client.py [--profile 0.7.0]

The reference model over the adapter protocol (harness/targets/reference_adapter.py) with two
defects of a client whose types were generated from the schema:

* its chat-summary type has no `interactivity` field, so `session/chatUpdated` never changes a
  chat's interactivity (the change is dropped while decoding the action);
* its chat-state type omits empty lists and objects when encoded (`omitempty`): a chat's `[]`
  and `{}` are lost on the way out (the other kinds' types encode them).

* `chat/draftChanged` is a no-op (the handler table it started from lacks it).

The first and the third are shared with `tests/imitations/untyped_client.py`; the second is its
own. All are deterministic, so every finding replays.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from any folder

from harness.reference import Model
from harness.spec.versions import format_version
from harness.targets.reference_adapter import Server, profile_from, serve

#: The field the generated chat-summary type lacks.
MISSING_FIELD = "interactivity"
#: The chat action type the handler table both imitations started from lacks.
SHARED_UNHANDLED = "chat/draftChanged"


def without_missing_field(action: Any) -> Any:
    """`session/chatUpdated` as a decoder whose type lacks `interactivity` reads it."""
    if not isinstance(action, dict) or action.get("type") != "session/chatUpdated":
        return action
    changes = action.get("changes")
    if not isinstance(changes, dict) or MISSING_FIELD not in changes:
        return action
    return {**action, "changes": {k: v for k, v in changes.items() if k != MISSING_FIELD}}


class TypedClient:
    def __init__(self, model: Model) -> None:
        self.model = model

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        if isinstance(action, dict) and action.get("type") == SHARED_UNHANDLED:
            return state
        return self.model.reduce(kind, state, without_missing_field(action), now_ms)

    def encode_state(self, state: Any) -> Any:
        return omit_empty(state) if is_chat_state(state) else state


def is_chat_state(state: Any) -> bool:
    """A chat state, told by its own URI (the encoder is the chat type's): `ahp-chat:…`. Not by
    `turns`, which this very encoder drops when it is empty."""
    return isinstance(state, dict) and str(state.get("resource", "")).startswith("ahp-chat:")


def omit_empty(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: omit_empty(v) for k, v in value.items() if v != [] and v != {}}
    if isinstance(value, list):
        return [omit_empty(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="typed_client.py")
    p.add_argument("--profile")
    args = p.parse_args(argv)
    profile = profile_from(args.profile)
    announcement = {
        "ahpAdapter": 1,
        "name": "imitation: typed client",
        "forms": ["simple", "fast"],
        "protocolVersion": format_version(profile.version),
        "profile": profile.label,
    }
    try:
        return serve(Server(TypedClient(Model(profile))), announcement)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
