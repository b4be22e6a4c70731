"""The table of bench/results/wild.md for one `bench/wild/run-ahpx.sh` output folder.

    python bench/wild/ahpx/summarize.py OUT [--label LABEL]

Per command of OUT/runs.tsv: exit code, wall seconds, the report's status and verdict, the
number of findings, and each finding's headline (invariant, severity, what it is about and the
first line of its message). A command that wrote no report is shown with the last line of its
stderr (its one-line error). Bench tooling: nothing here is imported by the harness.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

COMMANDS_FILE = re.compile(r"^st-[a-z-]+?-([A-Za-z]+)-[0-9a-f]{12}\.json$")


def headline(finding: dict[str, Any]) -> str:
    """One line per finding: invariant [severity] subject: first message line."""
    subject = finding.get("kind") or ""
    match = COMMANDS_FILE.match(Path(str(finding.get("file", ""))).name)
    if match:
        subject = match.group(1)
    message = str(finding.get("message") or finding.get("title") or "").strip().splitlines()
    first = message[0] if message else ""
    if len(first) > 160:
        first = first[:157] + "…"
    return f"{finding.get('invariant')} [{finding.get('severity')}] {subject}: {first}"


def last_line(path: Path) -> str:
    if not path.exists():
        return ""
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def profile_line(path: Path) -> str:
    """The run's `profile: …` line (stderr), shortened to the profile and its source."""
    if not path.exists():
        return ""
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("profile: "):
            short = line.removeprefix("profile: ").split(" — ")[0]
            return short + ")" * (short.count("(") - short.count(")"))
    return ""


def rows(out: Path) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for line in (out / "runs.tsv").read_text().splitlines():
        name, rc, wall, command = [*line.split("\t"), "", "", ""][:4]
        report_path = out / name / "report.json"
        row: dict[str, Any] = {
            "name": name,
            "rc": rc,
            "wall": wall,
            "command": command,
            "profile": profile_line(out / f"{name}.stderr"),
        }
        if report_path.exists():
            report = json.loads(report_path.read_text())
            findings = report.get("findings") or []
            row.update(
                status=report.get("status"),
                verdict=report.get("verdict"),
                steps=report.get("steps"),
                findings=len(findings),
                headlines=[headline(f) for f in findings],
                stopped=report.get("stoppedBecause"),
            )
        else:
            row.update(
                status="no report",
                verdict="",
                steps="",
                findings="",
                headlines=[],
                error=last_line(out / f"{name}.stderr"),
            )
        result.append(row)
    return result


def table(out: Path, label: str) -> str:
    lines = [
        f"#### {label}",
        "",
        "| run | exit | wall s | report | verdict | steps | findings |",
        "|---|---|---|---|---|---|---|",
    ]
    data = rows(out)
    for r in data:
        lines.append(
            f"| {r['name']} | {r['rc']} | {r['wall']} | {r['status']} | {r['verdict']} "
            f"| {r['steps']} | {r['findings']} |"
        )
    lines.append("")
    for r in data:
        lines.append(f"* **{r['name']}** — `ahp-fuzz {r['command']}`")
        if r["profile"]:
            lines.append(f"  * profile: {r['profile']}")
        if r.get("error"):
            lines.append(f"  * error: `` {r['error']} ``")
        for h in r["headlines"]:
            lines.append(f"  * {h}")
    for end in sorted(out.glob("mock-*.end")):
        scenario = end.stem.removeprefix("mock-")
        listen = (out / f"mock-{scenario}.listen").read_text().split()
        bound = listen[3] if len(listen) > 3 else "?"
        lines.append(
            f"* ws:// mock `{scenario}`: listened on `{bound}`; "
            f"after the run it was {end.read_text().strip()}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    label = args.label
    if label is None:
        meta = (
            (args.out / "meta.tsv").read_text().split("\t")
            if (args.out / "meta.tsv").exists()
            else []
        )
        label = f"harness {meta[2].strip()}" if len(meta) > 2 else str(args.out)
    print(table(args.out, label), end="")


if __name__ == "__main__":
    main()
