"""What a live campaign never ran, and why (issue 33): scenarios, frame classes and probes, and
dispatches left unsent because their type is newer than the client's version. Written to
report.json (`liveNeverRan`) and said in one headline line."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .config import LiveConfig
from .example import RETIRE_AFTER, LiveRecorder
from .ops import FRAME_CLASSES, LATER_WEIGHTS, SCENARIOS, TURN_SCENARIOS


def never_ran(cfg: LiveConfig, rec: LiveRecorder) -> dict[str, Any]:
    """`{"scenarios": {name: why}, "frameClasses": {class: why}, "newerTypesNotSent": {…},
    "turns": "not reachable on this host (why)"}` — only what did not run (empty sections left
    out; `turns` when no scenario that starts a turn ever ran and the runs had no chat channel)."""
    scenarios: dict[str, str] = {}
    for name in SCENARIOS:
        if rec.scenarios.get(name):
            continue
        if not cfg.weights.get(name, 0) and name in LATER_WEIGHTS:
            scenarios[name] = "0.9.0 and later: not drawn at this run's version"
        elif not cfg.weights.get(name, 0):
            scenarios[name] = "weight 0"
        elif rec.empty.get(name):
            why = _most_frequent_first(rec.empty_why.get(name) or Counter())
            scenarios[name] = (f"drawn {rec.empty[name]}×, never applicable to the run's state ("
                               + ("; ".join(why) if why else "no channel, client or turn it needs") + ")")
        else:
            scenarios[name] = "never drawn"
    frames: dict[str, str] = {}
    for cls in sorted(FRAME_CLASSES | set(rec.fatal)):
        deaths = rec.fatal.get(cls, 0)
        if deaths >= RETIRE_AFTER or (deaths and not rec.can_restart):
            frames[cls] = f"retired: it killed the host {deaths}× (sent {rec.sent_classes.get(cls, 0)}×)"
        elif not rec.sent_classes.get(cls) and cls in FRAME_CLASSES:
            frames[cls] = ("held back: the host cannot be restarted" if rec.hold_frames else "never drawn")
    out: dict[str, Any] = {}
    if scenarios:
        out["scenarios"] = scenarios
    if frames:
        out["frameClasses"] = frames
    if rec.newer:
        out["newerTypesNotSent"] = dict(sorted(rec.newer.items()))
    if rec.no_chat and not any(rec.scenarios.get(name) for name in TURN_SCENARIOS):
        out["turns"] = turns_unreachable(rec)
    return out


def turns_unreachable(rec: LiveRecorder) -> str:
    """Why no turn was ever started (issue 33): the reasons the runs without a chat channel gave,
    the most frequent first."""
    return f"not reachable on this host ({'; '.join(_most_frequent_first(rec.no_chat))})"


def _most_frequent_first(reasons: Counter[str]) -> list[str]:
    """The reasons, the most frequent first (ties alphabetically: the same text in every run)."""
    return [r for r, _ in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]


def headline(report: dict[str, Any]) -> str | None:
    """One line for stdout: what could not run, and why (None: nothing was left out but by chance
    or by weight 0; report.json lists those too)."""
    parts = []
    for what, label in (("scenarios", "scenarios"), ("frameClasses", "frame classes")):
        # what the run could not do (never "never drawn": a short run, not a reason)
        items = {k: v for k, v in (report.get(what) or {}).items() if v not in ("weight 0", "never drawn")
                 and not v.startswith("0.9.0 and later")}
        if items:
            parts.append(f"{label} " + ", ".join(f"{k} ({v})" for k, v in items.items()))
    newer = report.get("newerTypesNotSent")
    if newer:
        parts.append(f"{sum(newer.values())} dispatch(es) of types newer than their client's version not sent")
    return "never ran: " + "; ".join(parts) if parts else None


def turns_headline(report: dict[str, Any]) -> str | None:
    """`turns: not reachable on this host (why)`, when no turn could be started (None otherwise)."""
    turns = report.get("turns")
    return f"turns: {turns}" if isinstance(turns, str) else None
