"""Named host bugs the embedded host can be started with (`start_host(defects=...)`).

Each defect is a realistic mistake a host implementer makes, switched on by name; the host's
clean path reads `if self.defects.has("subset-unchecked"): ...` at exactly one spot. The table
below is data: the live fuzz machine reads it to know which invariant should catch which bug,
and `ahp-fuzz host --list-defects` prints it. Names are stable: never rename one, only add.

`invariants` lists INVARIANTS.md ids the defect breaks; `rule` names the spec rule in words for
the defects no catalogue entry covers (a crash, a missing pin).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Defect:
    name: str
    description: str
    invariants: tuple[str, ...]
    rule: str
    #: What a client must set up for the defect to show (host options, peers); empty = nothing.
    needs: str = ""


def _d(name: str, description: str, invariants: str, rule: str, needs: str = "") -> Defect:
    return Defect(name, description, tuple(invariants.split()), rule, needs)


#: Every injectable defect, by name (insertion order is the documented order).
DEFECTS: dict[str, Defect] = {
    d.name: d
    for d in (
        _d(
            "subset-unchecked",
            "createChat accepts workingDirectories that are not in the session's set",
            "INV-031",
            "createChat.workingDirectories: host MUST reject entries not in the session set",
        ),
        _d(
            "chat-directory-unchecked",
            "chat/workingDirectorySet of a directory outside the session set is accepted",
            "INV-031 INV-044",
            "chat/workingDirectorySet: directory MUST already be in the session set",
        ),
        _d(
            "uri-normalized-subset",
            "the subset check compares normalized URIs (case, trailing slash) while sets use raw strings",
            "INV-031 INV-034",
            "URI identity is exact string identity (REDUCERS.md §8.7)",
        ),
        _d(
            "empty-subset-dropped",
            "a chat's workingDirectories [] is sent as absent on the wire (omitempty)",
            "INV-033",
            "absent (inherit all) and [] (no access) must stay distinct on the wire",
            needs="createChat or chat/workingDirectoryRemoved leaving workingDirectories: []",
        ),
        _d(
            "primary-removable",
            "session/workingDirectoryRemoved of the immutable primary (index 0) is accepted",
            "INV-032",
            "immutablePrimary: index 0 never changes for the session's lifetime",
            needs="host option immutable_primary=True (CLI --immutable-primary)",
        ),
        _d(
            "nested-collection-accepted",
            "a nested or empty collection attachment is accepted instead of rejected",
            "INV-037",
            "collections are one level deep and non-empty; such a message is rejected",
            needs="a connection declaring capabilities.attachmentCollections",
        ),
        _d(
            "collection-flatten-reordered",
            "collections are flattened for non-negotiating peers with members in reverse order",
            "INV-036 INV-040",
            "flattening preserves member order",
            needs="two connections on one chat: one declaring capabilities.attachmentCollections, one not",
        ),
        _d(
            "collection-meta-merged",
            "flattening for non-negotiating peers merges the collection's _meta into each member",
            "INV-038 INV-040",
            "collection and member _meta are preserved without merging",
            needs="two connections on one chat: one declaring capabilities.attachmentCollections, one not",
        ),
        _d(
            "rejected-still-applied",
            "a rejected client action is echoed with rejectionReason but still applied to state",
            "INV-044 INV-042",
            "a rejected action leaves the authoritative state unchanged",
        ),
        _d(
            "seq-repeat",
            "every fifth envelope reuses the previous serverSeq",
            "INV-041",
            "serverSeq strictly increases across all channels",
            needs="at least five envelopes",
        ),
        _d(
            "echo-drops-origin",
            "accepted echoes are broadcast without origin (look server-originated)",
            "INV-047 INV-045",
            "an echo carries the dispatcher's {clientId, clientSeq}",
        ),
        _d(
            "echo-drops-clientseq",
            "echo origin carries clientId but not clientSeq",
            "INV-047 INV-045",
            "an echo carries the dispatcher's {clientId, clientSeq}",
        ),
        _d(
            "replay-skips-action",
            "reconnect replay leaves out the first envelope above lastSeenServerSeq",
            "INV-041 INV-042",
            "replay returns exactly the envelopes with serverSeq > lastSeenServerSeq",
            needs="a reconnect with lastSeenServerSeq below the latest envelope of a subscribed channel",
        ),
        _d(
            "crash-on-invalid-json",
            "the connection handler dies (close 1011, no -32700) on a frame that is not JSON",
            "",
            "WIRE.md §10: a non-JSON frame gets -32700 with id null; the connection stays open",
        ),
        _d(
            "chat-attachment-unpinned",
            "a chat attachment without endTurn is accepted without pinning the latest completed turn",
            "",
            "MessageChatAttachment: without endTurn the host MUST resolve and pin the latest completed turn",
            needs="a chat with a completed turn, attached (without endTurn) in another chat's message",
        ),
        _d(
            "server-only-accepted",
            "server-only action types (e.g. session/ready, chat/delta) are accepted from clients",
            "INV-053 INV-044",
            "a host accepts only client-dispatchable types from clients",
        ),
        _d(
            "version-gate-leak",
            "0.7.0 action types (workingDirectory*) are sent to connections that negotiated 0.6.0",
            "INV-046",
            "a host never sends an action type newer than the negotiated version",
            needs="a connection that negotiated 0.6.0 subscribed to a session where a 0.7.0 peer changes directories",
        ),
        _d(
            "summary-not-synced",
            "chat status/modifiedAt changes are not mirrored into the session's chat catalog",
            "INV-048",
            "ChatState and its ChatSummary in the session MUST stay consistent",
        ),
        _d(
            "cancel-without-turn-accepted",
            "chat/turnCancelled with no active turn is echoed as accepted",
            "INV-044",
            "chat/turnCancelled with no active turn MUST be rejected",
        ),
        # -- imitations of lenient hosts in the wild (issue 16): handshake, liveness, delivery --
        _d(
            "no-ping",
            "ping is answered with -32601 (Method not found) instead of null",
            "INV-H01",
            "WIRE.md §3.1/§4.1: ping MUST be answered (with null), before initialize too",
        ),
        _d(
            "dies-on-null",
            "a frame that is the bare JSON value null kills the host (the process exits with status 70)",
            "TARGET-DIED INV-H09",
            "WIRE.md §10 / JSON-RPC 2.0: a frame that is not a request object gets -32600 with id null",
        ),
        _d(
            "never-applies",
            "client actions are validated and echoed as accepted but never applied to the state",
            "INV-H07",
            "guide/actions.md: an accepted action is applied; snapshots show it",
        ),
        _d(
            "echo-to-newest-socket",
            "echoes of client actions go only to the newest connection, not to the channel's subscribers",
            "INV-045 INV-047",
            "an echo goes to every subscriber of the channel, the dispatcher included",
        ),
        _d(
            "version-not-offered",
            "initialize negotiates the host's newest version whatever the client offered",
            "INV-046 INV-H04",
            "initialize: protocolVersion MUST be one of the offered entries (else -32005)",
            needs="a client that does not offer the host's newest version",
        ),
        _d(
            "claims-unknown-version",
            "initialize answers protocolVersion 0.5.0 — a version nobody offered, with no rules in "
            "ahp-fuzz — whatever the client offered, and then serves 0.7.0 state",
            "INV-046 INV-H04",
            "initialize: protocolVersion MUST be one of the offered entries (else -32005)",
        ),
        _d(
            "older-only",
            "the host speaks only protocol 0.3.0: any other offer is refused with -32005 naming no "
            "version, and a 0.3.0 connection still gets 0.7.0 state (workingDirectories)",
            "INV-046",
            "a host MUST NOT send what is newer than the negotiated version; -32005 data.supportedVersions "
            "(required in newer specs)",
        ),
        _d(
            "rebinds-on-reinitialize",
            "a second initialize on a connection re-binds it instead of failing",
            "INV-H03",
            "initialize MUST be the first request, once per connection; a second one is an error (-32600)",
        ),
        _d(
            "serves-before-initialize",
            "requests other than ping/initialize/reconnect are served before initialize",
            "INV-H02",
            "initialize MUST be first: other requests before it are errors (-32601)",
        ),
        # -- 1.0.0 behaviour (issue 34): a host started with version=1.0.0 (the caret ranges) --
        _d(
            "turn-error-not-durable",
            "a 1.0.0 chat/error is stored the 0.8.0 way: Turn.error set, its ErrorResponsePart not appended",
            "INV-X06",
            "CHANGELOG 0.9.0: turn errors are durable response parts (chat/error appends its part)",
            needs="a 1.0.0 host whose agent ends a turn with a resumable error",
        ),
        _d(
            "turn-resume-unchecked",
            "chat/turnResume is accepted for a turn that is not the latest resumable errored turn",
            "INV-X07",
            "ChatTurnResumeAction: the turn MUST be the latest turn, in state error, ending in a resumable error",
        ),
        _d(
            "read-status-not-mirrored",
            "the chat's IsRead / IsArchived bits are not mirrored into its session's catalogue entry",
            "INV-X08",
            "SessionChatSummary.status includes the IsRead and IsArchived flags, matching ChatSummary.status",
            needs="chat/isReadChanged or chat/isArchivedChanged on a 1.0.0 host",
        ),
        _d(
            "change-counts-lines-only",
            "the catalogue's per-chat change counts carry additions and deletions with files: 0",
            "INV-X09",
            "ChangesSummary: additions and deletions are totals across all changed files",
            needs="a 1.0.0 host whose agent reports change counts",
        ),
        _d(
            "background-work-appended",
            "chat/backgroundWorkSet appends the entry instead of replacing the one with its id",
            "INV-X10",
            "BackgroundWork.id is unique within the owning chat; backgroundWorkSet upserts by id",
            needs="a 1.0.0 host whose agent updates a background shell",
        ),
        _d(
            "move-chat-misplaced",
            "moveChat within a session places the chat before its `after` anchor, not after it",
            "INV-X11",
            "MoveChatParams: the optional after anchor positions the requested chat (right after it)",
            needs="moveChat of a movable chat with an after anchor (a 1.0.0 client)",
        ),
        _d(
            "caret-unbounded",
            "the caret range ^1.0.0 is read as >=1.0.0: initialize accepts 2.0.0 or 99.0.0",
            "INV-H04",
            "1.0.0 negotiation: the highest offered version within ^1.0.0 or ^0.9.0, else -32005",
        ),
        _d(
            "refusal-without-versions",
            "the 1.0.0 host's -32005 refusal carries no data.supportedVersions",
            "INV-H10",
            "UnsupportedProtocolVersionErrorData.supportedVersions is required (1.0.0)",
        ),
        # -- issue 33 (live hosts): imitations of what real hosts did — begin --
        _d(
            "no-frame-catch",
            "no per-frame catch: any frame that is not a request object (not JSON, null, a number, a "
            "string, an array …) kills the connection's handling (close 1011, no -32700/-32600)",
            "INV-X04 INV-H09",
            "WIRE.md §10 / JSON-RPC 2.0: a bad frame gets an error with id null; the connection stays open",
        ),
        _d(
            "closes-on-unknown-channel",
            "a dispatchAction on a channel the host does not have closes the connection (1011)",
            "TARGET-CRASH",
            "WIRE.md §5.3: an action for a non-existent channel MUST be silently ignored",
        ),
        _d(
            "title-in-summary",
            "session/titleChanged is written to summary.title (0.3.0's reducer, fixture 030), the "
            "session's title is left as it was",
            "INV-042 INV-H07",
            "0.4.0 and later: session/titleChanged sets SessionState.title (REDUCERS.md, fixture 030)",
        ),
        _d(
            "turns-on-session-channel",
            "turns only on the session channel (the 0.3.0 family): chat/turnStarted on a chat channel "
            "is rejected",
            "INV-H11",
            "0.4.0 and later: turns live on the chat channel; a valid chat/turnStarted is applied",
        ),
        _d(
            "chat-is-the-session",
            "a session's one chat is the session itself: its catalog entry and defaultChat name the "
            "session's URI (a session state, no chat channel), and the agent announces no multipleChats",
            "INV-048",
            "a chat is a channel of its own with a ChatState; a session's catalog names its chats",
        ),
        # -- issue 33 (live hosts) — end --
        # -- command-level defects of the file surface (harness/host/resources.py) --
        _d(
            "resource-read-traversal",
            "resourceRead confines by a string prefix of the raw path, so `..` segments escape",
            "",
            "host policy (docs/commands.md): resource* stays inside the sessions' working directories",
        ),
        _d(
            "resource-encoded-traversal",
            "resourceList checks confinement before percent-decoding (`%2e%2e` escapes)",
            "",
            "host policy (docs/commands.md): resource* stays inside the sessions' working directories",
        ),
        _d(
            "resource-symlink-write",
            "resourceWrite normalises `..` but does not resolve symlinks (writes through a link out of the tree)",
            "",
            "host policy (docs/commands.md): resource* stays inside the sessions' working directories",
        ),
        _d(
            "resource-prefix-confusion",
            "resourceResolve admits any path that starts with a root string (…/alpha admits …/alpha-private)",
            "",
            "host policy (docs/commands.md): resource* stays inside the sessions' working directories",
        ),
        _d(
            "resource-read-dir-crash",
            "resourceRead of a directory raises an unhandled error (-32603) instead of a documented code",
            "",
            "JSON-RPC: an error answer with a defined code; -32603 means the host itself broke",
        ),
        _d(
            "resource-createonly-clobber",
            "resourceWrite with createOnly truncates an existing file before failing with -32010",
            "",
            "createOnly: the server MUST fail if the file exists instead of overwriting it",
        ),
    )
}


class UnknownDefect(ValueError):
    """A defect name that is not in `DEFECTS`."""


class DefectSet:
    """The defects a host runs with; `has(name)` is the one switch the host code reads."""

    __slots__ = ("_names",)

    def __init__(self, names: Iterable[str] = ()):
        names = frozenset(names)
        unknown = sorted(names - DEFECTS.keys())
        if unknown:
            raise UnknownDefect(
                f"unknown defect(s) {', '.join(unknown)} (known: {', '.join(DEFECTS)})"
            )
        self._names = names

    def has(self, name: str) -> bool:
        if name not in DEFECTS:  # a typo in the host code must not silently disable a defect
            raise UnknownDefect(f"host code asks for an unknown defect {name!r}")
        return name in self._names

    @property
    def names(self) -> frozenset[str]:
        return self._names

    def __bool__(self) -> bool:
        return bool(self._names)

    def __repr__(self) -> str:
        return f"DefectSet({sorted(self._names)!r})"
