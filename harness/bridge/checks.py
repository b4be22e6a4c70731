"""Our checks on one forwarded command, beside schemathesis' own (docs/commands.md).

Each check is a pure function of an `Observation` — the command, the host's reply, the disk
before and after, the sessions (`listSessions`) before and after — returning a `Verdict`
(None when the command passes). They run on every command of a run and again on replay.

| id | what must hold | severity |
|---|---|---|
| CMD-CONFINEMENT | no answer contains the canary token; the protected zone is unchanged on disk | violation for our host (its policy), divergence for others (the spec is silent) |
| CMD-PARTIAL-STATE | a failed command leaves the sessions (listSessions) and the disk as they were | violation |
| CMD-CHAT-SUBSET | `createChat.workingDirectories` outside the session's set is refused (WIRE.md §11 MUST) | violation |
| CMD-MULTIROOT | without `multipleWorkingDirectories`, a session keeps at most the first directory | violation |
| CMD-MUST-METHOD | a command WIRE.md says a host MUST answer (`ping`, `initialize`, `createSession`) is not answered -32601 Method not found | violation |
| CMD-ERROR-CODE | `createSession` on an existing URI is -32003 (MUST; -32602 too when its params are schema-invalid besides); `resourceResolve` of a missing path in a session directory is -32008 (MUST); any other error code is one the command documents | violation / warning |

The four schemathesis checks get verdicts of the same shape for replay (`st_verdicts`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .app import Reply
from .fixture import FileFixture, Snapshot
from .openapi import documented_errors, status_of

Sessions = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Verdict:
    check: str
    severity: str  # violation | warning | divergence
    message: str
    expected: Any = None


@dataclass
class Observation:
    method: str
    params: Any
    reply: Reply
    fixture: FileFixture
    disk_before: Snapshot
    disk_after: Snapshot
    sessions_before: Sessions | None
    sessions_after: Sessions | None
    multiroot: bool = True
    confinement_severity: str = "violation"
    extra: dict[str, Any] = field(default_factory=dict)
    #: The OpenAPI view (request schemas), when the session has one.
    document: Mapping[str, Any] | None = None


def _p(obs: Observation) -> Mapping[str, Any]:
    return obs.params if isinstance(obs.params, dict) else {}


def _local_path(uri: Any) -> str | None:
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return path if path.startswith("/") and "\x00" not in path else None


def session_roots(sessions: Sessions | None) -> list[str]:
    roots: list[str] = []
    for summary in (sessions or {}).values():
        for d in summary.get("workingDirectories") or []:
            p = _local_path(d)
            if p is not None:
                roots.append(os.path.realpath(p))
    return roots


def _covers_protected(fx: FileFixture, roots: list[str]) -> list[str]:
    """Session directories that reach into the protected zone (they make a read there legal)."""
    zone = [fx.path("outside"), fx.path("work/alpha-private")]
    return [r for r in roots if any(z == r or z.startswith(r.rstrip("/") + "/") or r.startswith(z + "/") for z in zone)]


def confinement(obs: Observation) -> Verdict | None:
    fx = obs.fixture
    roots = session_roots(obs.sessions_before) + session_roots(obs.sessions_after)
    exempt = _covers_protected(fx, roots)
    if exempt:
        return None  # some session was granted part of the protected zone: nothing to judge
    if obs.reply.ok:
        text = json.dumps(obs.reply.result, ensure_ascii=False)
        if fx.leaks(text):
            return Verdict("CMD-CONFINEMENT", obs.confinement_severity,
                           f"{obs.method} answered with content from outside the sessions' working "
                           "directories (the canary token is in the result)",
                           "PermissionDenied (-32009) or NotFound (-32008)")
    changed = fx.protected_changes(obs.disk_before, obs.disk_after)
    if changed:
        return Verdict("CMD-CONFINEMENT", obs.confinement_severity,
                       f"{obs.method} changed the disk outside the sessions' working directories: "
                       + ", ".join(changed[:5]), "the protected zone unchanged")
    return None


def _session_view(sessions: Sessions | None) -> dict[str, Any]:
    return {uri: s.get("workingDirectories") for uri, s in (sessions or {}).items()}


def partial_state(obs: Observation) -> Verdict | None:
    if obs.reply.ok or obs.reply.transport is not None:
        return None
    if obs.sessions_before is not None and obs.sessions_after is not None:
        before, after = _session_view(obs.sessions_before), _session_view(obs.sessions_after)
        if before != after:
            added = sorted(set(after) - set(before))
            gone = sorted(set(before) - set(after))
            return Verdict("CMD-PARTIAL-STATE", "violation",
                           f"{obs.method} failed ({obs.reply.error}) but changed the sessions: "
                           f"added {added}, removed {gone}", "listSessions unchanged")
    if obs.disk_before != obs.disk_after:
        diff = sorted(k for k in set(obs.disk_before) | set(obs.disk_after)
                      if obs.disk_before.get(k) != obs.disk_after.get(k))
        return Verdict("CMD-PARTIAL-STATE", "violation",
                       f"{obs.method} failed ({obs.reply.error}) but changed the disk: {', '.join(diff[:5])}",
                       "the disk unchanged")
    return None


def chat_subset(obs: Observation) -> Verdict | None:
    if obs.method != "createChat" or not obs.reply.ok:
        return None
    p = _p(obs)
    dirs = p.get("workingDirectories")
    if not isinstance(dirs, list) or obs.sessions_before is None:
        return None
    session = obs.sessions_before.get(p.get("channel"))  # type: ignore[arg-type]
    if session is None:
        return None
    allowed = session.get("workingDirectories") or []
    outside = [d for d in dirs if d not in allowed]
    if outside:
        return Verdict("CMD-CHAT-SUBSET", "violation",
                       f"createChat accepted workingDirectories {outside} that are not in the session's set "
                       f"{allowed} (WIRE.md §11: the host MUST reject them)", "an error (-32602)")
    return None


def multiroot(obs: Observation) -> Verdict | None:
    if obs.method != "createSession" or not obs.reply.ok or obs.multiroot:
        return None
    p = _p(obs)
    dirs = p.get("workingDirectories")
    if not isinstance(dirs, list) or len(dirs) < 2 or obs.sessions_after is None:
        return None
    session = obs.sessions_after.get(p.get("channel"))  # type: ignore[arg-type]
    if session is None:
        return None
    kept = session.get("workingDirectories") or []
    if len(kept) > 1:
        return Verdict("CMD-MULTIROOT", "violation",
                       f"createSession with {len(dirs)} directories kept {len(kept)} although the agent "
                       "does not advertise multipleWorkingDirectories (only the first counts)",
                       dirs[:1])
    return None


def error_code(obs: Observation) -> Verdict | None:
    p = _p(obs)
    err = obs.reply.error
    code = err.get("code") if isinstance(err, dict) and obs.reply.transport is None else None
    channel = p.get("channel")
    if obs.method == "createSession" and obs.sessions_before is not None and isinstance(channel, str) \
            and channel in obs.sessions_before:
        # -32602 answers it too when the params are schema-invalid besides: a host may check
        # them first (the spec orders no errors)
        if code != -32003 and not (code == -32602 and params_valid(obs.document, obs.method, obs.params) is False):
            got = "success" if obs.reply.ok else f"code {code}"
            return Verdict("CMD-ERROR-CODE", "violation",
                           f"createSession on an existing session URI answered {got} "
                           "(WIRE.md §4.1: MUST be -32003 SessionAlreadyExists)", -32003)
        return None
    well_formed = set(p) <= {"channel", "uri", "followSymlinks"} and isinstance(p.get("followSymlinks", True), bool)
    if obs.method == "resourceResolve" and obs.reply.transport is None and well_formed:
        path = _local_path(p.get("uri"))
        roots = session_roots(obs.sessions_before)
        if path is not None and p.get("channel") == "ahp-root://":
            real = os.path.realpath(path)
            in_session = any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)
            if in_session and obs.fixture.path() in real and not os.path.lexists(real) and code != -32008:
                got = "success" if obs.reply.ok else f"code {code}"
                return Verdict("CMD-ERROR-CODE", "violation",
                               f"resourceResolve of a missing path inside a session directory answered {got} "
                               "(a missing resource MUST surface as NotFound -32008)", -32008)
    if code is not None and code not in documented_errors(obs.method):
        return Verdict("CMD-ERROR-CODE", "warning",
                       f"{obs.method} answered error code {code}, which the protocol does not document "
                       f"for this command (documented: {list(documented_errors(obs.method))})",
                       list(documented_errors(obs.method)))
    return None


#: The commands WIRE.md says a host MUST answer, and where: -32601 (Method not found) for one of
#: them is a violation, not a missing optional command (issue 23).
MUST_ANSWER: Mapping[str, str] = {
    "ping": "WIRE.md §3.1, §4.1: ping MUST be answered (with null), even before initialize",
    "initialize": "WIRE.md §3.1: initialize MUST be the first request, and answered",
    "createSession": "WIRE.md §4.1: createSession on an existing URI MUST answer -32003; the command exists",
}
#: Not in it: `fetchTurns` (its MUST orders the answer after `chat/turnsLoaded`; a host that never
#: sets `turnsNextCursor` is never asked) and `authenticate` (only a host that advertises protected
#: resources is asked; without any, authentication is a capability it lacks).


def must_answer(obs: Observation) -> Verdict | None:
    err = obs.reply.error
    if obs.method not in MUST_ANSWER or obs.reply.transport is not None or not isinstance(err, dict):
        return None
    if err.get("code") != -32601:
        return None
    return Verdict("CMD-MUST-METHOD", "violation",
                   f"{obs.method} answered -32601 (Method not found): {MUST_ANSWER[obs.method]}",
                   "an answer (a result, or an error the command documents)")


OUR_CHECKS: tuple[Callable[[Observation], Verdict | None], ...] = (
    confinement, partial_state, chat_subset, multiroot, must_answer, error_code,
)
CHECK_IDS = ("CMD-CONFINEMENT", "CMD-PARTIAL-STATE", "CMD-CHAT-SUBSET", "CMD-MULTIROOT", "CMD-MUST-METHOD",
             "CMD-ERROR-CODE")


def run_ours(obs: Observation) -> list[Verdict]:
    return [v for check in OUR_CHECKS if (v := check(obs)) is not None]


# -- schemathesis' checks, judged again on replay ------------------------------------------

#: schemathesis check name → our finding id and severity.
ST_CHECKS: Mapping[str, tuple[str, str]] = {
    "not_a_server_error": ("ST-SERVER-ERROR", "violation"),
    "response_schema_conformance": ("ST-RESPONSE-SCHEMA", "violation"),
    "status_code_conformance": ("ST-STATUS-CODE", "warning"),
    "negative_data_rejection": ("ST-NEGATIVE-DATA", "warning"),
}


def params_valid(document: Mapping[str, Any] | None, method: str, params: Any) -> bool | None:
    """Whether `params` are valid for the command's request schema (None: no schema to say)."""
    import jsonschema

    op = ((document or {}).get("paths") or {}).get(f"/rpc/{method}", {}).get("post")
    if not isinstance(op, Mapping):
        return None
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    return bool(jsonschema.Draft202012Validator({"components": document["components"], **schema}).is_valid(params))  # type: ignore[index]


def st_verdicts(method: str, params: Any, reply: Reply, document: Mapping[str, Any]) -> list[Verdict]:
    """What schemathesis' four checks say about one exchange, judged from the OpenAPI document."""
    import jsonschema

    out: list[Verdict] = []
    status = 200 if reply.ok else (504 if reply.transport == "timeout" else 502 if reply.transport else
                                   status_of((reply.error or {}).get("code")))
    if status >= 500:
        out.append(Verdict("ST-SERVER-ERROR", "violation", f"{method}: the bridge answered {status} ({reply.error})"))
    op = document["paths"][f"/rpc/{method}"]["post"]
    responses = op["responses"]
    if str(status) not in responses:
        out.append(Verdict("ST-STATUS-CODE", "warning", f"{method}: status {status} is not documented"))
    else:
        schema = responses[str(status)]["content"]["application/json"]["schema"]
        body = reply.result if reply.ok else reply.error
        root = {"components": document["components"], **schema}
        errors = list(jsonschema.Draft202012Validator(root).iter_errors(body))
        if errors:
            out.append(Verdict("ST-RESPONSE-SCHEMA", "violation",
                               f"{method}: the {status} body does not match its schema: {errors[0].message[:200]}"))
    if params_valid(document, method, params) is False and reply.ok:
        out.append(Verdict("ST-NEGATIVE-DATA", "warning", f"{method}: schema-invalid params were accepted"))
    return out
