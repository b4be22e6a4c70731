"""The OpenAPI view of the commands schema, and the ASGI bridge over a real host."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from harness.bridge.app import BRIDGE_HEADER, BridgeApp, HostLink
from harness.bridge.fixture import FileFixture
from harness.bridge.openapi import (
    ERROR_STATUS,
    NULL_RESULT,
    UNKNOWN_CODE_STATUS,
    build_openapi,
    documented_errors,
    status_of,
)


@pytest.fixture(scope="module")
def doc(spec_dir: Any) -> dict[str, Any]:
    return build_openapi(spec_dir)


def test_every_request_of_the_schema_is_an_operation(doc: dict[str, Any]) -> None:
    methods = {p.rsplit("/", 1)[-1] for p in doc["paths"]}
    assert {"createSession", "createChat", "fetchTurns", "listSessions", "disposeSession", "resourceRead",
            "resourceWrite", "resourceList", "resourceResolve", "resourceMkdir", "ping"} <= methods
    assert not methods & {"initialize", "reconnect", "dispatchAction", "unsubscribe", "base", "paginated"}
    for m in NULL_RESULT & methods:
        assert doc["paths"][f"/rpc/{m}"]["post"]["responses"]["200"]["content"]["application/json"]["schema"] == {"type": "null"}
    read = doc["paths"]["/rpc/resourceRead"]["post"]
    assert read["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ResourceReadResult"}
    assert read["requestBody"]["content"]["application/json"]["schema"]["required"] == ["channel", "uri"]


def test_errors_map_to_documented_statuses(doc: dict[str, Any]) -> None:
    read = doc["paths"]["/rpc/resourceRead"]["post"]["responses"]
    assert set(read) == {"200", "400", "401", "403", "404", "500"}
    codes_404 = read["404"]["content"]["application/json"]["schema"]["allOf"][1]["properties"]["code"]["enum"]
    assert sorted(codes_404) == [-32601, -32008]
    assert status_of(-32009) == 403 and status_of(-32003) == 409 and status_of(-32603) == 500
    assert status_of(-1) == UNKNOWN_CODE_STATUS and status_of("x") == UNKNOWN_CODE_STATUS
    assert all(c in ERROR_STATUS for m in ("createSession", "resourceWrite") for c in documented_errors(m))


def test_error_body_schema_requires_auth_data(doc: dict[str, Any]) -> None:
    root = {"components": doc["components"], "$ref": "#/components/schemas/RpcError"}
    v = jsonschema.Draft202012Validator(root)
    assert v.is_valid({"code": -32009, "message": "no"})
    assert not v.is_valid({"code": -32007, "message": "auth"})  # data MUST be present for AuthRequired
    assert not v.is_valid({"code": -32005, "message": "x", "data": {"supportedVersions": "0.7.0"}})
    assert not v.is_valid({"message": "no code"})


def test_links_chain_create_session_to_its_followers(doc: dict[str, Any]) -> None:
    links = doc["paths"]["/rpc/createSession"]["post"]["responses"]["200"]["links"]
    targets = {link["operationId"] for link in links.values()}
    assert {"createChat", "listSessions", "disposeSession", "resourceList"} <= targets
    assert links["CreateChat"]["requestBody"] == {"channel": "$request.body#/channel"}
    chat_links = doc["paths"]["/rpc/createChat"]["post"]["responses"]["200"]["links"]
    assert chat_links["FetchTurns"]["requestBody"] == {"channel": "$request.body#/chat"}


def test_schemathesis_loads_the_document_with_its_links(spec_dir: Any) -> None:
    import schemathesis

    linked = ("createSession", "createChat", "fetchTurns", "listSessions", "disposeSession", "resourceList")
    small = build_openapi(spec_dir, methods=linked)
    schema = schemathesis.openapi.from_dict(small)
    ops = [r.ok() for r in schema.get_all_operations()]
    assert sorted(op.path.rsplit("/", 1)[-1] for op in ops) == sorted(linked)
    assert schema.as_state_machine() is not None  # raises NoLinksFound without usable links
    with pytest.raises(ValueError):
        build_openapi({"commands": {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {}}},
                      methods=("resourceRead",))


# -- the ASGI app over a real host ------------------------------------------------------------


def _request(app: BridgeApp, method: str, path: str, body: bytes = b"") -> tuple[int, dict[str, str], Any]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app({"type": "http", "method": method, "path": path}, receive, send))
    start, payload = sent[0], sent[1]
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, json.loads(payload["body"])


@pytest.fixture()
def bridge(spec_dir: Any) -> Iterator[tuple[BridgeApp, FileFixture]]:
    from harness.host import start_host

    fx = FileFixture.create(seed=1)
    host = start_host(port=0)
    link = HostLink(host.url)
    try:
        link.open()
        doc = build_openapi(spec_dir, methods=("ping", "createSession", "resourceRead", "resourceWrite"))
        yield BridgeApp(link, doc, fence=fx.fenced), fx
    finally:
        link.close()
        host.close()
        fx.close()


def test_bridge_forwards_results_and_maps_errors(bridge: tuple[BridgeApp, FileFixture]) -> None:
    app, fx = bridge
    status, _, served = _request(app, "GET", "/openapi.json")
    assert status == 200 and "/rpc/ping" in served["paths"]
    assert _request(app, "POST", "/rpc/ping", b'{"channel": "ahp-root://"}')[::2] == (200, None)
    body = json.dumps({"channel": "ahp-session:/t", "workingDirectories": [fx.session_uris[0]]}).encode()
    assert _request(app, "POST", "/rpc/createSession", body)[0] == 200
    status, _, err = _request(app, "POST", "/rpc/createSession", body)
    assert (status, err["code"]) == (409, -32003)
    read = json.dumps({"channel": "ahp-root://", "uri": "file://" + fx.path("work/alpha/notes.txt")}).encode()
    status, _, result = _request(app, "POST", "/rpc/resourceRead", read)
    assert status == 200 and result["data"] == "alpha notes\n"
    outside = json.dumps({"channel": "ahp-root://", "uri": "file://" + fx.path("outside")}).encode()
    assert _request(app, "POST", "/rpc/resourceRead", outside)[0] == 403
    assert [e.method for e in app.exchanges] == ["ping", "createSession", "createSession", "resourceRead", "resourceRead"]


def test_bridge_answers_for_itself_on_bad_requests_and_fenced_writes(bridge: tuple[BridgeApp, FileFixture]) -> None:
    app, _ = bridge
    status, headers, _ = _request(app, "POST", "/rpc/resourceWrite",
                                  b'{"channel": "ahp-root://", "uri": "file:///etc/x", "data": "x", "encoding": "utf-8"}')
    assert status == 403 and headers[BRIDGE_HEADER] == "fenced"
    assert app.exchanges[-1].fenced is not None
    assert _request(app, "POST", "/rpc/ping", b"{not json")[0] == 400
    status, headers, _ = _request(app, "POST", "/rpc/initialize", b"{}")
    assert status == 404 and headers[BRIDGE_HEADER] == "no-route"
    assert _request(app, "GET", "/rpc/ping")[0] == 405
