"""The host's file surface: the `resource*` commands on the local disk (WIRE.md §4.1).

`resourceRead`, `resourceWrite`, `resourceList`, `resourceResolve` and `resourceMkdir`, each on
`file:` URIs, confined to the working directories of the host's live sessions. The spec does
not say which files a host serves (a receiver "enforces access via the same
permission/`resourceRequest` flow"); this host's documented policy (docs/commands.md) is:

* a URI is a `file:` URI with an empty or `localhost` authority, percent-decoded exactly once,
  absolute, without NUL; anything else is `-32602` (not a string, relative, NUL) or `-32008`
  (another scheme: there is no such resource here);
* its canonical path (`realpath`: `..` and every symlink resolved) must be a working directory
  of a live session, or lie below one (canonicalised the same way) — else `-32009`
  PermissionDenied. So `..`, `%2e%2e`, absolute paths, symlinks that leave the tree and
  URI-equivalent spellings all land on the same canonical path and the same verdict;
* missing → `-32008` NotFound; `resourceMkdir` over a non-directory and `createOnly` over an
  existing file → `-32010` AlreadyExists; a failed command changes nothing on disk.

The named defects of this module (`resource-*` in `defects.py`) each bypass one step, at
exactly one `host.defects.has(...)` spot, the way real hosts get these wrong.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import stat
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from . import jsonrpc as rpc
from .connection import Connection
from .core import Method

if TYPE_CHECKING:
    from .core import Host

Params = dict[str, Any]
PERMISSION_DENIED = -32009
CONFLICT = -32011


# -- URIs and confinement --------------------------------------------------------------------


def file_path(uri: Any, key: str = "uri") -> str:
    """The absolute local path a `file:` URI names (percent-decoded once, not canonicalised)."""
    if not isinstance(uri, str) or not uri:
        raise rpc.invalid_params(f"{key} must be a non-empty URI string")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise rpc.RpcError(rpc.NOT_FOUND, f"Resource not found: {uri} (this host serves file: URIs only)")
    if parts.netloc not in ("", "localhost"):
        raise rpc.RpcError(rpc.NOT_FOUND, f"Resource not found: {uri} (remote authority {parts.netloc!r})")
    path = unquote(parts.path)
    if "\x00" in path:
        raise rpc.invalid_params(f"{key} contains a NUL byte")
    if not path.startswith("/"):
        raise rpc.invalid_params(f"{key} must be an absolute file: URI")
    return path


def file_uri(path: str) -> str:
    return "file://" + quote(path)


def session_roots(host: Host) -> list[str]:
    """Canonical paths of every live session's working directories (non-file ones skipped)."""
    roots: list[str] = []
    for ch in host.channels.values():
        if ch.kind != "session":
            continue
        for d in ch.state.get("workingDirectories") or []:
            try:
                roots.append(os.path.realpath(file_path(d)))
            except rpc.RpcError:
                continue
    return list(dict.fromkeys(roots))


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _deny(uri: str) -> rpc.RpcError:
    return rpc.RpcError(PERMISSION_DENIED, f"Permission denied: {uri} is outside the sessions' working directories")


def confined(host: Host, uri: str, path: str) -> str:
    """`path` canonicalised, or PermissionDenied when it is not under a session directory."""
    real = os.path.realpath(path)
    if not any(inside(real, r) for r in session_roots(host)):
        raise _deny(uri)
    return real


def _root_only(params: Params) -> None:
    if params["channel"] != rpc.ROOT:
        raise rpc.invalid_params(f"resource commands take channel {rpc.ROOT!r}")


def _bool(params: Params, key: str) -> bool:
    value = params.get(key, False)
    if not isinstance(value, bool):
        raise rpc.invalid_params(f"{key} must be a boolean")
    return value


def _not_found(uri: str) -> rpc.RpcError:
    return rpc.RpcError(rpc.NOT_FOUND, f"Resource not found: {uri}")


# -- commands --------------------------------------------------------------------------------


def resource_read(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    uri = params.get("uri")
    path = file_path(uri)
    encoding = params.get("encoding")
    if encoding is not None and encoding not in ("utf-8", "base64"):
        raise rpc.invalid_params("encoding must be 'utf-8' or 'base64'")
    assert isinstance(uri, str)
    if host.defects.has("resource-read-traversal"):
        # the defect: a string-prefix test on the raw path; open() then resolves `..` itself
        if not any(path.startswith(r) for r in session_roots(host)):
            raise _deny(uri)
        real = path
    else:
        real = confined(host, uri, path)
    if os.path.isdir(real) and not host.defects.has("resource-read-dir-crash"):
        raise rpc.RpcError(rpc.NOT_FOUND, f"Resource not found: {uri} is a directory, not a file")
    try:
        with open(real, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise _not_found(uri) from None
    except NotADirectoryError:
        raise _not_found(uri) from None
    except PermissionError:
        raise _deny(uri) from None
    result: dict[str, Any] = {}
    if encoding != "base64":
        try:
            result = {"data": data.decode("utf-8"), "encoding": "utf-8"}
        except UnicodeDecodeError:
            result = {}
    if not result:
        result = {"data": base64.b64encode(data).decode("ascii"), "encoding": "base64"}
    ctype = mimetypes.guess_type(real)[0]
    if ctype:
        result["contentType"] = ctype
    return result


def resource_write(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    uri = params.get("uri")
    path = file_path(uri)
    assert isinstance(uri, str)
    data_text = params.get("data")
    if not isinstance(data_text, str):
        raise rpc.invalid_params("data must be a string")
    encoding = params.get("encoding")
    if encoding == "utf-8":
        data = data_text.encode("utf-8", "surrogatepass")
    elif encoding == "base64":
        try:
            data = base64.b64decode(data_text, validate=True)
        except (binascii.Error, ValueError):
            raise rpc.invalid_params("data is not valid base64") from None
    else:
        raise rpc.invalid_params("encoding must be 'utf-8' or 'base64'")
    create_only = _bool(params, "createOnly")
    mode = params.get("mode", "truncate")
    if mode not in ("truncate", "append", "insert"):
        raise rpc.invalid_params("mode must be 'truncate', 'append' or 'insert'")
    position = params.get("position", 0)
    if not isinstance(position, int) or isinstance(position, bool) or position < 0:
        raise rpc.invalid_params("position must be a non-negative integer")
    if_match = params.get("ifMatch")
    if if_match is not None and not isinstance(if_match, str):
        raise rpc.invalid_params("ifMatch must be a string")
    if host.defects.has("resource-symlink-write"):
        # the defect: the check normalises `..` lexically but never resolves symlinks
        real = os.path.normpath(path)
        if not any(inside(real, r) for r in session_roots(host)):
            raise _deny(uri)
    else:
        real = confined(host, uri, path)
    if os.path.isdir(real):
        raise rpc.RpcError(rpc.ALREADY_EXISTS, f"Already exists: {uri} is a directory")
    parent = os.path.dirname(real)
    if not os.path.isdir(parent):
        raise _not_found(f"{uri} (parent directory)")
    exists = os.path.exists(real)
    if exists and create_only:
        if host.defects.has("resource-createonly-clobber"):
            with open(real, "wb"):  # the defect: opened for writing before the existence check
                pass
        raise rpc.RpcError(rpc.ALREADY_EXISTS, f"Already exists: {uri}")
    old = b""
    if exists:
        with open(real, "rb") as fh:
            old = fh.read()
    if if_match is not None and not exists:
        # no file, no current etag: nothing can match (ResourceWriteParams.ifMatch: "the server
        # MUST fail with Conflict if the current etag does not match")
        raise rpc.RpcError(CONFLICT, f"Conflict: {uri} does not exist (ifMatch {if_match!r})")
    if if_match is not None and if_match != _etag(real):
        raise rpc.RpcError(CONFLICT, f"Conflict: {uri} changed (ifMatch {if_match!r})")
    if position > len(old):
        raise rpc.invalid_params(f"position {position} is past the end of the file ({len(old)} bytes)")
    if mode == "truncate":
        new = old[:position] + data if position else data
    elif mode == "append":
        cut = len(old) - position
        new = old[:cut] + data + old[cut:]
    else:
        new = old[:position] + data + old[position:]
    tmp = f"{real}.ahp-tmp-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(new)
    os.replace(tmp, real)
    return {}


def resource_list(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    uri = params.get("uri")
    if host.defects.has("resource-encoded-traversal"):
        # the defect: confinement is checked on the still-encoded path, decoding happens later
        raw = _raw_path(uri)
        if not any(inside(os.path.realpath(raw), r) for r in session_roots(host)):
            raise _deny(str(uri))
        real = os.path.realpath(unquote(raw))
    else:
        path = file_path(uri)
        real = confined(host, str(uri), path)
    try:
        with os.scandir(real) as it:
            entries = [
                {"name": e.name, "type": "directory" if e.is_dir() else "file"} for e in it
            ]
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(str(uri)) from None
    except PermissionError:
        raise _deny(str(uri)) from None
    entries.sort(key=lambda e: e["name"])
    return {"entries": entries}


def _raw_path(uri: Any) -> str:
    if not isinstance(uri, str) or not uri:
        raise rpc.invalid_params("uri must be a non-empty URI string")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        raise _not_found(uri)
    if not parts.path.startswith("/") or "\x00" in parts.path:
        raise rpc.invalid_params("uri must be an absolute file: URI")
    return parts.path


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}Z"


def _etag(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_mtime_ns:x}-{st.st_size:x}"


def resource_resolve(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    uri = params.get("uri")
    path = file_path(uri)
    assert isinstance(uri, str)
    follow = params.get("followSymlinks", True)
    if not isinstance(follow, bool):
        raise rpc.invalid_params("followSymlinks must be a boolean")
    norm = os.path.normpath(path)
    # followSymlinks: the canonical path; otherwise the link itself (its parent canonicalised)
    real = os.path.realpath(path) if follow else os.path.join(os.path.realpath(os.path.dirname(norm)), os.path.basename(norm))
    roots = session_roots(host)
    if host.defects.has("resource-prefix-confusion"):
        # the defect: a prefix test without the separator (…/alpha admits …/alpha-private)
        allowed = any(real.startswith(r) for r in roots)
    else:
        allowed = any(inside(real, r) for r in roots)
    if not allowed:
        raise _deny(uri)
    try:
        st = os.stat(real) if follow else os.lstat(real)
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(uri) from None
    if stat.S_ISLNK(st.st_mode):
        kind = "symlink"
    else:
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
    result_uri = file_uri(real) if follow and real != norm else uri
    target = real
    result: dict[str, Any] = {"uri": result_uri, "type": kind, "mtime": _iso(st.st_mtime)}
    if kind == "file":
        result["size"] = st.st_size
        result["etag"] = f"{st.st_mtime_ns:x}-{st.st_size:x}"
        ctype = mimetypes.guess_type(target)[0]
        if ctype:
            result["contentType"] = ctype
    return result


def resource_mkdir(host: Host, conn: Connection, params: Params) -> Any:
    _root_only(params)
    uri = params.get("uri")
    path = file_path(uri)
    assert isinstance(uri, str)
    real = confined(host, uri, path)
    if os.path.isdir(real):
        return {}
    # find the first missing component; every existing one must be a directory
    probe = real
    missing: list[str] = []
    while not os.path.exists(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise rpc.RpcError(rpc.ALREADY_EXISTS, f"Already exists: {file_uri(probe)} is not a directory")
    for p in reversed(missing):
        os.mkdir(p)
    return {}


METHODS: dict[str, Method] = {
    "resourceRead": resource_read,
    "resourceWrite": resource_write,
    "resourceList": resource_list,
    "resourceResolve": resource_resolve,
    "resourceMkdir": resource_mkdir,
}

__all__ = ["METHODS", "confined", "file_path", "file_uri", "inside", "session_roots"]
