"""What one connection is shown: version gating and collection flattening per peer.

The host keeps one authoritative state (its model's shapes: 0.7.0, or 1.0.0 for the 1.0.0 host;
collections kept). Every envelope and snapshot is projected for the connection it goes to:

* an action type newer than the connection's negotiated version is not sent (INV-046: a 0.6.0
  peer of the 0.7.0 host, a 0.9.0 peer of the 1.0.0 host);
* on a 0.6.0 connection the multiroot `workingDirectories` list of a session becomes the
  singular 0.6.0 `workingDirectory` (its first entry) and chat subsets are not shown;
* a connection that did not declare `capabilities.attachmentCollections` sees every message
  with `attachments = flatten(attachments)` (REDUCERS.md §9, INV-040).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness.reference.collections import COLLECTION, is_collection
from harness.spec.versions import Version, is_newer_than

from .defects import DefectSet

JSON = Any
V070: Version = (0, 7, 0)


def flatten(attachments: list[Any], defects: DefectSet) -> list[Any]:
    out: list[Any] = []
    for att in attachments:
        if not is_collection(att):
            out.append(att)
            continue
        members = list(att.get("attachments") or [])
        if defects.has("collection-flatten-reordered"):
            members.reverse()
        meta = att.get("_meta")
        if defects.has("collection-meta-merged") and isinstance(meta, dict):
            members = [{**m, "_meta": {**meta, **(m.get("_meta") or {})}} if isinstance(m, dict) else m for m in members]
        out.extend(members)
    return out


def flatten_collections(value: JSON, defects: DefectSet) -> JSON:
    """`value` with every `attachments` list that holds a collection flattened (copying only
    along changed paths: an unchanged value is returned as is, without a copy of any part)."""

    def member(key: Any, v: JSON) -> JSON:
        nv = flatten_collections(v, defects)
        if key == "attachments" and isinstance(nv, list) and any(is_collection(a) for a in nv):
            return flatten(nv, defects)
        return nv

    if isinstance(value, dict):
        return _copy_on_change(value, value.items(), member)
    if isinstance(value, list):
        return _copy_on_change(value, enumerate(value), member)
    return value


def _copy_on_change(value: Any, members: Iterable[tuple[Any, JSON]], fix: Callable[[Any, JSON], JSON]) -> Any:
    """`value` (a dict or a list) with `fix(key, member)` for each container member, copied
    once, at the first member that `fix` changes; `value` itself when none changes."""
    out = None
    for key, v in members:
        if isinstance(v, (dict, list)):
            nv = fix(key, v)
            if nv is not v:
                if out is None:
                    out = type(value)(value)
                out[key] = nv
    return value if out is None else out


def drop_empty_subsets(value: JSON) -> JSON:
    """The `empty-subset-dropped` defect: `workingDirectories: []` vanishes (Go omitempty)."""
    if isinstance(value, dict):
        return {
            k: drop_empty_subsets(v)
            for k, v in value.items()
            if not (k == "workingDirectories" and v == [])
        }
    if isinstance(value, list):
        return [drop_empty_subsets(v) for v in value]
    return value


def contains_collection(value: JSON) -> bool:
    if isinstance(value, dict):
        if value.get("type") == COLLECTION:
            return True
        return any(contains_collection(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_collection(v) for v in value)
    return False


def session_for_version(state: dict[str, Any], version: Version) -> dict[str, Any]:
    """A session state or summary in the shape of `version` (0.6.0: singular workingDirectory,
    no chat subsets in the catalog — whether or not the session itself has directories)."""
    if version >= V070:
        return state
    out = {k: v for k, v in state.items() if k != "workingDirectories"}
    dirs = state.get("workingDirectories")
    if dirs:
        out["workingDirectory"] = dirs[0]
    chats = state.get("chats")
    if isinstance(chats, list):
        out["chats"] = [chat_for_version(c, version) if isinstance(c, dict) else c for c in chats]
    return out


def chat_for_version(state: dict[str, Any], version: Version) -> dict[str, Any]:
    if version >= V070 or "workingDirectories" not in state:
        return state
    return {k: v for k, v in state.items() if k != "workingDirectories"}


def gated_out(action_type: Any, version: Version, defects: DefectSet) -> bool:
    """True when an action of this type must not be sent to a `version` connection."""
    if not isinstance(action_type, str):
        return False
    return is_newer_than(action_type, version) and not defects.has("version-gate-leak")
