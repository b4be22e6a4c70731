"""The strategy inventory: every public strategy, what it targets, and how to check it.

`ahp-fuzz strategies` prints this table; `tests/test_strategies_inventory.py` iterates over it.
An entry says what its examples must satisfy:

* a **valid** entry lists the schema definitions its examples validate against
  (`schema_checks`) and the reducer calls the reference model must accept without raising
  (`model_checks`);
* an **adversarial** entry states a `claim` each example must satisfy (e.g. "nesting depth
  >= 2", "different string, RFC-3986-equal"); a claim may use the spec's schemas when a spec
  directory is available (`schemas` is None otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

from hypothesis import strategies as st

from harness.reference import Profile, payloads
from harness.spec.versions import (
    ACTION_INTRODUCED_IN,
    KINDS,
    PINNED_VERSION,
    is_known_to,
    kind_of,
    kinds_of,
)

from . import actions as act
from . import attachments as att
from . import messages as msg
from . import sequences as seq
from . import states as sts
from . import uris
from ._common import Json
from .schema import STATE_DEFINITIONS, SchemaSet

Nature = Literal["valid", "adversarial"]
SchemaChecks = Callable[[Any], list[tuple[str, Any]]]
ModelChecks = Callable[[Any], list[tuple[str, Json, Json]]]
Claim = Callable[[Any, SchemaSet | None], bool]


@dataclass(frozen=True)
class Entry:
    name: str
    factory: Callable[[], st.SearchStrategy[Any]]
    targets: str
    nature: Nature
    schema_checks: SchemaChecks | None = None
    model_checks: ModelChecks | None = None
    claim: Claim | None = None
    collections: bool = False  # validate against the schemas + the collection draft
    cost: int = 1  # relative generation cost: tests draw fewer examples of costly entries

    @property
    def module(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class StateAction:
    """An example of a state-aware strategy: the state, and an action drawn against it."""

    kind: str
    state: Json
    action: Json


#: The kinds of the pinned version, whose schemas ($AHP_SPEC_DIR) the entries validate against.
PINNED_KINDS: Final = kinds_of(PINNED_VERSION)


def _as(definition: str) -> SchemaChecks:
    return lambda v: [(definition, v)]


def _action_checks(x: StateAction) -> list[tuple[str, Any]]:
    return [(STATE_DEFINITIONS[x.kind], x.state), (f"action:{x.action['type']}", x.action)]


def _action_model(x: StateAction) -> list[tuple[str, Json, Json]]:
    return [(x.kind, x.state, x.action)]


def _with_state(
    kind: str, actions: Callable[[Json], st.SearchStrategy[Json]]
) -> Callable[[], st.SearchStrategy[StateAction]]:
    return lambda: sts.states(kind).flatmap(
        lambda s: actions(s).map(lambda a: StateAction(kind, s, a))
    )


def _sequence_checks(x: seq.ActionSequence) -> list[tuple[str, Any]]:
    return [
        (STATE_DEFINITIONS[x.kind], x.initial),
        *((f"action:{a['type']}", a) for a in x.actions),
    ]


def _sequence_model(x: seq.ActionSequence) -> list[tuple[str, Json, Json]]:
    out, state = [], x.initial
    for a in x.actions:
        out.append((x.kind, state, a))
        state = seq.fold(x.kind, state, [a])
    return out


def _scenario_checks(x: seq.MultirootScenario) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [
        ("SessionState", x.session),
        *(("ChatState", c) for c in x.chats.values()),
    ]
    out += [
        (f"action:{s.action['type']}", s.action)
        for s in x.steps
        if is_known_to(s.action["type"], "0.7.0")
    ]
    return out


def _scenario_model(x: seq.MultirootScenario) -> list[tuple[str, Json, Json]]:
    x.run()  # raises on a reducer error
    return []


# --- model checks for data (not action) strategies: carry the value in a message-bearing
# action, or end a turn that holds it, and let the reference model reduce that -------------------

_CHAT: Json = {
    "resource": "ahp-chat:/c1",
    "title": "t",
    "status": 8,
    "modifiedAt": "1970-01-01T00:00:00.000Z",
    "turns": [],
}
_TURN: Json = {
    "id": "t1",
    "startedAt": "1970-01-01T00:00:00.000Z",
    "message": {"text": "hi", "origin": {"kind": "user"}},
    "responseParts": [],
}


def _with_parts(parts: list[Json]) -> Json:
    return {**_CHAT, "activeTurn": {**_TURN, "responseParts": parts}}


def _end_turn(state: Json) -> tuple[str, Json, Json]:
    return (
        "chat",
        state,
        {"type": "chat/turnComplete", "turnId": state["activeTurn"]["id"], "duration": 5},
    )


def _message_model(m: Json) -> list[tuple[str, Json, Json]]:
    return [
        (
            "chat",
            _CHAT,
            {
                "type": "chat/turnStarted",
                "turnId": "t1",
                "startedAt": "1970-01-01T00:00:01.000Z",
                "message": m,
            },
        ),
        (
            "chat",
            _CHAT,
            {"type": "chat/pendingMessageSet", "kind": "queued", "id": "m1", "message": m},
        ),
        ("chat", _CHAT, {"type": "chat/draftChanged", "draft": m}),
    ]


def _attachment_model(a: Json) -> list[tuple[str, Json, Json]]:
    return _message_model({"text": "see attached", "origin": {"kind": "user"}, "attachments": [a]})


def _part_model(part: Json) -> list[tuple[str, Json, Json]]:
    return [
        ("chat", _with_parts([]), {"type": "chat/responsePart", "turnId": "t1", "part": part}),
        _end_turn(_with_parts([part])),
    ]


def _tool_call_model(tc: Json) -> list[tuple[str, Json, Json]]:
    return _part_model({"kind": "toolCall", "toolCall": tc})


def _request_model(r: Json) -> list[tuple[str, Json, Json]]:
    return [("chat", _with_parts([]), {"type": "chat/inputRequested", "request": r})]


def _active_turn_model(t: Json) -> list[tuple[str, Json, Json]]:
    return [
        _end_turn({**_CHAT, "activeTurn": t}),
        ("chat", {**_CHAT, "activeTurn": t}, {"type": "chat/truncated"}),
    ]


def _turn_model(t: Json) -> list[tuple[str, Json, Json]]:
    return [("chat", _CHAT, {"type": "chat/turnsLoaded", "turns": [t]})]


#: One probing action per state kind (touches the state broadly; the state-aware action
#: entries exercise every action type on these states).
_STATE_PROBES: Mapping[str, Json] = MappingProxyType(
    {
        "root": {"type": "root/configChanged", "config": {"k": 1}},
        "session": {"type": "session/isReadChanged", "isRead": True},
        "chat": {"type": "chat/truncated"},
        "terminal": {"type": "terminal/data", "data": "x"},
        "changeset": {"type": "changeset/statusChanged", "status": "ready"},
        "annotations": {"type": "annotations/entryRemoved", "annotationId": "a1", "entryId": "e1"},
        "resourceWatch": {
            "type": "resourceWatch/changed",
            "changes": {"items": [{"uri": "file:///a", "type": "added"}]},
        },
        "automation": {"type": "automation/removed", "resource": "ahp-automation:/a1"},
        "automationRun": {"type": "automationRun/sessionSet", "session": "ahp-session:/s9"},
        "canvas": {"type": "canvas/stateChanged", "canvas": {"instanceId": "i", "extensionId": "e", "canvasId": "c"}},
    }
)


def _state_model(kind: str) -> ModelChecks:
    return lambda state: [(kind, state, _STATE_PROBES[kind])]


# --- claims --------------------------------------------------------------------------------------


def _variant_claim(v: uris.UriVariant, _: SchemaSet | None) -> bool:
    if v.same_string:
        return False
    expected = uris.RFC3986_EQUAL_BY_CLASS[v.cls]
    if v.rfc3986_equal != expected:
        return False
    if v.cls is uris.UriClass.VERY_LONG:
        return len(v.variant) > 1000
    if v.cls is uris.UriClass.CONTROL_CHARACTERS:
        return any(ord(c) < 0x20 or ord(c) == 0x7F or c == " " for c in v.variant)
    return True


def _schema_invalid(a: Json, schemas: SchemaSet | None) -> bool:
    if schemas is None:
        return True
    t = a.get("type")
    if not isinstance(t, str) or t not in schemas.action_definitions():
        return not schemas.is_valid("StateAction", a)
    return not schemas.is_valid(schemas.action_definition(t), a)


def _missing_claim(a: Json, schemas: SchemaSet | None) -> bool:
    t = a.get("type")
    if t is None:
        return _schema_invalid(a, schemas)
    return bool(act.missing_required(a, t)) and _schema_invalid(a, schemas)


def _missing_inner_claim(a: Json, schemas: SchemaSet | None) -> bool:
    """The model's payload rules find a required field absent (at the top, where the action had
    nothing required one level in), and the schema agrees."""
    if not isinstance(a.get("type"), str):
        return _schema_invalid(a, schemas)
    return payloads.problem(a) is not None and _schema_invalid(a, schemas)


def _extra_claim(a: Json, schemas: SchemaSet | None) -> bool:
    extra = [k for k in a if k in act.EXTRA_FIELD_NAMES]
    if not extra:
        return False
    if schemas is None:
        return True
    declared = _declared_properties(schemas, schemas.action_definition(a["type"]))
    return any(k not in declared for k in extra)


def _declared_properties(schemas: SchemaSet, name: str) -> set[str]:
    body = schemas.defs[name]
    if "oneOf" in body:
        out: set[str] = set()
        for m in body["oneOf"]:
            out |= _declared_properties(schemas, m["$ref"].rsplit("/", 1)[1])
        return out
    return set(body.get("properties", {}))


def _stale_claim(x: StateAction, _: SchemaSet | None) -> bool:
    """Turn-scoped chat actions never name the active turn."""
    active = (x.state.get("activeTurn") or {}).get("id")
    if (
        "turnId" in x.action
        and x.action["type"] not in ("chat/turnStarted", "chat/truncated")
        and active is not None
    ):
        return bool(x.action["turnId"] != active)
    return True


def _deep_claim(a: Json, _: SchemaSet | None) -> bool:
    return act.json_depth(a) >= 64


def _longest_string(v: Any) -> int:
    best, stack = 0, [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            best = max(best, len(x))
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return best


def _scenario_claim(x: seq.MultirootScenario, _: SchemaSet | None) -> bool:
    """What each multiroot family promises about its steps."""
    session_dirs = x.session.get("workingDirectories") or []
    actions = [s.action for s in x.steps]
    if x.family == "immutable-primary":
        last = actions[-1]
        return x.capability.get("immutablePrimary") is True and last == {
            "type": "session/workingDirectoryRemoved",
            "directory": session_dirs[0],
        }
    if x.family == "dangling-subset":
        d = x.notes["directory"]
        return actions[0]["directory"] == d and d in x.chats[x.notes["chat"]].get(
            "workingDirectories", []
        )
    if x.family == "equivalent-spellings":
        v: uris.UriVariant = x.notes["variant"]
        spelled = {a["directory"] for a in actions}
        return v.base in spelled and v.variant in spelled and v.base != v.variant
    if x.family == "replace-chains":
        return (
            x.version == "0.8.0"
            and len(actions) >= 2
            and all(a["type"] == "session/workingDirectoryReplaced" for a in actions)
        )
    if x.family == "chat-subsets":
        flavours = x.notes["flavours"]
        return flavours[0] == "absent" and (len(flavours) < 2 or flavours[1] == "empty")
    return all(a["type"].startswith("session/workingDirectory") for a in actions)


# --- the inventory -------------------------------------------------------------------------------


def _entries() -> list[Entry]:
    e: list[Entry] = [
        Entry(
            "uris.directories",
            uris.directories,
            "working-directory URIs from a pool of 7 (frequent collisions; INV-029/030)",
            "valid",
            _as("URI"),
        ),
        Entry(
            "uris.chat_uris",
            lambda: uris.chat_uris(foreign=True),
            "chat URIs of this and of another session (catalog keys, chat attachments)",
            "valid",
            _as("URI"),
        ),
        Entry(
            "uris.uri_variants",
            uris.uri_variants,
            "equivalence-class spellings of one URI: trailing slash, scheme/authority case, %-encoding (unreserved/reserved/hex case), dot segments, NFC/NFD, drive letters, file://localhost, empty path, relative, very long, control chars (INV-034)",
            "adversarial",
            claim=_variant_claim,
        ),
        Entry(
            "uris.long_uris",
            uris.long_uris,
            "oversized URIs (4 KiB–70 KiB)",
            "adversarial",
            claim=lambda v, _: len(v) >= 4096,
        ),
        Entry(
            "attachments.attachments",
            att.attachments,
            "every 0.7.0 attachment kind: simple, embeddedResource, resource, annotations, chat",
            "valid",
            _as("MessageAttachment"),
            _attachment_model,
        ),
        Entry(
            "attachments.chat(endTurn)",
            lambda: att.chat_attachments(end_turn=True),
            "chat attachment pinned to a turn (0.7.0)",
            "valid",
            _as("MessageChatAttachment"),
            _attachment_model,
        ),
        Entry(
            "attachments.chat(latest)",
            lambda: att.chat_attachments(end_turn=False),
            "chat attachment without endTurn: host pins the latest completed turn",
            "valid",
            _as("MessageChatAttachment"),
            _attachment_model,
        ),
        Entry(
            "attachments.chat(other session)",
            lambda: att.chat_attachments(foreign=True),
            "chat attachment naming a chat of another session",
            "valid",
            _as("MessageChatAttachment"),
            _attachment_model,
        ),
        Entry(
            "attachments.collection_attachments",
            att.collection_attachments,
            "draft collection: one level, 1–4 members, own label/range/_meta (INV-036..039)",
            "valid",
            _as("MessageAttachment"),
            _attachment_model,
            claim=lambda c, _: att.collection_depth(c) == 1 and len(c["attachments"]) >= 1,
            collections=True,
        ),
        Entry(
            "attachments.nested_collections",
            att.nested_collections,
            "collections nested 2–6 deep at random member positions (INV-037: must be rejected)",
            "adversarial",
            claim=lambda c, _: att.collection_depth(c) >= 2,
        ),
        Entry(
            "attachments.empty_collections",
            att.empty_collections,
            "collections with no members (INV-037)",
            "adversarial",
            claim=lambda c, _: c["attachments"] == [],
        ),
        Entry(
            "attachments.collections_with_shared_meta",
            att.collections_with_shared_meta,
            "the same _meta key on a collection and a member, different values (INV-038: no merging)",
            "adversarial",
            claim=lambda c, _: any(
                c["_meta"][k] != m.get("_meta", {}).get(k, c["_meta"][k])
                for k in att.shared_meta_keys(c)
                for m in c["attachments"]
            ),
        ),
        Entry(
            "messages.messages",
            msg.messages,
            "Message with every origin kind and attachments",
            "valid",
            _as("Message"),
            _message_model,
        ),
        Entry(
            "messages.user_messages",
            msg.user_messages,
            "what a client may send (origin user)",
            "valid",
            _as("Message"),
            _message_model,
            claim=lambda m, _: m["origin"]["kind"] == "user",
        ),
        Entry(
            "messages.messages_with_collections",
            msg.messages_with_collections,
            "draft: message with a valid collection whose range lies inside the text",
            "valid",
            _as("Message"),
            _message_model,
            claim=lambda m, _: any(
                a.get("type") == "collection" and att.is_within(a["range"], m["text"])
                for a in m["attachments"]
            ),
            collections=True,
        ),
        Entry(
            "messages.messages_with_out_of_range_members",
            msg.messages_with_out_of_range_members,
            "draft: a collection member whose range lies outside the message text",
            "adversarial",
            claim=lambda m, _: any(
                "range" in x and not att.is_within(x["range"], m["text"])
                for a in m["attachments"]
                for x in a.get("attachments", [])
            ),
        ),
        Entry(
            "messages.response_parts",
            msg.response_parts,
            "all six ResponsePart kinds",
            "valid",
            _as("ResponsePart"),
            _part_model,
        ),
        Entry(
            "messages.input_requests",
            msg.input_requests,
            "ChatInputRequest with every question kind and answers (INV-023)",
            "valid",
            _as("ChatInputRequest"),
            _request_model,
        ),
        Entry(
            "messages.active_turns",
            msg.active_turns,
            "ActiveTurn with parts of every kind, tool calls in any status",
            "valid",
            _as("ActiveTurn"),
            _active_turn_model,
            cost=2,
        ),
        Entry(
            "messages.turns",
            msg.turns,
            "completed Turn (complete/cancelled/error; terminal tool calls only)",
            "valid",
            _as("Turn"),
            _turn_model,
            cost=2,
        ),
    ]
    for status in msg.TOOL_CALL_STATUSES:
        e.append(
            Entry(
                f"messages.tool_calls({status})",
                lambda s=status: msg.tool_calls(s),
                f"tool call in status {status} (INV-017..019)",
                "valid",
                _as("ToolCallState"),
                _tool_call_model,
                claim=lambda tc, _, s=status: tc["status"] == s,
            )
        )
    for kind in KINDS:
        newer = kind not in PINNED_KINDS  # a 0.9.0/1.0.0 channel: not in the pinned schemas
        e.append(
            Entry(
                f"states.{kind}",
                lambda k=kind: sts.states(k),
                f"valid, consistent {STATE_DEFINITIONS[kind]}"
                + (" (1.0.0; validated by tests/test_versioned_generation.py)" if newer else ""),
                "valid",
                None if newer else _as(STATE_DEFINITIONS[kind]),
                _state_model(kind),
                cost=3 if kind in ("chat", "session") else 1,
            )
        )
    for kind in KINDS:
        newer = kind not in PINNED_KINDS
        version = "1.0.0" if newer else "0.7.0"
        e.append(
            Entry(
                f"actions.valid({kind})",
                _with_state(kind, lambda s, k=kind, v=version: act.valid_actions(k, v)),
                f"every {kind} action type, schema-valid, ids from small pools (state-free)",
                "valid",
                None if newer else _action_checks,
                _action_model,
                cost=3 if kind in ("chat", "session") else 1,
            )
        )
        e.append(
            Entry(
                f"actions.actions_for({kind})",
                _with_state(kind, lambda s, k=kind, v=version: act.actions_for(k, s, Profile.named(v))),
                f"state-aware {kind} actions naming ids in the state, a small share stale/near-miss",
                "valid",
                None if newer else _action_checks,
                _action_model,
                cost=3 if kind in ("chat", "session") else 1,
            )
        )
    e += [
        Entry(
            "actions.stale_actions_for(chat)",
            _with_state("chat", lambda s: act.stale_actions_for("chat", s)),
            "chat actions whose ids are all stale or near misses (INV-015 no-op paths)",
            "adversarial",
            claim=_stale_claim,
            cost=3,
        ),
        Entry(
            "actions.unknown_action_types",
            act.unknown_action_types,
            "types no version defines (INV-004)",
            "adversarial",
            claim=lambda a, _: a["type"] not in ACTION_INTRODUCED_IN,
        ),
        Entry(
            "actions.near_miss_type_actions",
            act.near_miss_type_actions,
            "near-miss types: case, slashes, spaces, other family's prefix (INV-004)",
            "adversarial",
            claim=lambda a, _: a["type"] not in ACTION_INTRODUCED_IN,
        ),
        Entry(
            "actions.foreign_family_actions(chat)",
            lambda: act.foreign_family_actions("chat"),
            "valid actions of other families handed to the chat reducer (INV-005)",
            "adversarial",
            claim=lambda a, _: kind_of(a["type"]) != "chat",
        ),
        Entry(
            "actions.missing_field_actions",
            act.missing_field_actions,
            "a required field removed",
            "adversarial",
            claim=_missing_claim,
        ),
        Entry(
            "actions.missing_inner_field_actions",
            act.missing_inner_field_actions,
            "a field required one level in removed",
            "adversarial",
            claim=_missing_inner_claim,
        ),
        Entry(
            "actions.wrong_inner_type_actions",
            act.wrong_inner_type_actions,
            "a list item or a required member one level in of the wrong JSON type",
            "adversarial",
            claim=_schema_invalid,
        ),
        Entry(
            "actions.extra_field_actions",
            act.extra_field_actions,
            "undeclared extra fields",
            "adversarial",
            claim=_extra_claim,
        ),
        Entry(
            "actions.wrong_type_actions",
            act.wrong_type_actions,
            "a field of the wrong JSON type",
            "adversarial",
            claim=_schema_invalid,
        ),
        Entry(
            "actions.later_version_actions",
            act.later_version_actions,
            "actions introduced after 0.7.0 (INV-046)",
            "adversarial",
            claim=lambda a, _: not is_known_to(a["type"], "0.7.0"),
        ),
        Entry(
            "actions.oversized_string_actions",
            act.oversized_string_actions,
            "a string field of 64 KiB–1 MiB",
            "adversarial",
            claim=lambda a, _: _longest_string(a) >= 65_536,
            cost=2,
        ),
        Entry(
            "actions.deeply_nested_actions",
            act.deeply_nested_actions,
            "_meta nested 64–400 levels",
            "adversarial",
            claim=_deep_claim,
        ),
        Entry(
            "actions.tool_results_with_extra_keys",
            act.tool_results_with_extra_keys,
            "toolCallComplete results with status/toolCallId/… keys (INV-051)",
            "adversarial",
            claim=lambda a, _: any(k in a["result"] for k in act.RESULT_OVERRIDE_KEYS),
        ),
    ]
    for kind in KINDS:
        newer = kind not in PINNED_KINDS
        e.append(
            Entry(
                f"sequences.action_sequences({kind})",
                (lambda k=kind: seq.action_sequences(k, max_size=6, profile=Profile.named("1.0.0")))
                if newer else (lambda k=kind: seq.action_sequences(k, max_size=6)),
                f"state-aware {kind} sequences, each action drawn against the state reached so far",
                "valid",
                None if newer else _sequence_checks,
                _sequence_model,
                cost=4 if kind in ("chat", "session") else 2,
            )
        )
    for family in seq.MULTIROOT_FAMILIES:
        e.append(
            Entry(
                f"sequences.multiroot({family})",
                lambda f=family: seq.multiroot_scenarios([f]),
                seq.FAMILY_TARGETS[family],
                "valid",
                _scenario_checks,
                _scenario_model,
                claim=_scenario_claim,
                cost=4,
            )
        )
    e.append(
        Entry(
            "schema.strategy(<definition>)",
            lambda: st.nothing(),
            "schema-derived values for any $defs entry of a spec dir (schemathesis engine; needs --spec/AHP_SPEC_DIR)",
            "valid",
        )
    )
    return e


INVENTORY: tuple[Entry, ...] = tuple(_entries())
BY_NAME: Mapping[str, Entry] = MappingProxyType({x.name: x for x in INVENTORY})
