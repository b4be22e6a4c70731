"""Focused live runs: which scenarios exercise which embedded-host defect, and what must catch it.

The embedded host's `DEFECTS` table (harness/host/defects.py) names the invariants each defect
breaks. `FOCUS` says which scenario weights make a short seeded run reach the defect (the
defect-detection test and the time-to-detect bench use it); `CAUGHT_BY` lists the ids that may
report it (the table's invariants, plus the harness additions for defects the catalogue does not
cover). `run_focused` runs one bounded live campaign against a fresh embedded host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.corpus.finding import Finding
from harness.engine.events import EventBus, FindingFound, Shrinking

from .machine import LiveConfig, run_live_campaign

#: defect -> (scenario weights, start the host with immutablePrimary)
FOCUS: Mapping[str, tuple[dict[str, int], bool]] = {
    "subset-unchecked": ({"create-chat": 10, "turn": 1}, False),
    "chat-directory-unchecked": ({"chat-dirs": 10}, False),
    "uri-normalized-subset": ({"create-chat": 5, "chat-dirs": 5}, False),
    "empty-subset-dropped": ({"create-chat": 10}, False),
    "primary-removable": ({"session-dirs": 10}, True),
    "nested-collection-accepted": ({"attachments": 10}, False),
    "collection-flatten-reordered": ({"attachments": 10}, False),
    "collection-meta-merged": ({"attachments": 10}, False),
    "rejected-still-applied": ({"server-only": 5, "cancel": 5, "chat-dirs": 3}, False),
    "seq-repeat": ({"turn": 5, "action": 5}, False),
    "echo-drops-origin": ({"action": 10}, False),
    "echo-drops-clientseq": ({"action": 10}, False),
    "replay-skips-action": ({"reconnect": 5, "turn": 5}, False),
    "crash-on-invalid-json": ({"garbage": 10}, False),
    "chat-attachment-unpinned": ({"turn": 4, "answer": 4, "attachments": 4}, False),
    "server-only-accepted": ({"server-only": 10}, False),
    "version-gate-leak": ({"session-dirs": 10}, False),
    "summary-not-synced": ({"turn": 10, "answer": 3, "action": 3}, False),
    "cancel-without-turn-accepted": ({"cancel": 10}, False),
    "no-ping": ({"action": 5}, False),
    "dies-on-null": ({"garbage": 10}, False),
    "never-applies": ({"turn": 5, "action": 5}, False),
    "echo-to-newest-socket": ({"turn": 10}, False),
    "version-not-offered": ({"action": 5}, False),
    "claims-unknown-version": ({"action": 5}, False),
    "older-only": ({"action": 5}, False),
    "rebinds-on-reinitialize": ({"handshake": 10}, False),
    "serves-before-initialize": ({"handshake": 10}, False),
    # 1.0.0 behaviour: a run at profile 1.0.0 against the 1.0.0 host (`V100`)
    "turn-error-not-durable": ({"turn": 10, "answer": 4}, False),
    "turn-resume-unchecked": ({"turn": 5, "answer": 3, "resume": 10}, False),
    "read-status-not-mirrored": ({"action": 10, "turn": 2}, False),
    "change-counts-lines-only": ({"turn": 10, "answer": 4}, False),
    "background-work-appended": ({"turn": 10, "answer": 4}, False),
    "move-chat-misplaced": ({"create-chat": 6, "move-chat": 10}, False),
    "caret-unbounded": ({"handshake": 10}, False),
    "refusal-without-versions": ({"handshake": 10}, False),
    # issue 33: imitations of what real hosts did
    "no-frame-catch": ({"garbage": 10}, False),
    "closes-on-unknown-channel": ({"unknown-channel": 5, "action": 5}, False),
    "title-in-summary": ({"action": 10}, False),
    "turns-on-session-channel": ({"turn": 10}, False),
    "chat-is-the-session": ({"turn": 5, "action": 5}, False),
}
#: The defects of 1.0.0 behaviour: their focused runs speak 1.0.0 to the 1.0.0 host.
V100: frozenset[str] = frozenset({"turn-error-not-durable", "turn-resume-unchecked", "read-status-not-mirrored",
                                  "change-counts-lines-only", "background-work-appended", "move-chat-misplaced",
                                  "caret-unbounded",
                                  "refusal-without-versions"})

#: Harness additions that catch the defects no catalogue entry covers.
EXTRA_CATCHERS: Mapping[str, tuple[str, ...]] = {
    "crash-on-invalid-json": ("INV-X04",),
    "chat-attachment-unpinned": ("INV-X05",),
}


def caught_by(defect: str) -> frozenset[str]:
    from harness.host.defects import DEFECTS

    return frozenset(DEFECTS[defect].invariants) | frozenset(EXTRA_CATCHERS.get(defect, ()))


def focused_spec(defect: str | None, immutable_primary: bool = False, version: str | None = None) -> str:
    """The embedded host of a focused run (`version`: None for the 0.7.0 host, unless the defect
    is one of 1.0.0 behaviour)."""
    version = version or ("1.0.0" if defect in V100 else None)
    opts = ([f"version={version}"] if version else []) + ([f"defect={defect}"] if defect else [])
    opts += ["immutablePrimary=1"] if immutable_primary else []
    return "host:embedded" + ("?" + "&".join(opts) if opts else "")


def focused_profile(defect: str | None) -> str:
    """The profile a focused run speaks: 1.0.0 for a defect of 1.0.0 behaviour, else 0.7.0."""
    return "1.0.0" if defect in V100 else "0.7.0"


@dataclass
class FocusedResult:
    defect: str | None
    target: str
    findings: list[Finding] = field(default_factory=list)
    first_s: float | None = None  # seconds from the start until the first violation was caught
    steps: int = 0
    chunks: int = 0
    elapsed_s: float = 0.0

    @property
    def invariants(self) -> set[str]:
        return {f.invariant for f in self.findings}


def run_focused(defect: str | None, *, seed: int = 0, budget_s: float = 20.0, max_findings: int = 4,
                shrink_budget_s: float = 3.0, weights: dict[str, int] | None = None,
                max_chunks: int | None = None, chunk_examples: int = 3,
                request_timeout_s: float = 5.0, **options: Any) -> FocusedResult:
    """One bounded live campaign against a fresh embedded host with `defect` (None: clean).

    Bounded by `max_chunks` chunks of `chunk_examples` machine runs (what the draws are; the same
    seed gives the same run) and, as a safety net, by `budget_s` of wall-clock time. `options` are
    other `LiveConfig` fields (the bench compares the old settings with the new: `settle`, …)."""
    from harness.engine.control import RunControl
    from harness.targets.live import LiveTarget

    w, primary = FOCUS[defect] if defect else ({}, False)
    spec = focused_spec(defect, primary)
    target = LiveTarget(spec)
    control = RunControl(budget_s)
    result = FocusedResult(defect, spec)

    want = caught_by(defect) if defect else None

    def sink(event: object) -> None:
        if isinstance(event, Shrinking) and result.first_s is None and (want is None or event.invariant in want):
            result.first_s = control.elapsed()
        if isinstance(event, FindingFound):
            result.findings.append(event.finding)

    try:
        cfg = LiveConfig(url=target.url, target_spec=spec, seed=seed, budget_s=budget_s, profile=focused_profile(defect),
                         max_findings=max_findings, stop_on=caught_by(defect) if defect else frozenset(),
                         token_salt="focused",  # a fresh host: the same seed gives the same run
                         max_chunks=max_chunks, chunk_examples=chunk_examples, shrink_budget_s=shrink_budget_s, control=control,
                         request_timeout_s=request_timeout_s,
                         # the focus weights reach the defect; no campaign-wide probes unless asked
                         **{"preflight": False, **options},
                         weights={**{k: 0 for k in _ALL}, **(weights or w)} if (weights or w) else _defaults())
        summary = run_live_campaign(cfg, EventBus(sink))
        result.steps, result.chunks, result.elapsed_s = summary.steps, summary.chunks, summary.elapsed_s
    finally:
        target.close()
    return result


def _defaults() -> dict[str, int]:
    from .ops import DEFAULT_WEIGHTS

    return dict(DEFAULT_WEIGHTS)


def _all() -> tuple[str, ...]:
    from .ops import SCENARIOS

    return tuple(SCENARIOS)


_ALL = _all()
