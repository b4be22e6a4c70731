"""The embedded host's file surface (harness/host/resources.py) over a real WebSocket: what it
serves, what it refuses, and what each command-level defect breaks."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from typing import Any

import pytest

from harness.bridge.app import Reply
from harness.bridge.fuzz import CommandSession

ROOT = "ahp-root://"


@pytest.fixture()
def host() -> Iterator[CommandSession]:
    s = CommandSession("host:embedded", None)
    try:
        s.setup()
        yield s
    finally:
        s.close()


def _u(s: CommandSession, rel: str) -> str:
    return "file://" + s.fixture.path(rel)


def _call(s: CommandSession, method: str, **params: Any) -> Reply:
    return s.call(method, {"channel": ROOT, **params})


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _code(r: Reply) -> Any:
    return (r.error or {}).get("code")


def test_reads_lists_and_resolves_inside_the_sessions(host: CommandSession) -> None:
    r = _call(host, "resourceRead", uri=_u(host, "work/alpha/notes.txt"))
    assert r.result == {"data": "alpha notes\n", "encoding": "utf-8", "contentType": "text/plain"}
    b64 = _call(host, "resourceRead", uri=_u(host, "work/beta/b.txt"), encoding="base64")
    assert base64.b64decode(b64.result["data"]) == b"beta\n"
    entries = _call(host, "resourceList", uri=_u(host, "work/alpha")).result["entries"]
    assert {e["name"]: e["type"] for e in entries} == {
        "link-in": "directory", "link-out": "directory", "notes.txt": "file", "sub": "directory"}
    res = _call(host, "resourceResolve", uri=_u(host, "work/alpha/link-in/deep.txt")).result
    assert res["type"] == "file" and res["uri"] == _u(host, "work/alpha/sub/deep.txt") and res["size"] == 5
    link = _call(host, "resourceResolve", uri=_u(host, "work/alpha/link-out"), followSymlinks=False).result
    assert link["type"] == "symlink"
    for spelling in ("file://localhost" + host.fixture.path("work/alpha/notes.txt"),
                     "file:" + host.fixture.path("work/alpha/notes.txt"),
                     _u(host, "work/%61lpha/notes.txt"), _u(host, "work/./alpha//notes.txt")):
        assert _call(host, "resourceRead", uri=spelling).ok, spelling


def test_refuses_everything_that_leaves_the_sessions(host: CommandSession) -> None:
    token = host.fixture.token
    for rel in (f"work/alpha/../../outside/{token}.txt", f"work/alpha/%2e%2e/%2e%2e/outside/{token}.txt",
                f"work/alpha/link-out/{token}.txt", f"outside/{token}.txt", f"work/alpha-private/{token}.txt"):
        assert _code(_call(host, "resourceRead", uri=_u(host, rel))) == -32009, rel
        assert _code(_call(host, "resourceResolve", uri=_u(host, rel))) == -32009, rel
    assert _code(_call(host, "resourceList", uri=_u(host, "work/alpha/%2e%2e/%2e%2e/outside"))) == -32009
    assert _code(_call(host, "resourceWrite", uri=_u(host, "work/alpha/link-out/x"), data="x", encoding="utf-8")) == -32009
    assert _code(_call(host, "resourceMkdir", uri=_u(host, "work/alpha/link-out/d"))) == -32009
    assert not os.path.exists(host.fixture.path("outside/x"))
    assert _code(_call(host, "resourceRead", uri="https://example.com/x")) == -32008
    assert _code(_call(host, "resourceRead", uri="file:relative/path")) == -32602
    assert _code(_call(host, "resourceRead", uri="no-scheme/path")) == -32008
    assert _code(host.call("resourceRead", {"channel": "ahp-session:/x", "uri": _u(host, "work/alpha")})) == -32602


def test_writes_and_mkdir_follow_the_spec(host: CommandSession) -> None:
    f = _u(host, "work/alpha/new.txt")
    assert _call(host, "resourceWrite", uri=f, data="hello", encoding="utf-8").ok
    assert _call(host, "resourceWrite", uri=f, data=" world", encoding="utf-8", mode="append").ok
    assert _call(host, "resourceWrite", uri=f, data="!", encoding="utf-8", mode="insert", position=5).ok
    assert _text(host.fixture.path("work/alpha/new.txt")) == "hello! world"
    assert _code(_call(host, "resourceWrite", uri=f, data="x", encoding="utf-8", createOnly=True)) == -32010
    assert _text(host.fixture.path("work/alpha/new.txt")) == "hello! world"
    etag = _call(host, "resourceResolve", uri=f).result["etag"]
    assert _code(_call(host, "resourceWrite", uri=f, data="x", encoding="utf-8", ifMatch=etag + "0")) == -32011
    assert _code(_call(host, "resourceWrite", uri=f, data="%%%", encoding="base64")) == -32602
    assert _call(host, "resourceMkdir", uri=_u(host, "work/alpha/a/b/c")).ok
    assert os.path.isdir(host.fixture.path("work/alpha/a/b/c"))
    assert _call(host, "resourceMkdir", uri=_u(host, "work/alpha/a")).ok  # exists: no-op success
    assert _code(_call(host, "resourceMkdir", uri=_u(host, "work/alpha/notes.txt/x"))) == -32010
    assert _code(_call(host, "resourceResolve", uri=_u(host, "work/alpha/missing"))) == -32008


def test_access_ends_with_the_session(host: CommandSession) -> None:
    notes = _u(host, "work/alpha/notes.txt")
    assert _call(host, "resourceRead", uri=notes).ok
    assert host.call("disposeSession", {"channel": "ahp-session:/base-alpha"}).ok
    assert _code(_call(host, "resourceRead", uri=notes)) == -32009


@pytest.mark.parametrize(
    ("defect", "method", "rel", "extra", "broken"),
    [
        ("resource-read-traversal", "resourceRead", "work/alpha/../../outside/{t}.txt", {}, "leak"),
        ("resource-encoded-traversal", "resourceList", "work/alpha/%2e%2e/%2e%2e/outside", {}, "leak"),
        ("resource-prefix-confusion", "resourceResolve", "work/alpha-private/{t}.txt", {}, "leak"),
        ("resource-symlink-write", "resourceWrite", "work/alpha/link-out/new.txt",
         {"data": "x", "encoding": "utf-8"}, "outside/new.txt"),
        ("resource-read-dir-crash", "resourceRead", "work/alpha", {}, -32603),
        ("resource-createonly-clobber", "resourceWrite", "work/alpha/notes.txt",
         {"data": "x", "encoding": "utf-8", "createOnly": True}, "clobbered"),
    ],
)
def test_each_defect_breaks_exactly_its_rule(defect: str, method: str, rel: str, extra: dict[str, Any],
                                             broken: Any) -> None:
    clean = CommandSession("host:embedded", None, seed=3)
    bad = CommandSession(f"host:embedded?defect={defect}", None, seed=3)
    try:
        outcomes = []
        for s in (clean, bad):
            s.setup()
            reply = _call(s, method, uri=_u(s, rel.format(t=s.fixture.token)), **extra)
            notes = _text(s.fixture.path("work/alpha/notes.txt"))
            outcomes.append((reply, os.path.exists(s.fixture.path("outside/new.txt")), notes))
        (ok_reply, ok_outside, ok_notes), (bad_reply, bad_outside, bad_notes) = outcomes
        assert not ok_outside and ok_notes == "alpha notes\n"
        if broken == "leak":
            assert not ok_reply.ok and bad_reply.ok and bad.fixture.token in str(bad_reply.result)
        elif broken == "outside/new.txt":
            assert _code(ok_reply) == -32009 and bad_reply.ok and bad_outside
        elif broken == "clobbered":
            assert _code(ok_reply) == _code(bad_reply) == -32010 and bad_notes == ""
        else:
            assert _code(ok_reply) == -32008 and _code(bad_reply) == broken
    finally:
        clean.close()
        bad.close()
