"""Message attachments of 0.7.0 and the collection-attachment draft (seed 000).

Valid strategies produce every 0.7.0 `MessageAttachment` kind: `simple`, `embeddedResource`,
`resource`, `annotations`, and `chat` (with and without `endTurn`, naming a chat of this
session or of another one). The collection draft (REDUCERS.md §9, INV-036..040) adds
`collection`: a one-level, non-empty list of non-collection members, stored verbatim by every
message-bearing action.

Adversarial strategies target what the draft forbids or leaves open: collections nested at any
depth (INV-037), empty collections (INV-037), member ranges outside the message text, and
`_meta` keys repeated between a collection and its members (INV-038, "preserve both without
merging").
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from . import uris
from ._common import ANNOTATION_IDS, TURN_IDS, Json, label, memo, meta, obj, pool, short_text

ATTACHMENT_KINDS = ("simple", "embeddedResource", "resource", "annotations", "chat")
DISPLAY_KINDS = ("file", "image", "element", "directory", "selection", "symbol")


# --- ranges ------------------------------------------------------------------------------------


@memo
def text_positions(max_line: int = 20, max_character: int = 200) -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries(
        {"line": st.integers(0, max_line), "character": st.integers(0, max_character)}
    )


@memo
def text_ranges() -> st.SearchStrategy[Json]:
    """A `TextRange` with start <= end (positions are not checked against any text)."""
    return st.tuples(text_positions(), text_positions()).map(
        lambda ab: {"start": min(ab, key=_pos_key), "end": max(ab, key=_pos_key)}
    )


def _pos_key(p: Json) -> tuple[int, int]:
    return (p["line"], p["character"])


def ranges_within(text: str) -> st.SearchStrategy[Json]:
    """A range that lies inside `text` (0-based lines; character offsets within the line)."""
    lines = text.split("\n")

    def pos(line: int, frac: float) -> Json:
        return {"line": line, "character": int(frac * len(lines[line]))}

    p = st.builds(pos, st.integers(0, len(lines) - 1), st.floats(0, 1))
    return st.tuples(p, p).map(
        lambda ab: {"start": min(ab, key=_pos_key), "end": max(ab, key=_pos_key)}
    )


def is_within(rng: Json, text: str) -> bool:
    """True when both ends of `rng` are valid positions of `text`."""
    lines = text.split("\n")
    for end in ("start", "end"):
        p = rng[end]
        line, ch = p["line"], p["character"]
        if not (isinstance(line, int) and isinstance(ch, int)):
            return False
        if not (0 <= line < len(lines) and 0 <= ch <= len(lines[line])):
            return False
    return _pos_key(rng["start"]) <= _pos_key(rng["end"])


def ranges_outside(text: str) -> st.SearchStrategy[Json]:
    """A range that is *not* inside `text`: past the last line, past a line's end, negative,
    fractional, or with end before start."""
    lines = text.split("\n")
    n = len(lines)
    past_line = st.builds(
        lambda extra, ch: {
            "start": {"line": 0, "character": 0},
            "end": {"line": n - 1 + extra, "character": ch},
        },
        st.integers(1, 1000),
        st.integers(0, 10),
    )
    past_char = st.integers(0, n - 1).map(
        lambda i: {
            "start": {"line": i, "character": 0},
            "end": {"line": i, "character": len(lines[i]) + 1},
        }
    )
    negative = st.just({"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}})
    fractional = st.just(
        {"start": {"line": 0, "character": 0.5}, "end": {"line": 0, "character": 1.5}}
    )
    reversed_ = st.just({"start": {"line": n, "character": 1}, "end": {"line": 0, "character": 0}})
    return st.one_of(past_line, past_char, negative, fractional, reversed_).filter(
        lambda r: not is_within(r, text)
    )


# --- the five 0.7.0 kinds ----------------------------------------------------------------------


def _base(kind: str, **fields: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {"type": st.just(kind), "label": label(), **fields}


_COMMON_OPTIONAL: dict[str, st.SearchStrategy[Any]] = {
    "range": text_ranges(),
    "displayKind": st.sampled_from(DISPLAY_KINDS),
    "_meta": meta(),
}


@memo
def simple_attachments() -> st.SearchStrategy[Json]:
    """`simple`: a label and an optional model representation."""
    return obj(_base("simple"), {**_COMMON_OPTIONAL, "modelRepresentation": short_text(40)})


@memo
def embedded_resource_attachments() -> st.SearchStrategy[Json]:
    """`embeddedResource`: inline base64 data with a content type (e.g. a screenshot)."""
    return obj(
        _base(
            "embeddedResource",
            data=st.sampled_from(("iVBORw0KGgo=", "", "aGVsbG8=")),
            contentType=st.sampled_from(("image/png", "image/jpeg", "text/plain")),
        ),
        {**_COMMON_OPTIONAL, "selection": st.fixed_dictionaries({"range": text_ranges()})},
    )


@memo
def resource_attachments() -> st.SearchStrategy[Json]:
    """`resource`: a reference to a file, directory or web resource."""
    return obj(
        _base("resource", uri=st.one_of(uris.resource_uris(), uris.directories())),
        {
            **_COMMON_OPTIONAL,
            "sizeHint": st.integers(0, 10**9),
            "contentType": st.sampled_from(("text/plain", "image/png", "inode/directory")),
            "nonce": st.sampled_from(("n1", "n2")),
            "selection": st.fixed_dictionaries({"range": text_ranges()}),
        },
    )


@memo
def annotations_attachments() -> st.SearchStrategy[Json]:
    """`annotations`: the session's annotations channel, optionally some annotation ids."""
    return obj(
        _base("annotations", resource=uris.session_uris().map(lambda s: s + "/annotations")),
        {**_COMMON_OPTIONAL, "annotationIds": st.lists(pool(ANNOTATION_IDS), max_size=3)},
    )


@memo
def chat_attachments(
    *, end_turn: bool | None = None, foreign: bool | None = None
) -> st.SearchStrategy[Json]:
    """`chat` (0.7.0): another chat's transcript, with or without `endTurn`.

    `end_turn`: True = always carry `endTurn`, False = never (host pins the latest completed
    turn), None = either. `foreign`: True = a chat of another session, False = this session's,
    None = either.
    """
    if foreign is None:
        resource = uris.chat_uris(foreign=True)
    else:
        resource = st.sampled_from(uris.FOREIGN_CHAT_URIS) if foreign else uris.chat_uris()
    required = _base("chat", resource=resource)
    optional = dict(_COMMON_OPTIONAL)
    if end_turn is True:
        required["endTurn"] = pool(TURN_IDS)
    elif end_turn is None:
        optional["endTurn"] = pool(TURN_IDS)
    return obj(required, optional)


@memo
def attachments() -> st.SearchStrategy[Json]:
    """Any valid 0.7.0 attachment (every kind, every chat variant)."""
    return st.one_of(
        simple_attachments(),
        embedded_resource_attachments(),
        resource_attachments(),
        annotations_attachments(),
        chat_attachments(),
    )


# --- collections (draft) ---------------------------------------------------------------------


@memo
def collection_attachments(
    members: st.SearchStrategy[Json] | None = None,
) -> st.SearchStrategy[Json]:
    """A valid draft `collection`: one level, 1..4 non-collection members, own label/_meta/range."""
    return obj(
        {
            "type": st.just("collection"),
            "label": label(),
            "attachments": st.lists(
                members if members is not None else attachments(), min_size=1, max_size=4
            ),
        },
        _COMMON_OPTIONAL,
    )


def collection_depth(attachment: Any) -> int:
    """0 for a plain attachment; 1 + the deepest member for a collection."""
    if not isinstance(attachment, dict) or attachment.get("type") != "collection":
        return 0
    members = attachment.get("attachments")
    if not isinstance(members, list) or not members:
        return 1
    return 1 + max(collection_depth(m) for m in members)


def flatten(attachments_: list[Json]) -> list[Json]:
    """One-level flattening (the draft's model-context rule): members of each collection in
    order, other attachments as they are. Nested collections are *not* expanded further."""
    out: list[Json] = []
    for a in attachments_:
        if a.get("type") == "collection" and isinstance(a.get("attachments"), list):
            out.extend(a["attachments"])
        else:
            out.append(a)
    return out


@memo
def nested_collections(min_depth: int = 2, max_depth: int = 6) -> st.SearchStrategy[Json]:
    """Adversarial: a collection containing a collection, nested `min_depth..max_depth` deep.

    The nested one sits at a random position among ordinary members (INV-037).
    """

    def wrap(
        depth: int, members: list[list[Json]], positions: list[int], labels: list[str]
    ) -> Json:
        inner: Json = {"type": "collection", "label": labels[0], "attachments": members[0]}
        for level in range(1, depth):
            others = members[level]
            i = positions[level] % (len(others) + 1)
            inner = {
                "type": "collection",
                "label": labels[level],
                "attachments": [*others[:i], inner, *others[i:]],
            }
        return inner

    return st.integers(min_depth, max_depth).flatmap(
        lambda d: st.builds(
            wrap,
            st.just(d),
            st.lists(
                st.lists(attachments(), min_size=1 if d == 1 else 0, max_size=2),
                min_size=d,
                max_size=d,
            ).map(lambda ms: [ms[0] or [{"type": "simple", "label": "leaf"}], *ms[1:]]),
            st.lists(st.integers(0, 3), min_size=d, max_size=d),
            st.lists(label(), min_size=d, max_size=d),
        )
    )


@memo
def empty_collections() -> st.SearchStrategy[Json]:
    """Adversarial: a collection with zero members (the draft says MUST contain at least one)."""
    return obj(
        {"type": st.just("collection"), "label": label(), "attachments": st.just([])},
        _COMMON_OPTIONAL,
    )


@memo
def collections_with_shared_meta() -> st.SearchStrategy[Json]:
    """Adversarial: collection `_meta` and at least one member `_meta` share a key (with
    different values), so a host that merges metadata is detectable (INV-038)."""

    def build(collection: Json, key: str, a: Any, b: Any) -> Json:
        c = dict(collection)
        c["_meta"] = {**c.get("_meta", {}), key: a}
        members = [dict(m) for m in c["attachments"]]
        members[0]["_meta"] = {**members[0].get("_meta", {}), key: b}
        c["attachments"] = members
        return c

    return st.builds(
        build,
        collection_attachments(),
        st.sampled_from(("group", "part", "source", "id")),
        st.sampled_from(("collection", 1, True)),
        st.sampled_from(("member", 2, False)),
    )


def shared_meta_keys(collection: Json) -> set[str]:
    """Keys that appear in the collection's `_meta` and in some member's `_meta`."""
    outer = set(collection.get("_meta", {}))
    inner: set[str] = set()
    for m in collection.get("attachments", []):
        if isinstance(m, dict):
            inner |= set(m.get("_meta", {}))
    return outer & inner
