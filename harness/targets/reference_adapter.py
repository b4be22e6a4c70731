"""Serve a reference-model-like reducer over the adapter protocol (both forms).

    python -m harness.targets.reference_adapter [--profile 0.7.0] [--model MODULE:ATTR]
                                                [--forms simple,fast] [--name NAME]
                                                [--announce-versions 0.7.0,0.8.0]

`--model` names what to serve instead of the reference model: `package.module:attr` or
`path/to/file.py:attr`, where attr is an object with `reduce(kind, state, action, now_ms)`,
or a class / factory called with the `Profile` that returns one. That is how a broken copy
of the reference model is served for mutation checks. A served object may also have
`encode_state(state) -> state`: how it writes a state out (a typed client's encoder); the
states it keeps under handles stay as reduced, what goes on the wire is encoded.

`--strict` serves the reference model with its payload checks on (every schema-invalid
payload, nested required fields included, is answered with a `MalformedAction` error reply);
by default the handlers' own checks apply (the harness sends schema-invalid payloads only as
probes, where any answer but a crash or a hang is fine). The optional `roundTrip` request (announced
as `"roundTrip": true`) decodes and re-encodes a wire value with the model's JSON codec.

The profile comes from `--profile`, else from the environment the harness sets
(`AHP_FUZZ_PROFILE`, `AHP_PROTOCOL_VERSION`), else the pinned version.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from harness.reference import MalformedAction, Model, Profile, codec
from harness.spec.versions import KINDS, PINNED_VERSION, format_version, parse_version

from . import jsonio
from .delta import diff

#: Most replies written per write(): small enough that the harness starts early.
FLUSH_EVERY = 64

_encode = jsonio.dumps
_decode = jsonio.loads


class ModelLike(Protocol):
    def reduce(
        self, kind: str, state: dict[str, Any], action: Any, now_ms: int
    ) -> dict[str, Any]: ...


def profile_from(name: str | None) -> Profile:
    """The profile named on the command line, else the one the harness passed in the
    environment (`AHP_FUZZ_PROFILE`, then `AHP_PROTOCOL_VERSION`), else the pinned version."""
    if name:
        return Profile.named(name)
    raw = os.environ.get("AHP_FUZZ_PROFILE")
    if raw:
        try:
            given = json.loads(raw)
        except ValueError:
            given = None
        if isinstance(given, dict) and isinstance(given.get("version"), str):
            known = {f.name for f in dataclasses.fields(Profile)}
            fields = {k: v for k, v in given.items() if k in known}
            fields["version"] = parse_version(given["version"])
            return Profile(**fields)
    return Profile.named(os.environ.get("AHP_PROTOCOL_VERSION") or PINNED_VERSION)


def load_model(spec: str, profile: Profile) -> ModelLike:
    """Resolve `MODULE:ATTR` or `FILE.py:ATTR` to a model (calling a class/factory with profile)."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise ValueError(f"--model wants MODULE:ATTR or FILE.py:ATTR, got {spec!r}")
    if where.endswith(".py") or os.sep in where:
        path = Path(where).resolve()
        if not path.is_file():
            raise ValueError(f"--model: no such file {path}")
        mod_spec = importlib.util.spec_from_file_location(f"_ahp_served_model_{path.stem}", path)
        if mod_spec is None or mod_spec.loader is None:
            raise ValueError(f"--model: cannot load {path}")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[mod_spec.name] = module
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "reduce")):
        obj = obj(profile)
    if not callable(getattr(obj, "reduce", None)):
        raise ValueError(f"--model {spec}: {obj!r} has no reduce(kind, state, action, now_ms)")
    return obj


class Server:
    """The request handlers of both forms over one model; handles live in `self.handles`."""

    def __init__(self, model: ModelLike) -> None:
        self._reduce = model.reduce
        self._out: Callable[[Any], Any] = getattr(model, "encode_state", None) or _same
        self.handles: dict[Any, tuple[str, dict[str, Any]]] = {}
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "reduce": self._op_reduce,
            "load": self._op_load,
            "step": self._op_step,
            "read": self._op_read,
            "drop": self._op_drop,
            "roundTrip": self._op_round_trip,
        }

    def handle_line(self, line: bytes) -> bytes:
        try:
            req = _decode(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return _reply_error(None, "badRequest", f"request is not JSON: {e}")
        if type(req) is not dict:
            return _reply_error(None, "badRequest", "request is not an object")
        rid = req.get("id")
        name = req.get("op", "reduce")
        op = self._ops.get(name) if type(name) is str else None
        if op is None:
            return _reply_error(rid, "unsupportedOp", f"unknown op {req.get('op')!r}")
        try:
            body = op(req)
        except _BadRequest as e:
            return _reply_error(rid, e.code, str(e))
        except Exception as e:
            etype = type(e).__name__
            return _encode(
                {
                    "id": rid,
                    "error": {
                        "message": f"{etype}: {e}",
                        "type": etype,
                        "code": "reducerError",
                        **(
                            {}
                            if isinstance(e, MalformedAction)
                            else {"stack": traceback.format_exc()}
                        ),
                    },
                }
            ).encode()
        try:
            return _encode({"id": rid, **body}).encode()
        except ValueError as e:  # NaN/Infinity in a state: not JSON
            return _reply_error(rid, "reducerError", f"result is not JSON-encodable: {e}")

    def _kind(self, req: dict[str, Any]) -> str:
        kind = req.get("kind")
        if kind not in KINDS:
            raise _BadRequest("unknownKind", f"unknown state kind {kind!r}")
        return kind

    def _handle(self, req: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        try:
            return self.handles[req.get("handle")]
        except (KeyError, TypeError):
            raise _BadRequest(
                "unknownHandle", f"no state loaded under handle {req.get('handle')!r}"
            ) from None

    def _op_reduce(self, req: dict[str, Any]) -> dict[str, Any]:
        kind, state, now = self._kind(req), req.get("state"), _now(req)
        if type(state) is not dict:
            raise _BadRequest("badRequest", "reduce needs a state object")
        return {"state": self._out(self._reduce(kind, state, req.get("action"), now))}

    def _op_load(self, req: dict[str, Any]) -> dict[str, Any]:
        state = req.get("state")
        if type(state) is not dict:
            raise _BadRequest("badRequest", "load needs a state object")
        try:
            self.handles[req["handle"]] = (self._kind(req), state)
        except (KeyError, TypeError):
            raise _BadRequest("badRequest", "load needs a handle (string or integer)") from None
        return {}

    def _op_step(self, req: dict[str, Any]) -> dict[str, Any]:
        kind, old = self._handle(req)
        new = self._reduce(kind, old, req.get("action"), _now(req))
        self.handles[req["handle"]] = (kind, new)
        if self._out is not _same:
            return {"changes": diff(self._out(old), self._out(new))}
        return {"changes": diff(old, new)}

    def _op_read(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"state": self._out(self._handle(req)[1])}

    def _op_round_trip(self, req: dict[str, Any]) -> dict[str, Any]:
        wire = req.get("wire")
        if type(wire) is not str:
            raise _BadRequest("badRequest", "roundTrip needs the wire text as a string")
        try:
            value = codec.decode(wire)
        except codec.WireDecodeError as e:
            raise _BadRequest("badRequest", f"wire text is not JSON: {e}") from e
        return {"wire": codec.encode(self._out(value))}

    def _op_drop(self, req: dict[str, Any]) -> dict[str, Any]:
        self.handles.pop(req.get("handle"), None)
        return {}


def _same(value: Any) -> Any:
    return value


class _BadRequest(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _now(req: dict[str, Any]) -> int:
    now = req.get("now")
    if type(now) is not int:
        raise _BadRequest("badRequest", f"now must be an integer (ms since the epoch), got {now!r}")
    return now


def _reply_error(rid: Any, code: str, message: str) -> bytes:
    return _encode({"id": rid, "error": {"message": message, "code": code}}).encode()


def serve(server: Server, announcement: dict[str, Any], infd: int = 0, outfd: int = 1) -> int:
    """Announce, then answer request lines until EOF on `infd`. Replies go out in batches of
    up to FLUSH_EVERY lines, and at the latest when the input read so far is answered, so
    pipelined requests cost few wakeups and the harness can start on the first replies."""
    _write_all(outfd, _encode(announcement).encode() + b"\n")
    buf = b""
    while True:
        chunk = os.read(infd, 1 << 16)
        if not chunk:
            return 0
        buf += chunk
        if b"\n" not in chunk:
            continue
        *lines, buf = buf.split(b"\n")
        out: list[bytes] = []
        for line in lines:
            if line.strip():
                out.append(server.handle_line(line))
                if len(out) >= FLUSH_EVERY:
                    _write_all(outfd, b"\n".join(out) + b"\n")
                    out.clear()
        if out:
            _write_all(outfd, b"\n".join(out) + b"\n")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m harness.targets.reference_adapter", description=__doc__
    )
    p.add_argument(
        "--profile",
        help="profile to model: a version (0.6.0) or a named profile (0.7.0-main); "
        "default: the harness's (from the environment), else the pinned version",
    )
    p.add_argument(
        "--model", help="serve MODULE:ATTR or FILE.py:ATTR instead of the reference model"
    )
    p.add_argument(
        "--forms", default="simple,fast", help="forms to announce (default: simple,fast)"
    )
    p.add_argument("--name", help="name to announce")
    p.add_argument("--strict", action="store_true",
                   help="serve the reference model with its payload checks on (schema-invalid "
                   "payloads answered with an error)")
    p.add_argument("--announce-versions", metavar="V,V",
                   help="announce these protocol versions (`protocolVersions`): an implementation of several "
                   "versions, fuzzed in a lane per version; each process serves the one its environment names")
    args = p.parse_args(argv)
    try:
        profile = profile_from(args.profile)
        model = load_model(args.model, profile) if args.model else Model(profile, check_payloads=args.strict)
    except (ValueError, ImportError, AttributeError, TypeError) as e:
        print(f"reference_adapter: {e}", file=sys.stderr)
        return 2
    forms = [f for f in args.forms.split(",") if f]
    announcement = {
        "ahpAdapter": 1,
        "name": args.name or ("reference" if not args.model else f"model {args.model}"),
        "forms": forms,
        "protocolVersion": format_version(profile.version),
        "profile": profile.label,
        "roundTrip": True,
    }
    if args.announce_versions:
        announcement["protocolVersions"] = [v for v in args.announce_versions.split(",") if v]
    try:
        return serve(Server(model), announcement)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
