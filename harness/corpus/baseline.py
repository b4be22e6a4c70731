"""Target baselines: a per-target file of accepted differences (docs/baselines.md).

A systemic quirk of an implementation — a typed client that drops empty lists when it encodes
a state — differs from the reference on almost every step. Reported as findings, it buries
everything else. A baseline entry accepts it, with a reason, in one of two ways:

* `normalise`: before the checks see the target's state, the values of one *equivalence class*
  (some of `0`, `false`, `""`, `null`, `[]`, `{}`, and optionally absence) are made the same at
  the given paths — where the reference has one member and the target another, the target's is
  replaced by the reference's (a key put back or removed). A path pattern `!p` excludes the
  paths it matches (and everything under them) from the entry;
* `known`: a violation matching `invariant` (and optionally `kind`, `actionType`, a `message`
  regular expression) is reported as `known`, not as a finding.

Each entry counts how often it matched; an entry that never matched during a run is *stale*
(reported, like a corpora/known/ finding that stopped reproducing).

Format versions: 1 (`absentEquals` with `[]`, `{}`, `null` or `""`; no exclusions) and 2 (adds
`values` / `absent`, the members `0` and `false`, and `!` exclusions). Both are read.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .jsonfile import read_json

FORMAT = "ahp-fuzz/baseline"
#: The version this harness writes in its examples; every version in `READS` is accepted.
FORMAT_VERSION = 2
READS: Final = (1, 2)


class _AbsentKey:
    """Stands for a missing key in an equivalence class."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = _AbsentKey()

#: The values a normalisation may make equivalent, by the name used in messages. Version 1
#: knows the last four only.
_MEMBERS: Final[dict[str, Any]] = {"0": 0, "false": False, '""': "", "null": None, "[]": [], "{}": {}}
_V1_MEMBERS: Final = ("[]", "{}", "null", '""')


def _member(value: Any) -> str | None:
    """The name of `value` among `_MEMBERS` (JSON types count: `false` is not `0`), or None."""
    if value is ABSENT:
        return "<absent>"
    if isinstance(value, bool):
        return "false" if value is False else None
    if isinstance(value, int | float):
        return "0" if value == 0 else None
    if value is None:
        return "null"
    if isinstance(value, str | list | dict) and not value:
        return {str: '""', list: "[]", dict: "{}"}[type(value)]
    if isinstance(value, dict) and all(v is None for v in value.values()):
        return "{}"  # an object of nulls is empty: `null` is absent (docs/profiles.md decision 4)
    return None


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


def _exclusion(text: str) -> re.Pattern[str]:
    """`!a.b` (given without the `!`): `a.b` and every path under it (`a.b.c`, `a.b[]`)."""
    return re.compile(f"(?:{_pattern(text).pattern})(?:[.\\[].*)?")


@dataclass
class Entry:
    id: str
    reason: str
    # normalise: the names of the equivalent members (`_member`), the paths and the exclusions
    members: frozenset[str] = frozenset()
    paths: tuple[re.Pattern[str], ...] = ()
    excluded: tuple[re.Pattern[str], ...] = ()
    normalises: bool = False
    # known
    invariant: str | None = None
    kind: str | None = None
    action_type: str | None = None
    message: re.Pattern[str] | None = None
    hits: int = 0

    @property
    def tag(self) -> str:
        """What a violation this entry accepts carries at the end of its message."""
        return f"[baseline {self.id}: {self.reason}]"

    def matches_violation(self, kind: str, action_type: str, invariant: str, message: str) -> bool:
        return (
            not self.normalises
            and self.invariant == invariant
            and self.kind in (None, kind)
            and self.action_type in (None, action_type)
            and (self.message is None or self.message.search(message) is not None)
        )

    def matches_path(self, path: str) -> bool:
        return any(p.fullmatch(path) for p in self.paths) and not self.excludes(path)

    def excludes(self, path: str) -> bool:
        """An exclusion matches `path` or a path above it (`!a.b` keeps `a.b.c` out too)."""
        return any(x.fullmatch(path) for x in self.excluded)

    def accepts(self, expected: Any, observed: Any, path: str) -> bool:
        """Both values (either may be `ABSENT`) are members of this entry's class, at a path
        it covers."""
        a, b = _member(expected), _member(observed)
        return a is not None and b is not None and a in self.members and b in self.members and self.matches_path(path)


@dataclass
class Baseline:
    source: str
    target: str | None
    entries: list[Entry] = field(default_factory=list)
    version: int = FORMAT_VERSION
    digest: str = ""  # of the file's JSON content (canonical form): which baseline this was

    def provenance(self) -> dict[str, Any]:
        """What a finding found under this baseline records (`extra.baseline`)."""
        return {"source": self.source, "digest": self.digest, "entries": [e.id for e in self.entries]}

    @property
    def stale(self) -> list[Entry]:
        return [e for e in self.entries if e.hits == 0]

    # -- normalisation ---------------------------------------------------------------------------

    def normalise(self, expected: Any, observed: Any, before: Any = None) -> Any:
        """`observed` with each accepted difference against `expected` removed (copy on write:
        unchanged subtrees are shared; the same object when nothing matched).

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
                        v = type(v)(v.invariant, "known", f"{v.message} {e.tag}")
                        break
            out.append(v)
        return out

    def entry_for(self, message: str) -> Entry | None:
        """The entry whose tag a (`known`) violation's message carries: the one that accepted it."""
        return next((e for e in self.entries if e.tag in message), None)

    def accepts_any(self, kind: str, action_type: str, invariant: str) -> bool:
        """Some `known` entry is about `invariant` on this kind and action type."""
        return any(
            not e.normalises and e.invariant == invariant and e.kind in (None, kind) and e.action_type in (None, action_type)
            for e in self.entries
        )

    def split(self, kind: str, action_type: str, invariant: str, differences: list[str]) -> tuple[Entry | None, list[str]]:
        """One violation that lists several `differences` (INV-D01: one line per differing
        path), judged line by line: (the entry that accepted the first accepted line, the lines
        no entry accepts). A `known` entry with a `message` accepts only the lines it matches,
        so a step with an accepted and a real difference keeps the real one."""
        first: Entry | None = None
        left: list[str] = []
        used: set[str] = set()
        for line in differences:
            e = next((e for e in self.entries if e.matches_violation(kind, action_type, invariant, line)), None)
            if e is None:
                left.append(line)
                continue
            if e.id not in used:
                used.add(e.id)
                e.hits += 1
            first = first or e
        return first, left

    def summary(self) -> list[str]:
        return [
            f"baseline {e.id}: {e.hits} match(es)" + ("  STALE: never matched in this run" if e.hits == 0 else "")
            for e in self.entries
        ]


def _accept(rules: list[Entry], expected: Any, observed: Any, path: str) -> bool:
    for r in rules:
        if r.accepts(expected, observed, path):
            r.hits += 1
            return True
    return False


def _walk(exp: Any, obs: Any, path: str, rules: list[Entry]) -> Any:
    """`obs` with the differences from `exp` that `rules` accept replaced by `exp`'s value."""
    if isinstance(exp, dict) and isinstance(obs, dict):
        new: dict[str, Any] | None = None
        for k in exp.keys() | obs.keys():
            e_val, o_val = exp.get(k, ABSENT), obs.get(k, ABSENT)
            if e_val is o_val:
                continue
            here = f"{path}.{k}" if path else k
            child = _value(e_val, o_val, here, rules)
            if child is not o_val:
                new = dict(obs) if new is None else new
                if child is ABSENT:
                    del new[k]
                else:
                    new[k] = child
        return obs if new is None else new
    if isinstance(exp, list) and isinstance(obs, list):
        items: list[Any] | None = None
        here = f"{path}[]"
        for i in range(min(len(exp), len(obs))):
            child = _value(exp[i], obs[i], here, rules)
            if child is not obs[i]:
                items = list(obs) if items is None else items
                items[i] = child
        return obs if items is None else items
    return obs


def _value(e_val: Any, o_val: Any, here: str, rules: list[Entry]) -> Any:
    """The target's value at `here` (`ABSENT`: no key), after the accepted equivalences."""
    same_container = type(e_val) is type(o_val) and isinstance(e_val, dict | list)
    if same_container:
        return _walk(e_val, o_val, here, rules)
    a, b = _member(e_val), _member(o_val)
    if a is not None and b is not None and a != b and _accept(rules, e_val, o_val, here):
        return e_val
    return o_val


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
    version = data.get("formatVersion")
    if version not in READS or isinstance(version, bool):
        raise BaselineError(
            f"{source}: baseline format version {version!r}; this ahp-fuzz reads "
            + " and ".join(str(v) for v in READS)
        )
    unknown = set(data) - {"format", "formatVersion", "target", "entries"}
    if unknown:
        raise BaselineError(f"{source}: unknown key(s) {sorted(unknown)}")
    raw = data.get("entries")
    if not isinstance(raw, list) or not raw:
        raise BaselineError(f"{source}: \"entries\" must be a non-empty list")
    entries = [_entry(e, f"{source}: entries[{i}]", version) for i, e in enumerate(raw)]
    ids = [e.id for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BaselineError(f"{source}: duplicate entry id(s) {sorted(dup)}")
    target = data.get("target")
    if target is not None and not isinstance(target, str):
        raise BaselineError(f"{source}: \"target\" must be a string")
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return Baseline(source, target, entries, version, hashlib.sha256(canonical.encode()).hexdigest()[:12])


def _text(e: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
    v = e.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise BaselineError(f"{where}: \"{key}\" must be a non-empty string")
    return v


def _entry(e: Any, where: str, version: int = FORMAT_VERSION) -> Entry:
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
        members, paths, excluded = _normalisation(e["normalise"], f"{where} ({eid})", version)
        return Entry(eid, reason, members=members, paths=paths, excluded=excluded, normalises=True)
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


def _normalisation(
    n: Any, where: str, version: int
) -> tuple[frozenset[str], tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """(member names, path patterns, exclusion patterns) of a `normalise` object."""
    if version == 1:
        if not isinstance(n, dict) or set(n) != {"absentEquals", "paths"}:
            raise BaselineError(f'{where}: "normalise" wants {{"absentEquals", "paths"}} in format version 1 '
                                '("values", "absent" and the members 0 and false need "formatVersion": 2)')
        allowed = set(_V1_MEMBERS)
    else:
        if not isinstance(n, dict) or "paths" not in n or ("absentEquals" in n) == ("values" in n) \
                or set(n) - {"absentEquals", "values", "absent", "paths"} or ("absentEquals" in n and "absent" in n):
            raise BaselineError(f'{where}: "normalise" wants {{"absentEquals", "paths"}} or '
                                '{"values", "absent"?, "paths"}')
        allowed = set(_MEMBERS)
    names = ", ".join(sorted(allowed, key=list(_MEMBERS).index))
    if "absentEquals" in n:
        raw, absent = [n["absentEquals"]], True
        if _member(raw[0]) not in allowed:
            raise BaselineError(f"{where}: absentEquals must be one of {names}")
    else:
        raw, absent = n["values"], n.get("absent", False)
        if not isinstance(absent, bool):
            raise BaselineError(f'{where}: "absent" must be true or false')
        if not isinstance(raw, list) or not raw:
            raise BaselineError(f'{where}: "values" must be a non-empty list of {names}')
        bad = [v for v in raw if _member(v) not in allowed]
        if bad:
            raise BaselineError(f'{where}: "values" may hold only {names} (not {json.dumps(bad[0])})')
    members = frozenset(m for m in (_member(v) for v in raw) if m is not None) | ({"<absent>"} if absent else set())
    if len(members) < 2:
        raise BaselineError(f'{where}: a normalisation needs two things to make equal: more "values", '
                            'or "absent": true')
    paths = n["paths"]
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        raise BaselineError(f'{where}: "paths" must be a non-empty list of path patterns')
    kept = [p for p in paths if not p.startswith("!")]
    dropped = [p[1:] for p in paths if p.startswith("!")]
    if dropped and version == 1:
        raise BaselineError(f'{where}: a "!" exclusion ({json.dumps("!" + dropped[0])}) needs "formatVersion": 2')
    if not kept:
        raise BaselineError(f'{where}: "paths" has only exclusions ("!…"): name the paths to normalise too')
    if any(not d for d in dropped):
        raise BaselineError(f'{where}: "!" alone excludes nothing: write "!path.pattern"')
    return members, tuple(_pattern(p) for p in kept), tuple(_exclusion(d) for d in dropped)
