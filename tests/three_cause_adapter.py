"""An adapter with exactly three seeded root causes (issue 15, "Done when").

    python tests/three_cause_adapter.py [--causes wrap,ignore,empty] [--ignore TYPE]

It serves the reference model over the adapter protocol (harness/targets/reference_adapter.py)
with three independent defects, each switchable:

* `wrap` — a status at or above 2³¹ comes back wrapped to int32 (x → x − 2³²) after every
  chat or session step that changes the state (an implementation doing bitwise ops on int32);
* `ignore` — one chat action type (`--ignore`, default `chat/draftChanged`) is a no-op;
* `empty` — every empty list and empty object is dropped from the state on encode (a typed
  client's encoder that omits empty containers); the states kept under handles stay whole;
* `strict` — a state that lacks a key its kind's schema requires (`turns`, `chats`, …) is
  refused with an error (a typed decoder with required fields). Not a cause of its own: with
  `empty` it only ever meets the states its own encoder emptied — a consequence of that cause,
  which the harness must not report apart (issue 22's "strict imitation":
  `--causes wrap,ignore,empty,strict --ignore chat/usage`).

Every defect is deterministic, so every finding on this target must replay.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.reference import Model
from harness.spec.versions import format_version
from harness.targets.reference_adapter import Server, profile_from, serve

CAUSES = ("wrap", "ignore", "empty", "strict")
#: The list-valued keys each state kind's schema requires (0.7.0 state.schema.json).
REQUIRED_LISTS = {
    "chat": ("turns",), "session": ("activeClients", "chats"), "root": ("agents",), "terminal": ("content",),
    "changeset": ("files",), "annotations": ("annotations",),
}
INT32 = 1 << 31


class ThreeCauses:
    def __init__(self, model: Model, causes: tuple[str, ...] = CAUSES, ignore: str = "chat/draftChanged"):
        self.model = model
        self.causes = causes
        self.ignore = ignore

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        if "strict" in self.causes and isinstance(state, dict):
            for key in REQUIRED_LISTS.get(kind, ()):
                if key not in state:
                    raise ValueError(f"decode {kind} state: missing required key {key!r}")
        if "ignore" in self.causes and kind == "chat" and isinstance(action, dict) and action.get("type") == self.ignore:
            return state
        new = self.model.reduce(kind, state, action, now_ms)
        if "wrap" in self.causes and kind in ("chat", "session") and new is not state:
            status = new.get("status")
            if type(status) is int and status >= INT32:
                new = {**new, "status": ((status + INT32) % (2 * INT32)) - INT32}  # int32 two's complement
        return new

    def encode_state(self, state: Any) -> Any:
        if "empty" not in self.causes:
            return state
        return _drop_empty(state)


def _drop_empty(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_empty(v) for k, v in value.items() if v != [] and v != {}}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="three_cause_adapter.py")
    p.add_argument("--causes", default="wrap,ignore,empty", help="comma-separated subset of wrap,ignore,empty,strict")
    p.add_argument("--ignore", default="chat/draftChanged", help="the chat action type that is a no-op")
    p.add_argument("--profile")
    args = p.parse_args(argv)
    causes = tuple(c for c in args.causes.split(",") if c)
    unknown = [c for c in causes if c not in CAUSES]
    if unknown:
        print(f"three_cause_adapter: unknown cause(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    profile = profile_from(args.profile)
    served = ThreeCauses(Model(profile), causes, args.ignore)
    announcement = {
        "ahpAdapter": 1, "name": f"three-cause ({','.join(causes) or 'none'})", "forms": ["simple", "fast"],
        "protocolVersion": format_version(profile.version), "profile": profile.label,
    }
    try:
        return serve(Server(served), announcement)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
