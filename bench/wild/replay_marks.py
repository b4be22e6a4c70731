"""Run every mark's replay command of a conformance matrix (docs/matrix.md), as the page shows it.

    python bench/wild/replay_marks.py MATRIX_DIR/matrix.json

Prints one line per mark (exit 1 of `replay` is "reproduced") and the count; exits 0 when every
mark reproduced, 1 otherwise."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    doc = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    marks = [(r["id"], col, cell) for r in doc["causes"] for col, cell in r["cells"].items()
             if cell["status"] == "found"]
    ok = 0
    for cid, col, cell in marks:
        done = subprocess.run(shlex.split(cell["replay"]), capture_output=True, text=True, check=False)
        ok += done.returncode == 1
        why = " (reproduced)" if done.returncode == 1 else f": {(done.stderr.strip().splitlines() or [''])[-1]}"
        print(f"replay {cid} on {col}: exit {done.returncode}{why}")
    print(f"{ok} of {len(marks)} marks reproduced")
    return 0 if ok == len(marks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
