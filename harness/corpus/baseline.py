"""Target baselines: a per-target file of accepted differences (docs/baselines.md).

A systemic quirk of an implementation — a typed client that drops empty lists when it encodes
a state — differs from the reference on almost every step. Reported as findings, it buries
everything else. A baseline entry accepts it, with a reason, in one of two ways:

* `normalise`: before the checks see the target's state, absent and a given value (`[]`, `{}`,
  `null`, `""`) are made the same at the given paths — where the reference has the value and
  the target lacks the key, the key is put back (and the other way round);
* `known`: a violation matching `invariant` (and optionally `kind`, `actionType`, a `message`
  regular expression) is reported as `known`, not as a finding.

Each entry counts how often it matched; an entry that never matched during a run is *stale*
(reported, like a corpora/known/ finding that stopped reproducing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jsonfile import read_json

FORMAT = "ahp-fuzz/baseline"
FORMAT_VERSION = 1
_EQUIVALENTS = ([], {}, None, "")


class BaselineError(ValueError):
    """A baseline file that is not of a format version this harness reads."""


def _pattern(text: str) -> re.Pattern[str]:
    """`turns[].responseParts`, `*.items`, `**` (any depth) -> a regex over generalised paths."""
    out = ""
    i = 0
    while i < len(text):
        if text.startswith("**", i):
            out += ".*"
            i += 2
        elif text[i] == "*":
            out += r"[^.\[]*"
            i += 1
        else:
            out += re.escape(text[i])
            i += 1
    return re.compile(out)


@dataclass
class Entry:
    id: str
    reason: str
    # normalise
    absent_equals: Any = None
    paths: tuple[re.Pattern[str], ...] = ()
    normalises: bool = False
    # known
    invariant: str | None = None
    kind: str | None = None
    action_type: str | None = None
    message: re.Pattern[str] | None = None
    hits: int = 0

    def matches_violation(self, kind: str, action_type: str, invariant: str, message: str) -> bool:
        return (
            not self.normalises
            and self.invariant == invariant
            and self.kind in (None, kind)
            and self.action_type in (None, action_type)
            and (self.message is None or self.message.search(message) is not None)
        )

    def matches_path(self, path: str) -> bool:
        return any(p.fullmatch(path) for p in self.paths)


@dataclass
class Baseline:
    source: str
    target: str | None
    entries: list[Entry] = field(default_factory=list)

    @property
    def stale(self) -> list[Entry]:
        return [e for e in self.entries if e.hits == 0]

    # -- normalisation ---------------------------------------------------------------------------

    def normalise(self, expected: Any, observed: Any, before: Any = None) -> Any:
        """`observed` with each accepted absent ≡ value difference against `expected` removed
        (copy on write: unchanged subtrees are shared; the same object when nothing matched).

        `before` — the target's (normalised) state before the step: wherever the result equals
        it, its objects are reused, so a step that changed nothing but the accepted quirk stays
        an identity no-op for the checks that compare by identity."""
        rules = [e for e in self.entries if e.normalises]
        if not rules or expected is None:
            return observed
        out = _walk(expected, observed, "", rules)
        return _share(before, out) if before is not None and out is not observed else out

    # -- classification --------------------------------------------------------------------------

    def classify(self, kind: str, action_type: str, violations: Iterable[Any]) -> list[Any]:
        """The violations, those an entry accepts turned into `known` ones naming the entry."""
        out = []
        for v in violations:
            if v.severity != "known":
                for e in self.entries:
                    if e.matches_violation(kind, action_type, v.invariant, v.message):
                        e.hits += 1
                        v = type(v)(v.invariant, "known", f"{v.message} [baseline {e.id}: {e.reason}]")
                        break
            out.append(v)
        return out

    def summary(self) -> list[str]:
        return [
            f"baseline {e.id}: {e.hits} match(es)" + ("  STALE: never matched in this run" if e.hits == 0 else "")
            for e in self.entries
        ]


def _walk(exp: Any, obs: Any, path: str, rules: list[Entry]) -> Any:
    if isinstance(exp, dict) and isinstance(obs, dict):
        new: dict[str, Any] | None = None
        for k in set(exp) | set(obs):
            here = f"{path}.{k}" if path else k
            e_has, o_has = k in exp, k in obs
            if e_has != o_has:
                value = exp[k] if e_has else obs[k]
                for r in rules:
                    if value == r.absent_equals and type(value) is type(r.absent_equals) and r.matches_path(here):
                        r.hits += 1
                        new = dict(obs) if new is None else new
                        if e_has:
                            new[k] = value
                        else:
                            del new[k]
                        break
                continue
            if e_has:
                child = _walk(exp[k], obs[k], here, rules)
                if child is not obs[k]:
                    new = dict(obs) if new is None else new
                    new[k] = child
        return obs if new is None else new
    if isinstance(exp, list) and isinstance(obs, list):
        items: list[Any] | None = None
        for i in range(min(len(exp), len(obs))):
            child = _walk(exp[i], obs[i], f"{path}[]", rules)
            if child is not obs[i]:
                items = list(obs) if items is None else items
                items[i] = child
        return obs if items is None else items
    return obs


def _share(old: Any, new: Any) -> Any:
    """`new`, with every subtree equal to the one at the same place in `old` replaced by it."""
    if old is new:
        return new
    if type(old) is dict and type(new) is dict:
        out = {k: _share(old[k], v) if k in old else v for k, v in new.items()}
        if len(out) == len(old) and all(k in old and out[k] is old[k] for k in out):
            return old
        return out
    if type(old) is list and type(new) is list:
        items = [_share(old[i], v) if i < len(old) else v for i, v in enumerate(new)]
        if len(items) == len(old) and all(a is b for a, b in zip(items, old, strict=True)):
            return old
        return items
    if type(old) is type(new) and old == new:
        return old
    return new


def load_baseline(path: str | Path) -> Baseline:
    p = Path(path)
    return parse_baseline(read_json(p, "baseline", BaselineError), str(p))


def parse_baseline(data: Any, source: str = "baseline") -> Baseline:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f'{source}: not an ahp-fuzz baseline (no "format": "{FORMAT}")')
    if data.get("formatVersion") != FORMAT_VERSION:
        raise BaselineError(
            f"{source}: baseline format version {data.get('formatVersion')!r}; this ahp-fuzz reads {FORMAT_VERSION}"
        )
    raw = data.get("entries")
    if not isinstance(raw, list) or not raw:
        raise BaselineError(f"{source}: \"entries\" must be a non-empty list")
    entries = [_entry(e, f"{source}: entries[{i}]") for i, e in enumerate(raw)]
    ids = [e.id for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BaselineError(f"{source}: duplicate entry id(s) {sorted(dup)}")
    target = data.get("target")
    if target is not None and not isinstance(target, str):
        raise BaselineError(f"{source}: \"target\" must be a string")
    return Baseline(source, target, entries)


def _text(e: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
    v = e.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise BaselineError(f"{where}: \"{key}\" must be a non-empty string")
    return v


def _entry(e: Any, where: str) -> Entry:
    if not isinstance(e, dict):
        raise BaselineError(f"{where}: an entry must be an object")
    unknown = set(e) - {"id", "reason", "normalise", "known"}
    if unknown:
        raise BaselineError(f"{where}: unknown key(s) {sorted(unknown)}")
    eid, reason = _text(e, "id", where), _text(e, "reason", where)
    assert eid is not None and reason is not None
    if ("normalise" in e) == ("known" in e):
        raise BaselineError(f"{where} ({eid}): give exactly one of \"normalise\" or \"known\"")
    if "normalise" in e:
        n = e["normalise"]
        if not isinstance(n, dict) or set(n) != {"absentEquals", "paths"}:
            raise BaselineError(f"{where} ({eid}): \"normalise\" wants {{\"absentEquals\", \"paths\"}}")
        if not any(n["absentEquals"] == v and type(n["absentEquals"]) is type(v) for v in _EQUIVALENTS):
            raise BaselineError(f"{where} ({eid}): absentEquals must be one of [], {{}}, null, \"\"")
        paths = n["paths"]
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
            raise BaselineError(f"{where} ({eid}): \"paths\" must be a non-empty list of path patterns")
        return Entry(eid, reason, absent_equals=n["absentEquals"], paths=tuple(_pattern(p) for p in paths), normalises=True)
    k = e["known"]
    if not isinstance(k, dict) or "invariant" not in k or set(k) - {"invariant", "kind", "actionType", "message"}:
        raise BaselineError(f"{where} ({eid}): \"known\" wants {{\"invariant\", \"kind\"?, \"actionType\"?, \"message\"?}}")
    inv = _text(k, "invariant", where)
    msg = _text(k, "message", where, required=False)
    try:
        pattern = re.compile(msg) if msg is not None else None
    except re.error as err:
        raise BaselineError(f"{where} ({eid}): message is not a regular expression: {err}") from err
    return Entry(
        eid, reason, invariant=inv, kind=_text(k, "kind", where, required=False),
        action_type=_text(k, "actionType", where, required=False), message=pattern,
    )
