"""How a live run settles after an op: quiescence, then the live checks.

The policy (`SettlePolicy`: which barrier, which fresh snapshots) and `LiveRun`'s settling (a
mixin, `Settling`): the ping barrier and the proof that an unpinged client caught up, a bounded
grace for pending echoes, following the chats that new catalog entries name, the fresh snapshots
(`snapshots.py`), then the live checks on what every client recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.invariants.base import Violation
from harness.invariants.live.checks import check_live
from harness.spec.versions import is_newer_than, parse_version

from .client import SimClient
from .roles import RunRole
from .wild import quiesce


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
      its answer is that barrier, `_ANSWERED_OPS`); every other client
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


#: See `LiveRun.echoes_lost`.
ECHOES_LOST_ENOUGH = 2


class Settling(RunRole):
    """`LiveRun`'s settling after an op (a mixin): quiescence, following new chats, the checks.
    It is the run as its clients and the probes of `wild` see it (`roles.RunRole`: `quiesce` is
    handed the run), whose fields it declares; below, the others settling reads."""

    # the run's fields (`LiveRun.__init__`) settling reads besides `RunRole`'s
    policy: SettlePolicy
    stats: Counter[str]
    phase_s: dict[str, float]
    clients: dict[int, SimClient]
    drain_s: float
    echoes_lost: int
    skip: frozenset[str]
    _since_snap: dict[int, int]

    if TYPE_CHECKING:

        def ready_clients(self) -> list[SimClient]: ...  # RunRole's, as the run answers it

        # the fresh snapshots (snapshots.py)

        def _new_channels(self) -> set[str]: ...

        async def _lean_snapshots(self, op: dict[str, Any] | None) -> None: ...

        async def _thorough_snapshots(self) -> None: ...

    async def _barrier(self, sources: list[SimClient] | None = None, *, answered: bool = False) -> None:
        """Quiescence: every ready client has received what the host emitted for the op.

        `sources` None (or the thorough policy): a ping on every ready client. Otherwise a ping on
        the ready clients among `sources` (those that sent the op's frames; none when `answered`:
        the answer to their last request was their barrier), then each other client is either
        caught up (`_caught_up`) within a few loop turns or pinged as well.

        A host that leaves a ping unanswered gets livewild's fallback (`wild.quiesce`) under
        either policy: a timed drain instead, here and in every later barrier of the run — an
        unanswered ping proves nothing about the clients it was meant to prove caught up."""
        ready = self.ready_clients()
        if sources is None or self.policy.barrier == "all" or self.ping_silent:
            self.stats["pings"] += 0 if self.ping_silent else len(ready)
            await self._quiesce(ready)
            return
        first = [c for c in ready if any(c is s for s in sources)]
        rest = [c for c in ready if not any(c is f for f in first)]
        if not answered:
            self.stats["pings"] += len(first)
            if not await self._quiesce(first):
                return  # drained: every client, not only these
        lagging = await self._lagging(rest, first)
        while len(lagging) > 1:
            # the one watching most is pinged first: what it received may prove the others
            witness = max(lagging, key=lambda c: len(c.view.subscribed))
            self.stats["pings"] += 1
            if not await self._quiesce([witness]):
                return
            first.append(witness)
            lagging = await self._lagging([c for c in lagging if c is not witness], first)
        self.stats["pings"] += len(lagging)
        if lagging and not await self._quiesce(lagging[:1]):
            return
        self.stats["pingsSkipped"] += len(rest) - sum(1 for c in first if any(c is r for r in rest)) - len(lagging)

    async def _quiesce(self, clients: list[SimClient]) -> bool:
        """Ping `clients` (`wild.quiesce`): True when the host answered each (an error answer
        is a barrier too), False when it fell back to a timed drain of the whole run."""
        if await quiesce(self, clients):
            return True
        self.stats["drains"] += 1
        return False

    async def _lagging(self, clients: list[SimClient], pinged: list[SimClient]) -> list[SimClient]:
        """The `clients` not proven caught up by what the `pinged` ones received, after up to
        `catchup_turns` loop turns (the other connections' frames may still be on their way in)."""
        lagging = clients
        for turn in range(self.policy.catchup_turns):
            lagging = [c for c in lagging if not self._caught_up(c, pinged)]
            if not lagging or turn == self.policy.catchup_turns - 1:
                break
            await asyncio.sleep(0)
        return lagging

    def _caught_up(self, c: SimClient, pinged: list[SimClient]) -> bool:
        """`c` holds every envelope the `pinged` clients received since the last check on the
        channels it watches (the host handled the op before answering their pings, so what it
        emitted to `c` is among those). Unknown — False — when `c`'s connection closed, when it
        watches a channel none of them does, or for an envelope without an integer serverSeq."""
        v = c.view
        if c.conn is None or c.conn.closed.is_set() or not pinged:
            return False
        watched: set[str] = set().union(*(p.view.subscribed for p in pinged))
        if not v.subscribed <= watched:
            return False
        version = parse_version(c.speaks)  # a version that is no MAJOR.MINOR.PATCH: INV-H10
        got: set[tuple[int, str]] | None = None
        for p in pinged:
            for e in p.view.envelopes[self.obs.since_env.get(p.view.index, 0):]:
                if e.rejected or e.replayed or e.channel not in v.subscribed:
                    continue  # a rejection may go to its sender only
                if not isinstance(e.seq, int) or isinstance(e.seq, bool):
                    return False
                if is_newer_than(e.type, version):
                    continue  # a host MUST NOT send it to `c` (INV-046)
                h = v.history.get(e.channel)
                if not h:
                    return False
                if isinstance(h[0][0], int) and e.seq <= h[0][0]:
                    continue  # before `c`'s snapshot of the channel
                if got is None:
                    got = {(x.seq, x.channel) for x in v.envelopes[self.obs.since_env.get(v.index, 0):]
                           if isinstance(x.seq, int)}
                if (e.seq, e.channel) not in got:
                    return False
        return True

    def _sources(self, op: dict[str, Any]) -> list[SimClient]:
        """The clients that sent this op's frames."""
        subs = op.get("ops") if op.get("op") == "race" else [op]
        out: list[SimClient] = []
        for sub in subs if isinstance(subs, list) else []:
            c = self.clients.get(int(sub.get("client", 0))) if isinstance(sub, dict) else None
            if c is not None and not any(c is x for x in out):
                out.append(c)
        return out

    async def _settle_and_check(self, op: dict[str, Any] | None = None) -> list[Violation]:
        t0 = time.perf_counter()
        await self._barrier(None if op is None else self._sources(op), answered=_answered(op))
        if self.echoes_lost < ECHOES_LOST_ENOUGH:  # a host that loses echoes is not waited for again
            deadline = time.monotonic() + self.drain_s
            while self._awaiting_echo():
                if time.monotonic() >= deadline:
                    self.echoes_lost += 1
                    break
                await asyncio.sleep(0.005)
        lean = self.policy.barrier == "sources"
        followers = await self._follow(self._new_channels() if lean else None)
        if followers:
            # lean: a follower's subscribe answer is its barrier already; the others are caught
            # up or pinged
            await self._barrier(followers, answered=lean)
        if self.policy.snapshots == "needed":
            await self._lean_snapshots(op)
        else:
            await self._thorough_snapshots()
        self.obs.settled = not self.ping_silent
        t1 = time.perf_counter()
        found = check_live(self.obs, skip=self.skip)
        self.phase_s["settle"] += t1 - t0
        self.phase_s["checks"] += time.perf_counter() - t1
        for c in self.clients.values():
            self.obs.since_env[c.view.index] = len(c.view.envelopes)
            self.obs.since_disp[c.view.index] = len(c.view.dispatches)
            self.obs.since_cmd[c.view.index] = len(c.view.commands)
            self._since_snap[c.view.index] = len(c.view.snapshots)
        return found

    def _awaiting_echo(self) -> bool:
        """A dispatch of this op is still pending at its dispatcher and no connection of the run
        got its echo: the host may echo late, so the settling gives it `drain_s`. Older ones had
        their wait (a host that never echoes them must not cost every later op), and an echo that
        went to another connection will not reach the dispatcher (INV-045 says where it went)."""
        for c in self.ready_clients():
            v = c.view
            for d in v.dispatches[self.obs.since_disp.get(v.index, 0):]:
                if (d.channel in v.subscribed and any(x is d for x in v.pending.get(d.channel, ()))
                        and (v.client_id, d.client_seq) not in self.obs.delivered):
                    return True
        return False

    async def _follow(self, changed: set[str] | None = None) -> list[SimClient]:
        """Every client subscribes to the chats of the sessions it watches (new chats appear in
        the session catalog); disposed channels are dropped. `changed`: only the sessions among
        these (with an envelope or a snapshot since the last check) can list a new chat. Returns
        the clients that subscribed."""
        followers: list[SimClient] = []
        for c in self.ready_clients():
            watched = c.view.subscribed if changed is None else c.view.subscribed & changed
            for s_uri in [ch for ch in sorted(watched) if self.kinds.get(ch) == "session"]:
                state = c.view.confirmed.get(s_uri) or {}
                for entry in state.get("chats") or []:
                    chat = entry.get("resource") if isinstance(entry, dict) else None
                    if isinstance(chat, str) and chat not in c.view.subscribed:
                        self.kinds.setdefault(chat, "chat")
                        self.obs.chat_session.setdefault(chat, s_uri)
                        await c.subscribe(chat)
                        if not any(c is f for f in followers):
                            followers.append(c)
        return followers


#: Ops whose every frame is a request the host answered before the op returned (an op whose
#: answer did not come fails with TARGET-TIMEOUT): `subscribe`. The host answers in order on a
#: connection, so the answer is the sender's barrier, as a ping's would be — and a subscribe
#: causes no envelopes. A `connect` still pings: its ping is the run's first INV-H01 probe (a
#: host silent on ping is known from the first op, and drained from then on).
_ANSWERED_OPS = frozenset({"subscribe"})


def _answered(op: dict[str, Any] | None) -> bool:
    return op is not None and op.get("op") in _ANSWERED_OPS
