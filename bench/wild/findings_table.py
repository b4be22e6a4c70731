"""Summarise run folders of the wild set: one row per finding, and the schema check of its steps.

    .venv/bin/python bench/wild/findings_table.py --schema SPEC_DIR RUN_DIR [RUN_DIR …]

For each run folder: its verdict line (report.json), then one row per finding — cause id, cause
key, invariant, severity, whether the run confirmed it, the summary — and the check issue 22
asks for: every valid-lane (non-probe) step of every finding validated against the spec's
actions schema **with jsonschema-rs itself**, as sent (no `null` read as absent, no payload
check of ours). Two columns: against the schema as published, and against it with the INV-007
corrections of REDUCERS.md §11 item 11 (combined `SessionStatus` values, 0.6.0's `usage`), which
the published schema rejects although upstream's own reducers and fixtures produce them. A step
the *corrected* schema rejects would be a valid-lane step no conformant implementation must
accept: the row says which.

`--markdown` prints the rows as a Markdown table (for bench/results/wild.md).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.spec.schema_patches import apply_inv007_patches  # noqa: E402


def validators(schema_dir: Path, corrected: bool) -> dict[str, list[Any]]:
    doc = json.loads((schema_dir / "schema" / "actions.schema.json").read_text(encoding="utf-8"))
    if corrected:
        doc = copy.deepcopy(doc)
        apply_inv007_patches(doc.get("$defs", {}))
    defs = doc.get("$defs", {})
    out: dict[str, list[Any]] = {}
    for name, body in defs.items():
        const = body.get("properties", {}).get("type", {}).get("const") if isinstance(body, dict) else None
        if isinstance(const, str) and "/" in const:
            out.setdefault(const, []).append(jsonschema_rs.validator_for({"$ref": f"#/$defs/{name}", "$defs": defs}))
    return out


def invalid_steps(finding: dict[str, Any], by_type: dict[str, list[Any]]) -> list[str]:
    """The valid-lane steps of `finding` (its own trace and, for a group, every channel's) the
    schema rejects, as `step N: type: first error`."""
    steps = [s for s in finding.get("steps", [])]
    group = (finding.get("extra") or {}).get("group")
    if isinstance(group, dict):
        steps += group.get("steps", [])
    bad = []
    for i, s in enumerate(steps):
        if s.get("probe"):
            continue
        action = s.get("action")
        t = action.get("type") if isinstance(action, dict) else None
        variants = by_type.get(t) if isinstance(t, str) else None
        if not variants:
            continue  # an unknown type: a no-op, judged as such
        if not any(v.is_valid(action) for v in variants):
            err = next(iter(variants[0].iter_errors(action)), None)
            bad.append(f"step {i}: {t}: {err.message if err else 'invalid'}")
    return bad


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--schema", required=True, type=Path, help="a spec folder (schema/actions.schema.json)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("runs", nargs="+", type=Path)
    args = p.parse_args(argv)
    published, corrected = validators(args.schema, False), validators(args.schema, True)
    total = bad_pub = bad_cor = 0
    for run in args.runs:
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        entries = report.get("findings", [])
        print(f"\n## {run} — {report.get('verdict', report.get('status'))}: {len(entries)} finding(s)")
        if args.markdown:
            print("\n| cause id | cause key | invariant | severity | reproduced | summary | steps the schema rejects (published / corrected) |")
            print("|---|---|---|---|---|---|---|")
        for e in entries:
            f = json.loads(Path(e["file"]).read_text(encoding="utf-8"))
            cause = f.get("cause") or {}
            pub, cor = invalid_steps(f, published), invalid_steps(f, corrected)
            total += 1
            bad_pub += bool(pub)
            bad_cor += bool(cor)
            row = [cause.get("id", "—"), json.dumps(cause.get("key", [])), e["invariant"], e["severity"],
                   str(e.get("reproduced")), (cause.get("summary") or f["message"])[:110],
                   f"{len(pub)} / {len(cor)}" + (f" ({pub[0][:80]})" if pub else "")]
            print(("| " + " | ".join(x.replace("|", "\\|") for x in row) + " |") if args.markdown else "  " + "  ".join(row))
    print(f"\n{total} finding(s); with a valid-lane step the published schema rejects: {bad_pub}; "
          f"the corrected schema: {bad_cor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
