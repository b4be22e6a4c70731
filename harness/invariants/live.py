"""G. Wire and live-host properties (INVARIANTS.md INV-041…048, 052): listed, not yet checkable.

These need a running host and clients (the embedded reference host and the live target come in a
later issue). They are registered so the catalogue is complete and honest about coverage.
"""

from __future__ import annotations

from .base import catalogue_entry

_LATER = "Needs a live host (later issue)."

INV_041 = catalogue_entry(
    "INV-041",
    "serverSeq is strictly increasing",
    severity="violation",
    scope="wire",
    source='guide/actions.md ("Monotonically increasing sequence number"); Snapshot.fromSeq doc; '
    "specification/lifecycle.md §Reconnection",
    statement="On one connection, successive action envelopes have strictly increasing serverSeq; "
    "every envelope after a snapshot of C has serverSeq > fromSeq; replay returns exactly the "
    "envelopes above lastSeenServerSeq.",
    note=_LATER + " Checked on recorded envelope streams.",
)
INV_042 = catalogue_entry(
    "INV-042",
    "Snapshot + replay equivalence",
    severity="violation",
    scope="live",
    source="specification/lifecycle.md; guide/reconciliation.md; doctrine",
    statement="Reducing snapshot S1 with every non-rejected envelope of C between f1 and f2 "
    "yields snapshot S2 (modifiedAt aside unless the host clock is injected).",
    note=_LATER,
)
INV_043 = catalogue_entry(
    "INV-043",
    "Coalesced delivery reduces to the same state",
    severity="violation",
    scope="live",
    source="specification/subscriptions.md §Delivery preferences",
    statement="For any delivery.maxLatencyMs, the state a client reduces from the delivered stream "
    "equals the state from immediate delivery at every quiescent point.",
    note=_LATER,
)
INV_044 = catalogue_entry(
    "INV-044",
    "Rejected actions are echoed and not applied",
    severity="violation",
    scope="live",
    source="guide/actions.md §Action Envelope; guide/reconciliation.md step 3; server validation "
    "tables of session-channel.md and chat-channel.md; guide/terminals.md",
    statement="A client action the host does not accept is echoed with the same action, the "
    "client's origin and a non-empty rejectionReason; the state is unchanged; an action for a "
    "non-existent channel gets no echo.",
    note=_LATER,
)
INV_045 = catalogue_entry(
    "INV-045",
    "Write-ahead reconciliation converges",
    severity="violation",
    scope="live",
    source="guide/reconciliation.md (server-wins; reconnect clears pending); doctrine",
    statement="Clients keeping confirmed + pending per guide/reconciliation.md end, once all their "
    "dispatches are echoed, with optimistic == confirmed == host state.",
    note=_LATER,
)
INV_046 = catalogue_entry(
    "INV-046",
    "Version gating",
    severity="violation",
    scope="wire",
    source="specification/versioning.md; types/version/registry.ts (ACTION_INTRODUCED_IN)",
    statement="On a connection negotiated at V the host never sends an action or notification "
    "introduced after V, and a conforming client never dispatches one.",
    note=_LATER + " The reducer side (newer types are no-ops) is INV-004.",
)
INV_047 = catalogue_entry(
    "INV-047",
    "Echo fidelity and clientSeq",
    severity="violation",
    scope="wire",
    source="common/actions.ts ActionOrigin; guide/reconciliation.md",
    statement="Every client action is echoed at most once with the dispatcher's clientId and "
    "clientSeq; a client's clientSeq values strictly increase and echoes arrive in that order.",
    note=_LATER,
)
INV_048 = catalogue_entry(
    "INV-048",
    "Summary consistency across channels",
    severity="violation",
    scope="live",
    kinds={"session", "chat"},
    source='ChatState doc ("Producers MUST keep the two representations consistent"); '
    "specification/chat-channel.md §State",
    statement="At quiescence the ChatSummary fields inlined in each ChatState equal the session's "
    "chats entry for it.",
    note=_LATER,
)
INV_052 = catalogue_entry(
    "INV-052",
    "Session status reflects the chats",
    severity="warning",
    scope="live",
    kinds={"session"},
    source='SessionSummary doc §Aggregation across chats ("Producers SHOULD follow these rules"); '
    "specification/session-channel.md §Chat aggregation",
    statement="At quiescence the session status activity equals the chat aggregation rule "
    "(default chat's activity, promoted to InputNeeded/Error if any chat needs input/errored).",
    note=_LATER + " Expected to be unattainable through 0.6.0 session actions once inputNeeded was "
    "used (INV-014, R§11 item 2).",
)
