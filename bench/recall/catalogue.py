"""The recall benchmark's ground truth (Magma-style, issue 32): targets, and per target every
known bug with the cause it must be reported under.

A bug's `expect` is its cause *key* (harness/causes: the transformation and its parameters; the
id is a hash of it, the same in every run). Each was confirmed by reading the defect (the
crafted ones are seeded here or in tests/; the wild one in the TS reducers' code, bench/results/
recall.md). `cls` is the class of miss it stands for (issue 32, "What hides each miss"):
1 behind another cause on the same step, 2 accepted but ignored, 3 bytes, 4 boundary values,
5 reach, 6 a slow probe retiring a kind, 7 a version the target announces, 8 load (a chunk-
bounded run's verdict at any load: measured as a pair of trials, not a bug).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PY = sys.executable
SERVE = f"/usr/bin/env PYTHONPATH={ROOT} {PY} -m harness.targets.reference_adapter"


@dataclass(frozen=True)
class Bug:
    name: str
    cls: int
    expect: tuple[str, ...]  # the cause key it must be reported under (or its first elements:
    #                          a failure's key ends in its error class, which names the target)
    note: str
    #: Keys an older harness reported the same bug under (its vocabulary had no `expect` yet),
    #: or a second key the bug shows under on other steps (a DUP, said so in recall.md):
    #: counted as found, shown apart in the table.
    also: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Target:
    name: str
    spec: str  # the --target value ({wild_ts} is filled from --wild-ts)
    bugs: tuple[Bug, ...]
    args: tuple[str, ...] = ()
    needs: str | None = None  # "wild-ts": only with --wild-ts
    kinds: tuple[str, ...] = field(default=())


def _mutant(name: str, kind: str, expect: tuple[str, ...], note: str, cls: int = 5, *args: str,
            also: tuple[tuple[str, ...], ...] = ()) -> Target:
    return Target(f"mutant:{name}", f"adapter:{SERVE} --model {ROOT}/tests/mutants.py:{name}{' ' if args else ''}{' '.join(args)}",
                  (Bug(name, cls, expect, note, also),))


def _crafted(name: str, bugs: tuple[Bug, ...]) -> Target:
    return Target(f"crafted:{name}", f"adapter:{SERVE} --model {ROOT}/bench/recall/targets.py:{name}", bugs)


DROPPED_EMPTY = ("dropped-empty",)
WRAP32 = ("int-wrap", "32")

TARGETS: tuple[Target, ...] = (
    # -- the seeded mutants of the reference model (tests/mutants.py) ---------------------------------
    _mutant("delta_ignores_turn_id", "chat", ("not-a-no-op", "chat/delta"), "chat/delta appends into the active turn whatever turnId it names",
            also=(("variant", "activeTurn.responseParts[].content"), ("value", "activeTurn.responseParts[].content"))),
    _mutant("delta_appends_undefined", "chat", ("not-a-no-op", "chat/toolCallDelta"),
            "a tool-call delta without `content` appends the text \"undefined\" (JavaScript's `partialInput + action.content`)",
            # on a step the model changes (an invocationMessage beside), the same conversion shows
            # at `partialInput`: a DUP
            also=(("value", "activeTurn.responseParts[].toolCall.partialInput"), ("added", "partialInput"))),
    _mutant("turn_end_keeps_open_tool_calls", "chat", ("unapplied", "chat/turnComplete"), "turnComplete leaves tool calls running"),
    _mutant("turn_end_no_duration_clamp", "chat", ("value", "turns[].duration"), "turnCancelled keeps a negative duration", 4),
    _mutant("turn_started_keeps_read", "chat", ("unapplied", "chat/turnStarted"), "turnStarted keeps IsRead", also=(("value", "status"), ("stale", "status"))),
    _mutant("truncated_unknown_clears_all", "chat", ("not-a-no-op", "chat/truncated"), "truncated with an unknown turnId clears the history"),
    _mutant("queue_emptied_to_list", "chat", ("added-empty",), "an emptied queue stays []"),
    _mutant("reorder_drops_unnamed", "chat", ("dropped", "queuedMessages[]"), "reorder drops the messages it does not name"),
    _mutant("confirm_from_any_status", "chat", ("not-a-no-op", "chat/toolCallConfirmed"), "toolCallConfirmed from running/streaming",
            # a confirm the mutant applies to a streaming call, on a step where the model changes
            # something else, or checked by a probe (INV-007): the call's status word (a DUP)
            also=(("variant", "activeTurn.responseParts[].toolCall.status"),)),
    _mutant("input_completed_keeps_status", "chat", ("stale", "status"), "inputCompleted skips the status recompute"),
    _mutant("chat_directory_set_on_absent_is_noop", "chat", ("unapplied", "chat/workingDirectorySet"), "a chat directory set on an absent subset is ignored"),
    _mutant("chat_removed_keeps_default", "session", ("unapplied", "session/chatRemoved"), "chatRemoved keeps defaultChat"),
    _mutant("input_needed_removed_back_to_idle", "session", ("stale", "status"), "inputNeededRemoved resets to Idle", also=(("value", "status"),)),
    _mutant("directory_set_duplicates", "session", ("not-a-no-op", "session/workingDirectorySet"), "workingDirectorySet duplicates", also=(("added", "workingDirectories[]"),)),
    _mutant("directory_removed_to_absent", "session", DROPPED_EMPTY, "an emptied directory list becomes absent"),
    _mutant("replace_moves_primary", "session", ("reorder",), "0.8.0's replace moves an earlier duplicate (a target announcing 0.7.0 and 0.8.0)", 7,
            "--announce-versions", "0.7.0,0.8.0"),
    # -- imitations of what real implementations did ------------------------------------------------
    Target("imitation:three-causes", f"adapter:{PY} {ROOT}/tests/three_cause_adapter.py --causes wrap,ignore,empty,strict --ignore chat/usage", (
        Bug("status-int32-wrap", 4, WRAP32, "a status ≥ 2^31 comes back wrapped to int32"),
        Bug("usage-ignored", 1, ("unapplied", "chat/usage"), "chat/usage is a no-op (behind the encoder loss on many steps)"),
        Bug("encoder-drops-empties", 1, DROPPED_EMPTY, "empty lists and objects dropped on encode"),
    )),
    Target("imitation:typed-client", f"adapter:{SERVE} --model {ROOT}/tests/mutants.py:typed_client_with_two_bugs", (
        Bug("typed-drops-empty-lists", 1, DROPPED_EMPTY, "omitempty encoder"),
        Bug("typed-delta-ignores-turn-id", 1, ("not-a-no-op", "chat/delta"), "chat/delta ignores turnId, behind the encoder loss",
            (("variant", "activeTurn.responseParts[].content"), ("value", "activeTurn.responseParts[].content"))),
        Bug("typed-turn-started-keeps-read", 1, ("unapplied", "chat/turnStarted"), "turnStarted keeps IsRead, behind the encoder loss", (("value", "status"), ("stale", "status"))),
    )),
    _crafted("ignores_integral_floats", (
        Bug("ignores-integral-floats", 2, ("ignores-integral-float",), "an action with `80.0` decoded as unknown: accepted, not applied"),
    )),
    _crafted("is_read_ignored_behind_encoder_loss", (
        Bug("is-read-ignored", 1, ("unapplied", "session/isReadChanged"), "isReadChanged ignored; the step also shows activeClients: [] lost"),
        Bug("is-read-encoder-loss", 1, DROPPED_EMPTY, "empty lists dropped on encode"),
    )),
    _crafted("modified_at_never_stamped", (
        Bug("modified-at-never-stamped", 1, ("stale", "modifiedAt"), "a chat's modifiedAt is never written"),
        Bug("modified-at-encoder-loss", 1, DROPPED_EMPTY, "empty lists dropped on encode"),
    )),
    _crafted("auth_required_ignored", (
        # on a call that matches nothing, AuthRequired's whole effect is the status recompute
        # (REDUCERS.md §5.1: even when the tool-call update is a no-op); ignoring the action there
        # reads as a skipped recompute (the Go client's bug shows the same step): a DUP key
        Bug("auth-required-ignored", 5, ("unapplied", "chat/toolCallAuthRequired"), "toolCallAuthRequired is a no-op",
            also=(("stale", "status"),)),
    )),
    _crafted("content_changed_ignored", (
        Bug("content-changed-ignored", 5, ("unapplied", "chat/toolCallContentChanged"), "toolCallContentChanged is a no-op"),
    )),
    _crafted("hangs_on_large_actions", (
        Bug("hangs-on-large-actions", 6, ("failure", "TARGET-TIMEOUT"), "an action over 600 bytes takes longer than the timeout"),
        Bug("draft-ignored-behind-a-hang", 6, ("unapplied", "chat/draftChanged"), "chat/draftChanged ignored in the kind the hang retires"),
    )),
    _crafted("objects_as_strings", (
        Bug("objects-as-strings", 1, ("type", "object", "string"), "open-ended objects written back as JSON text: one conversion"),
    )),
    Target("imitation:writes-ints-as-floats", f"adapter:{SERVE} --model {ROOT}/tests/mutants.py:writes_ints_as_floats", (
        Bug("ints-as-floats", 3, ("int-as-float",), "an encoder that writes integers as doubles (`3` → `3.0`)"),
    )),
    Target("imitation:writes-tool-status-twice",
           f"adapter:{SERVE} --model {ROOT}/tests/mutants.py:writes_tool_status_twice", (
        Bug("duplicate-json-key", 3, ("duplicate-json-key",), "an encoder that writes a tool call's `status` twice"),
    )),
    # -- the wild set ------------------------------------------------------------------------------
    Target("wild:ts-reducers", "ts:{wild_ts}", (
        Bug("ts-status-bit-31", 4, WRAP32, "SessionStatus through JavaScript's int32 bit operations (types/channels-*/reducer.ts)"),
    ), needs="wild-ts"),
    Target("wild:go-client", "adapter:{wild_go}", (
        Bug("go-omitempty", 1, DROPPED_EMPTY, "`omitempty` on optional fields and nil slices (ahptypes)"),
        Bug("go-refuses-integral-float", 2, ("refuses-integral-float",), "json: cannot unmarshal number 1.0 into int64"),
        Bug("go-first-namesake", 1, ("duplicate-id",), "updateToolCall returns after the first tool call of an id (ahp reducers)"),
        Bug("go-chat-updated-interactivity", 5, ("unapplied", "session/chatUpdated"), "PartialChatSummary has no interactivity"),
        Bug("go-status-not-recomputed", 1, ("stale", "status"), "a tool-call update or input completion that matches nothing skips the status recompute"),
        Bug("go-announces-0.8-without-replace", 7, ("unapplied", "session/workingDirectoryReplaced"),
            "ahptypes.ProtocolVersion is 0.8.0, yet clients/go has no session/workingDirectoryReplaced (an unknown action: a no-op)"),
        # found first by the run of 2026-12-03 (random draws); confirmed in the code
        Bug("go-agents-null", 1, ("not-a-no-op", "root/agentsChanged"),
            "root/agentsChanged copies `append([]AgentInfo(nil), a.Agents...)`: an empty list becomes nil, written `null` (`json:\"agents\"` has no omitempty)"),
        Bug("go-toggle-without-enablement", 7, ("not-a-no-op", "session/customizationToggled"),
            "SessionCustomizationToggledAction has `enabled bool` only: a 0.8.0 toggle `{id, enablement[]}` decodes as enabled=false",
            # on a step the model changes, the same bug shows as the `enabled` value (a DUP), of a
            # top-level customization or of a child one, or as `enabled` written onto a 0.8.0
            # customization that has none (r18, seed 2: `enabled: false` added)
            (("value", "customizations[].enabled"), ("value", "customizations[].children[].enabled"),
             ("added", "enabled"))),
    ), args=("--spec", "{wild_ts}"), needs="wild-go"),
)
