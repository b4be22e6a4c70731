"""Classify the findings of wild-set run folders as REAL / FALSE / DUP, by stated rules.

    .venv/bin/python bench/wild/classify.py [--rules RULES.json] RUN_DIR [RUN_DIR …]

Each finding is read from its file (trace, message, cause) and given a class and a root cause by
the first rule that matches, in this order:

1. FALSE, generator values no conformant implementation must accept in the valid lane (issue
   22's items 1–3), seen in a valid-lane (non-probe) step of its trace: an integer beyond
   ±(2⁵³−1), a `null` outside `_meta` and config values (the only places the schema allows
   one), an integral float;
2. REAL, duplicate namesakes: the trace creates two tool calls of one `toolCallId` in one turn
   (`chat/toolCallStart` / a `toolCall` response part) or two terminal commands of one
   `commandId`, and the finding is about tool calls or terminal content — the Go client updates
   the first namesake, upstream every one (REDUCERS.md "tool-call update") or the last;
3. the root causes written in `--rules` (a rule with `"first": true` is tried before rule 1: a
   finding whose *message* is the target refusing an integral float is that real cause, however
   the generator came to send the float) (a JSON list of `{"match": REGEX, "class": "REAL"|"FALSE",
   "cause": TEXT}`, matched against the finding's cause summary + message + last action), the
   judgement of a person who read the finding and the target's code: bench/wild/rules.json;
4. else UNCLASSIFIED (to be read by hand, and a rule added).

Within one run folder, a REAL finding whose root cause (rule text) was already given to an
earlier finding of that run is DUP of it (a false finding stays FALSE however often it recurs). Prints one Markdown row per finding and a count per run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

MAX_SAFE = 2**53 - 1


def _leaves(v: Any, key: str = "") -> Any:
    """(key the value sits under, value) for every leaf; a `null` inside `_meta` or a config's
    values is one the schema allows (free-form / JsonPrimitive), so those are skipped."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("_meta", "config", "values") and isinstance(x, dict):
                yield from ((k, y) for y in _leaves_plain(x) if y is not None)
            else:
                yield from _leaves(x, k)
    elif isinstance(v, list):
        for x in v:
            yield from _leaves(x, key)
    else:
        yield key, v


def _leaves_plain(v: Any) -> Any:
    if isinstance(v, dict):
        for x in v.values():
            yield from _leaves_plain(x)
    elif isinstance(v, list):
        for x in v:
            yield from _leaves_plain(x)
    else:
        yield v


def generator_value(finding: dict[str, Any]) -> str | None:
    """Issue 22 items 1–3 in a valid-lane step of the finding's trace, in words: the values the
    valid lane no longer holds (an integer beyond I-JSON, an integral float, a `null` the schema
    forbids)."""
    for s in finding.get("steps", []):
        if s.get("probe"):
            continue
        for _, v in _leaves(s.get("action")):
            if isinstance(v, bool):
                continue
            if isinstance(v, int) and abs(v) > MAX_SAFE:
                return "a valid-lane integer beyond ±(2^53−1): a JavaScript JSON parser rounds it"
            if v is None:
                return "a valid-lane `null` the schema does not allow (the model reads it as absent, the target keeps it)"
            if isinstance(v, float) and v.is_integer():
                return "a valid-lane integral float: a float to the model, an integer or an error to the target"
    return None


DUPLICATES = ("with two items of one identifier (two tool calls of one `toolCallId`, two commands of one "
              "`commandId`) the target updates the first, upstream every one (tool calls) or the last (commands)")


def duplicate_namesakes(finding: dict[str, Any]) -> bool:
    """The trace (initial state included) holds two tool calls of one id or two commands of one id."""
    seen: set[tuple[str, str]] = set()
    initial = json.dumps(finding.get("initial"))
    for s in finding.get("steps", []):
        a = s.get("action") or {}
        if s.get("probe") or not isinstance(a, dict):
            continue
        t = a.get("type")
        key = None
        if t == "chat/toolCallStart":
            key = ("tc", str(a.get("toolCallId")))
        elif t == "chat/responsePart" and isinstance(a.get("part"), dict) and a["part"].get("kind") == "toolCall":
            key = ("tc", str((a["part"].get("toolCall") or {}).get("toolCallId")))
        elif t == "terminal/commandExecuted":
            key = ("cmd", str(a.get("commandId")))
        if key is None:
            continue
        field = "toolCallId" if key[0] == "tc" else "commandId"
        if key in seen or f'"{field}": "{key[1]}"' in initial:
            return True
        seen.add(key)
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rules", type=Path, default=Path(__file__).with_name("rules.json"))
    p.add_argument("runs", nargs="+", type=Path)
    args = p.parse_args(argv)
    rules = json.loads(args.rules.read_text(encoding="utf-8")) if args.rules.is_file() else []
    grand: dict[str, int] = {}
    for run in args.runs:
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        seen: dict[str, str] = {}
        counts = {"REAL": 0, "FALSE": 0, "DUP": 0, "UNCLASSIFIED": 0}
        print(f"\n### {run.name} — {len(report.get('findings', []))} finding(s)\n")
        print("| # | invariant | cause id | cause (harness) | class | root cause |")
        print("|---|---|---|---|---|---|")
        for n, e in enumerate(report.get("findings", []), 1):
            f = json.loads(Path(e["file"]).read_text(encoding="utf-8"))
            cause = f.get("cause") or {}
            summary = cause.get("summary") or f.get("message", "")
            last = json.dumps(f["steps"][-1].get("action"), ensure_ascii=False) if f.get("steps") else ""
            text = f"{summary}\n{f.get('message', '')}\n{last}"
            klass, root = "UNCLASSIFIED", ""
            why = generator_value(f)
            early = next((r for r in rules if r.get("first") and re.search(r["match"], text, re.S)), None)
            if early is not None:
                klass, root = early["class"], early["cause"]
            elif why is not None:
                klass, root = "FALSE", why
            elif duplicate_namesakes(f) and re.search(r"toolCall|content\[|terminal/|duplicate-id|namesake", text):
                klass, root = "REAL", DUPLICATES
            else:
                for r in rules:
                    if re.search(r["match"], text, re.S):
                        klass, root = r["class"], r["cause"]
                        break
            if klass == "REAL" and root in seen:
                klass, root = "DUP", f"of #{seen[root]}: {root}"
            elif klass == "REAL":
                seen[root] = str(n)
            counts[klass] += 1
            row = [str(n), e["invariant"], cause.get("id", "—"), summary[:90], klass, root[:140]]
            print("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in row) + " |")
        print(f"\n{run.name}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for k, v in counts.items():
            grand[k] = grand.get(k, 0) + v
    print("\nall: " + ", ".join(f"{k} {v}" for k, v in grand.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
