"""The live half: fuzzing a running AHP host over the wire (docs/live.md).

It sits above the engine: it drives the engine's run loop, events and control, the targets'
wire connection, the live invariants and the corpus; the engine never imports it, and it never
imports a reporter (tests/test_layering.py). The rooms:

* `machine` — the live campaign: the Hypothesis machine over live ops, findings, host restarts;
* `run` — one live run (`LiveRun`): its clients and ops; `expect` — what the host must echo for
  an op (`Expectations`); `settle` — how an op settles (`SettlePolicy`) and the quiescence before
  the live checks (`Settling`); `snapshots` — fresh snapshots per client profile (`FreshSnapshots`);
* `client` — one simulated client (`SimClient`, `ClientSpec`); `pool` — connections kept across
  runs; `loop` — the run's event loop;
  `failure` — a hang or a dropped connection (`LiveFailure`);
* `ops` — the scenarios that draw ops; `replay` — replaying and shrinking a live finding;
* `keeper` — the host process kept alive (`HostKeeper`); `wild` — hosts that are not
  conformant yet (probes, the drain barrier, versions, death);
* `focus` — bounded campaigns per embedded defect; `frames` — the raw frame driver.
"""

from __future__ import annotations

from .frames import run_frames
from .machine import LiveConfig, run_live, run_live_campaign
from .replay import LiveReplayResult, is_live_finding, replay_live, replay_on_target, result_lines

__all__ = [
    "LiveConfig",
    "LiveReplayResult",
    "is_live_finding",
    "replay_live",
    "replay_on_target",
    "result_lines",
    "run_frames",
    "run_live",
    "run_live_campaign",
]
