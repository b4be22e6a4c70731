"""G. Wire and live-host properties (INVARIANTS.md INV-041…048, 052), plus two harness additions.

They need a running host and clients, so no reducer step can check them: the live machine
(`harness/engine/live.py`) checks them after every step with the functions in
`live_checks.LIVE_CHECKS` (`live_wire`, `live_state`, `live_scenarios`). The entries here carry
the severity, source and statement; `elsewhere` says where the check runs.
"""

from __future__ import annotations

from .base import catalogue_entry

_LATER = "Needs a live host: checked by the live machine on recorded conversations."
LIVE = "the live machine (harness/invariants/live_checks.py), `ahp-fuzz run --target ws://…|host:embedded`"

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
    note=_LATER + " Checked on recorded envelope streams and reconnect replays.",
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
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
    elsewhere=LIVE,
)

INV_X04 = catalogue_entry(
    "INV-X04",
    "A frame that is not JSON gets -32700 and the connection survives",
    severity="violation",
    scope="wire",
    source="WIRE.md §10 (recommended host behaviour); JSON-RPC 2.0 §5.1 (Parse error, id null)",
    statement="A text frame that is not JSON is answered with error -32700 and id null, and the "
    "connection stays open (a ping afterwards is answered).",
    note="A harness addition (no INVARIANTS.md entry): a probe the live machine sends now and then.",
    elsewhere=LIVE,
)
INV_X05 = catalogue_entry(
    "INV-X05",
    "A chat attachment without endTurn is pinned to the latest completed turn",
    severity="divergence",
    scope="live",
    kinds={"chat"},
    source="0.7.0 specification/chat-channel.md §Pulling a chat into another chat (\"When it is "
    "omitted, the host pins the referenced chat's latest completed turn when accepting the message\")",
    statement="An accepted chat attachment sent without endTurn comes back (echo) with endTurn = the "
    "referenced chat's latest completed turn, when that chat has one.",
    note="A harness addition. The spec requires the pin but not that it shows on the wire; a host "
    "that pins internally differs from the embedded host here, hence severity divergence.",
    elsewhere=LIVE,
)
