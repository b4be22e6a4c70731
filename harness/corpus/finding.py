"""The finding format: a versioned, self-contained, replayable JSON trace.

A finding holds everything needed to replay without the seed that found it: the profile
(protocol version and rules), the target, the state kind, the initial state, the minimal step
list, the step that failed, what was expected and what was observed, the invariant and its
severity, and the command that replays it. Its `signature` (invariant, kind and the shape of
the minimal trace) de-duplicates findings across runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "ahp-fuzz/finding"
FORMAT_VERSION = 1


class FindingFormatError(ValueError):
    """A file that is not a finding of a format version this harness reads."""


@dataclass(frozen=True)
class TraceStep:
    action: Any  # usually a dict; adversarial steps may carry any JSON
    now_ms: int
    probe: bool = False  # an adversarial action sent statelessly (no state moves)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "nowMs": self.now_ms}
        if self.probe:
            out["probe"] = True
        return out


@dataclass
class Finding:
    invariant: str  # "INV-016", or "DIVERGENCE", "TARGET-ERROR", "TARGET-CRASH", "TARGET-TIMEOUT"
    severity: str  # violation | warning | divergence | known
    title: str
    message: str
    profile: str  # a named profile or version, e.g. "0.7.0"
    target: str
    kind: str
    initial: dict[str, Any]
    steps: list[TraceStep]
    failing_step: int  # index into steps
    expected: Any = None  # reference model's state after the failing step (when it has one)
    observed: Any = None  # the target's state after it (or the error text)
    known_issue: str | None = None
    seed: int | None = None  # informational only: replay never needs it
    extra: dict[str, Any] = field(default_factory=dict)

    # -- identity -----------------------------------------------------------------------------

    @property
    def signature(self) -> str:
        """Stable id from the invariant, kind and the trace's shape (action types, in order)."""
        shape = [_type_of(s.action) for s in self.steps[: self.failing_step + 1]]
        blob = json.dumps([self.invariant, self.kind, shape], separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def file_name(self) -> str:
        return f"{self.invariant.lower()}-{self.kind}-{self.signature}.json"

    def replay_command(self, path: str | Path | None = None) -> str:
        where = str(path) if path is not None else f"corpora/{self.file_name}"
        target = "" if self.target == "reference" else f" --target '{self.target}'"
        return f"ahp-fuzz replay {where}{target}"

    # -- JSON ---------------------------------------------------------------------------------

    def to_json(self, path: str | Path | None = None) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "formatVersion": FORMAT_VERSION,
            "signature": self.signature,
            "invariant": {"id": self.invariant, "severity": self.severity, "title": self.title},
            "message": self.message,
            "knownIssue": self.known_issue,
            "profile": self.profile,
            "target": self.target,
            "kind": self.kind,
            "initial": self.initial,
            "steps": [s.to_json() for s in self.steps],
            "failingStep": self.failing_step,
            "expected": self.expected,
            "observed": self.observed,
            "replay": self.replay_command(path),
            "seed": self.seed,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "finding") -> Finding:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise FindingFormatError(f"{source}: not an ahp-fuzz finding (no \"format\": \"{FORMAT}\")")
        if data.get("formatVersion") != FORMAT_VERSION:
            raise FindingFormatError(
                f"{source}: finding format version {data.get('formatVersion')!r}; "
                f"this ahp-fuzz reads version {FORMAT_VERSION}"
            )
        try:
            inv = data["invariant"]
            return cls(
                invariant=inv["id"],
                severity=inv["severity"],
                title=inv.get("title", ""),
                message=data.get("message", ""),
                profile=data["profile"],
                target=data.get("target", "reference"),
                kind=data["kind"],
                initial=data["initial"],
                steps=[TraceStep(s["action"], int(s["nowMs"]), bool(s.get("probe"))) for s in data["steps"]],
                failing_step=int(data["failingStep"]),
                expected=data.get("expected"),
                observed=data.get("observed"),
                known_issue=data.get("knownIssue"),
                seed=data.get("seed"),
                extra=data.get("extra") or {},
            )
        except (KeyError, TypeError, ValueError) as e:
            raise FindingFormatError(f"{source}: malformed finding ({type(e).__name__}: {e})") from e

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _type_of(action: Any) -> str:
    if isinstance(action, dict) and isinstance(action.get("type"), str):
        return action["type"]
    return f"<{type(action).__name__}>"


def load_finding(path: str | Path) -> Finding:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FindingFormatError(f"no such finding file: {p}") from None
    except json.JSONDecodeError as e:
        raise FindingFormatError(f"{p}: not JSON ({e})") from e
    if isinstance(data, dict) and data.get("format") == "ahp-fuzz/command-finding":
        # the command-trace sibling format (command_finding.py); replay dispatches on its class
        from .command_finding import CommandFinding

        return CommandFinding.from_json(data, str(p))  # type: ignore[return-value]
    return Finding.from_json(data, str(p))
