"""What a live campaign is configured by (`LiveConfig`), apart from the machine that runs it, so
that the examples and both lanes read it without importing the campaign (imports one way:
machine → example, fast → config)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.engine.control import RunControl

from .client import DEFAULT_CLIENTS, ClientSpec
from .ops import DEFAULT_WEIGHTS
from .run import DEFAULT_SKIP

#: Malformed frames (`ops.frame_class`) sent to a host that cannot be restarted only after this
#: share of the budget: a frame that kills it ends the run, so everything else goes first.
HOLD_FRAMES_UNTIL = 0.8

#: How a live campaign draws its steps (`LiveConfig.lane`, `ahp-fuzz run --lane`; docs/lanes.md).
LIVE_LANES = ("fast", "hypothesis")


@dataclass
class LiveConfig:
    #: The host to fuzz. None: the embedded host `target_spec` names, served on the campaign's
    #: own loop (what `host_in_loop` does for an embedded spelling in any case).
    url: str | None
    target_spec: str
    profile: str = "0.7.0"
    seed: int = 0
    budget_s: float | None = 60.0
    max_chunks: int | None = None
    chunk_examples: int = 10
    #: Steps (scenario draws) per machine run, after its setup (connect, two sessions).
    max_steps: int = 40
    #: Scenarios drawn per call of the machine's rule (the run still draws `max_steps` in all):
    #: Hypothesis's per-rule work is paid once for them. Shrinking is ours (ddmin over ops), so
    #: the rule's granularity does not matter to it.
    scenarios_per_rule: int = 4
    sessions: int = 2
    clients: tuple[ClientSpec, ...] = DEFAULT_CLIENTS
    weights: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    #: How each op settles and which fresh snapshots it takes (`settle.SettlePolicy`): "lean"
    #: (pings and real snapshots only where needed, sampled, full) or "thorough" (every client
    #: pinged, every changed channel snapshotted in every profile, every op — the old settings).
    settle: str = "lean"
    #: Overrides the policy's snapshot interval (`SettlePolicy.every`); None: the policy's own.
    snapshot_every: int | None = None
    request_timeout_s: float = 5.0
    skip: frozenset[str] = DEFAULT_SKIP
    max_findings: int | None = None
    #: Stop as soon as a finding of one of these invariants is recorded (focused runs).
    stop_on: frozenset[str] = frozenset()
    shrink_budget_s: float = 10.0
    database: Path | None = None
    control: RunControl | None = None
    #: Run tokens (the `fz-<token>-` namespace of URIs and client ids) derive from the seed and this
    #: salt; None: a random salt per campaign, so that runs against a long-lived host never collide.
    #: A fixed salt against a fresh host makes a run repeatable (the embedded agent's answers are
    #: seeded by chat URI).
    token_salt: str | None = None
    #: Run the event loop on a background thread (the old mode, kept as the bench baseline);
    #: default: inline in the calling thread (`EventLoopThread`).
    threaded_loop: bool = False
    #: Keep connections open across machine runs (`pool.ConnectionPool`): a run's clean
    #: clients and observers serve the next run's connect ops. None: when the campaign serves
    #: the embedded host on its own loop (a host without timers: nothing reaches a connection
    #: once its run is over).
    reuse_connections: bool | None = None
    #: The garbage collector's first threshold while the campaign runs (restored after); None:
    #: unchanged. Every op allocates frames, envelopes and states by the thousand: at Python's
    #: default (700) the collector ran ~0.6 collections per op, ~15% of a step's CPU (bench).
    gc_threshold: int | None = 20_000
    #: A full collection (`gc.collect()`) after every this many chunks; None or 0: CPython's own
    #: schedule. A finished example's run is released (`LiveRun.release`), so its objects are
    #: freed by reference counting when it ends; before, they were reference cycles that — with
    #: `gc_threshold` raised — piled up to hundreds of MB between CPython's rare full collections,
    #: a peak the process's RSS kept (pymalloc returns an arena only when it is empty). What is
    #: left for the collector (the Hypothesis engine's fills, a failing example's run) is small;
    #: this full collection is the net under it, rare because it walks the whole heap (~66 ms per
    #: pass in a live worker: every chunk would cost ~4% of a step, bench/results/campaign.md).
    collect_every: int | None = 20
    #: For `host:embedded…`: serve a host of the same spelling (defects, options) on the campaign's
    #: own event loop and fuzz that one (host and clients in one thread); False: fuzz `url`.
    host_in_loop: bool = True
    #: The `LiveTarget` that started the host (host-cmd:, ws://): how the campaign learns that
    #: it died and starts a fresh one (`keeper.HostKeeper`). None: only `url` is known.
    target: Any = None
    #: Run every handshake probe and bare JSON value once per campaign, at the start of the
    #: first examples (`ops.preflight_ops`); False: only as drawn by the scenarios.
    preflight: bool = True
    #: Versions to offer besides those with rules (`--offer`): a host that speaks only those
    #: is fuzzed on the nearest rules' subset (`live.versions`).
    offer: tuple[str, ...] = ()
    #: A host that cannot be restarted gets malformed frames only after this share of the budget
    #: (`example.HOLD_FRAMES_UNTIL`).
    hold_frames_until: float = HOLD_FRAMES_UNTIL
    #: "fast": scenarios and actions from pools that Hypothesis fills, chosen and mutated by a
    #: seeded PRNG (`fast.py`); "hypothesis": every choice a Hypothesis draw of the stateful
    #: machine (`build_live_machine`; its example database, `pytest -m fuzz`).
    lane: str = "fast"
    #: The schema check of valid-lane actions (`RunConfig.schema`): what the fast lane asks
    #: before it sends a mutated action (`Model.wire_problem`); None: the spec checkout's.
    schema: Callable[[Any], str | None] | None = None
