"""The file surface a command run attacks: a real temporary tree with a canary outside it.

```
<root>/work/alpha/            session directory (notes.txt, sub/deep.txt,
                              link-in -> <root>/work/alpha/sub, link-out -> <root>/outside)
<root>/work/beta/             session directory (b.txt)
<root>/work/alpha-private/    a sibling that shares alpha's prefix: CANARY-<token>.txt
<root>/outside/               CANARY-<token>.txt (its content is the token too)
```

Sessions get `alpha` and `beta` as working directories. Everything else under `<root>` is the
*protected zone*: a host must never read it (the token must never appear in an answer) nor
change it (checked on disk after every command). Symlinks are absolute, so moving one keeps it
pointing inside `<root>`.

`fence` is the harness's own safety net (not a check): a command that writes, creates, moves
or deletes is only ever sent when every reading of each of its URIs (percent-decoded 0–3
times, with and without the authority, symlinks resolved) lands inside `<root>`. So a host
that does not confine at all still cannot touch anything but this tree.

Findings store URIs with `${ROOT}` and `${CANARY}` placeholders (`template` / `untemplate`),
so a finding replays against a fresh tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from .baseline import BASELINE_SESSIONS

ROOT_PLACEHOLDER = "${ROOT}"
CANARY_PLACEHOLDER = "${CANARY}"
#: Commands that change the disk (fenced).
DESTRUCTIVE = frozenset({"resourceWrite", "resourceMkdir", "resourceDelete", "resourceMove", "resourceCopy"})
#: Params that name a file in the resource* family.
URI_KEYS = ("uri", "source", "destination")

Snapshot = dict[str, tuple[str, str]]


def _uri(path: str) -> str:
    return "file://" + quote(path)


@dataclass
class FileFixture:
    root: str
    token: str
    _owned: bool = field(default=True, repr=False)

    # -- building ------------------------------------------------------------------------

    @classmethod
    def create(cls, seed: int = 0, parent: str | None = None) -> FileFixture:
        root = os.path.realpath(tempfile.mkdtemp(prefix="ahp-cmd-", dir=parent))
        token = "CANARY-" + hashlib.sha256(f"ahp-fuzz-canary|{seed}".encode()).hexdigest()[:16]
        fx = cls(root, token)
        fx._populate()
        return fx

    def _populate(self) -> None:
        r = self.root
        for d in ("work/alpha/sub", "work/beta", "work/alpha-private", "outside"):
            os.makedirs(os.path.join(r, d), exist_ok=True)
        files = {
            "work/alpha/notes.txt": "alpha notes\n",
            "work/alpha/sub/deep.txt": "deep\n",
            "work/beta/b.txt": "beta\n",
            f"work/alpha-private/{self.token}.txt": self.token + "\n",
            f"outside/{self.token}.txt": self.token + "\n",
        }
        for rel, text in files.items():
            with open(os.path.join(r, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        os.symlink(os.path.join(r, "work/alpha/sub"), os.path.join(r, "work/alpha/link-in"))
        os.symlink(os.path.join(r, "outside"), os.path.join(r, "work/alpha/link-out"))

    def restore(self) -> None:
        """Put the tree back as it was built (same root, same token)."""
        for name in os.listdir(self.root):
            full = os.path.join(self.root, name)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
        self._populate()

    def close(self) -> None:
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> FileFixture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- places --------------------------------------------------------------------------

    def path(self, rel: str = "") -> str:
        return os.path.join(self.root, rel) if rel else self.root

    @property
    def session_dirs(self) -> list[str]:
        return [self.path("work/alpha"), self.path("work/beta")]

    @property
    def session_uris(self) -> list[str]:
        return [_uri(p) for p in self.session_dirs]

    def in_protected_zone(self, path: str, extra_roots: list[str] = ()) -> bool:  # type: ignore[assignment]
        """A path under the root but under no session directory (nor any of `extra_roots`)."""
        real = os.path.realpath(path)
        if not _inside(real, self.root):
            return False
        return not any(_inside(real, d) for d in [*self.session_dirs, *extra_roots])

    # -- what is on disk -----------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """relpath → (kind, digest) for everything under the root (symlinks not followed)."""
        out: Snapshot = {}
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            for name in [*dirnames, *filenames]:
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.root)
                if os.path.islink(full):
                    out[rel] = ("link", os.readlink(full))
                elif os.path.isdir(full):
                    out[rel] = ("dir", "")
                else:
                    try:
                        with open(full, "rb") as fh:
                            out[rel] = ("file", hashlib.sha256(fh.read()).hexdigest()[:16])
                    except OSError as e:
                        out[rel] = ("error", type(e).__name__)
        return out

    def protected_changes(self, before: Snapshot, after: Snapshot, allowed: list[str] = ()) -> list[str]:  # type: ignore[assignment]
        """Entries of the protected zone that appeared, vanished or changed."""
        out = []
        for rel in sorted(set(before) | set(after)):
            if before.get(rel) == after.get(rel):
                continue
            full = os.path.join(self.root, rel)
            parent_real = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
            if self.in_protected_zone(parent_real, list(allowed)):
                what = "appeared" if rel not in before else "vanished" if rel not in after else "changed"
                out.append(f"{rel} {what}")
        return out

    def leaks(self, text: str) -> bool:
        return self.token in text

    # -- generation hints ----------------------------------------------------------------

    def uri_hints(self) -> list[str]:
        """File URIs worth trying: inside, escaping, encoded, symlinked, equivalent spellings."""
        alpha, beta = self.session_dirs
        out: list[str] = []
        inside_targets = ["", "/notes.txt", "/sub", "/sub/deep.txt", "/new.txt", "/newdir/x",
                          "/link-in", "/link-in/deep.txt", "/link-out", f"/link-out/{self.token}.txt",
                          "/link-out/new.txt", "/link-out/newdir"]
        # escapes first: Hypothesis leans towards the first entries of a list
        escapes = ["/../..", "/%2e%2e/%2e%2e", "/%2E%2E/%2e%2E", "/..%2f..", "/sub/../../.."]
        rels = [f"/outside/{self.token}.txt", "/outside", f"/work/alpha-private/{self.token}.txt",
                "/work/alpha-private", "/outside/new.txt", "/outside/newdir"]
        for rel in rels:
            for e in escapes:
                out.append("file://" + quote(alpha) + e + rel)
            out.append(_uri(self.root + rel))
        for t in inside_targets:
            out.append(_uri(alpha + t))
        out += [_uri(beta), _uri(beta + "/b.txt"), _uri(beta + "/new.txt")]
        out += [_uri(alpha + "-private"), _uri(alpha + "-private/new.txt")]
        out += self.directory_spellings(alpha)
        out += ["file:///etc/hostname", "file:///", "file:" + quote(alpha) + "/notes.txt"]
        return list(dict.fromkeys(out))

    @staticmethod
    def directory_spellings(path: str) -> list[str]:
        """URI-equivalent spellings of one directory."""
        q = quote(path)
        head, _, last = q.rpartition("/")
        encoded = f"{head}/%{ord(last[0]):02X}{last[1:]}" if last else q
        return [
            "file://" + q,
            "file://" + q + "/",
            "file://localhost" + q,
            "file:" + q,
            "FILE://" + q,
            "file://" + encoded,
            "file://" + head + "/./" + last,
            "file://" + head + "//" + last,
        ]

    def session_dir_hints(self) -> list[str]:
        alpha, beta = self.session_dirs
        return [_uri(alpha), _uri(beta), _uri(alpha) + "/", "file://localhost" + quote(beta)]

    def chat_dir_hints(self) -> list[str]:
        alpha, _ = self.session_dirs
        return [*self.session_dir_hints(), *self.directory_spellings(alpha)[1:4],
                _uri(self.path("outside")), _uri(self.path("work/alpha-private"))]

    def write_hints(self) -> list[str]:
        """Files worth writing: inside, through the symlinks, escaping, beside the tree."""
        alpha, beta = self.session_dirs
        esc = "file://" + quote(alpha)
        return [_uri(alpha + "/link-out/new.txt"), _uri(alpha + "/notes.txt"), _uri(beta + "/b.txt"),
                _uri(alpha + f"/link-out/{self.token}.txt"), esc + "/../../outside/new.txt",
                esc + "/%2e%2e/%2e%2e/outside/new.txt", _uri(alpha + "-private/new.txt"),
                _uri(alpha + "/new.txt"), _uri(alpha + "/sub/deep.txt"), _uri(alpha + "/link-in/new.txt"),
                _uri(alpha)]

    def mkdir_hints(self) -> list[str]:
        alpha, _ = self.session_dirs
        esc = "file://" + quote(alpha)
        return [_uri(alpha + "/newdir"), _uri(alpha + "/newdir/deeper"), _uri(alpha + "/notes.txt/x"),
                _uri(alpha + "/notes.txt"), _uri(alpha), _uri(alpha + "/link-out/newdir"),
                esc + "/../../outside/newdir", esc + "/%2e%2e/%2e%2e/outside/newdir", _uri(alpha + "-private/newdir")]

    def hints(self) -> dict[str, dict[str, list[Any]]]:
        """Generation hints per command: property → values (`[]`: the array's items)."""
        uris = self.uri_hints()
        sessions = [*BASELINE_SESSIONS, *(f"ahp-session:/s{i}" for i in range(1, 4))]
        chats = [f"ahp-chat:/c{i}" for i in range(1, 4)]
        read = {"uri": uris}
        return {
            "createSession": {"channel": sessions, "workingDirectories[]": self.session_dir_hints(),
                              "provider": ["scripted"]},
            "disposeSession": {"channel": sessions},
            "createChat": {"channel": sessions, "chat": chats, "workingDirectories[]": self.chat_dir_hints()},
            "disposeChat": {"channel": chats},
            "fetchTurns": {"channel": [*chats, "ahp-chat:/base-alpha.default"], "cursor": ["0", "1", "x"]},
            "subscribe": {"channel": [*sessions, *chats]},
            "resourceRead": read,
            "resourceList": read,
            "resourceResolve": read,
            "resourceRequest": read,
            "createResourceWatch": read,
            "resourceDelete": {"uri": self.write_hints()},
            "resourceWrite": {"uri": self.write_hints(), "data": ["hello", "aGVsbG8=", ""],
                              "createOnly": [True, False]},
            "resourceMkdir": {"uri": self.mkdir_hints()},
            "resourceCopy": {"source": self.write_hints(), "destination": self.write_hints()},
            "resourceMove": {"source": self.write_hints(), "destination": self.write_hints()},
        }

    # -- the safety fence ----------------------------------------------------------------

    def fenced(self, method: str, params: Any) -> str | None:
        """Why a destructive command must not be sent (None: it may be sent)."""
        if method not in DESTRUCTIVE:
            return None
        if not isinstance(params, dict):
            return None  # nothing names a file: the host must reject it
        for key in URI_KEYS:
            if key not in params:
                continue
            value = params[key]
            if not isinstance(value, str):
                return f"{key} is not a string"
            for candidate in _readings(value):
                if not candidate.startswith("/"):
                    return f"{key} has a relative reading {candidate!r}"
                if not _inside(os.path.realpath(candidate), self.root):
                    return f"{key} has a reading outside the fixture ({candidate!r})"
        return None

    # -- placeholders --------------------------------------------------------------------

    def template(self, value: Any) -> Any:
        return _map_strings(value, lambda s: s.replace(self.root, ROOT_PLACEHOLDER).replace(self.token, CANARY_PLACEHOLDER))

    def untemplate(self, value: Any) -> Any:
        return _map_strings(value, lambda s: s.replace(ROOT_PLACEHOLDER, self.root).replace(CANARY_PLACEHOLDER, self.token))

    def describe(self) -> dict[str, Any]:
        return {
            "layout": "ahp-fuzz/command-fixture@1",
            "sessionDirectories": [self.template(u) for u in self.session_uris],
            "protected": ["${ROOT}/outside", "${ROOT}/work/alpha-private"],
        }


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _readings(value: str) -> Iterator[str]:
    seen: set[str] = set()
    parts = urlsplit(value)
    # the whole text is a reading only when it has no scheme (a host that used a URI with its
    # scheme as a path would at worst make a folder named `file:` in its own working directory)
    texts = [parts.path] if parts.scheme else [value]
    if value.lower().startswith("file:"):
        texts.append(value[5:])
    for text in texts:
        for _ in range(4):
            if text not in seen:
                seen.add(text)
                yield text
            text = unquote(text)


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    return value
