"""Changeset, annotations, terminal, resource watch, collection attachments and the differential
check (INV-036, 038, 049, 050, X01, X02, D01)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from tests.invariant_cases import (
    MSG,
    Case,
    assert_fails,
    assert_passes,
    case_id,
    chat,
    step,
    tool_part,
    turn,
    with_after,
)

JSON = dict[str, Any]

READY = {"status": "ready", "files": []}
OP = {"id": "op1", "label": "Apply", "scopes": ["all"], "status": "idle"}
ANN = {
    "id": "n1",
    "turnId": "t1",
    "resource": "file:///x",
    "resolved": False,
    "entries": [{"id": "e1", "text": "hi"}],
}
TERM = {"title": "sh", "content": [], "claim": {"kind": "client", "clientId": "c1"}}
WATCH = {"root": "file:///repo", "recursive": True}
CHANGED = {
    "type": "resourceWatch/changed",
    "changes": {"items": [{"uri": "file:///repo/a", "type": "changed"}]},
}

COLLECTION = {
    "type": "collection",
    "label": "Login form",
    "displayKind": "element",
    "_meta": {"group": "g1"},
    "range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 16}},
    "attachments": [
        {
            "type": "simple",
            "label": "structure",
            "modelRepresentation": "<form/>",
            "_meta": {"part": "dom"},
        },
        {"type": "simple", "label": "note", "modelRepresentation": "n"},
    ],
}
CMSG: JSON = {
    **MSG,
    "attachments": [{"type": "simple", "label": "a", "modelRepresentation": "a"}, COLLECTION],
}
START = {
    "type": "chat/turnStarted",
    "turnId": "t1",
    "startedAt": "2026-01-01T00:00:01.000Z",
    "message": CMSG,
}
QUEUE = {"type": "chat/pendingMessageSet", "kind": "queued", "id": "q1", "message": CMSG}


def _collection(message: JSON) -> JSON:
    return message["attachments"][1]


def _stored(s: JSON) -> JSON:
    return s["activeTurn"]["message"]


FAILING = [
    Case(
        "INV-050",
        with_after(
            step(
                "changeset",
                READY,
                {"type": "changeset/statusChanged", "status": "error", "error": {"message": "x"}},
            ),
            lambda s: s.pop("error"),
        ),
        "error-status-without-error",
    ),
    Case(
        "INV-050",
        with_after(
            step(
                "changeset",
                {**READY, "status": "error", "error": {"message": "x"}},
                {"type": "changeset/statusChanged", "status": "ready"},
            ),
            lambda s: s.update(error={"message": "x"}),
        ),
        "stale-error-kept",
    ),
    Case(
        "INV-050",
        with_after(
            step(
                "changeset",
                {**READY, "operations": [OP]},
                {
                    "type": "changeset/operationStatusChanged",
                    "operationId": "op1",
                    "status": "running",
                },
            ),
            lambda s: s["operations"][0].update(error={"message": "x"}),
        ),
        "operation-error-without-status",
    ),
    Case(
        "INV-050.contentChanged",
        step(
            "changeset",
            READY,
            {"type": "changeset/contentChanged", "files": [], "error": {"message": "x"}},
        ),
        "reference-ready-with-error",
    ),
    Case(
        "INV-050.contentChanged",
        step(
            "changeset",
            {**READY, "status": "error", "error": {"message": "x"}},
            {"type": "changeset/contentChanged", "files": []},
        ),
        "reference-error-without-error",
    ),
    Case(
        "INV-049.reducer",
        step(
            "annotations",
            {"annotations": [ANN]},
            {"type": "annotations/entryRemoved", "annotationId": "n1", "entryId": "e1"},
        ),
        "reference-removes-last-entry",
    ),
    Case(
        "INV-049.reducer",
        step(
            "annotations",
            {"annotations": []},
            {"type": "annotations/set", "annotation": {**ANN, "entries": []}},
        ),
        "reference-stores-empty-annotation",
    ),
    Case(
        "INV-X01",
        with_after(step("resourceWatch", WATCH, CHANGED), lambda s: s.update(includes=["**"])),
        "event-stored-in-state",
    ),
    Case(
        "INV-X02",
        with_after(step("terminal", TERM, {"type": "terminal/cleared"}), lambda s: s.pop("claim")),
        "claim-released",
    ),
    Case(
        "INV-036",
        with_after(
            step("chat", chat(), START), lambda s: _collection(_stored(s))["attachments"].reverse()
        ),
        "members-reordered",
    ),
    Case(
        "INV-036",
        with_after(
            step("chat", chat(), QUEUE),
            lambda s: s["queuedMessages"][0]["message"]["attachments"].pop(),
        ),
        "collection-dropped-from-queue",
    ),
    Case(
        "INV-038",
        with_after(
            step("chat", chat(), START),
            lambda s: _collection(_stored(s))["attachments"][1].update(_meta={"group": "g1"}),
        ),
        "collection-meta-merged-into-member",
    ),
    Case(
        "INV-038",
        with_after(
            step("chat", chat(), {"type": "chat/draftChanged", "draft": CMSG}),
            lambda s: _collection(s["draft"]).pop("range"),
        ),
        "collection-range-lost",
    ),
    Case(
        "INV-D01",
        replace(
            step("chat", chat(), START),
            reference_after={**step("chat", chat(), START).after, "title": "other"},
        ),
        "target-differs",
    ),
]

PASSING = [
    Case(
        "INV-X02",
        step("terminal", TERM, {"type": "terminal/claimed", "claim": None}),
        "schema-invalid-claim-not-blamed",
    ),
    Case(
        "INV-050",
        step(
            "changeset",
            READY,
            {"type": "changeset/statusChanged", "status": "error", "error": {"message": "x"}},
        ),
        "error-with-error",
    ),
    Case(
        "INV-050",
        step(
            "changeset",
            {**READY, "operations": [{**OP, "status": "error", "error": {"message": "x"}}]},
            {"type": "changeset/operationStatusChanged", "operationId": "op1", "status": "running"},
        ),
        "operation-error-cleared",
    ),
    Case(
        "INV-050",
        step(
            "changeset",
            {**READY, "status": "error"},
            {"type": "changeset/fileSet", "file": {"id": "f"}},
        ),
        "inconsistent-start-not-blamed",
    ),
    Case(
        "INV-050",
        step("changeset", READY, {"type": "changeset/statusChanged", "status": "error"}),
        "producer-omitted-the-error",
    ),
    Case(
        "INV-050.contentChanged",
        step("changeset", READY, {"type": "changeset/contentChanged", "files": []}),
        "ready-without-error",
    ),
    Case(
        "INV-049.reducer",
        step(
            "annotations",
            {"annotations": [{**ANN, "entries": [*ANN["entries"], {"id": "e2", "text": "x"}]}]},
            {"type": "annotations/entryRemoved", "annotationId": "n1", "entryId": "e1"},
        ),
        "one-entry-left",
    ),
    Case("INV-X01", step("resourceWatch", WATCH, CHANGED), "events-not-stored"),
    Case(
        "INV-X02",
        step(
            "terminal",
            TERM,
            {"type": "terminal/claimed", "claim": {"kind": "client", "clientId": "c2"}},
        ),
        "claim-transferred",
    ),
    Case("INV-036", step("chat", chat(), START), "turn-message-verbatim"),
    Case("INV-036", step("chat", chat(), QUEUE), "queued-message-verbatim"),
    Case(
        "INV-036",
        step(
            "chat",
            chat(turns=[]),
            {
                "type": "chat/turnsLoaded",
                "turns": [{"id": "a", "message": CMSG, "responseParts": [], "state": "complete"}],
            },
        ),
        "loaded-turn-verbatim",
    ),
    Case(
        "INV-038",
        step("chat", chat(), {"type": "chat/draftChanged", "draft": CMSG}),
        "draft-verbatim",
    ),
    Case(
        "INV-038",
        step(
            "chat",
            chat(status=24, activeTurn=turn("t1", tool_part("tc1", "pending-confirmation"))),
            {
                "type": "chat/toolCallConfirmed",
                "turnId": "t1",
                "toolCallId": "tc1",
                "approved": False,
                "reason": "denied",
                "userSuggestion": CMSG,
            },
        ),
        "denial-suggestion-verbatim",
    ),
    Case(
        "INV-D01",
        replace(
            step("chat", chat(), START),
            reference_after=copy.deepcopy(step("chat", chat(), START).after),
        ),
        "same-state",
    ),
    Case(
        "INV-D01",
        replace(
            step("chat", chat(), START),
            reference_after={**step("chat", chat(), START).after, "steeringMessage": None},
        ),
        "absent-equals-null",
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=case_id)
def test_counterexample_is_reported(case: Case) -> None:
    assert_fails(case)


@pytest.mark.parametrize("case", PASSING, ids=case_id)
def test_correct_step_passes(case: Case) -> None:
    assert_passes(case)


def test_divergence_names_the_differing_path() -> None:
    [v] = assert_fails(FAILING[-1])
    assert "title" in v.message and '"other"' in v.message


def test_divergence_reports_at_most_three_paths() -> None:
    base = step("chat", chat(), START)
    ref = {**base.after, "a": 1, "b": 2, "c": 3, "d": 4}
    [v] = assert_fails(Case("INV-D01", replace(base, reference_after=ref), "many"))
    assert v.message.count("reference=") == 3


def test_divergence_tells_true_from_one() -> None:
    base = step("terminal", TERM, {"type": "terminal/commandDetectionAvailable"})
    ref = {**base.after, "supportsCommandDetection": 1}
    assert_fails(Case("INV-D01", replace(base, reference_after=ref), "bool-vs-int"))
