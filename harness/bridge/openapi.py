"""An OpenAPI 3.1 view of AHP's commands, generated from a spec directory's schemas.

Each client→host request of `commands.schema.json` (every `<Name>Params` definition that is a
request: not a notification, not the handshake) becomes `POST /rpc/<method>`:

* **request body** = the command's params (`<Name>Params`, `channel` included);
* **200** = its result: `<Name>Result` when the schema defines one, JSON `null` for the
  commands whose result is `null` (WIRE.md §2), anything otherwise;
* **JSON-RPC errors** become 4xx/5xx responses whose body is the JSON-RPC error object
  (`{code, message, data?}`), one documented status per error family (`ERROR_STATUS`), and a
  per-method list of the codes the protocol documents for that command (`METHOD_ERRORS`):
  a code outside that list has no documented response, which schemathesis reports.

OpenAPI links chain `createSession` → `createChat` / `fetchTurns` / `listSessions` /
`resource*` / `disposeSession` for schemathesis' stateful phase.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from harness.spec.refs import reachable, refs_of
from harness.spec.specdir import SpecDir

Json = dict[str, Any]

#: `*Params` definitions that are not client→host requests the bridge may forward.
NOT_REQUESTS: Final = frozenset(
    {
        "BaseParams",
        "PaginatedParams",
        "DispatchActionParams",  # a notification
        "UnsubscribeParams",  # a notification
        "InitializeParams",  # the bridge's connection owns the handshake
        "ReconnectParams",
    }
)
#: Commands whose result is JSON `null` (WIRE.md §2).
NULL_RESULT: Final = frozenset(
    {"ping", "createSession", "disposeSession", "createChat", "disposeChat", "createTerminal", "disposeTerminal"}
)

#: JSON-RPC / AHP error code → the HTTP status the bridge answers with (docs/commands.md).
ERROR_STATUS: Final[Mapping[int, int]] = {
    -32700: 400,  # ParseError (the bridge always sends JSON: the host misread it)
    -32600: 400,  # InvalidRequest
    -32602: 400,  # InvalidParams
    -32005: 400,  # UnsupportedProtocolVersion
    -32007: 401,  # AuthRequired
    -32009: 403,  # PermissionDenied
    -32601: 404,  # MethodNotFound (a host without this command)
    -32001: 404,  # SessionNotFound
    -32002: 404,  # ProviderNotFound
    -32006: 404,  # ContentNotFound
    -32008: 404,  # NotFound
    -32003: 409,  # SessionAlreadyExists
    -32004: 409,  # TurnInProgress
    -32010: 409,  # AlreadyExists
    -32011: 409,  # Conflict
    -32603: 500,  # InternalError: the host broke
}
#: A code the bridge does not know (an undocumented error): 502 Bad Gateway.
UNKNOWN_CODE_STATUS: Final = 502
#: The host closed the connection or did not answer: 502 / 504, body code -32603.
TRANSPORT_STATUS: Final = 502
TIMEOUT_STATUS: Final = 504

#: Codes every command may answer with: invalid params, internal error, auth (WIRE.md §9:
#: -32007 "MAY come from any command"), method not found (a host without the command).
COMMON_ERRORS: Final = (-32602, -32603, -32007, -32601)
_NF, _PD, _AE = -32008, -32009, -32010
#: Codes the protocol documents per command (WIRE.md §4.1, the schema's descriptions).
METHOD_ERRORS: Final[Mapping[str, tuple[int, ...]]] = {
    "ping": (),
    "createSession": (-32003, -32002),
    "disposeSession": (-32001, _NF),
    "createChat": (-32001, _NF, _AE, -32003),
    "disposeChat": (-32001, _NF),
    "fetchTurns": (-32001, _NF),
    "listSessions": (),
    "subscribe": (-32001, _NF),
    "completions": (-32001, _NF),
    "resolveSessionConfig": (-32002, _NF),
    "sessionConfigCompletions": (-32002, _NF),
    "authenticate": (),
    "createTerminal": (-32001, _NF, _AE, -32003),
    "disposeTerminal": (-32001, _NF),
    "invokeChangesetOperation": (-32001, _NF),
    "createResourceWatch": (_NF, _PD),
    "resourceRead": (_NF, _PD),
    "resourceWrite": (_NF, _PD, _AE, -32011),
    "resourceList": (_NF, _PD),
    "resourceCopy": (_NF, _PD, _AE),
    "resourceMove": (_NF, _PD, _AE),
    "resourceDelete": (_NF, _PD),
    "resourceResolve": (_NF, _PD),
    "resourceMkdir": (_NF, _PD, _AE),
    "resourceRequest": (_PD, _NF),
}
#: For a command not in `METHOD_ERRORS` (a newer spec): every AHP application code.
ANY_AHP_ERRORS: Final = tuple(range(-32001, -32012, -1))

def method_of(params_def: str) -> str:
    base = params_def[: -len("Params")]
    return base[0].lower() + base[1:]


def commands_of(defs: Mapping[str, Any]) -> dict[str, str]:
    """method → its params definition, for every request the bridge exposes."""
    return {
        method_of(n): n
        for n in sorted(defs)
        if n.endswith("Params") and n not in NOT_REQUESTS and isinstance(defs[n], dict)
    }


def documented_errors(method: str) -> tuple[int, ...]:
    return tuple(dict.fromkeys((*COMMON_ERRORS, *METHOD_ERRORS.get(method, ANY_AHP_ERRORS))))


def status_of(code: Any) -> int:
    if isinstance(code, int) and not isinstance(code, bool):
        return ERROR_STATUS.get(code, UNKNOWN_CODE_STATUS)
    return UNKNOWN_CODE_STATUS


def _to_components(node: Any) -> Any:
    return json.loads(json.dumps(node).replace('"#/$defs/', '"#/components/schemas/'))


def _error_schema() -> Json:
    def when(code: int, data_def: str, required: bool) -> Json:
        cond: Json = {"properties": {"code": {"const": code}}, "required": ["code"]}
        if not required:
            cond["required"] = ["code", "data"]
        then: Json = {"properties": {"data": {"$ref": f"#/components/schemas/{data_def}"}}}
        if required:
            then["required"] = ["data"]
        return {"if": cond, "then": then}

    return {
        "type": "object",
        "description": "The JSON-RPC error object the host answered with.",
        "required": ["code", "message"],
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
        "allOf": [
            when(-32007, "AuthRequiredErrorData", True),  # data MUST be present (WIRE.md §9)
            when(-32009, "PermissionDeniedErrorData", False),
            when(-32005, "UnsupportedProtocolVersionErrorData", False),
        ],
    }


_ERROR_DATA_DEFS = ("AuthRequiredErrorData", "PermissionDeniedErrorData", "UnsupportedProtocolVersionErrorData")


def _responses(method: str, result: Json) -> Json:
    codes = documented_errors(method)
    by_status: dict[int, list[int]] = {}
    for c in codes:
        by_status.setdefault(ERROR_STATUS[c], []).append(c)
    responses: Json = {
        "200": {"description": "the command's result", "content": {"application/json": {"schema": result}}}
    }
    for status, cs in sorted(by_status.items()):
        responses[str(status)] = {
            "description": "JSON-RPC error " + ", ".join(str(c) for c in cs),
            "content": {
                "application/json": {
                    "schema": {
                        "allOf": [
                            {"$ref": "#/components/schemas/RpcError"},
                            {"properties": {"code": {"enum": cs}}},
                        ]
                    }
                }
            },
        }
    return responses


def _links(methods: set[str]) -> dict[str, Json]:
    """Links per source method (only those whose target the document has)."""
    body = "$request.body#/"
    table: dict[str, dict[str, tuple[str, Json]]] = {
        "createSession": {
            "CreateChat": ("createChat", {"channel": body + "channel"}),
            "ListSessions": ("listSessions", {"channel": "ahp-root://"}),
            "Subscribe": ("subscribe", {"channel": body + "channel"}),
            "DisposeSession": ("disposeSession", {"channel": body + "channel"}),
            "ListDirectory": ("resourceList", {"channel": "ahp-root://", "uri": body + "workingDirectories/0"}),
            "ResolveDirectory": ("resourceResolve", {"channel": "ahp-root://", "uri": body + "workingDirectories/0"}),
        },
        "createChat": {
            "FetchTurns": ("fetchTurns", {"channel": body + "chat"}),
            "DisposeChat": ("disposeChat", {"channel": body + "chat"}),
            "AnotherChat": ("createChat", {"channel": body + "channel"}),
            "ListSessions": ("listSessions", {"channel": "ahp-root://"}),
        },
        "disposeSession": {
            "Recreate": ("createSession", {"channel": body + "channel"}),
            "ListSessions": ("listSessions", {"channel": "ahp-root://"}),
        },
        "resourceMkdir": {
            "List": ("resourceList", {"channel": "ahp-root://", "uri": body + "uri"}),
        },
        "resourceWrite": {
            "ReadBack": ("resourceRead", {"channel": "ahp-root://", "uri": body + "uri"}),
            "Resolve": ("resourceResolve", {"channel": "ahp-root://", "uri": body + "uri"}),
        },
        "resourceList": {
            "Resolve": ("resourceResolve", {"channel": "ahp-root://", "uri": body + "uri"}),
        },
    }
    out: dict[str, Json] = {}
    for source, links in table.items():
        if source not in methods:
            continue
        kept = {
            name: {"operationId": target, "requestBody": req}
            for name, (target, req) in links.items()
            if target in methods
        }
        if kept:
            out[source] = kept
    return out


def build_openapi(
    spec: SpecDir | Mapping[str, Json],
    *,
    methods: Sequence[str] | None = None,
    title: str = "AHP commands (ahp-fuzz bridge)",
) -> Json:
    """The OpenAPI 3.1 document of a spec directory's commands (see the module docstring)."""
    from strategies.schema import SchemaSet  # lint + merge + INV-007 patches of the five files

    docs = spec.schemas if isinstance(spec, SpecDir) else spec
    schemas = SchemaSet(docs)
    defs = schemas.defs
    command_defs = commands_of(schemas.files.get("commands", {}).get("$defs", {}))
    if methods is not None:
        unknown = sorted(set(methods) - set(command_defs))
        if unknown:
            raise ValueError(f"not commands of this spec: {', '.join(unknown)}")
        command_defs = {m: command_defs[m] for m in methods}
    used: set[str] = set(_ERROR_DATA_DEFS)
    paths: Json = {}
    links = _links(set(command_defs))
    for method, params_def in command_defs.items():
        result_def = params_def[: -len("Params")] + "Result"
        if result_def in defs:
            result: Json = {"$ref": f"#/components/schemas/{result_def}"}
            used.add(result_def)
        elif method in NULL_RESULT:
            result = {"type": "null"}
        else:
            result = {}
        params_schema: Json = _to_components(defs[params_def])
        used |= refs_of(defs[params_def])
        responses = _responses(method, result)
        if method in links:
            responses["200"]["links"] = links[method]
        paths[f"/rpc/{method}"] = {
            "post": {
                "operationId": method,
                "summary": f"JSON-RPC `{method}` forwarded to the host",
                "x-ahp-method": method,
                "x-ahp-documented-errors": list(documented_errors(method)),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": params_schema}},
                },
                "responses": responses,
            }
        }
    components = _to_components(dict(sorted(reachable(defs, *used).items())))
    components["RpcError"] = _error_schema()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": str(docs.get("commands", {}).get("$id", "commands")),
            "description": "Generated by ahp-fuzz from the spec's commands.schema.json; "
            "see docs/commands.md for the error mapping.",
        },
        "paths": paths,
        "components": {"schemas": components},
    }
