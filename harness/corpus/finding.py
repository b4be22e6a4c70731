"""The finding format: a versioned, self-contained, replayable JSON trace.

A finding holds everything needed to replay without the seed that found it: the profile
(protocol version and rules), the target, the state kind, the initial state, the minimal step
list, the step that failed, what was expected and what was observed, the invariant and its
severity, and the command that replays it. Its `cause` (harness/causes/: what the target
did, with the invariants, action types and kinds that witnessed it) names the finding: the
cause id is its `signature` (de-duplicating findings within and across runs) and part of its
file name. A file without a `cause` (written before causes) is signed by invariant, kind and the
shape of its trace.

`harness.corpus.load.load_finding` reads any finding format (this one, command traces).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.spec.versions import KINDS

from .jsonfile import read_json

FORMAT = "ahp-fuzz/finding"
FORMAT_VERSION = 1
#: A finding about a live host: `steps` are live ops (harness/live/run.py) and
#: `extra["live"]` is the recorded conversation ("ahp-fuzz/live-trace", versioned on its own).
LIVE_KIND = "live"
SEVERITIES = ("violation", "warning", "divergence", "known")

#: Placeholders a recorded target may hold (docs/corpus.md, "Portable targets"), expanded at
#: replay: the Python interpreter running ahp-fuzz, and the folder holding the finding file.
PYTHON_PLACEHOLDER = "{python}"
HERE_PLACEHOLDER = "{here}"


class FindingFormatError(ValueError):
    """A file that is not a finding of a format version this harness reads."""


@dataclass(frozen=True)
class TraceStep:
    action: Any  # usually a dict; adversarial steps may carry any JSON
    now_ms: int
    probe: bool = False  # an adversarial action sent statelessly (no state moves)
    #: The other channels of a multi-channel run at this step, as the cross-channel checks saw
    #: them (`{"session": state}` for a chat step, `{"chats": [states]}` for a session step);
    #: recorded on the failing step, so the channel's trace replays alone with them.
    context: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "nowMs": self.now_ms}
        if self.probe:
            out["probe"] = True
        if self.context is not None:
            out["context"] = self.context
        return out

    def cross_channel(self) -> dict[str, Any]:
        """Keyword arguments for `Stepper.step` (`session=`, `chats=`) from `context`."""
        ctx = self.context or {}
        out: dict[str, Any] = {}
        if isinstance(ctx.get("session"), dict):
            out["session"] = ctx["session"]
        if isinstance(ctx.get("chats"), list):
            out["chats"] = tuple(c for c in ctx["chats"] if isinstance(c, dict))
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
    #: The root cause (harness/causes/): {"id", "summary", "key", "witnesses": {
    #: "invariants", "actionTypes", "kinds", "count"}} and, for the n-th finding of one cause
    #: in a run that reports more than one per cause, "instance": n.
    cause: dict[str, Any] | None = None

    # -- identity -----------------------------------------------------------------------------

    @property
    def signature(self) -> str:
        """The cause id (with `-n` for a second or later instance of one cause); for a finding
        without a cause, a stable id from the invariant, kind and the trace's shape."""
        if self.cause is not None:
            n = self.cause.get("instance")
            return f"{self.cause['id']}-{n}" if type(n) is int and n > 1 else str(self.cause["id"])
        shape = [_type_of(s.action) for s in self.steps[: self.failing_step + 1]]
        blob = json.dumps([self.invariant, self.kind, shape], separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def file_name(self) -> str:
        return f"{self.invariant.lower()}-{self.kind}-{self.signature}.json"

    def replay_command(self, path: str | Path | None = None, program: str = "ahp-fuzz") -> str:
        """The command that replays this finding on its recorded target: `program` is how
        ahp-fuzz was invoked (e.g. `.venv/bin/ahp-fuzz`), `path` where the file was written
        (the bare file name when unknown). Replay runs on the target recorded in the file,
        so the command needs no --target."""
        where = shlex.quote(str(path) if path is not None else self.file_name)
        return f"{program} replay {where}"

    # -- JSON ---------------------------------------------------------------------------------

    def to_json(self, path: str | Path | None = None, program: str = "ahp-fuzz") -> dict[str, Any]:
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
            "replay": self.replay_command(path, program),
            "seed": self.seed,
            "extra": self.extra,
            **({"cause": self.cause} if self.cause is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "finding") -> Finding:
        """Read and validate a finding: every field is checked, so a file that loads replays."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise FindingFormatError(f"{source}: not an ahp-fuzz finding (no \"format\": \"{FORMAT}\")")
        if data.get("formatVersion") != FORMAT_VERSION:
            raise FindingFormatError(
                f"{source}: finding format version {data.get('formatVersion')!r}; "
                f"this ahp-fuzz reads version {FORMAT_VERSION}"
            )

        def bad(field_name: str, why: str) -> FindingFormatError:
            return FindingFormatError(f"{source}: field {field_name!r} {why}")

        inv = data.get("invariant")
        if not isinstance(inv, dict) or not isinstance(inv.get("id"), str) or not inv["id"]:
            raise bad("invariant", "must be an object with a non-empty string \"id\"")
        if inv.get("severity") not in SEVERITIES:
            raise bad("invariant.severity", f"is {inv.get('severity')!r}; want one of {', '.join(SEVERITIES)}")
        kind = data.get("kind")
        if kind not in KINDS and kind != LIVE_KIND:
            raise bad("kind", f"is {kind!r}; want one of {', '.join(KINDS)} or {LIVE_KIND}")
        profile = data.get("profile")
        if not isinstance(profile, str) or not _known_profile(profile):
            raise bad("profile", f"is {profile!r}, not a known version or named profile")
        target = data.get("target", "reference")
        if not isinstance(target, str) or not target.strip():
            raise bad("target", "must be a non-empty string")
        if not isinstance(data.get("initial"), dict):
            raise bad("initial", "must be a JSON object (the initial state)")
        raw_steps = data.get("steps")
        if not isinstance(raw_steps, list) or not raw_steps:
            raise bad("steps", "must be a non-empty list")
        steps = []
        for i, st in enumerate(raw_steps):
            if not isinstance(st, dict) or "action" not in st:
                raise bad(f"steps[{i}]", "must be an object with an \"action\"")
            now = st.get("nowMs")
            if type(now) is not int or now < 0:
                raise bad(f"steps[{i}].nowMs", f"is {now!r}; want a non-negative integer")
            if not isinstance(st.get("probe", False), bool):
                raise bad(f"steps[{i}].probe", "must be true or false")
            context = st.get("context")
            if context is not None and not isinstance(context, dict):
                raise bad(f"steps[{i}].context", "must be an object")
            steps.append(TraceStep(st["action"], now, bool(st.get("probe")), context))
        failing = data.get("failingStep")
        if type(failing) is not int or not 0 <= failing < len(steps):
            raise bad("failingStep", f"is {failing!r}; want an index into steps (0…{len(steps) - 1})")
        for name in ("message", "title"):
            value = data.get(name, "") if name == "message" else inv.get(name, "")
            if not isinstance(value, str):
                raise bad(name, "must be a string")
        extra = data.get("extra") or {}
        if not isinstance(extra, dict):
            raise bad("extra", "must be an object")
        seed_value = data.get("seed")
        if seed_value is not None and type(seed_value) is not int:
            raise bad("seed", "must be an integer or null")
        known_issue = data.get("knownIssue")
        if known_issue is not None and not isinstance(known_issue, str):
            raise bad("knownIssue", "must be a string or null")
        cause = data.get("cause")
        if cause is not None:
            problem = cause_problem(cause)
            if problem:
                raise bad("cause", problem)
        return cls(
            invariant=inv["id"],
            severity=inv["severity"],
            title=inv.get("title", ""),
            message=data.get("message", ""),
            profile=profile,
            target=target,
            kind=kind,
            initial=data["initial"],
            steps=steps,
            failing_step=failing,
            expected=data.get("expected"),
            observed=data.get("observed"),
            known_issue=known_issue,
            seed=seed_value,
            extra=extra,
            cause=cause,
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def cause_problem(cause: Any) -> str | None:
    """What is wrong with a `cause` object (None: well-formed)."""
    if not isinstance(cause, dict):
        return "must be an object"
    cid = cause.get("id")
    if not isinstance(cid, str) or len(cid) != 12 or any(c not in "0123456789abcdef" for c in cid):
        return f"id is {cid!r}; want 12 lowercase hex digits"
    if not isinstance(cause.get("summary"), str):
        return "summary must be a string"
    w = cause.get("witnesses")
    if not isinstance(w, dict):
        return "witnesses must be an object"
    for name in ("invariants", "actionTypes", "kinds"):
        if not isinstance(w.get(name), list) or not all(isinstance(x, str) for x in w[name]):
            return f"witnesses.{name} must be a list of strings"
    if type(w.get("count")) is not int or w["count"] < 0:
        return "witnesses.count must be a non-negative integer"
    n = cause.get("instance")
    if n is not None and (type(n) is not int or n < 1):
        return "instance must be a positive integer"
    return None


def _type_of(action: Any) -> str:
    if isinstance(action, dict) and isinstance(action.get("type"), str):
        return action["type"]
    if isinstance(action, dict) and isinstance(action.get("op"), str):  # a live op
        inner = action.get("action")
        what = inner.get("type") if isinstance(inner, dict) else action.get("method")
        return f"{action['op']}:{what}" if isinstance(what, str) else action["op"]
    return f"<{type(action).__name__}>"


def _known_profile(name: str) -> bool:
    """A named profile, or a version this harness models (not one newer than it knows)."""
    from harness.reference.profile import NAMED_PROFILES, Profile
    from harness.spec.versions import KNOWN_VERSIONS, parse_version

    if name in NAMED_PROFILES:
        return True
    try:
        profile = Profile.named(name)
    except ValueError:
        return False
    return profile.version <= max(parse_version(v) for v in KNOWN_VERSIONS)


# -- portable targets ----------------------------------------------------------------------------


def portable_target(spec: str, cwd: str | Path | None = None) -> str:
    """The target spelling to record in a finding, so that it replays from any working directory:
    in `adapter:` command lines the interpreter running ahp-fuzz becomes `{python}` and every
    argument naming an existing relative path (or `PATH:ATTR`) becomes absolute; the checkout or
    module of `ts:` / `js:` becomes absolute. Anything else is kept as written."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    text = spec.strip()
    for prefix in ("ts:", "js:"):
        if text.startswith(prefix):
            rest = text[len(prefix) :]
            return prefix + (os.path.abspath(base / rest) if rest and (base / rest).exists() else rest)
    if not text.startswith("adapter:"):
        return text
    try:
        argv = shlex.split(text[len("adapter:") :])
    except ValueError:
        return text
    out = []
    for i, tok in enumerate(argv):
        if i == 0 and os.sep in tok and _is_this_python(base / tok):
            out.append(PYTHON_PLACEHOLDER)
        else:
            out.append(_absolute(tok, base))
    return "adapter:" + " ".join(t if t == PYTHON_PLACEHOLDER else shlex.quote(t) for t in out)


def _is_this_python(path: Path) -> bool:
    """`path` names the interpreter running ahp-fuzz: the same file, or a `python*` in the same
    virtualenv `bin/` folder (however that folder was reached)."""
    exe = os.path.abspath(sys.executable)
    if os.path.abspath(path) == exe:
        return True
    return path.name.startswith("python") and os.path.realpath(path.parent) == os.path.realpath(
        os.path.dirname(exe)
    )


def _absolute(token: str, base: Path) -> str:
    """`token` with a relative path (or the path of `PATH:ATTR`) made absolute, if it exists.
    Symbolic links are kept (a virtualenv's python is a link that must not be resolved)."""
    if not token or token.startswith("-") or os.path.isabs(token) or "{" in token:
        return token
    path, sep, attr = token.rpartition(":")
    if sep and path and os.sep in path and (base / path).exists():
        return f"{os.path.abspath(base / path)}:{attr}"
    if os.sep in token and (base / token).exists():
        return os.path.abspath(base / token)
    return token


def expand_target(spec: str, finding_path: str | Path | None = None) -> str:
    """A recorded target with its placeholders filled in: `{python}` → this interpreter,
    `{here}` → the folder holding the finding file (quoted for `adapter:` command lines)."""
    adapter = spec.strip().startswith("adapter:")
    quote = shlex.quote if adapter else (lambda s: s)
    text = spec.replace(PYTHON_PLACEHOLDER, quote(sys.executable))
    if HERE_PLACEHOLDER in text:
        here = Path(finding_path).resolve().parent if finding_path is not None else Path.cwd()
        text = text.replace(HERE_PLACEHOLDER, quote(str(here)))
    return text


def load_finding(path: str | Path) -> Finding:
    """Read an action-trace finding file. (`harness.corpus.load.load_finding` reads any format.)"""
    p = Path(path)
    return Finding.from_json(read_json(p, "finding", FindingFormatError), str(p))
