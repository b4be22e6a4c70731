"""URI pools and equivalence-class variants (INV-034)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.reference import reduce
from strategies import uris
from strategies.uris import (
    UriClass,
    make_variant,
    remove_dot_segments,
    rfc3986_equal,
    rfc3986_normalize,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a/b/c/./../../g", "/a/g"),  # RFC 3986 §5.2.4 example
        ("mid/content=5/../6", "mid/6"),  # RFC 3986 §5.2.4 example
        ("/x/./y/../z", "/x/z"),
        ("/..", "/"),
        ("", ""),
    ],
)
def test_remove_dot_segments(path: str, expected: str) -> None:
    assert remove_dot_segments(path) == expected


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("FILE:///a", "file:///a", True),
        ("file://Host/x", "file://host/x", True),
        ("file:///%7Euser", "file:///~user", True),
        ("file:///%7e", "file:///%7E", True),
        ("file:///c%3a/x", "file:///c%3A/x", True),  # hex case of a reserved escape
        ("file:///a%2Fb", "file:///a/b", False),  # reserved: not equivalent
        ("file:///x/./y/../z", "file:///x/z", True),
        ("file:///a", "file:///a/", False),
        ("file://localhost/x", "file:///x", True),
        ("https://example.com", "https://example.com/", True),
        ("https://example.com:443/a", "https://example.com/a", True),
        ("file:///caf\u00e9", "file:///cafe\u0301", False),  # NFC vs NFD octets differ
        ("file:///C:/x", "file:///c:/x", False),  # drive letter case: path is case-sensitive
    ],
)
def test_rfc3986_equality(a: str, b: str, equal: bool) -> None:
    assert rfc3986_equal(a, b) is equal


def test_normalize_is_idempotent_on_the_pools() -> None:
    for u in (*uris.VARIANT_BASES, *uris.RESOURCE_URIS):
        n = rfc3986_normalize(u)
        assert rfc3986_normalize(n) == n


def test_every_class_applies_to_some_base() -> None:
    covered = {c for b in uris.VARIANT_BASES for c in uris.applicable_classes(b)}
    assert covered == set(UriClass)


@pytest.mark.parametrize("cls", list(UriClass), ids=str)
def test_each_class_knows_whether_it_is_rfc_equal(cls: UriClass) -> None:
    for base in uris.VARIANT_BASES:
        for k in range(6):
            v = make_variant(base, cls, k)
            if v is None:
                continue
            assert v.same_string is (cls is UriClass.SAME)
            assert v.rfc3986_equal is uris.RFC3986_EQUAL_BY_CLASS[cls], (base, v.variant)


def test_known_spellings_from_the_spec() -> None:
    # INVARIANTS.md INV-034 lists these pairs; each must be reachable as a variant.
    assert make_variant("file:///repo-a", UriClass.TRAILING_SLASH) is not None
    v = make_variant("file:///C:/src/app", UriClass.DRIVE_LETTER_ENCODED)
    assert v is not None and "%3A" in v.variant
    v = make_variant("file:///home/user/café", UriClass.UNICODE_NFD)
    assert v is not None and "e\u0301" in v.variant
    v = make_variant("file:///repo-a", UriClass.FILE_LOCALHOST)
    assert v is not None and v.variant.lower().startswith("file://localhost/")


@settings(max_examples=60)
@given(uris.equivalent_directories())
def test_reducers_treat_equivalent_spellings_as_distinct(v: uris.UriVariant) -> None:
    """INV-034, reducer side: Set(u); Set(v) keeps both; Remove(v) leaves u."""
    s = reduce(
        "session",
        _session([v.base]),
        {"type": "session/workingDirectorySet", "directory": v.variant},
        now_ms=0,
    )
    assert s["workingDirectories"] == [v.base, v.variant]
    s = reduce(
        "session",
        _session([v.base]),
        {"type": "session/workingDirectoryRemoved", "directory": v.variant},
        now_ms=0,
    )
    assert s["workingDirectories"] == [v.base]


@settings(max_examples=30)
@given(st.data())
def test_directory_spellings_collide_often(data: st.DataObject) -> None:
    drawn = [data.draw(uris.directories()) for _ in range(12)]
    assert len(set(drawn)) < len(drawn)  # 12 draws from a pool of 7


def _session(dirs: list[str]) -> dict[str, object]:
    return {
        "provider": "p",
        "title": "t",
        "status": 1,
        "lifecycle": "ready",
        "activeClients": [],
        "chats": [],
        "workingDirectories": dirs,
    }


@pytest.mark.parametrize("base", ["A:/repo", "X1:/repo", "file:///repo", "FILE:///repo"])
@pytest.mark.parametrize("k", range(4))
def test_a_scheme_case_variant_for_every_k(base: str, k: int) -> None:
    """Seen while benchmarking the live fast lane: `A:/repo` (one upper-case letter) has a single
    other spelling of its scheme's case, and k = 1 or 3 picked a second one (IndexError, a crash
    of ours in the middle of a run). Every k gives a variant that differs in the scheme's case
    only, and is RFC 3986-equal to the base."""
    v = make_variant(base, UriClass.SCHEME_CASE, k)
    assert v is not None and v.variant != base
    assert v.variant.lower() == base.lower() and rfc3986_equal(v.variant, base)
