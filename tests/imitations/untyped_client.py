"""An imitation of an untyped client, for the conformance matrix (issue 26).

    python tests/imitations/untyped_client.py [--profile 0.7.0] [--kinds chat,session]

The reference model over the adapter protocol (harness/targets/reference_adapter.py) with two
defects:

* like `tests/imitations/typed_client.py`, it applies `session/chatUpdated` without its
  `interactivity` change (both copied their chat-summary fields from one list that lacks it —
  the shared cause the matrix shows as one row with two marks);
* `chat/draftChanged` is a no-op in both (the handler table both started from lacks it: a
  second shared cause, and the one every short run finds);
* `chat/usage` is a no-op here only (its handler was never written): its own cause.

`--kinds` announces reducers for those state kinds only (docs/adapters.md): the matrix then
counts a cause that shows only on other kinds as "not applicable" to it, never "not found".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from any folder

from harness.reference import Model
from harness.spec.versions import KINDS, format_version
from harness.targets.reference_adapter import Server, profile_from, serve

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typed_client import SHARED_UNHANDLED, without_missing_field

#: The chat action types this client never implemented (the first one the typed client lacks too).
UNHANDLED = (SHARED_UNHANDLED, "chat/usage")


class UntypedClient:
    def __init__(self, model: Model) -> None:
        self.model = model

    def reduce(self, kind: str, state: dict[str, Any], action: Any, now_ms: int) -> dict[str, Any]:
        if isinstance(action, dict) and action.get("type") in UNHANDLED:
            return state
        return self.model.reduce(kind, state, without_missing_field(action), now_ms)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="untyped_client.py")
    p.add_argument("--profile")
    p.add_argument("--kinds", help="comma-separated state kinds to announce (default: all)")
    args = p.parse_args(argv)
    profile = profile_from(args.profile)
    announcement: dict[str, Any] = {
        "ahpAdapter": 1,
        "name": "imitation: untyped client",
        "forms": ["simple", "fast"],
        "protocolVersion": format_version(profile.version),
        "profile": profile.label,
    }
    if args.kinds:
        kinds = [k for k in args.kinds.split(",") if k]
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            print(f"untyped_client.py: unknown state kind(s) {', '.join(unknown)}", file=sys.stderr)
            return 2
        announcement["kinds"] = kinds
    try:
        return serve(Server(UntypedClient(Model(profile))), announcement)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
