"""How a live run settles after an op: the barrier and the fresh snapshots it takes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SettlePolicy:
    """How a run reaches quiescence after an op and which fresh snapshots it takes.

    *Thorough* (`THOROUGH`, the settings before issue 17, kept for the bench): a `ping` on every
    client after every op, and every `every` ops an observer per client profile takes a real
    fresh snapshot of each channel that changed (of every watched channel each `full_every` ops).
    Its blind spot: the cross-channel checks (INV-048, INV-031) compare a chat with its session
    only when both changed in the same op (or at a full op).

    *Lean* (`LEAN`, what `LiveRun` does unless told otherwise — the fuzz machine, replay and
    shrinking alike: its decisions depend on the op's position and what the host sent, so a
    finding replays with the snapshots that found it): the same checks on fewer frames —

    * `barrier="sources"`: ping the clients that sent this op's frames (the host answers in
      order on a connection, so it has handled the op and everything before; after a subscribe
      its answer is that barrier, `run._ANSWERED_OPS`); every other client
      is caught up once it holds every envelope those clients received since the last check on
      the channels it watches (rejections aside: a host may send them only to the sender; types
      newer than its version aside); only a client that still lacks one after a few loop turns,
      whose connection closed, or that watches a channel no pinged client watches, is pinged;
    * `snapshots="needed"`: a real fresh snapshot (observer subscribe + unsubscribe) only where it
      can show more than the clients' own folds — *needed*: in every profile, of a channel whose
      accepted envelope carries a collection or working directories (the per-profile projections,
      INV-039/040/046) or that a command touched; in the richest profile, of a channel that got a
      rejection (a rejected action applied anyway, INV-042/044, even when the next op overwrites
      it); *sampled*: every `every` ops, one profile in turn (rotating) snapshots every channel
      that changed since that profile's last real snapshot; *full*: every `full_every` ops every
      watched channel in every profile. Between real snapshots the snapshot checks read a *folded
      view*: a client of the profile's confirmed state (`fromSeq` None, so INV-042 — fold against
      snapshot — never compares a fold with a fold), and the snapshots clients received
      themselves this op (subscribe, reconnect) count as real ones of their profile.

    `LiveRun.stats` counts what was done (ops by snapshot reason, real snapshots, folded views,
    pings sent and skipped); the campaign reports the sums (`liveSettling` in report.json).
    """

    barrier: str = "all"  # "all" | "sources"
    snapshots: str = "touched"  # "touched" | "needed"
    every: int = 1
    full_every: int = 10
    #: Loop turns a non-pinged client gets to receive what the pinged ones received.
    catchup_turns: int = 4

    def __post_init__(self) -> None:
        if self.barrier not in ("all", "sources") or self.snapshots not in ("touched", "needed"):
            raise ValueError(f"bad settle policy {self!r}")
        if self.every < 1 or self.full_every < 1:
            raise ValueError(f"settle policy intervals must be >= 1: {self!r}")


THOROUGH = SettlePolicy()
#: Sampled every 8th op (was 4th until the wire got cheaper: bench/results/live.md, issue 25 —
#: a sampled real snapshot then cost ~10 % of a step's CPU, its frames and the checks of real
#: snapshots; every divergence that a rejection or a projection can cause is snapshotted when it
#: happens anyway, "needed", and every channel every 40th op).
LEAN = SettlePolicy(barrier="sources", snapshots="needed", every=8, full_every=40)
SETTLE_POLICIES: dict[str, SettlePolicy] = {"lean": LEAN, "thorough": THOROUGH}
