"""D/E. Session catalog, keyed collections, idempotence, working directories (INV-025…035)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.invariants.working_directories import loose_uri_key
from harness.reference import Model, Profile
from tests.invariant_cases import (
    MSG,
    Case,
    Faulty,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    md,
    session,
    step,
    step_with,
    turn,
    with_after,
)

JSON = dict[str, Any]
REF = Model().reduce
P080 = Profile.for_version("0.8.0")
REF080 = Model(P080).reduce
A, B, C = "file:///a", "file:///b", "file:///c"


def summary(resource: str, title: str = "t") -> JSON:
    return {
        "resource": resource,
        "title": title,
        "status": 1,
        "modifiedAt": "2026-01-01T00:00:00.000Z",
    }


def ws_set(kind: str, d: str) -> JSON:
    return {"type": f"{kind}/workingDirectorySet", "directory": d}


def ws_removed(kind: str, d: str) -> JSON:
    return {"type": f"{kind}/workingDirectoryRemoved", "directory": d}


def replaced(d: str, r: str) -> JSON:
    return {"type": "session/workingDirectoryReplaced", "directory": d, "replacement": r}


def _doubles_set(kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int) -> JSON:
    """A reducer whose upsert appends whenever the state already has the title (not idempotent)."""
    if action.get("type") == "session/titleChanged" and state.get("title") == action.get("title"):
        return {**result, "title": result["title"] + "!"}
    return result


def _delta_once(kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int) -> JSON:
    """A reducer whose delta drops text the part already ends with (a bad dedup)."""
    parts = (state.get("activeTurn") or {}).get("responseParts") or []
    if action.get("type") == "chat/delta" and any(
        str(p.get("content", "")).endswith(action["content"]) for p in parts
    ):
        return state
    return result


def _remove_keeps_empty_absent(
    kind: str, state: JSON, action: JSON, now: int, result: JSON, calls: int
) -> JSON:
    """A reducer whose Remove forgets the remaining list (drops the key)."""
    if (
        str(action.get("type")).endswith("workingDirectoryRemoved")
        and "workingDirectories" in result
    ):
        return {k: v for k, v in result.items() if k != "workingDirectories"}
    return result


chat_with_turn = chat(status=8, activeTurn=turn("t1", md()))

FAILING = [
    Case(
        "INV-025",
        with_after(
            step(
                "session",
                session(chats=[summary("ahp-chat:/a")]),
                {"type": "session/chatAdded", "summary": summary("ahp-chat:/b")},
            ),
            lambda s: s.update(chats=[summary("ahp-chat:/a"), summary("ahp-chat:/a")]),
        ),
        "duplicate-resource",
    ),
    Case(
        "INV-025",
        with_after(
            step(
                "session",
                session(chats=[summary("ahp-chat:/a")]),
                {
                    "type": "session/chatUpdated",
                    "chat": "ahp-chat:/a",
                    "changes": {"resource": "ahp-chat:/z"},
                },
            ),
            lambda s: s["chats"][0].update(resource="ahp-chat:/z"),
        ),
        "chatUpdated-renames",
    ),
    Case(
        "INV-025",
        with_after(
            step(
                "session",
                session(chats=[summary("ahp-chat:/a")], defaultChat="ahp-chat:/a"),
                {"type": "session/chatRemoved", "chat": "ahp-chat:/a"},
            ),
            lambda s: s.update(defaultChat="ahp-chat:/a"),
        ),
        "defaultChat-dangles",
    ),
    Case(
        "INV-027",
        with_after(
            step(
                "session",
                session(activeClients=[{"clientId": "c1", "tools": []}]),
                {
                    "type": "session/activeClientSet",
                    "activeClient": {"clientId": "c1", "tools": [{"name": "x"}]},
                },
            ),
            lambda s: s["activeClients"].append({"clientId": "c1", "tools": []}),
        ),
        "active-client-twice",
    ),
    Case(
        "INV-027",
        with_after(
            step(
                "changeset",
                {"status": "ready", "files": [{"id": "f1"}]},
                {"type": "changeset/fileSet", "file": {"id": "f1", "x": 1}},
            ),
            lambda s: s["files"].append({"id": "f1"}),
        ),
        "file-twice",
    ),
    Case(
        "INV-027",
        with_after(
            step(
                "annotations",
                {"annotations": [{"id": "n1", "entries": [{"id": "e1", "text": "a"}]}]},
                {
                    "type": "annotations/entrySet",
                    "annotationId": "n1",
                    "entry": {"id": "e1", "text": "b"},
                },
            ),
            lambda s: s["annotations"][0]["entries"].append({"id": "e1", "text": "c"}),
        ),
        "entry-twice",
    ),
    Case(
        "INV-028",
        step_with(
            Faulty(_doubles_set),
            "session",
            session(),
            {"type": "session/titleChanged", "title": "T"},
        ),
        "titleChanged-not-idempotent",
        Faulty(_doubles_set),
    ),
    Case(
        "INV-028",
        step(
            "chat",
            chat_with_turn,
            {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"},
        ),
        "delta-deduplicated",
        Faulty(_delta_once),
    ),
    Case(
        "INV-029",
        with_after(
            step("session", session(workingDirectories=[A]), ws_set("session", B)),
            lambda s: s.update(workingDirectories=[B, A]),
        ),
        "set-prepends",
    ),
    Case(
        "INV-029",
        with_after(
            step("session", session(workingDirectories=[A, B, C]), ws_removed("session", B)),
            lambda s: s.update(workingDirectories=[C, A]),
        ),
        "remove-reorders",
    ),
    Case(
        "INV-029",
        with_after(
            step("chat", chat(workingDirectories=[A]), ws_set("chat", A)),
            lambda s: s.update(workingDirectories=[A, A]),
        ),
        "set-duplicates",
    ),
    Case(
        "INV-030",
        step("session", session(workingDirectories=[A]), ws_set("session", B)),
        "remove-drops-list",
        Faulty(_remove_keeps_empty_absent),
    ),
    Case(
        "INV-030.chat-absent",
        step("chat", chat(), ws_set("chat", A)),
        "reference-narrows-then-empties",
        REF,
    ),
    Case(
        "INV-031.reducer",
        step(
            "chat",
            chat(workingDirectories=[A]),
            ws_set("chat", C),
            session=session(workingDirectories=[A, B]),
        ),
        "chat-adds-non-member",
    ),
    Case(
        "INV-031.reducer",
        step(
            "session",
            session(workingDirectories=[A, B]),
            ws_removed("session", B),
            chats=(chat(workingDirectories=[B]),),
        ),
        "session-removal-leaves-dangling",
    ),
    Case(
        "INV-033",
        with_after(
            step("chat", chat(), ws_set("chat", A)), lambda s: s.update(workingDirectories=[B, A])
        ),
        "set-on-absent-inherits",
    ),
    Case(
        "INV-033",
        with_after(
            step("session", session(), ws_removed("session", A)),
            lambda s: s.update(workingDirectories=[]),
        ),
        "remove-on-absent-creates",
    ),
    Case(
        "INV-033",
        with_after(
            step("chat", chat(workingDirectories=[A]), ws_removed("chat", A)),
            lambda s: s.pop("workingDirectories"),
        ),
        "remove-last-collapses",
    ),
    Case(
        "INV-034",
        with_after(
            step("session", session(workingDirectories=[A]), ws_set("session", A + "/")),
            lambda s: s.update(workingDirectories=[A]),
        ),
        "trailing-slash-merged",
    ),
    Case(
        "INV-034",
        with_after(
            step(
                "chat",
                chat(workingDirectories=["file:///~user"]),
                ws_removed("chat", "file:///%7Euser"),
            ),
            lambda s: s.update(workingDirectories=[]),
        ),
        "percent-escape-removes",
    ),
    Case(
        "INV-034",
        with_after(
            step(
                "session",
                session(chats=[summary("ahp-chat:/Caf\u00e9")]),
                {"type": "session/chatAdded", "summary": summary("ahp-chat:/Cafe\u0301", "x")},
            ),
            lambda s: s.update(chats=[summary("ahp-chat:/Caf\u00e9", "x")]),
        ),
        "nfd-upserts-nfc",
    ),
    Case(
        "INV-035",
        with_after(
            step("session", session(workingDirectories=[A, B, C]), replaced(C, A), profile=P080),
            lambda s: s.update(workingDirectories=[B, A]),
        ),
        "moves-the-primary",
    ),
    Case(
        "INV-035",
        with_after(
            step("session", session(workingDirectories=[A, B]), replaced(C, A), profile=P080),
            lambda s: s.update(workingDirectories=[A]),
        ),
        "cas-failure-applied",
    ),
    Case(
        "INV-035",
        with_after(
            step(
                "session",
                session(workingDirectories=[A, B, C]),
                replaced(B, "file:///d"),
                profile=P080,
            ),
            lambda s: s.update(workingDirectories=[A, B, C, "file:///d"]),
        ),
        "keeps-replaced",
    ),
]

PASSING = [
    # The payload itself repeats an id (a precondition broken by the sender): storing it as
    # given is not the reducer's fault (schema-only generation once blamed the reference model).
    Case(
        "INV-027",
        step(
            "changeset",
            {"status": "ready", "files": []},
            {"type": "changeset/fileSet", "file": {"id": "f1"}},
        ),
        "payload-unique",
    ),
    Case(
        "INV-027",
        with_after(
            step(
                "session",
                session(customizations=[]),
                {
                    "type": "session/customizationsChanged",
                    "customizations": [
                        {"id": "c1", "type": "mcp", "name": "a"},
                        {"id": "c1", "type": "mcp", "name": "b"},
                    ],
                },
            ),
            lambda s: s.update(
                customizations=[
                    {"id": "c1", "type": "mcp", "name": "a"},
                    {"id": "c1", "type": "mcp", "name": "b"},
                ]
            ),
        ),
        "payload-carries-duplicates",
    ),
    Case(
        "INV-025",
        step(
            "session",
            session(chats=[summary("ahp-chat:/a")], defaultChat="ahp-chat:/a"),
            {"type": "session/chatRemoved", "chat": "ahp-chat:/a"},
        ),
        "removal-clears-default",
    ),
    Case(
        "INV-025",
        step(
            "session",
            session(chats=[summary("ahp-chat:/a")]),
            {
                "type": "session/chatUpdated",
                "chat": "ahp-chat:/a",
                "changes": {"resource": "ahp-chat:/z", "title": "New"},
            },
        ),
        "chatUpdated-ignores-resource",
    ),
    Case(
        "INV-025",
        step(
            "session",
            session(chats=[summary("ahp-chat:/a")]),
            {"type": "session/chatAdded", "summary": summary("ahp-chat:/a", "again")},
        ),
        "chatAdded-upserts",
    ),
    Case(
        "INV-027",
        step(
            "session",
            session(activeClients=[{"clientId": "c1", "tools": []}]),
            {
                "type": "session/activeClientSet",
                "activeClient": {"clientId": "c1", "tools": [{"name": "x"}]},
            },
        ),
        "active-client-upsert",
    ),
    Case(
        "INV-027",
        step(
            "annotations",
            {"annotations": [{"id": "n1", "entries": [{"id": "e1", "text": "a"}]}]},
            {
                "type": "annotations/entrySet",
                "annotationId": "n1",
                "entry": {"id": "e1", "text": "b"},
            },
        ),
        "entry-upsert",
    ),
    Case(
        "INV-028",
        step("session", session(), {"type": "session/titleChanged", "title": "T"}),
        "titleChanged",
        REF,
    ),
    Case(
        "INV-028",
        step(
            "chat",
            chat(
                status=8,
                activeTurn=turn(),
                turns=[{"id": "a", "message": MSG, "responseParts": [], "state": "complete"}],
            ),
            {"type": "chat/truncated", "turnId": "a"},
        ),
        "truncated-ignoring-clock",
        REF,
    ),
    Case(
        "INV-028",
        step(
            "chat",
            chat_with_turn,
            {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"},
        ),
        "delta-appends-again",
        REF,
    ),
    Case(
        "INV-028",
        step(
            "chat", chat(), {"type": "chat/delta", "turnId": "t1", "partId": "p1", "content": "x"}
        ),
        "noop-delta",
        REF,
    ),
    Case(
        "INV-029", step("session", session(workingDirectories=[A]), ws_set("session", B)), "append"
    ),
    Case(
        "INV-029",
        step("session", session(workingDirectories=[A, B, C]), ws_removed("session", B)),
        "remove-keeps-order",
    ),
    Case(
        "INV-029",
        step("chat", chat(workingDirectories=[A]), ws_set("chat", A)),
        "set-present-is-noop",
    ),
    Case(
        "INV-030",
        step("session", session(workingDirectories=[A]), ws_set("session", B)),
        "inverse",
        REF,
    ),
    Case(
        "INV-030",
        step("session", session(), ws_set("session", B)),
        "absent-session-modulo-empty",
        REF,
    ),
    Case(
        "INV-030.chat-absent",
        step("chat", chat(workingDirectories=[A]), ws_set("chat", B)),
        "present-chat-subset",
        REF,
    ),
    Case(
        "INV-031.reducer",
        step(
            "chat",
            chat(workingDirectories=[A]),
            ws_set("chat", B),
            session=session(workingDirectories=[A, B]),
        ),
        "member",
    ),
    Case(
        "INV-031.reducer",
        step(
            "session",
            session(workingDirectories=[A, B]),
            ws_removed("session", B),
            chats=(chat(workingDirectories=[A]), chat()),
        ),
        "unaffected-chats",
    ),
    Case("INV-033", step("chat", chat(), ws_set("chat", A)), "set-on-absent-is-singleton"),
    Case(
        "INV-033",
        step("chat", chat(workingDirectories=[A]), ws_removed("chat", A)),
        "remove-last-leaves-empty",
    ),
    Case("INV-033", step("session", session(), ws_removed("session", A)), "remove-on-absent-noop"),
    Case(
        "INV-034",
        step("session", session(workingDirectories=[A]), ws_set("session", A + "/")),
        "trailing-slash-distinct",
    ),
    Case(
        "INV-034",
        step(
            "chat",
            chat(workingDirectories=["file:///~user"]),
            ws_removed("chat", "file:///%7Euser"),
        ),
        "escape-distinct",
    ),
    Case(
        "INV-034",
        step(
            "session",
            session(chats=[summary("ahp-chat:/Caf\u00e9")]),
            {"type": "session/chatAdded", "summary": summary("ahp-chat:/Cafe\u0301", "x")},
        ),
        "nfd-distinct",
    ),
    Case(
        "INV-035",
        step("session", session(workingDirectories=[A, B, C]), replaced(C, A), profile=P080),
        "earlier-replacement-wins",
    ),
    Case(
        "INV-035",
        step("session", session(workingDirectories=[A, B, C]), replaced(B, C), profile=P080),
        "dedups",
    ),
    Case(
        "INV-035",
        step(
            "session", session(workingDirectories=[A, B, C]), replaced(B, "file:///d"), profile=P080
        ),
        "in-place",
    ),
    Case(
        "INV-035",
        step("session", session(workingDirectories=[A, B]), replaced(C, A), profile=P080),
        "cas-failure-noop",
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


@pytest.mark.parametrize(
    ("u", "v"),
    [
        ("file:///a", "file:///a/"),
        ("file:///%7euser", "file:///~user"),
        ("file:///%7euser", "file:///%7Euser"),
        ("FILE://Host/x", "file://host/x"),
        ("file:///x/./y/../z", "file:///x/z"),
        ("file:///caf\u00e9", "file:///cafe\u0301"),
        ("file:///C:/repo", "file:///c:/repo"),
    ],
)
def test_loose_uri_key_groups_the_equivalence_classes(u: str, v: str) -> None:
    assert u != v and loose_uri_key(u) == loose_uri_key(v)


def test_loose_uri_key_keeps_different_paths_apart() -> None:
    assert loose_uri_key("file:///a/b") != loose_uri_key("file:///a/c")
    assert loose_uri_key("file:///a%2Fb") != loose_uri_key("file:///a/b")


def test_replace_is_checked_only_where_the_version_knows_it() -> None:
    """Under 0.7.0 the replace action is unknown (INV-004), so INV-035 stays silent."""
    s = with_after(
        step("session", session(workingDirectories=[A, B]), replaced(A, C)),
        lambda x: x.update(workingDirectories=[C]),
    )
    assert_passes(Case("INV-035", s, "0.7.0-unknown"))
    assert_fails(Case("INV-004", s, "0.7.0-unknown-applied"))
