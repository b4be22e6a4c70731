"""Target throughput: steps/s in process, and through the adapter in both forms (not a test).

    .venv/bin/python bench/bench_targets.py [--seconds 1.5] [--write]

Workload: chat turns (turnStarted, responsePart, 30 deltas, turnComplete = 33 steps per turn),
30 turns per repetition, stepped on top of a *short* history (0 turns) and of a *100-turn*
history (built by running the same kind of turns through the reference model; ~136 KB of
JSON, the size measured for upstream). Each repetition starts from a fresh copy of the history
(loading it is not timed), so the history stays within 100–130 turns.

Rows: the reference model in process; the reference model served by
`python -m harness.targets.reference_adapter` through the simple form (whole state both ways
each step), the fast form one step per round trip, and the fast form pipelined (`step_many`);
with node present, the same through the Node bridge with a tiny JavaScript chat reducer
(`bench/js/chat_reducer.mjs`), plus that reducer alone in Node for scale.
`--write` records the table in `bench/results/targets.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.reference import DEFAULT_PROFILE, Model
from harness.targets.adapter import AdapterTarget, FastSession
from harness.targets.base import ReduceSession, TargetSession
from harness.targets.delta import diff
from harness.targets.reference import ReferenceTarget
from harness.targets.typescript import bridge_argv

HERE = Path(__file__).resolve().parent
State = dict[str, Any]
Action = dict[str, Any]

DELTAS_PER_TURN = 30
TURNS_PER_REP = 30
# ~1.36 KB of JSON per turn, the upstream figure (100 turns = 136 KB)
WORDS = "The quick brown fox jumps over the lazy dog while the reducer streams text. "


READING = """How to read it:

* **steps/s**: the best repetition, the median in parentheses. The machine may be shared with
  other work (see the load average): the best repetition shows what the code does, the median
  what a busy machine gives.
* **CPU µs per step** (this process + the adapter process) is what a step costs whatever else
  runs. With the fast form pipelined, both processes work at once: the ceiling is about
  1,000,000 / max(harness, adapter) steps/s with two free cores, 1,000,000 / (harness + adapter)
  with one.
* **simple form**: the whole state crosses the pipe twice per step and is encoded and decoded
  on both sides, so its rate falls linearly with history (see the reply bytes).
* **fast form, one step per round trip**: flat in history; bounded by the pipe round trip. On a
  virtual machine the `write` that wakes the other process is the dominant cost (tens of µs).
* **fast form, pipelined** (`FastSession.step_many`): flat in history and bounded by CPU per
  step; this is the mode to use when steps are known ahead (replay, pre-generated sequences)."""


def empty_chat() -> State:
    return {
        "resource": "ahp-chat:/bench",
        "title": "Bench",
        "status": 1,
        "modifiedAt": "1970-01-01T00:00:00.000Z",
        "turns": [],
    }


def turn_actions(n: int, deltas: int, delta_text: str) -> list[Action]:
    tid = f"turn-{n}"
    pid = f"md-{n}"
    return [
        {
            "type": "chat/turnStarted",
            "turnId": tid,
            "startedAt": "2026-01-01T00:00:00.000Z",
            "message": {"text": f"Question {n}: {WORDS}", "origin": {"kind": "user"}},
        },
        {
            "type": "chat/responsePart",
            "turnId": tid,
            "part": {"kind": "markdown", "id": pid, "content": ""},
        },
        *(
            {"type": "chat/delta", "turnId": tid, "partId": pid, "content": delta_text}
            for _ in range(deltas)
        ),
        {"type": "chat/turnComplete", "turnId": tid, "duration": 1200},
    ]


def history(turns: int) -> State:
    model = Model(DEFAULT_PROFILE)
    state = empty_chat()
    for n in range(turns):
        for a in turn_actions(n, 7, WORDS * 2):
            state = model.reduce("chat", state, a, n)
    return state


def workload(first_turn: int) -> list[Action]:
    out: list[Action] = []
    for n in range(first_turn, first_turn + TURNS_PER_REP):
        out += turn_actions(n, DELTAS_PER_TURN, "word ")
    return out


def fresh(state: State) -> State:
    """An unshared copy, as if just decoded (the session under test owns it)."""
    return json.loads(json.dumps(state))


@dataclass
class Result:
    best: float  # steps/s of the best repetition
    median: float  # steps/s of the median repetition
    harness_us: float  # CPU µs per step spent in this process
    adapter_us: float | None  # CPU µs per step spent in the adapter process (None: in process)


def process_cpu_s(pid: int | None) -> float:
    """User+system CPU seconds of a child process so far (Linux /proc), 0 when unknown."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    open_session: Callable[[State], TargetSession],
    base: State,
    actions: list[Action],
    seconds: float,
    *,
    pipelined: bool = False,
    adapter: AdapterTarget | None = None,
) -> Result:
    """Repetitions of `actions` from `base` until `seconds` of stepping. The machine may be
    shared: the best repetition is the code, the median what a busy machine gives, and the CPU
    per step (both processes) what the steps cost whatever else runs."""
    rates: list[float] = []
    spent = harness_cpu = adapter_cpu = 0.0
    steps = 0
    while spent < seconds or len(rates) < 3:
        session = open_session(fresh(base))
        pid = adapter.pid if adapter is not None else None
        a0, c0, t0 = process_cpu_s(pid), time.process_time(), time.perf_counter()
        if pipelined:
            assert isinstance(session, FastSession)
            results = session.step_many([(a, 9999) for a in actions])
            assert not any(isinstance(r, Exception) for r in results)
        else:
            for a in actions:
                session.step(a, 9999)
        dt = time.perf_counter() - t0
        harness_cpu += time.process_time() - c0
        adapter_cpu += process_cpu_s(pid) - a0
        spent += dt
        steps += len(actions)
        rates.append(len(actions) / dt)
        session.close()
    return Result(
        max(rates),
        statistics.median(rates),
        harness_cpu / steps * 1e6,
        adapter_cpu / steps * 1e6 if adapter is not None else None,
    )


def wire_bytes(base: State, actions: list[Action]) -> tuple[float, float]:
    """Average reply payload per step: whole state (simple form) vs change list (fast form)."""
    model = Model(DEFAULT_PROFILE)
    state, simple, fast = base, 0, 0
    for a in actions:
        new = model.reduce("chat", state, a, 9999)
        simple += len(json.dumps(new, separators=(",", ":")))
        fast += len(json.dumps(diff(state, new), separators=(",", ":")))
        state = new
    return simple / len(actions), fast / len(actions)


def node_raw(base: State, actions: list[Action], seconds: float) -> Result:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"state": base, "actions": actions}, f)
    out = subprocess.run(
        ["node", str(HERE / "js" / "raw_loop.mjs"), f.name, str(seconds)],
        capture_output=True,
        text=True,
        check=True,
    )
    Path(f.name).unlink()
    rate = float(json.loads(out.stdout)["stepsPerSecond"])
    return Result(rate, rate, 0.0, 1e6 / rate)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--seconds", type=float, default=1.5, help="stepping time per cell (default 1.5)"
    )
    ap.add_argument("--write", action="store_true", help="write bench/results/targets.md")
    args = ap.parse_args()

    load_before = os.getloadavg()[0]
    short, long_ = empty_chat(), history(100)
    histories = {
        "short (0→30 turns)": (short, workload(0)),
        "100 turns (100→130)": (long_, workload(100)),
    }
    size_kb = len(json.dumps(long_, separators=(",", ":"))) / 1000

    ref = ReferenceTarget(DEFAULT_PROFILE)
    py_adapter = AdapterTarget(
        [sys.executable, "-m", "harness.targets.reference_adapter"], checkpoint_every=0
    )
    rows: list[tuple[str, Callable[[State, list[Action]], Result]]] = [
        (
            "reference, in process",
            lambda b, a: measure(lambda s: ref.session("chat", s), b, a, args.seconds),
        ),
        (
            "reference adapter (Python), simple form",
            lambda b, a: measure(
                lambda s: ReduceSession(py_adapter, "chat", s),
                b,
                a,
                args.seconds,
                adapter=py_adapter,
            ),
        ),
        (
            "reference adapter (Python), fast form",
            lambda b, a: measure(
                lambda s: py_adapter.session("chat", s), b, a, args.seconds, adapter=py_adapter
            ),
        ),
        (
            "reference adapter (Python), fast form, pipelined",
            lambda b, a: measure(
                lambda s: py_adapter.session("chat", s),
                b,
                a,
                args.seconds,
                pipelined=True,
                adapter=py_adapter,
            ),
        ),
    ]
    node_adapter = None
    if shutil.which("node"):
        node_adapter = AdapterTarget(
            bridge_argv([HERE / "js" / "chat_reducer.mjs"], name="bench chat reducer"),
            checkpoint_every=0,
        )
        bridge = node_adapter
        rows += [
            (
                "tiny JS chat reducer alone, in Node (no bridge)",
                lambda b, a: node_raw(b, a, args.seconds),
            ),
            (
                "Node bridge + tiny JS reducer, simple form",
                lambda b, a: measure(
                    lambda s: ReduceSession(bridge, "chat", s), b, a, args.seconds, adapter=bridge
                ),
            ),
            (
                "Node bridge + tiny JS reducer, fast form",
                lambda b, a: measure(
                    lambda s: bridge.session("chat", s), b, a, args.seconds, adapter=bridge
                ),
            ),
            (
                "Node bridge + tiny JS reducer, fast form, pipelined",
                lambda b, a: measure(
                    lambda s: bridge.session("chat", s),
                    b,
                    a,
                    args.seconds,
                    pipelined=True,
                    adapter=bridge,
                ),
            ),
        ]

    results: list[list[str]] = []
    cpu: list[list[str]] = []
    for label, run in rows:
        cells, cpu_cells = [], []
        for base, acts in histories.values():
            r = run(base, acts)
            cells.append(f"{r.best:,.0f} ({r.median:,.0f})")
            adapter_cpu = "—" if r.adapter_us is None else f"{r.adapter_us:.1f}"
            cpu_cells.append(f"{r.harness_us:.1f} + {adapter_cpu}")
        results.append([label, *cells])
        cpu.append([label, *cpu_cells])
        print(f"{label:52s} " + "  ".join(f"{c:>20s}" for c in cells + cpu_cells), flush=True)
    py_adapter.close()
    if node_adapter is not None:
        node_adapter.close()

    per_step = {name: wire_bytes(b, a) for name, (b, a) in histories.items()}
    lines = [
        "| target | " + " | ".join(f"steps/s, {h}" for h in histories) + " |",
        "|---|" + "---:|" * len(histories),
        *("| " + " | ".join(r) + " |" for r in results),
    ]
    cpu_lines = [
        "| CPU µs per step: harness + adapter | " + " | ".join(histories) + " |",
        "|---|" + "---:|" * len(histories),
        *("| " + " | ".join(r) + " |" for r in cpu),
    ]
    wire = [
        "| reply bytes per step | " + " | ".join(histories) + " |",
        "|---|" + "---:|" * len(histories),
        "| simple form (whole state) | "
        + " | ".join(f"{s:,.0f}" for s, _ in per_step.values())
        + " |",
        "| fast form (change list) | "
        + " | ".join(f"{f:,.0f}" for _, f in per_step.values())
        + " |",
    ]
    node = (
        subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if node_adapter
        else "absent"
    )
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after the run"
    env = (
        f"Python {platform.python_version()}, node {node}, {platform.machine()}, "
        f"{platform.system()}, {os.cpu_count()} CPUs; {args.seconds:g} s of stepping per cell, "
        f"steps/s of the best repetition (median in parentheses); 100-turn history = {size_kb:.0f} KB of JSON; "
        f"workload = {TURNS_PER_REP} turns × (turnStarted, responsePart, {DELTAS_PER_TURN} deltas, turnComplete)"
    )
    print()
    print("\n".join(cpu_lines))
    print("\n".join(wire))
    print(env)
    if args.write:
        out = HERE / "results" / "targets.md"
        out.parent.mkdir(exist_ok=True)
        out.write_text(
            "# Target throughput\n\n"
            "Produced by `.venv/bin/python bench/bench_targets.py --write` "
            f"({time.strftime('%Y-%m-%d')}).\n\n{env}; {load}.\n\n{READING}\n\n"
            + "\n\n".join("\n".join(t) for t in (lines, cpu_lines, wire))
            + "\n"
        )
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
