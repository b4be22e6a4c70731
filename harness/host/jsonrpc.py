"""JSON-RPC 2.0 framing for the host: error codes, responses, and sorting one frame into a
request, a notification or an error answer (WIRE.md §2, §9, §10)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from harness.reference.codec import WireDecodeError, decode

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
SESSION_NOT_FOUND: Final = -32001
PROVIDER_NOT_FOUND: Final = -32002
SESSION_ALREADY_EXISTS: Final = -32003
UNSUPPORTED_PROTOCOL_VERSION: Final = -32005
NOT_FOUND: Final = -32008
ALREADY_EXISTS: Final = -32010

ROOT: Final = "ahp-root://"

#: WebSocket close codes the host uses.
CLOSE_NORMAL: Final = 1000
CLOSE_MESSAGE_TOO_BIG: Final = 1009
CLOSE_INTERNAL_ERROR: Final = 1011


class RpcError(Exception):
    """Raised by a method handler: becomes the error response of that request."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


def invalid_params(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {message}")


def result_response(req_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def error_response(req_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": error.to_json()}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@dataclass(frozen=True, slots=True)
class Call:
    """A well-formed request (`is_request`) or notification addressed to `method`."""

    method: str
    params: Any
    req_id: Any
    is_request: bool


@dataclass(frozen=True, slots=True)
class Reject:
    """A frame the host answers with an error (or, when `answer` is None, ignores)."""

    answer: dict[str, Any] | None


def _usable_id(value: Any) -> bool:
    return (isinstance(value, (int, str)) and not isinstance(value, bool)) or value is None


def classify(frame: str | bytes) -> Call | Reject:
    """Sort one WebSocket message per the malformed-input policy of WIRE.md §10.

    Binary frames are decoded as UTF-8 (invalid UTF-8 is a parse error). A batch (JSON array)
    gets one -32600 with id null. An object without `method` gets -32600 if it has an `id`, and
    is otherwise ignored (it may be a response to a host→client request: the host sends none).
    """
    try:
        text = frame.decode("utf-8") if isinstance(frame, bytes) else frame
        msg = decode(text)
    except (UnicodeDecodeError, WireDecodeError) as e:
        return Reject(error_response(None, RpcError(PARSE_ERROR, f"Parse error: {e}")))
    except ValueError as e:  # e.g. an integer over Python's 4300-digit conversion limit
        return Reject(error_response(None, RpcError(PARSE_ERROR, f"Parse error: {e}")))
    if isinstance(msg, list):
        return Reject(error_response(None, RpcError(INVALID_REQUEST, "Invalid Request: batches are not supported")))
    if not isinstance(msg, dict):
        return Reject(error_response(None, RpcError(INVALID_REQUEST, "Invalid Request: not an object")))
    has_id = "id" in msg
    req_id = msg.get("id")
    echo_id = req_id if has_id and _usable_id(req_id) else None
    if msg.get("jsonrpc") != "2.0":
        return Reject(error_response(echo_id, RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')))
    method = msg.get("method")
    if method is None:
        if has_id and ("result" in msg or "error" in msg):
            return Reject(None)  # a response; the host never sent a request
        if has_id:
            return Reject(error_response(echo_id, RpcError(INVALID_REQUEST, "Invalid Request: no method")))
        return Reject(None)
    if not isinstance(method, str) or (has_id and not _usable_id(req_id)):
        if not has_id:
            return Reject(None)
        return Reject(error_response(echo_id, RpcError(INVALID_REQUEST, "Invalid Request: bad method or id")))
    return Call(method, msg.get("params"), req_id, has_id)
