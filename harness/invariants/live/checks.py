"""The live checks, in catalogue order, and `check_live` — what the live machine calls.

Each live check is registered under the catalogue id it checks; the catalogue entry (severity,
title, source) stays in the registry, where these entries say they are checked by the live
machine. A check that raises is a harness bug (`InvariantCheckError`), never a finding.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..base import Violation
from ..registry import REGISTRY, InvariantCheckError, sort_key
from . import handshake as hs
from . import scenarios as sc
from . import state as stt
from . import v100, wire
from .base import LiveCheck, LiveObservation

LIVE_CHECKS: tuple[LiveCheck, ...] = tuple(
    sorted(
        (
            LiveCheck("INV-022", stt.turn_ids_unique),
            LiveCheck("INV-026", stt.default_chat_in_catalog),
            LiveCheck("INV-031", sc.chat_subset),
            LiveCheck("INV-032", sc.primary_immutable),
            LiveCheck("INV-033", sc.absent_vs_empty),
            LiveCheck("INV-037", sc.collections_one_level),
            LiveCheck("INV-038", sc.collection_metadata),
            LiveCheck("INV-039", sc.collection_durable),
            LiveCheck("INV-040", sc.collection_degradation),
            LiveCheck("INV-041", wire.server_seq_increasing),
            LiveCheck("INV-042", stt.snapshot_replay),
            LiveCheck("INV-043", stt.coalesced_delivery),
            LiveCheck("INV-044", wire.rejections),
            LiveCheck("INV-045", stt.converges),
            LiveCheck("INV-046", wire.version_gating),
            LiveCheck("INV-047", wire.echo_fidelity),
            LiveCheck("INV-048", stt.summary_consistency),
            LiveCheck("INV-049", stt.annotations_not_empty),
            LiveCheck("INV-052", stt.session_status_aggregates),
            LiveCheck("INV-053", sc.client_dispatchable_only),
            LiveCheck("INV-X04", wire.malformed_frames),
            LiveCheck("INV-X05", sc.chat_attachment_pinned),
            LiveCheck("INV-X06", v100.durable_errors),
            LiveCheck("INV-X07", v100.turn_resume_checked),
            LiveCheck("INV-X08", v100.catalogue_status),
            LiveCheck("INV-X09", v100.change_counts),
            LiveCheck("INV-X10", v100.background_work),
            LiveCheck("INV-X11", v100.move_chat_placed),
            LiveCheck("INV-H01", hs.ping_answered),
            LiveCheck("INV-H02", hs.refused_before_initialize),
            LiveCheck("INV-H03", hs.second_initialize_refused),
            LiveCheck("INV-H04", hs.version_refused),
            LiveCheck("INV-H05", hs.unknown_method),
            LiveCheck("INV-H06", hs.bad_params),
            LiveCheck("INV-H07", stt.accepted_applied),
            LiveCheck("INV-H09", hs.bare_values),
            LiveCheck("INV-H10", hs.negotiation_answers),
            LiveCheck("INV-H11", sc.turns_reachable),
        ),
        key=lambda c: sort_key(c.id),
    )
)
LIVE_IDS = frozenset(c.id for c in LIVE_CHECKS)


def check_live(obs: LiveObservation, *, only: Iterable[str] | None = None,
               skip: Iterable[str] = ()) -> list[Violation]:
    """Run every live check (or `only` those ids, minus `skip`) on `obs`."""
    wanted = frozenset(only) if only is not None else None
    skipped = frozenset(skip)
    found: list[Violation] = []
    for chk in LIVE_CHECKS:
        if (wanted is not None and chk.id not in wanted) or chk.id in skipped:
            continue
        inv = REGISTRY.get(chk.id)
        severity = inv.severity if inv is not None else "violation"
        try:
            for message in chk.fn(obs):
                found.append(Violation(chk.id, severity, message))
        except Exception as e:
            raise InvariantCheckError(f"live check {chk.id} raised {type(e).__name__}: {e} — a harness bug") from e
    return found
