"""The recall benchmark (issue 32): every known bug of `catalogue.py`, N seeded plain runs each.

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/recall/run.py \\
        [--seeds 1-5] [--chunks 10] [--jobs 2] [--only NAME,…] [--wild-ts CHECKOUT] \\
        [--harness ROOT] [--label after] [--out DIR] [--discover]

Each trial is a plain `ahp-fuzz run --target T --seed S --chunks C` (chunk-bounded: its verdict
does not depend on the machine's speed) of the harness at `--harness` (default: this checkout;
another `git worktree` measures another commit on the same targets). Per bug: found in k of N
(a finding whose cause key starts with the bug's `expect`), the median and maximum time to exposure
(report.json `findings[].exposure`: the run's clock and steps when it was first witnessed; a
harness without it gives none); a trial is interrupted once every bug of its target is
reported (`--full`: never); per target: false findings
(causes that are none of its known bugs), findings per cause. `--discover` prints every cause a
target's runs reported, to confirm a bug's key by reading it. Results: `OUT/recall.json` and a
Markdown table on stdout (bench/results/recall.md holds them).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from catalogue import ROOT, TARGETS, Target  # noqa: E402


def matches(key: Any, expect: tuple[str, ...]) -> bool:
    return isinstance(key, list) and tuple(key[: len(expect)]) == expect


def names(key: Any, bug: Any) -> bool:
    """`key` reports `bug`: its cause, or a key an older harness reported it under."""
    return matches(key, bug.expect) or any(matches(key, k) for k in bug.also)


def _found_all(report_path: Path, target: Target) -> bool:
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError):
        return False
    keys = [(f.get("cause") or {}).get("key") for f in report.get("findings", [])]
    return all(any(names(k, b) for k in keys) for b in target.bugs)


def _from_folders(out: Path, targets: list[Target]) -> dict[str, Any]:
    """The trials of a run folder whose recall.json was not written (a run cut short): each trial
    folder's report.json, as `trial` reads it."""
    by_folder = {t.name.replace(":", "_"): t for t in targets}
    trials, seeds = [], set()
    for folder in sorted(out.iterdir()):
        name, _, seed = folder.name.rpartition("-s")
        report_path = folder / "report.json"
        if name not in by_folder or not seed.isdigit() or not report_path.is_file():
            continue
        report = json.loads(report_path.read_text())
        if report.get("status") == "running":
            continue
        seeds.add(int(seed))
        trials.append({"target": by_folder[name].name, "seed": int(seed), "exit": None, "steps": report.get("steps"),
                       "findings": [_finding(f) for f in report.get("findings", [])]})
    return {"label": out.name, "chunks": "?", "seeds": sorted(seeds), "trials": trials}


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    return {"cause": (f.get("cause") or {}).get("id") or f.get("signature"), "key": (f.get("cause") or {}).get("key"),
            "summary": (f.get("cause") or {}).get("summary", f.get("message", ""))[:140],
            "invariant": f.get("invariant"), "severity": f.get("severity"), "exposure": f.get("exposure")}


def trial(harness: Path, target: Target, spec: str, seed: int, chunks: int, out: Path,
          early_stop: bool = True, spec_dirs: dict[str, str] | None = None) -> dict[str, Any]:
    """One plain run. With `early_stop`, the run is interrupted (SIGINT: the report is finalized)
    once every known bug of the target is in its report.json: what it found and when is what it
    would have found and when; the rest of the budget would only have measured false findings."""
    folder = out / f"{target.name.replace(':', '_')}-s{seed}"
    spec_dirs = spec_dirs or {}
    cmd = [str(harness / ".venv" / "bin" / "ahp-fuzz"), "run", "--target", spec, "--seed", str(seed),
           "--chunks", str(chunks), "--budget", "900s", "--out", str(folder), "--overwrite",
           *(arg.format(wild_ts=spec_dirs.get("wild_ts", "")) for arg in target.args)]
    report_path = folder / "report.json"
    proc = subprocess.Popen(cmd, cwd=harness, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())
    stopped = False
    while proc.poll() is None:
        try:
            proc.wait(1.0)
        except subprocess.TimeoutExpired:
            if early_stop and not stopped and _found_all(report_path, target):
                proc.send_signal(signal.SIGINT)
                stopped = True
    _, stderr = proc.communicate()
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    findings = [_finding(f) for f in report.get("findings", [])]
    return {"target": target.name, "seed": seed, "exit": proc.returncode, "steps": report.get("steps"),
            "elapsed": report.get("elapsedSeconds"), "findings": findings, "stoppedEarly": stopped,
            "stderr": stderr[-400:] if proc.returncode not in (0, 1, 130) else ""}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-", 1)
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def table(trials: list[dict[str, Any]], targets: list[Target], seeds: list[int], label: str) -> str:
    rows = [f"### {label}", "",
            "| target | bug | class | found | median exposure (s / steps) | max exposure (s / steps) |",
            "|---|---|---:|---:|---:|---:|"]
    summary: list[str] = ["", "| target | runs | findings | causes | findings per bug found | false findings | exit codes |",
                          "|---|---:|---:|---:|---:|---:|---|"]
    for t in targets:
        mine = [x for x in trials if x["target"] == t.name]
        for b in t.bugs:
            found = 0
            times: list[tuple[float, int]] = []
            exact = sum(1 for x in mine if any(matches(f["key"], b.expect) for f in x["findings"]))
            for x in mine:
                hits = [f for f in x["findings"] if names(f["key"], b)]
                if hits:
                    found += 1
                    e = hits[0]["exposure"]
                    if e:  # a harness before issue 32 records none
                        times.append((e.get("seconds") or 0.0, e.get("steps") or 0))
            med = (f"{statistics.median(s for s, _ in times):.1f} / {statistics.median(n for _, n in times):.0f}"
                   if times else "—" if not found else "n/a")
            mx = f"{max(s for s, _ in times):.1f} / {max(n for _, n in times)}" if times else "—" if not found else "n/a"
            older = f" ({found - exact} under an older key)" if exact < found else ""
            rows.append(f"| {t.name} | {b.name} | {b.cls} | **{found} of {len(mine)}**{older} | {med} | {mx} |")
        n_find = sum(len(x["findings"]) for x in mine)
        causes = sum(len({f["cause"] for f in x["findings"]}) for x in mine)
        false = sum(1 for x in mine for f in x["findings"] if not any(names(f["key"], b) for b in t.bugs))
        exits = ",".join(str(x["exit"]) for x in sorted(mine, key=lambda x: x["seed"]))
        # per bug, not per cause id: two ids for one bug (a bug reported under two causes) count
        named = sum(1 for x in mine for f in x["findings"] if any(names(f["key"], b) for b in t.bugs))
        bugs_found = sum(1 for x in mine for b in t.bugs if any(names(f["key"], b) for f in x["findings"]))
        per = f"{named / bugs_found:.2f}" if bugs_found else "—"
        summary.append(f"| {t.name} | {len(mine)} | {n_find} | {causes} | {per} | {false} | {exits} |")
    bugs = [(t, b) for t in targets for b in t.bugs]
    full = sum(1 for t, b in bugs
               if sum(1 for x in trials if x["target"] == t.name and any(names(f["key"], b) for f in x["findings"])) == len(seeds))
    rows.append("")
    rows.append(f"Bugs found in every seed: **{full} of {len(bugs)}**; seeds {seeds[0]}–{seeds[-1]}.")
    return "\n".join(rows + summary) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="1-5")
    p.add_argument("--chunks", type=int, default=10)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", default="")
    p.add_argument("--wild-ts", default="", help="a checkout of the wild set's agent-host-protocol (TS reducers)")
    p.add_argument("--wild-go", default="", help="the Go client's adapter binary (bench/wild/build-go-adapter.sh)")
    p.add_argument("--harness", default=str(ROOT))
    p.add_argument("--label", default="this checkout")
    p.add_argument("--out", default="")
    p.add_argument("--discover", action="store_true")
    p.add_argument("--full", action="store_true", help="no early stop: every trial runs its whole budget")
    p.add_argument("--from", dest="saved", default="",
                   help="tabulate a saved OUT/recall.json (or the trial folders of OUT) against this catalogue (no run)")
    a = p.parse_args(argv)
    seeds = _seeds(a.seeds)
    only = {x for x in a.only.split(",") if x}
    have = {"wild-ts": bool(a.wild_ts), "wild-go": bool(a.wild_go and a.wild_ts)}
    targets = [t for t in TARGETS if (not only or t.name in only or t.name.split(":", 1)[1] in only)
               and (t.needs is None or have[t.needs])]
    if a.saved:
        path = Path(a.saved)
        saved = _from_folders(path, targets) if path.is_dir() else json.loads(path.read_text())
        names_run = {x["target"] for x in saved["trials"]}
        done = [t for t in targets if t.name in names_run]
        print(table(saved["trials"], done, saved["seeds"], f"{saved['label']} — {saved['chunks']} chunks per trial"))
        return 0
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="recall-"))
    out.mkdir(parents=True, exist_ok=True)
    harness = Path(a.harness).resolve()
    fill = {"wild_ts": a.wild_ts, "wild_go": a.wild_go}
    jobs = [(t, t.spec.format(**fill), s) for t in targets for s in seeds]
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        trials = list(pool.map(lambda j: trial(harness, j[0], j[1], j[2], a.chunks, out, not a.full, fill), jobs))
    (out / "recall.json").write_text(json.dumps({"label": a.label, "chunks": a.chunks, "seeds": seeds,
                                                 "harness": str(harness), "trials": trials}, indent=1))
    if a.discover:
        for t in targets:
            seen: dict[str, list[Any]] = {}
            for x in trials:
                if x["target"] == t.name:
                    for f in x["findings"]:
                        seen.setdefault(f["cause"], [f["key"], f["summary"], 0])[2] += 1
            print(f"{t.name}: " + ("" if seen else "no finding"))
            for cid, (key, summ, n) in seen.items():
                print(f"   {cid} ×{n} {key} {summ}")
    print(table(trials, targets, seeds, f"{a.label} — {a.chunks} chunks per trial, {out}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
