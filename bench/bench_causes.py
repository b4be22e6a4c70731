"""Findings per root cause on the three-cause adapter (issue 15, "Done when").

    python bench/bench_causes.py RUN_DIR [RUN_DIR…]

RUN_DIR is the output folder of

    ahp-fuzz run --target "adapter:PYTHON tests/three_cause_adapter.py" --budget 90s --seed S

run with `AHP_SPEC_DIR` unset. For each folder this prints one table row:

* findings — entries in report.json;
* per seeded cause — the findings that reproduce with that cause alone switched on
  (`tests/three_cause_adapter.py --causes X`), each finding file replayed once per cause;
  `ref` = findings that reproduce on the adapter with no cause at all (the model's own, e.g. a
  known upstream issue saved as a violation), `none` = reproduce under no single cause;
* lost — entries whose `file` is missing or holds another finding (another signature, invariant
  or message), and entries sharing one file;
* not reproducing — entries saved with `"reproduced": false`, and files whose replay on the
  recorded target exits 0.

Replays run in-process through the `ahp-fuzz` of the interpreter running this script, so run it
with the interpreter of the harness that made the folder (main's `.venv/bin/python` for the
"before" numbers).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections import Counter
from pathlib import Path

from harness.cli import main as ahp_fuzz

ADAPTER = Path(__file__).resolve().parent.parent / "tests" / "three_cause_adapter.py"
CAUSES = ("wrap", "ignore", "empty")


def _replay(path: Path, target: str | None = None) -> int:
    argv = ["replay", str(path)] + (["--target", target] if target else [])
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return ahp_fuzz(argv)
        except SystemExit as e:
            return int(e.code or 0)


def _adapter(causes: str) -> str:
    return f"adapter:{sys.executable} {ADAPTER} --causes={causes}"


def analyse(run: Path) -> dict[str, object]:
    report = json.loads((run / "report.json").read_text())
    entries = report.get("findings") or []
    files = Counter(e.get("file") for e in entries)
    lost = 0
    for e in entries:
        f = e.get("file")
        if not f or not Path(f).is_file() or files[f] > 1:
            lost += 1
            continue
        data = json.loads(Path(f).read_text())
        if (data.get("signature"), data["invariant"]["id"], data.get("message")) != (
            e.get("signature"), e.get("invariant"), e.get("message")
        ):
            lost += 1
    flagged = sum(1 for e in entries if e.get("reproduced") is False)
    per_cause: Counter[str] = Counter()
    silent = 0
    rows = []
    for path in sorted({Path(f) for f in files if f and Path(f).is_file()}):
        if _replay(path) != 1:
            silent += 1
        hits = [c for c in CAUSES if _replay(path, _adapter(c)) == 1]
        if not hits:
            hits = ["ref"] if _replay(path, _adapter("")) == 1 else ["none"]
        label = "+".join(hits)
        per_cause[label] += 1
        data = json.loads(path.read_text())
        rows.append((label, data["invariant"]["id"], data["kind"], (data.get("cause") or {}).get("summary", "")))
    return {
        "run": str(run), "findings": len(entries), "files": len(list((run / "findings").glob("*.json"))),
        "perCause": dict(sorted(per_cause.items())), "lost": lost, "flaggedNotReproduced": flagged,
        "replayExit0": silent, "rows": rows, "progressFindings": report["progress"].get("findings"),
    }


def main(argv: list[str]) -> int:
    print("| run | findings | files | " + " | ".join(CAUSES) + " | other | lost | saved not reproduced | replay exit 0 |")
    print("|---|---|---|" + "---|" * (len(CAUSES) + 4))
    for run in argv:
        r = analyse(Path(run))
        pc: dict[str, int] = r["perCause"]  # type: ignore[assignment]
        other = ", ".join(f"{k}: {v}" for k, v in pc.items() if k not in CAUSES) or "0"
        print(f"| {run} | {r['findings']} | {r['files']} | " + " | ".join(str(pc.get(c, 0)) for c in CAUSES)
              + f" | {other} | {r['lost']} | {r['flaggedNotReproduced']} | {r['replayExit0']} |")
        for label, inv, kind, summary in r["rows"]:  # type: ignore[union-attr]
            print(f"    {label:12} {inv:24} {kind:13} {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
