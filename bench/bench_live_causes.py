"""Issue 33's measurements on the embedded host (bench/results/live.md, "Live causes"): chunk-bounded
live campaigns, so the counts do not depend on the machine's speed.

1. per imitation of a real host (`no-frame-catch`, `closes-on-unknown-channel`, `title-in-summary`,
   `turns-on-session-channel`) and seeds 1–3: the cause ids of its findings;
2. `no-frame-catch` with the garbage/action/turn/race mix, seeds 1–3: findings with the closed-client
   attribution (`signing.sign`) and without it;
3. a 0.3.0 host writing its own title field (`older-only` + `title-in-summary`): findings and notes.

    AHP_SPEC_DIR=../shared/ahp-spec/0.7.0 .venv/bin/python bench/bench_live_causes.py
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from harness.engine.events import EventBus, FindingFound, KnownSeen
from harness.live import example, signing
from harness.live.config import LiveConfig
from harness.live.machine import run_live_campaign
from harness.live.ops import DEFAULT_WEIGHTS

IMITATIONS = ("no-frame-catch", "closes-on-unknown-channel", "title-in-summary", "turns-on-session-channel")
SEEDS = (1, 2, 3)


def campaign(spec: str, seed: int, *, chunks: int = 6, weights: dict[str, int] | None = None,
             preflight: bool = True) -> tuple[list[Any], Counter[str]]:
    found: list[Any] = []
    known: Counter[str] = Counter()

    def sink(e: object) -> None:
        if isinstance(e, FindingFound):
            found.append(e.finding)
        elif isinstance(e, KnownSeen):
            known[e.invariant] += 1

    cfg = LiveConfig(url=None, target_spec=spec, seed=seed, budget_s=600.0, max_chunks=chunks, chunk_examples=3,
                     shrink_budget_s=0.3, token_salt="bench", request_timeout_s=60.0, preflight=preflight,
                     **({"weights": weights} if weights else {}))
    run_live_campaign(cfg, EventBus(sink))
    return found, known


def main() -> None:
    logging.disable(logging.ERROR)  # the defects' own "connection handler failed" lines
    print("## 1. imitations: cause ids per seed")
    for d in IMITATIONS:
        ids = []
        for seed in SEEDS:
            found, _ = campaign(f"host:embedded?defect={d}", seed)
            ids.append(sorted({f"{f.cause['id']} {f.cause['summary'][:70]}" for f in found}))
        print(f"{d}: " + " | ".join(f"seed {s}: {len(i)} cause(s)" for s, i in zip(SEEDS, ids, strict=True)))
        for line in sorted({x for i in ids for x in i}):
            print(f"    {line}  (in {sum(line in i for i in ids)}/{len(SEEDS)} seeds)")
    print("## 2. no-frame-catch: closed-client attribution")
    mix = {**dict.fromkeys(DEFAULT_WEIGHTS, 0), "garbage": 3, "action": 5, "turn": 4, "race": 2}
    real = signing.sign
    for label, fn in (("with", real), ("without", lambda v, t, closed, *rest: real(v, t, {}, *rest))):
        example.sign = fn  # type: ignore[assignment]
        for seed in SEEDS:
            found, _ = campaign("host:embedded?defect=no-frame-catch", seed, chunks=12, weights=mix, preflight=False)
            closes = sum(f.cause["key"][0] == "connection-closed" for f in found)
            print(f"{label} attribution, seed {seed}: {len(found)} findings, {closes} closes, "
                  f"{len(found) - closes} other ({', '.join(sorted(f.invariant for f in found if f.cause['key'][0] != 'connection-closed'))})")
    example.sign = real  # type: ignore[assignment]
    print("## 3. a 0.3.0 host writing its own title field")
    for seed in SEEDS:
        found, known = campaign("host:embedded?defect=older-only&defect=title-in-summary", seed)
        print(f"seed {seed}: findings {sorted(Counter(f.invariant for f in found).items())}, "
              f"title findings {sum('title' in f.message for f in found)}, notes {dict(known)}")


if __name__ == "__main__":
    main()
