"""URIs: small pools (so collisions are frequent) and equivalence-class variants of one URI.

Targets INV-034 (URI identity is exact string identity), INV-029/030 (directory sets), the
multiroot set/remove actions and every reducer that keys by URI (`session/chat*`,
`defaultChat`). The protocol defines a URI as a plain string and defines no equivalence
(REDUCERS.md §8.7); hosts may normalize (VS Code compares path-case-insensitively). So every
variant carries its class and two facts a check needs:

* `same_string` — the variant is the identical string (only for the control class `same`);
* `rfc3986_equal` — the two are equal after RFC 3986 §6.2.2 syntax-based normalization
  (case of scheme/host/percent-hex, percent-decoding of unreserved characters, dot-segment
  removal) plus the scheme-based rules of §6.2.3 / RFC 8089 that are unambiguous (empty path of
  an http(s) authority is `/`; `file://localhost/` is `file:///`).

A reducer must treat every non-identical variant as a *different* URI; a host may do
anything listed in INV-034 but must be consistent.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

# --- pools -----------------------------------------------------------------------------------

#: Working directories. Each one supports several variant classes (see `applicable_classes`).
DIRECTORIES: Final = (
    "file:///repo-a",
    "file:///repo-b",
    "file:///work/proj/",
    "file:///C:/src/app",
    "file:///home/user/café",
    "file:///home/user/caf%C3%A9/x~y",
    "file://server/share/team",
)
#: Chat channel URIs (`ahp-chat:/<id>`) of "this" session.
CHAT_URIS: Final = ("ahp-chat:/c1", "ahp-chat:/c2", "ahp-chat:/c3", "ahp-chat:/c4")
#: Chat URIs that belong to another session (a `chat` attachment may name one, 0.7.0).
FOREIGN_CHAT_URIS: Final = ("ahp-chat:/other-session-c1", "ahp-chat:/other-session-c2")
SESSION_URIS: Final = (
    "ahp-session:/0b9c7e9e-2f0e-4d0a-9d3b-3f1a2b4c5d6e",
    "ahp-session:/7d1e5c1a-8a2b-4c3d-9e4f-5a6b7c8d9e0f",
)
TERMINAL_URIS: Final = ("ahp-terminal:/term-1", "ahp-terminal:/term-2")
RESOURCE_URIS: Final = (
    "file:///repo-a/src/main.ts",
    "file:///repo-a/README.md",
    "file:///repo-b/lib/util.py",
    "https://example.com/docs/page",
    "untitled:Untitled-1",
)
#: Bases used for equivalence variants: the directories plus URIs with an authority.
VARIANT_BASES: Final = (
    *DIRECTORIES,
    "https://Example.COM/a/b",
    "https://example.com/",
    "ahp-chat:/c1",
)


def directories() -> st.SearchStrategy[str]:
    """A working directory from a pool of seven (collisions are frequent)."""
    return st.sampled_from(DIRECTORIES)


def chat_uris(*, foreign: bool = False) -> st.SearchStrategy[str]:
    """A chat URI from a pool of four (plus two of another session when `foreign`)."""
    return st.sampled_from(CHAT_URIS + FOREIGN_CHAT_URIS if foreign else CHAT_URIS)


def session_uris() -> st.SearchStrategy[str]:
    return st.sampled_from(SESSION_URIS)


def resource_uris() -> st.SearchStrategy[str]:
    """A resource URI (files, web pages, untitled documents)."""
    return st.sampled_from(RESOURCE_URIS)


def any_uris() -> st.SearchStrategy[str]:
    """Any pooled URI, sometimes an equivalence variant of one."""
    return st.one_of(
        st.sampled_from(DIRECTORIES + CHAT_URIS + RESOURCE_URIS + TERMINAL_URIS),
        uri_variants().map(lambda v: v.variant),
    )


# --- RFC 3986 parsing and normalization ------------------------------------------------------

_URI_RE: Final = re.compile(
    r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S
)
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCT: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_DRIVE: Final = re.compile(r"^/([A-Za-z])(:|%3[Aa])(/|$)")


@dataclass(frozen=True)
class UriParts:
    scheme: str | None
    authority: str | None
    path: str
    query: str | None
    fragment: str | None

    def unsplit(self) -> str:
        out = ""
        if self.scheme is not None:
            out += self.scheme + ":"
        if self.authority is not None:
            out += "//" + self.authority
        out += self.path
        if self.query is not None:
            out += "?" + self.query
        if self.fragment is not None:
            out += "#" + self.fragment
        return out


def split(uri: str) -> UriParts:
    """Split any string with the RFC 3986 Appendix B expression (never fails)."""
    m = _URI_RE.match(uri)
    assert m is not None  # the expression matches every string
    return UriParts(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5))


def _normalize_pct(text: str) -> str:
    def fix(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return _PCT.sub(fix, text)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4."""
    inp, out = path, ""
    while inp:
        if inp.startswith("../"):
            inp = inp[3:]
        elif inp.startswith("./") or inp.startswith("/./"):
            inp = inp[2:]
        elif inp == "/.":
            inp = "/"
        elif inp.startswith("/../"):
            inp = inp[3:]
            out = out[: out.rfind("/")] if "/" in out else ""
        elif inp == "/..":
            inp = "/"
            out = out[: out.rfind("/")] if "/" in out else ""
        elif inp in (".", ".."):
            inp = ""
        else:
            start = 1 if inp.startswith("/") else 0
            j = inp.find("/", start)
            seg, inp = (inp, "") if j < 0 else (inp[:j], inp[j:])
            out += seg
    return out


def rfc3986_normalize(uri: str) -> str:
    """Syntax-based normalization (RFC 3986 §6.2.2) plus unambiguous scheme-based rules.

    Relative references (no scheme) get percent-encoding normalization only.
    """
    p = split(uri)
    scheme = p.scheme.lower() if p.scheme is not None else None
    authority = p.authority
    if authority is not None:
        userinfo, _, hostport = authority.rpartition("@")
        hostport = _normalize_pct(hostport).lower()
        if scheme == "http" and hostport.endswith(":80"):
            hostport = hostport[:-3]
        if scheme == "https" and hostport.endswith(":443"):
            hostport = hostport[:-4]
        if scheme == "file" and hostport == "localhost":
            hostport = ""
        authority = (userinfo + "@" if userinfo else "") + hostport
    path = _normalize_pct(p.path)
    if scheme is not None:
        path = remove_dot_segments(path)
    if authority is not None and path == "" and scheme in ("http", "https", "file"):
        path = "/"
    query = _normalize_pct(p.query) if p.query is not None else None
    fragment = _normalize_pct(p.fragment) if p.fragment is not None else None
    return UriParts(scheme, authority, path, query, fragment).unsplit()


def rfc3986_equal(a: str, b: str) -> bool:
    return rfc3986_normalize(a) == rfc3986_normalize(b)


# --- equivalence classes ---------------------------------------------------------------------


class UriClass(StrEnum):
    """How a variant spelling differs from its base URI (INV-034)."""

    SAME = "same"  # control: the identical string
    TRAILING_SLASH = "trailing-slash"
    SCHEME_CASE = "scheme-case"
    AUTHORITY_CASE = "authority-case"
    PCT_HEX_CASE = "percent-hex-case"  # %c3%a9 vs %C3%A9
    PCT_UNRESERVED = "percent-unreserved"  # %7E vs ~, %72 vs r
    PCT_RESERVED = "percent-reserved"  # %2F vs / (NOT equivalent under RFC 3986)
    DOT_SEGMENTS = "dot-segments"
    UNICODE_NFD = "unicode-nfc-nfd"
    DRIVE_LETTER_CASE = "drive-letter-case"  # C: vs c:
    DRIVE_LETTER_ENCODED = "drive-letter-encoded"  # c: vs c%3A (VS Code's spelling)
    FILE_LOCALHOST = "file-localhost"  # file://localhost/x vs file:///x
    EMPTY_PATH = "empty-path"  # https://h vs https://h/
    RELATIVE_REFERENCE = "relative-reference"  # /repo-a or repo-a vs file:///repo-a
    VERY_LONG = "very-long"  # thousands of ./ segments (still RFC-equal)
    CONTROL_CHARACTERS = "control-characters"  # tab, newline, NUL, DEL inside or around


#: Whether a variant of each class is equal to its base after `rfc3986_normalize`.
RFC3986_EQUAL_BY_CLASS: Final = MappingProxyType(
    {
        UriClass.SAME: True,
        UriClass.TRAILING_SLASH: False,
        UriClass.SCHEME_CASE: True,
        UriClass.AUTHORITY_CASE: True,
        UriClass.PCT_HEX_CASE: True,
        UriClass.PCT_UNRESERVED: True,
        UriClass.PCT_RESERVED: False,
        UriClass.DOT_SEGMENTS: True,
        UriClass.UNICODE_NFD: False,
        UriClass.DRIVE_LETTER_CASE: False,
        UriClass.DRIVE_LETTER_ENCODED: False,
        UriClass.FILE_LOCALHOST: True,
        UriClass.EMPTY_PATH: True,
        UriClass.RELATIVE_REFERENCE: False,
        UriClass.VERY_LONG: True,
        UriClass.CONTROL_CHARACTERS: False,
    }
)


@dataclass(frozen=True)
class UriVariant:
    """A spelling of `base` in equivalence class `cls`."""

    base: str
    variant: str
    cls: UriClass

    @property
    def same_string(self) -> bool:
        return self.base == self.variant

    @property
    def rfc3986_equal(self) -> bool:
        return rfc3986_equal(self.base, self.variant)


Maker = Callable[[UriParts, int], str | None]


def _trailing_slash(p: UriParts, k: int) -> str | None:
    if not p.path and p.authority is None:
        return None
    path = p.path[:-1] if p.path.endswith("/") and len(p.path) > 1 else p.path + "/"
    return UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()


def _scheme_case(p: UriParts, k: int) -> str | None:
    if not p.scheme or not any(c.isalpha() for c in p.scheme):
        return None
    # the other spellings of the scheme's case (one only for `A:` or `X1:`: its lower case)
    forms = [f for f in dict.fromkeys((p.scheme.upper(), p.scheme.capitalize(), p.scheme.swapcase()))
             if f != p.scheme]
    if not forms:
        return None
    return UriParts(forms[k % len(forms)], p.authority, p.path, p.query, p.fragment).unsplit()


def _authority_case(p: UriParts, k: int) -> str | None:
    if not p.authority or not any(c.isalpha() for c in p.authority):
        return None
    a = p.authority.swapcase() if k % 2 else p.authority.upper()
    if a == p.authority:
        a = p.authority.lower()
    return (
        None if a == p.authority else UriParts(p.scheme, a, p.path, p.query, p.fragment).unsplit()
    )


def _pct_hex_case(p: UriParts, k: int) -> str | None:
    if not _PCT.search(p.path):
        return None
    path = _PCT.sub(lambda m: "%" + m.group(1).swapcase(), p.path)
    return (
        None
        if path == p.path
        else UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()
    )


def _positions(path: str, pred: Callable[[str], bool]) -> list[int]:
    return [i for i, c in enumerate(path) if pred(c)]


def _pct_unreserved(p: UriParts, k: int) -> str | None:
    decoded = _PCT.sub(
        lambda m: (
            chr(int(m.group(1), 16)) if chr(int(m.group(1), 16)) in _UNRESERVED else m.group(0)
        ),
        p.path,
    )
    if decoded != p.path:  # the base has escaped unreserved characters: unescape them
        return UriParts(p.scheme, p.authority, decoded, p.query, p.fragment).unsplit()
    spots = _positions(p.path, lambda c: c in _UNRESERVED)
    if not spots:
        return None
    i = spots[k % len(spots)]
    enc = f"%{ord(p.path[i]):02X}" if k % 3 else f"%{ord(p.path[i]):02x}"
    return UriParts(
        p.scheme, p.authority, p.path[:i] + enc + p.path[i + 1 :], p.query, p.fragment
    ).unsplit()


def _pct_reserved(p: UriParts, k: int) -> str | None:
    spots = [i for i in _positions(p.path, lambda c: c in "/:@!$&'()*+,;=") if i > 0]
    if not spots:
        return None
    i = spots[k % len(spots)]
    enc = f"%{ord(p.path[i]):02X}"
    return UriParts(
        p.scheme, p.authority, p.path[:i] + enc + p.path[i + 1 :], p.query, p.fragment
    ).unsplit()


def _dot_segments(p: UriParts, k: int) -> str | None:
    if p.scheme is None or not p.path.startswith("/"):
        return None
    segs = p.path.split("/")
    i = 1 + k % max(1, len(segs) - 1)
    insert = ["."] if k % 2 == 0 else ["zz", ".."]
    path = "/".join([*segs[:i], *insert, *segs[i:]])
    return UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()


def _unicode_nfd(p: UriParts, k: int) -> str | None:
    uri = p.unsplit()
    nfd = unicodedata.normalize("NFD", uri)
    if nfd != uri:
        return nfd
    # Percent-encoded NFC é (%C3%A9) -> percent-encoded NFD e + U+0301 (e%CC%81).
    swapped = re.sub("%C3%A9", "e%CC%81", uri, flags=re.I)
    return swapped if swapped != uri else None


def _drive_case(p: UriParts, k: int) -> str | None:
    m = _DRIVE.match(p.path)
    if not m:
        return None
    path = "/" + m.group(1).swapcase() + p.path[2:]
    return UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()


def _drive_encoded(p: UriParts, k: int) -> str | None:
    m = _DRIVE.match(p.path)
    if not m:
        return None
    colon = "%3A" if m.group(2) == ":" else ":"
    letter = m.group(1).lower() if k % 2 else m.group(1)
    path = "/" + letter + colon + p.path[2 + len(m.group(2)) :]
    return UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()


def _file_localhost(p: UriParts, k: int) -> str | None:
    if (p.scheme or "").lower() != "file":
        return None
    if p.authority == "":
        return UriParts(
            p.scheme, "localhost" if k % 2 == 0 else "LOCALHOST", p.path, p.query, p.fragment
        ).unsplit()
    if (p.authority or "").lower() == "localhost":
        return UriParts(p.scheme, "", p.path, p.query, p.fragment).unsplit()
    return None


def _empty_path(p: UriParts, k: int) -> str | None:
    if p.authority is None or p.path not in ("", "/"):
        return None
    return UriParts(
        p.scheme, p.authority, "" if p.path == "/" else "/", p.query, p.fragment
    ).unsplit()


def _relative(p: UriParts, k: int) -> str | None:
    if p.scheme is None or not p.path:
        return None
    forms = [f for f in (p.path, p.path.lstrip("/"), "./" + p.path.lstrip("/")) if f.strip("./")]
    if p.authority:
        forms.append("//" + p.authority + p.path)  # network-path reference
    return forms[k % len(forms)] if forms else None


def _very_long(p: UriParts, k: int) -> str | None:
    if p.scheme is None or not p.path.startswith("/"):
        return None
    path = "/" + "./" * (1000 + k % 4000) + p.path[1:]
    return UriParts(p.scheme, p.authority, path, p.query, p.fragment).unsplit()


_CONTROLS: Final = ("\t", "\n", "\r", "\x00", "\x7f", "\x1b", " ")


def _control(p: UriParts, k: int) -> str | None:
    uri = p.unsplit()
    c = _CONTROLS[k % len(_CONTROLS)]
    where = (k // len(_CONTROLS)) % 3
    if where == 0:
        return uri + c
    if where == 1:
        return c + uri
    i = len(uri) // 2
    return uri[:i] + c + uri[i:]


_MAKERS: Final[dict[UriClass, Maker]] = {
    UriClass.SAME: lambda p, k: p.unsplit(),
    UriClass.TRAILING_SLASH: _trailing_slash,
    UriClass.SCHEME_CASE: _scheme_case,
    UriClass.AUTHORITY_CASE: _authority_case,
    UriClass.PCT_HEX_CASE: _pct_hex_case,
    UriClass.PCT_UNRESERVED: _pct_unreserved,
    UriClass.PCT_RESERVED: _pct_reserved,
    UriClass.DOT_SEGMENTS: _dot_segments,
    UriClass.UNICODE_NFD: _unicode_nfd,
    UriClass.DRIVE_LETTER_CASE: _drive_case,
    UriClass.DRIVE_LETTER_ENCODED: _drive_encoded,
    UriClass.FILE_LOCALHOST: _file_localhost,
    UriClass.EMPTY_PATH: _empty_path,
    UriClass.RELATIVE_REFERENCE: _relative,
    UriClass.VERY_LONG: _very_long,
    UriClass.CONTROL_CHARACTERS: _control,
}


def make_variant(base: str, cls: UriClass, k: int = 0) -> UriVariant | None:
    """The variant of `base` in class `cls` (parameterized by `k`), or None if not applicable."""
    v = _MAKERS[cls](split(base), k)
    if v is None or (v == base and cls is not UriClass.SAME):
        return None
    return UriVariant(base, v, cls)


def applicable_classes(base: str) -> list[UriClass]:
    return [c for c in UriClass if make_variant(base, c) is not None]


def uri_variants(
    base: str | None = None,
    classes: frozenset[UriClass] | None = None,
    *,
    include_same: bool = False,
) -> st.SearchStrategy[UriVariant]:
    """A spelling of a pooled URI (or of `base`) in one of `classes` (default: all but `same`).

    Targets INV-034: set one spelling, then set/remove the other; exact-string reducers must
    keep both, a normalizing host must be consistent.
    """
    bases = (base,) if base is not None else VARIANT_BASES
    wanted = set(classes) if classes is not None else set(UriClass)
    if not include_same and classes is None:
        wanted.discard(UriClass.SAME)
    pairs = [
        (b, c) for b in bases for c in UriClass if c in wanted and make_variant(b, c) is not None
    ]
    if not pairs:
        raise ValueError(f"no variant class in {sorted(wanted)} applies to {bases}")

    def build(pair: tuple[str, UriClass], k: int) -> UriVariant:
        v = make_variant(pair[0], pair[1], k)
        return v if v is not None else UriVariant(pair[0], pair[0], UriClass.SAME)

    return st.builds(build, st.sampled_from(pairs), st.integers(0, 10_000)).filter(
        lambda v: v.cls is UriClass.SAME or not v.same_string
    )


def equivalent_directories() -> st.SearchStrategy[UriVariant]:
    """A working directory and a different-but-equivalent spelling of it (RFC-equal or not)."""
    return uri_variants(classes=frozenset(UriClass) - {UriClass.SAME}).filter(
        lambda v: v.base in DIRECTORIES
    )


def directory_spellings() -> st.SearchStrategy[str]:
    """A directory from the pool, or (one time in three) an equivalence variant of one."""
    return st.one_of(
        directories(), directories(), equivalent_directories().map(lambda v: v.variant)
    )


def long_uris(min_size: int = 4_096, max_size: int = 70_000) -> st.SearchStrategy[str]:
    """Oversized URIs (not equivalent to anything): a `file:` URI with a huge path."""
    return st.integers(min_size, max_size).map(lambda n: "file:///" + ("a" * n))
