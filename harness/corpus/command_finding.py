"""The command-trace finding: a versioned, replayable record of a command-level failure.

A sibling of `finding.py` (whose trace is reducer actions with clock values): here the trace
is the JSON-RPC commands sent to a live host through the bridge, in order — the setup calls
that give the host its sessions, then the generated calls up to the failing one — with the
host's reply to each. URIs hold `${ROOT}` and `${CANARY}` placeholders (the fixture's tree and
canary token, harness/bridge/fixture.py), so the trace replays against a fresh tree.

`harness.corpus.load.load_finding` returns a `CommandFinding` for a file whose `format` is
`ahp-fuzz/command-finding`; it has the fields and methods the store and the report writers use
(`signature`, `file_name`, `to_json`, `replay_command`, `invariant`, `severity`, `title`, `cause` (None),
`kind`, `message`, `failing_step`). `ahp-fuzz replay` dispatches on the class.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .finding import FindingFormatError
from .jsonfile import read_json

FORMAT = "ahp-fuzz/command-finding"
FORMAT_VERSION = 1
KIND = "commands"
SEVERITIES = ("violation", "warning", "divergence", "known")


class CommandFindingFormatError(FindingFormatError):
    """A file that is not a command finding of a version this harness reads."""


@dataclass(frozen=True)
class CommandStep:
    method: str
    params: Any
    reply: dict[str, Any] | None = None  # what the host answered when the finding was made
    setup: bool = False  # a fixture setup call (not generated)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "params": self.params}
        if self.reply is not None:
            out["reply"] = self.reply
        if self.setup:
            out["setup"] = True
        return out


@dataclass
class CommandFinding:
    invariant: str  # CMD-… (ours) or ST-… (schemathesis' checks)
    severity: str
    title: str
    message: str
    profile: str
    target: str
    steps: list[CommandStep]
    failing_step: int
    fixture: dict[str, Any] = field(default_factory=dict)
    expected: Any = None
    observed: Any = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kind: str = KIND
    #: Root causes sign state differences (harness/causes/); a command finding has none
    #: and is signed by its check and methods.
    cause: dict[str, Any] | None = None

    @property
    def signature(self) -> str:
        """Stable id from the check, the failing command and the methods of the trace."""
        shape = [s.method for s in self.steps[: self.failing_step + 1] if not s.setup]
        blob = json.dumps([self.invariant, KIND, shape], separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def file_name(self) -> str:
        return f"{self.invariant.lower()}-{self.steps[self.failing_step].method}-{self.signature}.json"

    def replay_command(self, path: str | Path | None = None, program: str = "ahp-fuzz") -> str:
        where = shlex.quote(str(path) if path is not None else self.file_name)
        return f"{program} replay {where}"

    def to_json(self, path: str | Path | None = None, program: str = "ahp-fuzz") -> dict[str, Any]:
        return {
            "format": FORMAT,
            "formatVersion": FORMAT_VERSION,
            "signature": self.signature,
            "invariant": {"id": self.invariant, "severity": self.severity, "title": self.title},
            "message": self.message,
            "profile": self.profile,
            "target": self.target,
            "kind": KIND,
            "fixture": self.fixture,
            "steps": [s.to_json() for s in self.steps],
            "failingStep": self.failing_step,
            "expected": self.expected,
            "observed": self.observed,
            "replay": self.replay_command(path, program),
            "seed": self.seed,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "finding") -> CommandFinding:
        """Read and validate a command finding (every field is checked, so a file that loads replays)."""

        def bad(name: str, why: str) -> CommandFindingFormatError:
            return CommandFindingFormatError(f"{source}: field {name!r} {why}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CommandFindingFormatError(f"{source}: not a command finding (no \"format\": \"{FORMAT}\")")
        if data.get("formatVersion") != FORMAT_VERSION:
            raise CommandFindingFormatError(
                f"{source}: command finding format version {data.get('formatVersion')!r}; "
                f"this ahp-fuzz reads version {FORMAT_VERSION}"
            )
        inv = data.get("invariant")
        if not isinstance(inv, dict) or not isinstance(inv.get("id"), str) or not inv["id"]:
            raise bad("invariant", "must be an object with a non-empty string \"id\"")
        if inv.get("severity") not in SEVERITIES:
            raise bad("invariant.severity", f"is {inv.get('severity')!r}; want one of {', '.join(SEVERITIES)}")
        for name in ("profile", "target"):
            if not isinstance(data.get(name), str) or not data[name].strip():
                raise bad(name, "must be a non-empty string")
        raw = data.get("steps")
        if not isinstance(raw, list) or not raw:
            raise bad("steps", "must be a non-empty list")
        steps = []
        for i, s in enumerate(raw):
            if not isinstance(s, dict) or not isinstance(s.get("method"), str) or not s["method"]:
                raise bad(f"steps[{i}]", "must be an object with a non-empty string \"method\"")
            if "params" not in s:
                raise bad(f"steps[{i}].params", "is missing")
            reply = s.get("reply")
            if reply is not None and not isinstance(reply, dict):
                raise bad(f"steps[{i}].reply", "must be an object")
            if not isinstance(s.get("setup", False), bool):
                raise bad(f"steps[{i}].setup", "must be true or false")
            steps.append(CommandStep(s["method"], s["params"], reply, bool(s.get("setup"))))
        failing = data.get("failingStep")
        if type(failing) is not int or not 0 <= failing < len(steps) or steps[failing].setup:
            raise bad("failingStep", f"is {failing!r}; want the index of a generated step")
        fixture = data.get("fixture") or {}
        extra = data.get("extra") or {}
        if not isinstance(fixture, dict) or not isinstance(extra, dict):
            raise bad("fixture/extra", "must be objects")
        seed = data.get("seed")
        if seed is not None and type(seed) is not int:
            raise bad("seed", "must be an integer or null")
        for name, value in (("message", data.get("message", "")), ("title", inv.get("title", ""))):
            if not isinstance(value, str):
                raise bad(name, "must be a string")
        return cls(
            invariant=inv["id"], severity=inv["severity"], title=inv.get("title", ""),
            message=data.get("message", ""), profile=data["profile"], target=data["target"],
            steps=steps, failing_step=failing, fixture=fixture, expected=data.get("expected"),
            observed=data.get("observed"), seed=seed, extra=extra,
        )


def load_command_finding(path: str | Path) -> CommandFinding:
    p = Path(path)
    return CommandFinding.from_json(read_json(p, "command finding", CommandFindingFormatError), str(p))
