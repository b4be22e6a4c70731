"""Time from the command's start to the run's first step, before and after, side by side.

`ahp-fuzz run --target reference --seed 1 --budget 10s` is started as a new process; the time
is taken from just before the process is spawned to the first call of `Stepper.step` (the
first step judged: the model and the target have both reduced an action). The run is then
stopped (SIGTERM) — only its start matters here. Each checkout is measured `--rounds` times,
alternating, and the median is reported, in three folders: a new one per run (a newcomer's
first run there: Hypothesis' Unicode tables are not in it), one used before, and one used
before with `$AHP_SPEC_DIR` set (the action schema compiled at start-up).

The probe is this file run as `--probe ROOT OUT ARGS…`: it puts `ROOT` first on `sys.path`
(so the checkout measured is the one imported, whichever venv runs it), wraps `Stepper.step`
once the engine's stepper module is imported (a meta-path hook: nothing is imported early),
writes `time.time()` of the first step to OUT, and runs `harness.cli.main(ARGS)`. Both
checkouts are measured through the same probe, so the probe's own cost is on both sides.

    .venv/bin/python bench/bench_startup.py --base /work/wt-plugin-base --rounds 5

`--base` is a checkout of the code to compare with (e.g. `git worktree add /work/wt-plugin-base
372a2e3`); without it only this checkout is measured.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUN_ARGS = ("run", "--target", "reference", "--seed", "1", "--budget", "10s", "--quiet")


class _WrapStepper(importlib.abc.MetaPathFinder):
    """Wraps `harness.engine.stepper.Stepper.step` as the module is imported."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "harness.engine.stepper":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        assert spec is not None and spec.loader is not None
        loader = spec.loader
        out = self.out

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> ModuleType | None:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                original = module.Stepper.step
                seen: list[bool] = []

                def step(self_: Any, *a: Any, **k: Any) -> Any:
                    if not seen:
                        seen.append(True)
                        now = time.time()
                        tmp = out.with_suffix(".tmp")
                        tmp.write_text(repr(now))
                        os.replace(tmp, out)  # whole or absent: the reader never sees half of it
                    return original(self_, *a, **k)

                module.Stepper.step = step

        spec.loader = Loader()
        return spec


def probe(root: str, out: str, argv: list[str]) -> int:
    sys.path.insert(0, root)
    sys.meta_path.insert(0, _WrapStepper(Path(out)))
    from harness.cli import main

    return main(argv)


def measure(root: Path, python: str, cwd: Path, spec: str | None) -> dict[str, Any]:
    """One run from `cwd` (with `spec` as $AHP_SPEC_DIR, or none): seconds from spawning the
    command to its first step, and the report's `startedAt`."""
    with tempfile.TemporaryDirectory(prefix="ahp-startup-") as tmp:
        mark = Path(tmp) / "first-step"
        run_dir = Path(tmp) / "run"
        argv = [python, str(Path(__file__).resolve()), "--probe", str(root), str(mark),
                *RUN_ARGS, "--out", str(run_dir)]
        env = {k: v for k, v in os.environ.items() if k not in ("AHP_SPEC_DIR", "HYPOTHESIS_STORAGE_DIRECTORY")}
        if spec:
            env["AHP_SPEC_DIR"] = spec
        started = time.time()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while not mark.exists() and proc.poll() is None and time.time() - started < 30:
            time.sleep(0.002)
        first = float(mark.read_text()) if mark.exists() else None
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        report = json.loads((run_dir / "report.json").read_text()) if (run_dir / "report.json").exists() else {}
    if first is None:
        raise SystemExit(f"{root}: no step within 30 s (exit {proc.returncode}): {err.decode()[-400:]}")
    return {"firstStep": first - started, "status": report.get("status")}


#: (name, a new folder per run?, with the spec folder?)
SCENARIOS = (
    ("a new folder, no spec folder", True, False),
    ("a folder used before, no spec folder", False, False),
    ("a folder used before, $AHP_SPEC_DIR set", False, True),
)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        raise SystemExit(probe(sys.argv[2], sys.argv[3], sys.argv[4:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="a checkout to compare with (measured first in each round)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter (a venv with the dependencies)")
    ap.add_argument("--spec", default=str(ROOT.parent / "shared" / "ahp-spec" / "0.7.0"),
                    help="the spec folder of the third scenario")
    args = ap.parse_args()
    sides = ([("before", args.base)] if args.base else []) + [("after", ROOT)]
    print(f"ahp-fuzz {' '.join(RUN_ARGS)}: seconds from spawning the command to its first step "
          f"(median of {args.rounds}, sides alternating); load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="ahp-startup-folders-") as folders:
        used = {name: Path(folders) / name for name, _ in sides}
        for name, root in sides:  # "used before": one unmeasured run there first
            used[name].mkdir()
            measure(root, args.python, used[name], None)
        for title, fresh, with_spec in SCENARIOS:
            spec = args.spec if with_spec else None
            if with_spec:
                for name, root in sides:
                    measure(root, args.python, used[name], spec)  # unmeasured: the .pyc and file cache
            times: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in sides}
            for i in range(args.rounds):
                for name, root in sides:
                    cwd = Path(folders) / f"new-{name}-{title[:5]}-{i}" if fresh else used[name]
                    cwd.mkdir(exist_ok=True)
                    times[name].append(measure(root, args.python, cwd, spec))
            print(f"\n{title} (load average now {os.getloadavg()[0]:.1f})")
            print(f"  {'':8} {'median':>7} {'min':>6} {'max':>6}  runs")
            for name, _ in sides:
                firsts = [t["firstStep"] for t in times[name]]
                print(f"  {name:8} {statistics.median(firsts):>7.2f} {min(firsts):>6.2f} {max(firsts):>6.2f}  "
                      + " ".join(f"{x:.2f}" for x in firsts))


if __name__ == "__main__":
    main()
