"""Valid states and values of the channels 0.9.0 and 1.0.0 added: the automation catalogue
(`automation`), an automation run (`automationRun`) and a canvas (`canvas`), in the shapes of
the 1.0.0 state schema (`AutomationState`, `AutomationRunState`, `CanvasState`).

Consistent the way a host keeps them: catalogue entries unique by `resource`; a run's
`sessions` unique, its `primarySession` one of them; a lifecycle's timestamps present for its
status; at most one disable condition per kind.
"""

from __future__ import annotations

from typing import Final

from hypothesis import strategies as st

from . import messages as msg
from . import uris
from ._common import Json, iso_timestamps, memo, meta, non_negative_ints, obj, short_text

AUTOMATION_URIS: Final = ("ahp-automation:/a1", "ahp-automation:/a2", "ahp-automation:/a3")
RUN_URIS: Final = ("ahp-automation-run:/a1/r1", "ahp-automation-run:/a1/r2", "ahp-automation-run:/a2/r1")
CANVAS_URIS: Final = ("ahp-canvas:/s1/main/preview-1", "ahp-canvas:/s1/main/preview-2")
TRIGGER_IDS: Final = ("trigger-1", "trigger-2")
RUN_STATUSES: Final = ("pending", "running", "completed", "failed", "cancelled")


@memo
def disable_conditions() -> st.SearchStrategy[list[Json]]:
    """0–2 conditions, at most one per kind (the schema's `maxContains: 1`)."""
    after_runs = st.fixed_dictionaries({"kind": st.just("afterRuns"), "max": st.integers(1, 20)})
    after_date = st.fixed_dictionaries({"kind": st.just("afterDate"), "date": iso_timestamps()})
    return st.tuples(st.booleans(), st.booleans(), after_runs, after_date).map(
        lambda t: [c for on, c in ((t[0], t[2]), (t[1], t[3])) if on]
    )


@memo
def triggers() -> st.SearchStrategy[Json]:
    schedule = obj(
        {
            "id": st.sampled_from(TRIGGER_IDS),
            "kind": st.just("schedule"),
            "schedule": st.fixed_dictionaries(
                {"expression": st.sampled_from(("0 9 * * 1-5", "*/15 * * * *")), "timeZone": st.just("UTC")}
            ),
        },
        {"misfirePolicy": st.sampled_from(("skip", "runOnce"))},
    )
    event = obj(
        {
            "id": st.sampled_from(TRIGGER_IDS),
            "kind": st.just("event"),
            "type": st.sampled_from(("github.pullRequest", "x-custom.event")),
            "title": st.sampled_from(("On PR", "On push")),
            "events": st.lists(
                st.fixed_dictionaries({"id": st.sampled_from(("opened", "closed")), "title": short_text(8)}),
                max_size=2,
                unique_by=lambda e: e["id"],
            ),
        },
        {"config": meta()},
    )
    return st.one_of(schedule, event)


@memo
def session_templates() -> st.SearchStrategy[Json]:
    return obj(
        {},
        {
            "provider": st.sampled_from(("copilot", "claude")),
            "model": obj({"id": st.sampled_from(("gpt-5", "sonnet"))}, {}),
            "workingDirectories": st.lists(uris.directories(), max_size=2, unique=True),
        },
    )


@memo
def definitions() -> st.SearchStrategy[Json]:
    return obj(
        {
            "title": st.sampled_from(("Nightly triage", "Review PRs", "")),
            "message": msg.user_messages(),
            "session": session_templates(),
            "enabled": st.booleans(),
            "triggers": st.lists(triggers(), max_size=2, unique_by=lambda t: t["id"]),
        },
        {"disableConditions": disable_conditions(), "_meta": meta()},
    )


@memo
def definition_patches() -> st.SearchStrategy[Json]:
    """`AutomationDefinitionPatch`: every field optional; `disableConditions: []` clears them."""
    return obj(
        {},
        {
            "title": st.sampled_from(("Renamed", "")),
            "message": msg.user_messages(),
            "enabled": st.booleans(),
            "triggers": st.lists(triggers(), max_size=2, unique_by=lambda t: t["id"]),
            "disableConditions": disable_conditions(),
        },
    )


@memo
def run_lifecycles() -> st.SearchStrategy[Json]:
    """A run lifecycle with the timestamps its status requires."""

    def build(status: str) -> st.SearchStrategy[Json]:
        req: dict[str, st.SearchStrategy[object]] = {"status": st.just(status), "createdAt": iso_timestamps()}
        opt: dict[str, st.SearchStrategy[object]] = {}
        if status != "pending":
            (opt if status == "failed" or status == "cancelled" else req)["startedAt"] = iso_timestamps()
        if status in ("completed", "failed", "cancelled"):
            req["completedAt"] = iso_timestamps()
        if status == "failed":
            req["error"] = msg.error_infos()
        return obj(req, opt)

    return st.sampled_from(RUN_STATUSES).flatmap(build)


@memo
def run_origins() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.just({"kind": "manual"}),
        obj(
            {"kind": st.just("trigger"), "triggerId": st.sampled_from(TRIGGER_IDS)},
            {"scheduledFor": iso_timestamps(), "catchUp": st.booleans(), "event": meta()},
        ),
    )


@memo
def run_summaries() -> st.SearchStrategy[Json]:
    return obj(
        {
            "resource": st.sampled_from(RUN_URIS),
            "automation": st.sampled_from(AUTOMATION_URIS),
            "origin": run_origins(),
            "lifecycle": run_lifecycles(),
            "sessionCount": non_negative_ints(5),
        },
        {"primarySession": uris.session_uris()},
    )


@memo
def automation_entries(resource: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Json]:
    return obj(
        {
            "resource": resource if resource is not None else st.sampled_from(AUTOMATION_URIS),
            "definition": definitions(),
            "runs": st.lists(run_summaries(), max_size=2, unique_by=lambda r: r["resource"]),
            "operations": st.lists(st.sampled_from(("update", "remove", "run")), max_size=3, unique=True),
            "createdAt": iso_timestamps(),
            "modifiedAt": iso_timestamps(),
        },
        {"nextRunAt": iso_timestamps(), "runCount": non_negative_ints(20), "_meta": meta()},
    )


@memo
def automation_states() -> st.SearchStrategy[Json]:
    return obj(
        {"entries": st.lists(automation_entries(), max_size=3, unique_by=lambda e: e["resource"])},
        {"_meta": meta()},
    )


@memo
@st.composite
def automation_run_states(draw: st.DrawFn) -> Json:
    sessions = draw(st.lists(uris.session_uris(), max_size=3, unique=True))
    state: Json = {
        "resource": draw(st.sampled_from(RUN_URIS)),
        "automation": draw(st.sampled_from(AUTOMATION_URIS)),
        "origin": draw(run_origins()),
        "lifecycle": draw(run_lifecycles()),
        "sessions": sessions,
    }
    if sessions and draw(st.booleans()):
        state["primarySession"] = draw(st.sampled_from(sessions))
    return state


@memo
def canvas_states() -> st.SearchStrategy[Json]:
    return obj(
        {
            "instanceId": st.sampled_from(("inst-1", "inst-2")),
            "extensionId": st.sampled_from(("ext.preview", "ext.diagram")),
            "canvasId": st.sampled_from(("preview", "diagram")),
        },
        {
            "extensionName": st.sampled_from(("Preview", "Diagrams")),
            "title": st.sampled_from(("Live preview", "")),
            "status": st.sampled_from(("ready", "loading")),
            "url": st.sampled_from(("https://localhost:5173/", "http://127.0.0.1:8080/app")),
        },
    )
