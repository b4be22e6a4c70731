"""G. Wire and live-host properties (INVARIANTS.md INV-041…048, 052), plus two harness additions.

They need a running host and clients, so no reducer step can check them: the live machine
(`harness/live/machine.py`) checks them after every step with the functions in
`checks.LIVE_CHECKS` (`wire`, `state`, `scenarios`, `handshake`). The entries here carry
the severity, source and statement; `elsewhere` says where the check runs.
"""

from __future__ import annotations

from ..base import catalogue_entry

_LATER = "Needs a live host: checked by the live machine on recorded conversations."
LIVE = "the live machine (harness/invariants/live/checks.py), `ahp-fuzz run --target ws://…|host:embedded`"

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

# -- a host in the wild (issue 16): the handshake, liveness and error codes WIRE.md requires ----
# Checked on probes the live machine sends (`handshake` ops, the ping barrier, bare JSON values):
# each is a plain live-run finding, never a harness crash.

_WILD = "A harness addition (issue 16): checked by the live machine's probes (live/wild.py)."

INV_H01 = catalogue_entry(
    "INV-H01",
    "ping is answered with null",
    severity="violation",
    scope="wire",
    source="WIRE.md §1 (keep-alive), §3.1 and §4.1 (ping: MUST answer, even before initialize)",
    statement="A ping request is answered with result null, before and after initialize.",
    note=_WILD + " When ping is refused the barrier falls back to a timed drain.",
    elsewhere=LIVE,
)
INV_H02 = catalogue_entry(
    "INV-H02",
    "Requests before initialize are refused",
    severity="divergence",
    scope="wire",
    source="WIRE.md §3.1 (initialize MUST be first; VS Code answers -32601)",
    statement="On a fresh connection, a request other than ping, initialize or reconnect is answered "
    "with an error, not served.",
    note=_WILD + " Severity divergence (issue 23): \"initialize MUST be first\" binds the client; the spec "
    "words no host MUST for what comes before it, and reference hosts refuse (VS Code: -32601).",
    elsewhere=LIVE,
)
INV_H03 = catalogue_entry(
    "INV-H03",
    "A second initialize is refused",
    severity="divergence",
    scope="wire",
    source="WIRE.md §3.1 (initialize is the first request of a connection; interop host: -32600)",
    statement="A second initialize on an initialized connection is answered with an error and does "
    "not re-bind the connection.",
    note=_WILD + " Severity divergence (issue 23): the spec has no host MUST for a second initialize; "
    "reference hosts refuse it (the interop host: -32600), pi-ahp re-binds.",
    elsewhere=LIVE,
)
INV_H04 = catalogue_entry(
    "INV-H04",
    "Version negotiation refuses what it cannot speak",
    severity="violation",
    scope="wire",
    source="WIRE.md §3.1 (no acceptable version → -32005 UnsupportedProtocolVersion; "
    "protocolVersion MUST be one of the offered entries)",
    statement="initialize offering only versions the host does not speak is answered with -32005; an "
    "empty protocolVersions list is answered with an error; neither negotiates a version.",
    note=_WILD,
    elsewhere=LIVE,
)
INV_H10 = catalogue_entry(
    "INV-H10",
    "Negotiation answers are well-formed",
    severity="violation",
    scope="wire",
    source="1.0.0 commands schema (InitializeResult.protocolVersion: required, a MAJOR.MINOR.PATCH "
    "entry of the offer); errors schema (UnsupportedProtocolVersionErrorData.supportedVersions: "
    "required since 1.0.0, each a version or a SemVer range); CHANGELOG 1.0.0 (malformed offers "
    "reported explicitly)",
    statement="An initialize result carries protocolVersion, a MAJOR.MINOR.PATCH string; a -32005 "
    "refusal's data.supportedVersions is an array of versions or SemVer ranges (required where the "
    "host speaks 1.0.0).",
    note="A harness addition (issue 34): the live clients judge each answer to their initialize and "
    "the negotiation before the run. A well-formed version that was not offered is INV-046's.",
    elsewhere=LIVE,
)
INV_H05 = catalogue_entry(
    "INV-H05",
    "Unknown methods get -32601",
    severity="violation",
    scope="wire",
    source="JSON-RPC 2.0 §5.1 (-32601 Method not found); WIRE.md §2",
    statement="A request for a method the host does not have is answered with error -32601.",
    note=_WILD,
    elsewhere=LIVE,
)
INV_H06 = catalogue_entry(
    "INV-H06",
    "Invalid params get -32602",
    severity="divergence",
    scope="wire",
    source="JSON-RPC 2.0 §5.1 (-32602 Invalid params); WIRE.md §2 (params always carry a channel URI "
    "string); §10",
    statement="A request whose params are invalid (a channel that is not a string) is answered with "
    "error -32602.",
    note=_WILD + " Severity divergence: JSON-RPC names the code, AHP does not make it a MUST.",
    elsewhere=LIVE,
)
INV_H07 = catalogue_entry(
    "INV-H07",
    "An accepted action is applied",
    severity="violation",
    scope="live",
    source="guide/actions.md §Action Envelope (an envelope without rejectionReason is applied); "
    "guide/reconciliation.md",
    statement="A client action echoed without rejectionReason, that the reference model says "
    "changes the channel's state, shows in the host's next snapshot of that channel.",
    note=_WILD + " Reported instead of an INV-042 mismatch when the snapshot is exactly the state "
    "without the accepted client actions. An echo counts wherever it arrived: one that went to "
    "another connection of the run (INV-045's finding) still shows what the host accepted.",
    elsewhere=LIVE,
)
INV_H09 = catalogue_entry(
    "INV-H09",
    "A JSON value that is not a request gets -32600 and the connection survives",
    severity="violation",
    scope="wire",
    source="JSON-RPC 2.0 §4, §5.1 (-32600 Invalid Request, id null; an empty batch is invalid); "
    "WIRE.md §1 (AHP never uses batches) and §10",
    statement="A frame that is valid JSON but not a request object (null, a number, a string, a "
    "boolean, an array) is answered with -32600 and id null (an array: -32600 or silence), and the "
    "connection stays open.",
    note=_WILD,
    elsewhere=LIVE,
)
INV_H11 = catalogue_entry(
    "INV-H11",
    "A turn can be started on a chat channel",
    severity="divergence",
    scope="live",
    kinds={"chat"},
    source="0.4.0 CHANGELOG (turns moved from the session channel to `ahp-chat:` channels); "
    "specification/chat-channel.md (chat/turnStarted is client-dispatchable)",
    statement="A host speaking 0.4.0 or later accepts some chat/turnStarted on a chat channel: a run "
    "whose every chat/turnStarted (two or more) was rejected reaches no turn on this host.",
    note="A harness addition (issue 33): a host that keeps turns on the session channel (the 0.3.0 "
    "family) rejects them all. Severity divergence: the validation tables let a host reject a turn "
    "start; rejecting every one leaves turns, tool calls and attachments unreachable.",
    elsewhere=LIVE,
)
