"""The fresh snapshots a live run takes once an op has settled: what the host says each channel is.

Real ones — an observer connection per client profile (version × collections) subscribes and
unsubscribes — where only they can show more than the clients' own folds, sampled or full
(`SettlePolicy`); between them *folded views* (a client's confirmed state, no fromSeq) and the
snapshots clients received themselves. The snapshot checks compare them with the clients' folds
and across profiles (INV-039/040/042/046/048).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from harness.invariants.live.base import Snapshot, profile_key, profile_rank, state_difference
from harness.targets.live import ConnectionLost, RpcError

from .client import ClientSpec, SimClient
from .failure import TARGET_CRASH, LiveFailure
from .pool import ConnectionPool
from .settle import Settling


class FreshSnapshots(Settling):
    """`LiveRun`'s fresh snapshots (a mixin, on top of its settling): real ones by observers,
    folded views, and the channels an op changed."""

    # the run's fields (`LiveRun.__init__`) the snapshots read besides those of settling
    steps: int
    snapshot_every: int
    full_every: int
    pool: ConnectionPool | None
    observers: dict[str, SimClient]
    _observers_made: int
    _touched: set[str]
    _dirty: dict[str, set[str]]
    _sampled: int
    _diverged: set[str]

    if TYPE_CHECKING:

        def session_of(self, chat: str) -> str | None: ...  # run.py

        def _adopt(self, c: SimClient, old: SimClient) -> None: ...  # run.py

    def _seen_seq(self) -> int:
        """The newest serverSeq any client has observed (an envelope, or a snapshot's fromSeq: a
        host's sequence is global, so a setup op's envelopes may reach no client before its
        subscribe)."""
        return max((x for c in self.clients.values()
                    for x in (*(e.seq for e in c.view.envelopes[-1:]),
                              *(s.from_seq for s in c.view.snapshots[-1:]))
                    if isinstance(x, int)), default=-1)

    async def _thorough_snapshots(self) -> None:
        self._touched |= self._new_channels() | self.obs.take_echo_channels()
        if self.steps % self.snapshot_every == 0:
            full = self.steps % self.full_every == 0
            seen = self._seen_seq()
            await self._fresh_snapshots(None if full else self._touched)
            self.stats["opsFull" if full else "opsTouched"] += 1
            self._touched = set()
            await self._catch_up_after(seen)
        else:
            self.obs.fresh = {}  # checks of fresh snapshots wait for the next snapshot step
            self.stats["opsNoSnapshot"] += 1

    async def _catch_up_after(self, seen: int) -> None:
        """A real fresh snapshot above `seen` means the host emitted after the barrier: every
        client pings again, so that the folds catch up before the checks compare."""
        if any(isinstance(snap.from_seq, int) and snap.from_seq > seen
               for snaps in self.obs.fresh.values() for snap in snaps.values()):
            await self._barrier()

    def _op_effects(self) -> tuple[set[str], set[str], set[str], set[str]]:
        """Channels with an envelope or a snapshot since the last check on any client; those
        among them with a rejection; those with an accepted envelope whose projection differs
        by client profile — by version and collection support (attachments), or by version
        only (working directories: a collection-less peer of the same version sees the same)."""
        touched: set[str] = self.obs.take_echo_channels()  # an echo may reach another connection
        rejected: set[str] = set()
        projected: set[str] = set()
        by_version: set[str] = set()
        for c in self.clients.values():
            v = c.view
            for e in v.envelopes[self.obs.since_env.get(v.index, 0):]:
                touched.add(e.channel)
                if e.rejected:
                    rejected.add(e.channel)
                elif e.channel not in projected:
                    keys = _projected_keys(e.action)
                    if "attachments" in keys:
                        projected.add(e.channel)
                    elif keys:
                        by_version.add(e.channel)
            touched.update(s.channel for s in v.snapshots[self._since_snap.get(v.index, 0):])
        return touched, rejected, projected, by_version - projected

    async def _lean_snapshots(self, op: dict[str, Any] | None) -> None:
        """The lean policy's fresh snapshots (`SettlePolicy`): real ones where needed, sampled
        or full; folded views and the clients' own new snapshots everywhere else."""
        like = self._profiles()
        touched, rejected, projected, by_version = self._op_effects()
        for key in like:
            self._dirty.setdefault(key, set()).update(touched)
        n = self.steps
        full = n % self.full_every == 0
        sampled = not full and n % self.policy.every == 0
        main = max(like, key=profile_rank) if like else None
        wanted: dict[str, set[str] | None] = {}
        if full:
            wanted = dict.fromkeys(like)
        else:
            command = op is not None and op.get("op") == "command"
            disputed = self._disputed_sessions()
            # per negotiated version, the richest profile: where a version-only projection shows
            versions = {key: max((k for k in like if k.partition("|")[0] == key.partition("|")[0]), key=profile_rank)
                        for key in like}
            for key in like:
                want = set(projected) | disputed
                if versions[key] == key:
                    want |= by_version
                if command:
                    want |= touched
                if key == main:
                    want |= rejected
                wanted[key] = want
            if sampled and like:
                keys = sorted(like, key=profile_rank, reverse=True)
                turn = keys[self._sampled % len(keys)]
                self._sampled += 1
                wanted[turn] = (wanted[turn] or set()) | self._dirty.get(turn, set())
        real_wanted = any(w is None or w for w in wanted.values())
        self.stats["opsFull" if full else "opsSampled" if sampled else "opsNeeded" if real_wanted else "opsFolded"] += 1
        seen = self._seen_seq()
        real = await self._fresh_snapshots_for(like, wanted) if real_wanted else {}
        for key, snaps in real.items():
            dirty = self._dirty.setdefault(key, set())
            if wanted.get(key) is None:
                dirty.clear()
            else:
                dirty.difference_update(snaps)
            self._note_divergence(like[key], snaps)
        # folds stand in for snapshots only while they can: not once the host sends echoes to
        # the wrong connections (folds miss envelopes), nor for a channel already diverged
        foldable = set() if self.obs.misrouted() else touched - self._diverged
        fresh: dict[str, dict[str, Snapshot]] = {}
        for key, c in like.items():
            view: dict[str, Snapshot] = {}
            for ch in sorted(foldable & c.view.subscribed):
                state = c.view.confirmed.get(ch)
                if state is not None:
                    view[ch] = Snapshot(ch, None, state)  # a fold, not a snapshot: INV-042 skips it
            self.stats["foldedViews"] += len(view)
            for x in self.clients.values():  # what clients of this profile received themselves
                if x.ready and profile_key(x.view.version, x.view.collections) == key:
                    for snap in x.view.snapshots[self._since_snap.get(x.view.index, 0):]:
                        view[snap.channel] = snap
            view.update(real.get(key) or {})
            fresh[key] = self._with_host_clock(view, c)
        self.obs.fresh = fresh
        await self._catch_up_after(seen)

    def _disputed_sessions(self) -> set[str]:
        """The sessions of this op's accepted dispatches that the folds said MUST be rejected as
        outside the session's set (INV-031): the check compares with the host's real session."""
        out: set[str] = set()
        for c in self.clients.values():
            for d in c.view.dispatches[self.obs.since_disp.get(c.view.index, 0):]:
                if d.must_reject == "INV-031" and any(not e.rejected for e in d.echoes):
                    s = self.session_of(d.channel)
                    if s:
                        out.add(s)
        return out

    def _note_divergence(self, c: SimClient, snaps: dict[str, Snapshot]) -> None:
        """Remember the channels whose real snapshot differs from `c`'s fold at its fromSeq
        (whatever the cause: the checks name it; here it only stops folded views of them)."""
        for ch, snap in snaps.items():
            if ch in self._diverged or not isinstance(snap.from_seq, int) or isinstance(snap.from_seq, bool):
                continue
            mine = c.view.state_at(ch, snap.from_seq)
            if mine is not None and state_difference(mine, snap.state) is not None:
                self._diverged.add(ch)

    def _with_host_clock(self, view: dict[str, Snapshot], c: SimClient) -> dict[str, Snapshot]:
        """Folded chat views with the host's `modifiedAt`: a fold's clock is the reference
        reducers' (0), never the host's, so a folded chat borrows it from its entry in the
        session's catalog (the view's, else `c`'s fold) — the ChatSummary comparison (INV-048)
        of a fold then holds every field but the clock; real snapshots compare that too."""
        catalogs: dict[str, dict[Any, dict[str, Any]]] = {}  # session -> chat -> its entry
        for ch, snap in view.items():
            if snap.from_seq is not None or self.kinds.get(ch) != "chat" or not isinstance(snap.state, dict):
                continue
            s_uri = self.obs.chat_session.get(ch) or ""
            catalog = catalogs.get(s_uri)
            if catalog is None:
                s_snap = view.get(s_uri) if s_uri else None
                session = s_snap.state if s_snap is not None else c.view.confirmed.get(s_uri)
                entries = session.get("chats") if isinstance(session, dict) else None
                catalog = catalogs[s_uri] = {}
                for e in entries if isinstance(entries, list) else []:
                    if isinstance(e, dict):
                        with contextlib.suppress(TypeError):  # an unhashable resource: no entry
                            catalog.setdefault(e.get("resource"), e)
            entry = catalog.get(ch)
            if entry is not None and "modifiedAt" in entry and "modifiedAt" in snap.state:
                view[ch] = Snapshot(ch, None, {**snap.state, "modifiedAt": entry["modifiedAt"]})
        return view

    def _profiles(self) -> dict[str, SimClient]:
        """One ready client per client profile (version × collections), in client order."""
        like: dict[str, SimClient] = {}
        for c in self.ready_clients():
            if c.view.collections is not None:
                like.setdefault(profile_key(c.view.version, c.view.collections), c)
        return like

    def _new_channels(self) -> set[str]:
        """Channels with an envelope or a snapshot since the last check, on any client."""
        out: set[str] = set()
        for c in self.clients.values():
            v = c.view
            out.update(e.channel for e in v.envelopes[self.obs.since_env.get(v.index, 0):])
            out.update(s.channel for s in v.snapshots[self._since_snap.get(v.index, 0):])
        return out

    async def _observer(self, key: str, like: SimClient) -> SimClient | None:
        obs = self.observers.get(key)
        if obs is not None and obs.ready:
            return obs
        self._observers_made += 1  # before any await: observers of several profiles start concurrently
        n = self._observers_made
        spec = ClientSpec(like.spec.offer, like.spec.collections, 0)
        reused = self.pool.take(("observer", self.url, spec)) if self.pool is not None else None
        obs = SimClient(self, -n, spec, reused.view.client_id if reused is not None else f"fz-{self.token}-observer-{n}")
        if reused is not None and reused.view.version == like.view.version:
            self._adopt(obs, reused)
            self.observers[key] = obs
            return obs
        if reused is not None:
            self.pool.give(("observer", self.url, spec), reused)  # type: ignore[union-attr]
        try:
            await obs.connect(self.url)
        except ConnectionLost as e:
            raise LiveFailure(TARGET_CRASH, f"observer: {e}") from None
        await obs.initialize()
        if obs.view.version != like.view.version:
            return None
        self.observers[key] = obs
        return obs

    async def _fresh_snapshots(self, only: set[str] | None) -> None:
        """Fresh snapshots, one observer per client profile, of every watched channel (`only`:
        of those that changed since the last ones; every `full_every` steps, all of them)."""
        like = self._profiles()
        self.obs.fresh = await self._fresh_snapshots_for(like, dict.fromkeys(like, only))

    async def _fresh_snapshots_for(self, like: dict[str, SimClient],
                                   wanted: dict[str, set[str] | None]) -> dict[str, dict[str, Snapshot]]:
        """Real fresh snapshots per profile of `like`: of the channels in `wanted[key]` that the
        profile's clients watch (None: all of them)."""
        keys = [k for k in like if k in wanted]
        results = await asyncio.gather(*(self._profile_snapshots(k, like[k], wanted[k]) for k in keys))
        return {key: snaps for key, snaps in zip(keys, results, strict=True) if snaps is not None}

    async def _profile_snapshots(self, key: str, like: SimClient, only: Iterable[str] | None) -> dict[str, Snapshot] | None:
        wanted = sorted(set().union(*(x.view.subscribed for x in self.ready_clients()
                                      if profile_key(x.view.version, x.view.collections) == key)))
        if only is not None:
            only = set(only)
            wanted = [ch for ch in wanted if ch in only]
            if not wanted:
                return {}
        obs = await self._observer(key, like)
        if obs is None or obs.conn is None:
            return None
        self.stats["realSnapshots"] += len(wanted)
        # pipelined: every subscribe sent in one write, every answer awaited, then the
        # unsubscribes of those answered in one write
        answers = await obs.requests("subscribe", [{"channel": ch} for ch in wanted])
        out: dict[str, Snapshot] = {}
        taken = [(ch, res) for ch, res in zip(wanted, answers, strict=True) if not isinstance(res, RpcError)]
        for i, (ch, res) in enumerate(taken):
            await obs.conn.notify("unsubscribe", {"channel": ch}, flush=i == len(taken) - 1)
            snap = res.get("snapshot") if isinstance(res, dict) else None
            if isinstance(snap, dict):
                out[ch] = Snapshot(ch, snap.get("fromSeq"), snap.get("state"))
        return out


#: Keys whose value a host projects differently per client profile: collections are flattened for
#: a peer without them (INV-040), working directories hidden from or singular for 0.6.0 (INV-046).
_PROJECTED_KEYS = frozenset({"attachments", "workingDirectories", "workingDirectory", "directory"})


def _projected_keys(value: Any, found: set[str] | None = None) -> set[str]:
    """The `_PROJECTED_KEYS` an action payload holds, at any depth."""
    found = set() if found is None else found
    if isinstance(value, dict):
        for k, v in value.items():
            if k in _PROJECTED_KEYS:
                found.add(k)
            _projected_keys(v, found)
    elif isinstance(value, list):
        for v in value:
            _projected_keys(v, found)
    return found
