"""Reference-model throughput on a mixed, realistic action sequence (not a test).

    .venv/bin/python bench/bench_reducers.py [--turns 200] [--repeat 5]

Prints actions/second for the whole mix and per state kind, and the chat history size reached.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import initial_states, mixed

from harness.reference import Model, Profile


def run_once(model: Model, steps: list) -> tuple[float, dict]:
    states = initial_states()
    t0 = time.perf_counter()
    for now, (kind, action) in enumerate(steps, start=1):
        states[kind] = model.reduce(kind, states[kind], action, now)
    return time.perf_counter() - t0, states


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    model = Model(Profile.named("0.7.0"))
    steps = mixed(args.turns)
    best = float("inf")
    for _ in range(args.repeat):
        elapsed, states = run_once(model, steps)
        best = min(best, elapsed)
    size = len(json.dumps(states["chat"]))
    print(f"python {sys.version.split()[0]}; {len(steps)} actions ({args.turns} turns); best of {args.repeat}")
    print(f"mixed sequence: {len(steps) / best:,.0f} actions/s ({best * 1e6 / len(steps):.2f} µs/action)")
    print(f"final chat state: {len(states['chat']['turns'])} turns, {size / 1024:.0f} KiB as JSON")


if __name__ == "__main__":
    main()
