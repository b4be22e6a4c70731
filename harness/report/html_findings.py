"""The findings section of `index.html`: findings grouped by root cause, each with its minimal
trace, what the failing step did on each side, and an absolute replay command.

A `report.json` finding entry carries `cause` (`{id, summary, witnesses: {invariants,
actionTypes, kinds, count}}`, issue 15). Entries of one cause are shown under it, the cause's
summary first; an entry without `cause` (a report written before causes existed) is its own
group, headed by its invariant and message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.corpus.finding import Finding, FindingFormatError
from harness.corpus.load import load_finding
from harness.diff import diff_paths, fmt_path, json_diff
from harness.diff import render as render_json
from harness.reference import MalformedAction, Model, Profile

from .html_commands import finding_file, is_portable, replay_command
from .html_escape import esc

_DIFF_LIMIT = 40


def cause_groups(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
    """Finding entries grouped by root cause, in the report's order (causes first)."""
    groups: dict[str, tuple[dict[str, Any] | None, list[dict[str, Any]]]] = {}
    for entry in entries:
        cause = entry.get("cause") if isinstance(entry.get("cause"), dict) else None
        if cause is not None and cause.get("id"):
            key = f"cause:{cause['id']}"
        else:
            key = f"inv:{entry.get('invariant')}\0{entry.get('message')}"
            cause = None
        groups.setdefault(key, (cause, []))[1].append(entry)
    return list(groups.values())


def state_before_failing_step(f: Finding) -> Any:
    """The reference model's state just before the failing step (probe steps move nothing).
    The target agreed with it up to there: an earlier difference would have been the finding."""
    try:
        model = Model(Profile.named(f.profile))
    except ValueError:
        return None
    state: Any = f.initial
    for step in f.steps[: f.failing_step]:
        if step.probe:
            continue
        try:
            state = model.reduce(f.kind, state, step.action, step.now_ms)
        except (MalformedAction, ValueError):
            continue
    return state


def _change_lines(before: Any, after: Any) -> list[str]:
    out = []
    for path, a, b in diff_paths(before, after):
        if len(out) >= _DIFF_LIMIT:
            out.append("… (more)")
            break
        out.append(f"{fmt_path(path)}: {render_json(a)} → {render_json(b)}")
    return out


def _change_list(lines: list[str], other: list[str] | None) -> str:
    """The lines of one side; those the other side does not have are marked."""
    if not lines:
        return '<p class="nochange">(no change)</p>'
    theirs = set(other or [])
    return "<ul>" + "".join(
        f'<li{" class=differs" if other is not None and line not in theirs else ""}><code>{esc(line)}</code></li>'
        for line in lines) + "</ul>"


def step_change_html(f: Finding) -> str:
    """What the failing step did: the target's state before → after, and the reference model's,
    with a sentence saying which side changed the state."""
    before = state_before_failing_step(f)
    step = f.steps[f.failing_step] if 0 <= f.failing_step < len(f.steps) else None
    action = step.action.get("type") if step is not None and isinstance(step.action, dict) else None
    head = f"<h4>what the failing step{f' (<code>{esc(action)}</code>)' if action else ''} did</h4>"
    if before is None:
        return head + f"<p>(the state before it cannot be recomputed: unknown profile {esc(f.profile)})</p>"
    target_ok = isinstance(f.observed, dict | list)
    target = _change_lines(before, f.observed) if target_ok else None
    model = _change_lines(before, f.expected) if f.expected is not None else None
    if target is None:
        said = f"the target did not return a state: {f.observed}" if f.observed is not None else "no target state recorded"
    elif model is None:
        said = "the target changed the state" if target else "the target left the state unchanged"
    elif target and not model:
        said = "the target changed the state; the reference model left it unchanged"
    elif model and not target:
        said = "the reference model changed the state; the target left it unchanged"
    elif not target:
        said = "neither the target nor the reference model changed the state"
    elif f.expected == f.observed:
        said = "the target and the reference model made the same change"
    else:
        said = "both changed the state, differently"
    parts = [head, f'<p class="said">{esc(said)}</p><div class="sides">']
    if target is not None:
        parts.append(f'<div class="side" data-side="target"><h5>target: before → after</h5>{_change_list(target, model)}</div>')
    if model is not None:
        parts.append(f'<div class="side" data-side="model"><h5>reference model: before → after</h5>{_change_list(model, target)}</div>')
    parts.append("</div>")
    if model is not None and target_ok and f.expected != f.observed:
        div = json_diff(f.expected, f.observed, limit=_DIFF_LIMIT)
        parts.append("<h5>where they disagree (expected = reference model, got = target)</h5><ul>"
                     + "".join(f"<li><code>{esc(line)}</code></li>" for line in div) + "</ul>")
    return "".join(parts)


def _load(path: Path | None) -> Finding | None:
    if path is None:
        return None
    try:
        return load_finding(path)
    except FindingFormatError:
        return None


def _one_finding(entry: dict[str, Any], report: dict[str, Any], run_dir: Path, origin: Path | None,
                 *, message: bool = True) -> str:
    path = finding_file(entry, run_dir, origin)
    finding = _load(path)
    replay = replay_command(entry, report, run_dir, origin)
    where = "" if is_portable(replay[: max(replay.rfind(" replay "), 0)]) else (
        ' <span class="note">(relative to the folder the run started in, which report.json does not record)</span>')
    head = (
        f'<h4><span class="sev sev-{esc(entry.get("severity"))}">{esc(entry.get("severity"))}</span> '
        f'<code>{esc(entry.get("invariant"))}</code> on {esc(entry.get("kind"))} — {esc(entry.get("title"))}</h4>'
        + (f'<p class="msg">{esc(entry.get("message"))}</p>' if message else "")
        + f'<p>replay: <code class="replay">{esc(replay)}</code>{where}</p>'
        f'<p class="meta">signature <code>{esc(entry.get("signature"))}</code>, {esc(entry.get("steps"))} step(s), '
        f'{"reproduced on replay" if entry.get("reproduced") else "<b>did not reproduce on replay</b>"}'
        + (f', found after {esc(entry.get("foundAfterSeconds"))} s' if entry.get("foundAfterSeconds") is not None else "")
        + "</p>"
    )
    signature = esc(entry.get("signature"))
    if finding is None:
        return f'<div class="finding" data-signature="{signature}">{head}<p>(finding file not found)</p></div>'
    rows = []
    for i, step in enumerate(finding.steps):
        mark = " failing" if i == finding.failing_step else ""
        probe = " (probe)" if step.probe else ""
        rows.append(
            f'<tr class="step{mark}"><td>{i + 1}</td><td>{step.now_ms}</td>'
            f'<td><pre>{esc(json.dumps(step.action, ensure_ascii=False, sort_keys=True))}</pre>{probe}</td></tr>'
        )
    initial = esc(json.dumps(finding.initial, ensure_ascii=False, sort_keys=True, indent=1))
    return (
        f'<div class="finding" data-signature="{esc(finding.signature)}">{head}'
        f"<details><summary>initial state</summary><pre>{initial}</pre></details>"
        f'<h4>minimal trace</h4><table class="trace"><tr><th>#</th><th>nowMs</th><th>action</th></tr>{"".join(rows)}</table>'
        f"{step_change_html(finding)}</div>"
    )


def _witnesses(cause: dict[str, Any]) -> str:
    w = cause.get("witnesses") if isinstance(cause.get("witnesses"), dict) else {}
    bits = []
    for key, label in (("invariants", "invariants"), ("actionTypes", "action types"), ("kinds", "state kinds")):
        values = w.get(key) if isinstance(w.get(key), list) else []
        if values:
            bits.append(f"{label}: " + ", ".join(f"<code>{esc(v)}</code>" for v in values))
    if isinstance(w.get("count"), int):
        bits.append(f"{w['count']} witness trace(s)")
    return f'<p class="witnesses">seen as — {" · ".join(bits)}</p>' if bits else ""


#: Findings whose traces get no root cause yet (docs/corpus.md "Root causes"), by kind.
#: Trace kinds whose findings carry no cause yet (live findings do, since issue 33).
_UNCAUSED_KINDS = {"commands": "command traces"}


def _no_cause(entry: dict[str, Any]) -> str:
    """Why a group has no root cause: not recorded for this kind of trace yet, or missing."""
    kind = _UNCAUSED_KINDS.get(str(entry.get("kind")))
    return f"causes are not recorded for {kind} yet" if kind else "no root cause recorded in report.json"


def findings_html(report: dict[str, Any], run_dir: Path, origin: Path | None) -> str:
    entries = [e for e in report.get("findings") or [] if isinstance(e, dict)]
    if not entries:
        return "<p>No findings.</p>"
    out = []
    for cause, group in cause_groups(entries):
        first = group[0]
        if cause is not None:
            title = esc(cause.get("summary") or first.get("message"))
            attrs = f' data-cause="{esc(cause.get("id"))}"'
            sub = _witnesses(cause)
        else:
            title = f'<code>{esc(first.get("invariant"))}</code> on {esc(first.get("kind"))}: {esc(first.get("message"))}'
            attrs = ""
            sub = f'<p class="witnesses">({_no_cause(first)}: grouped by invariant and message)</p>'
        body = "".join(_one_finding(e, report, run_dir, origin, message=cause is not None) for e in group)
        out.append(f'<div class="cause"{attrs}><h3>{title}</h3>{sub}{body}</div>')
    return "".join(out)
