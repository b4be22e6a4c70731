"""Strategies derived from a spec directory's JSON schemas, the INV-007 patches, and a lint.

Three things live here, in the order they run:

1. **Lint** (`lint`): before anything is generated or validated, the published schemas are
   checked for problems the generator and validator would otherwise trip over — dangling
   `$ref`s (0.7.0's `StateAction.oneOf` contains `{"$ref": "#/$defs/"}`), an unsupported JSON
   Schema draft, recursive definitions, `required` keys that are not declared, and definitions
   that differ between the five files. Problems are reported as `LintIssue`s; those that cannot
   be repaired raise `SchemaProblem`, an error class of its own (a broken spec is a setup
   problem, not a test failure). A dangling member of a `oneOf`/`anyOf` is repaired by dropping
   it, and the repair is reported.
2. **Patches** (`harness.spec.schema_patches`): the published schemas are known to reject legitimate reducer
   output (REDUCERS.md §11 item 11, INV-007): `SessionStatus` becomes any integer in
   [0, 2^32); `usage` is not required on `Turn`/`ActiveTurn`, nor `origin` on `ActionEnvelope`,
   nor `activity`/`_meta`/`changesets`/`operations` on their actions. Nothing else is changed.
   Optionally the collection-attachment draft (seed 000) is added as an extension.
3. **Validation and generation** (`SchemaSet`): Draft 2020-12 validators and Hypothesis
   strategies per definition, both cached on the `SchemaSet` instance (bounded by the number
   of definitions; no module-level caches). Generation uses schemathesis' own JSON-Schema
   generator through its public API: the merged `$defs` become OpenAPI 3.1
   `components/schemas`, each requested definition becomes the JSON request body of one
   operation, and `operation.as_strategy()` draws a `Case` whose `body` is the value. This
   engine handles the recursive definitions; hypothesis-jsonschema does not (and breaks on
   Hypothesis >= 6.170.10) — see bench/results/strategies.md for the measurement.

Heavy unions (`StateAction`, `ActionEnvelope`, `Snapshot`, full states) are slow to generate;
keep them out of the default test tier (`HEAVY_DEFINITIONS`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import jsonschema
from hypothesis import strategies as st

from harness.spec.schema_patches import apply_inv007_patches
from harness.spec.specdir import SCHEMA_NAMES, SpecDir
from harness.spec.versions import STATE_DEFINITIONS

Json = dict[str, Any]
Severity = Literal["error", "warning", "info"]

SUPPORTED_DRAFTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
    }
)
#: Definitions kept out of the default (CI) test tier: the unions (every action, envelopes,
#: snapshots) and those below ~3 examples/s in bench/results/strategies.md.
HEAVY_DEFINITIONS: Final = frozenset(
    {
        "StateAction",
        "ChatAction",
        "ActionEnvelope",
        "Snapshot",
        "ReconnectSnapshotResult",
        "ReconnectReplayResult",
        "SubscribeResult",
        "InitializeResult",
        "SessionState",
        "ChatState",
        "RootState",
        "AnnotationsState",
        "AgentInfo",
        "ChatTurnsLoadedAction",
        "RootAgentsChangedAction",
        "SessionCustomizationsChangedAction",
    }
)


class SchemaProblem(Exception):
    """The spec's schemas have a problem that cannot be repaired (a setup error, not a finding)."""

    def __init__(self, issues: list[LintIssue]) -> None:
        self.issues = issues
        super().__init__("; ".join(i.render() for i in issues))


@dataclass(frozen=True)
class LintIssue:
    severity: Severity
    code: str  # dangling-ref, unsupported-draft, recursive-definition, required-not-declared, ...
    file: str
    pointer: str  # JSON pointer inside the file
    message: str
    repair: str | None = None  # what was done about it, when something was

    def render(self) -> str:
        text = (
            f"{self.severity}: {self.file}.schema.json#{self.pointer}: {self.code}: {self.message}"
        )
        return text + (f" (repaired: {self.repair})" if self.repair else "")


@dataclass
class LintReport:
    issues: list[LintIssue] = field(default_factory=list)

    @property
    def unrepaired_errors(self) -> list[LintIssue]:
        return [i for i in self.issues if i.severity == "error" and i.repair is None]

    def by_code(self, code: str) -> list[LintIssue]:
        return [i for i in self.issues if i.code == code]

    def raise_for_errors(self) -> None:
        if self.unrepaired_errors:
            raise SchemaProblem(self.unrepaired_errors)


# --- lint --------------------------------------------------------------------------------------


def _walk(node: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    yield pointer, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, f"{pointer}/{_escape(k)}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{pointer}/{i}")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _local_target(ref: str) -> str | None:
    """The definition name a local `#/$defs/<Name>` ref points to ('' for `#/$defs/`)."""
    prefix = "#/$defs/"
    return ref[len(prefix) :] if ref.startswith(prefix) else None


def _refs_of(node: Any) -> set[str]:
    out = set()
    for _, n in _walk(node):
        if isinstance(n, dict) and isinstance(n.get("$ref"), str):
            name = _local_target(n["$ref"])
            if name:
                out.add(name)
    return out


def _cycles(defs: Mapping[str, Any]) -> list[list[str]]:
    """Strongly connected components of the $ref graph that contain a cycle."""
    return cyclic_components({name: sorted(_refs_of(body) & set(defs)) for name, body in defs.items()})


def cyclic_components(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (node → successors) that contain a cycle,
    each sorted (Tarjan's algorithm). Also used by tests/test_import_cycles.py."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def lint(docs: Mapping[str, Json]) -> tuple[LintReport, dict[str, Json]]:
    """Lint the schema documents; return the report and repaired deep copies of them.

    Repairs: a dangling `$ref` that is a member of `oneOf`/`anyOf` is dropped from the union.
    Every other error is left unrepaired (and `LintReport.raise_for_errors` raises).
    """
    report = LintReport()
    repaired = {name: copy.deepcopy(doc) for name, doc in docs.items()}
    for fname, doc in repaired.items():
        draft = doc.get("$schema")
        if draft not in SUPPORTED_DRAFTS:
            report.issues.append(
                LintIssue(
                    "error",
                    "unsupported-draft",
                    fname,
                    "/$schema",
                    f"draft {draft!r} is not JSON Schema 2020-12",
                )
            )
        defs = doc.get("$defs")
        if not isinstance(defs, dict):
            report.issues.append(
                LintIssue("error", "no-defs", fname, "", "document has no $defs object")
            )
            continue
        _lint_refs(fname, doc, defs, report)
        for comp in _cycles(defs):
            report.issues.append(
                LintIssue(
                    "info",
                    "recursive-definition",
                    fname,
                    f"/$defs/{comp[0]}",
                    f"recursive $ref cycle through {', '.join(comp)} (needs a generator that handles recursion)",
                )
            )
        for name, body in defs.items():
            for ptr, node in _walk(body, f"/$defs/{_escape(name)}"):
                if (
                    isinstance(node, dict)
                    and isinstance(node.get("required"), list)
                    and isinstance(node.get("properties"), dict)
                ):
                    undeclared = [k for k in node["required"] if k not in node["properties"]]
                    if undeclared:
                        report.issues.append(
                            LintIssue(
                                "warning",
                                "required-not-declared",
                                fname,
                                ptr,
                                f"required {undeclared} not in properties (any JSON value is accepted for it)",
                            )
                        )
    _lint_conflicts(repaired, report)
    return report, repaired


def _lint_refs(fname: str, doc: Json, defs: Json, report: LintReport) -> None:
    # Collect first, mutate after: dropping a union member shifts later indexes.
    dangling: list[tuple[str, list[Any] | None, Json]] = []
    for ptr, node in _walk(doc):
        if not isinstance(node, dict):
            continue
        for union in ("oneOf", "anyOf"):
            members = node.get(union)
            if isinstance(members, list):
                for i, m in enumerate(members):
                    if (
                        isinstance(m, dict)
                        and isinstance(m.get("$ref"), str)
                        and not _resolves(m["$ref"], defs)
                    ):
                        dangling.append((f"{ptr}/{union}/{i}", members, m))
        ref = node.get("$ref")
        if (
            isinstance(ref, str)
            and not _resolves(ref, defs)
            and not any(node is d[2] for d in dangling)
        ):
            dangling.append((ptr, None, node))
    for ptr, members, member in dangling:
        ref = member["$ref"]
        if not ref.startswith("#"):
            report.issues.append(
                LintIssue("warning", "non-local-ref", fname, ptr, f"$ref {ref!r} is not local")
            )
            continue
        if members is not None:
            members.remove(member)
            report.issues.append(
                LintIssue(
                    "error",
                    "dangling-ref",
                    fname,
                    ptr,
                    f"$ref {ref!r} names no definition",
                    "dropped from the union",
                )
            )
        else:
            report.issues.append(
                LintIssue("error", "dangling-ref", fname, ptr, f"$ref {ref!r} names no definition")
            )


def _resolves(ref: str, defs: Json) -> bool:
    if not ref.startswith("#"):
        return True  # remote refs are reported separately, not resolved here
    name = _local_target(ref)
    if ref in ("#", ""):
        return True
    return bool(name) and name in defs


def _lint_conflicts(docs: Mapping[str, Json], report: LintReport) -> None:
    seen: dict[str, tuple[str, Any]] = {}
    for fname in sorted(docs, key=lambda n: (n != "actions", n)):
        for name, body in docs[fname].get("$defs", {}).items():
            if name in seen and seen[name][1] != body:
                report.issues.append(
                    LintIssue(
                        "warning",
                        "conflicting-definition",
                        fname,
                        f"/$defs/{name}",
                        f"differs from the definition in {seen[name][0]}.schema.json (the latter is used)",
                    )
                )
            seen.setdefault(name, (fname, body))


# --- patches -----------------------------------------------------------------------------------

def add_collection_draft(defs: Json) -> None:
    """Add the collection-attachment draft (seed 000) to merged `$defs`, in place.

    Written from the proposal's prose: `collection` has the common attachment fields and a
    non-empty `attachments` array of any *non-collection* attachment; it joins the
    `MessageAttachment` union.
    """
    members = [
        m
        for m in defs["MessageAttachment"]["oneOf"]
        if m.get("$ref") != "#/$defs/MessageCollectionAttachment"
    ]
    defs["MessageCollectionItem"] = {"oneOf": copy.deepcopy(members)}
    base = defs["MessageAttachmentBase"]
    defs["MessageCollectionAttachment"] = {
        "type": "object",
        "properties": {
            **copy.deepcopy(base["properties"]),
            "type": {"const": "collection"},
            "attachments": {
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "#/$defs/MessageCollectionItem"},
            },
        },
        "required": [*base.get("required", []), "type", "attachments"],
    }
    defs["MessageAttachment"] = {
        "oneOf": [*members, {"$ref": "#/$defs/MessageCollectionAttachment"}]
    }


# --- the schema set ----------------------------------------------------------------------------


class SchemaSet:
    """The five schemas of one spec directory: linted, repaired, merged, INV-007-patched.

    `defs` is one merged namespace (the five files share most definitions; where they differ
    the lint says so and `actions` wins, then alphabetical order). Validators and strategies
    are cached per definition on this instance.
    """

    def __init__(
        self, docs: Mapping[str, Json], *, patched: bool = True, collections: bool = False
    ) -> None:
        missing = [n for n in SCHEMA_NAMES if n not in docs]
        self.report, repaired = lint(docs)
        if missing:
            self.report.issues.append(
                LintIssue(
                    "warning", "missing-file", ",".join(missing), "", "schema file(s) not present"
                )
            )
        self.report.raise_for_errors()
        self.files = repaired
        merged: Json = {}
        for fname in sorted(repaired, key=lambda n: (n != "actions", n)):
            for name, body in repaired[fname].get("$defs", {}).items():
                merged.setdefault(name, body)
        self.patches = apply_inv007_patches(merged) if patched else []
        if collections:
            add_collection_draft(merged)
        self.defs: Json = merged
        self.draft = next(iter(repaired.values())).get(
            "$schema", "https://json-schema.org/draft/2020-12/schema"
        )
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        self._strategies: dict[str, st.SearchStrategy[Any]] = {}
        self._openapi: Any = None
        self._action_defs: dict[str, str] | None = None

    @classmethod
    def from_spec_dir(cls, spec: SpecDir, **kwargs: Any) -> SchemaSet:
        if not spec.has_schemas():
            raise SchemaProblem(
                [LintIssue("error", "missing-file", str(spec.path), "", "no schema/*.schema.json")]
            )
        return cls(spec.schemas, **kwargs)

    # -- definitions ---------------------------------------------------------------------------

    def definitions(
        self, group: Literal["all", "actions", "params", "states"] = "all"
    ) -> list[str]:
        """Definition names: all, action payloads (members of `StateAction`), command params
        (`*Params` of commands.schema.json) or the seven state types."""
        if group == "actions":
            return sorted(set(self.action_definitions().values()))
        if group == "params":
            return sorted(
                n for n in self.files.get("commands", {}).get("$defs", {}) if n.endswith("Params")
            )
        if group == "states":
            return sorted(STATE_DEFINITIONS.values())
        return sorted(self.defs)

    def action_definitions(self) -> dict[str, str]:
        """Action type -> the definition that describes it (the union for toolCallConfirmed)."""
        if self._action_defs is None:
            out: dict[str, str] = {}
            for member in self.defs.get("StateAction", {}).get("oneOf", []):
                name = _local_target(member.get("$ref", "")) or ""
                body = self.defs.get(name, {})
                t = _const_type(body, self.defs)
                if t is not None:
                    out[t] = name
            self._action_defs = out
        return dict(self._action_defs)

    def action_definition(self, action_type: str) -> str:
        try:
            return self.action_definitions()[action_type]
        except KeyError:
            raise KeyError(f"no schema definition for action type {action_type!r}") from None

    # -- validation ----------------------------------------------------------------------------

    def validator(self, name: str) -> jsonschema.protocols.Validator:
        v = self._validators.get(name)
        if v is None:
            if name not in self.defs:
                raise KeyError(f"no definition {name!r}")
            schema = {"$schema": self.draft, "$defs": self.defs, "$ref": f"#/$defs/{name}"}
            v = self._validators[name] = jsonschema.Draft202012Validator(schema)
        return v

    def errors(self, name: str, instance: Any) -> list[str]:
        """Validation errors of `instance` against definition `name` (empty when valid)."""
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in self.validator(name).iter_errors(instance)
        ]

    def is_valid(self, name: str, instance: Any) -> bool:
        return self.validator(name).is_valid(instance)

    # -- generation ----------------------------------------------------------------------------

    def openapi_document(self, names: list[str] | None = None) -> Json:
        """The merged `$defs` as an OpenAPI 3.1 document with one POST body per definition."""
        text = json.dumps(self.defs).replace('"#/$defs/', '"#/components/schemas/')
        components = json.loads(text)
        paths = {
            f"/{n}": {
                "post": {
                    "operationId": n,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": f"#/components/schemas/{n}"}}
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
            for n in (names if names is not None else sorted(self.defs))
        }
        return {
            "openapi": "3.1.0",
            "info": {"title": "AHP $defs", "version": "0"},
            "paths": paths,
            "components": {"schemas": components},
        }

    def strategy(self, name: str) -> st.SearchStrategy[Any]:
        """Schema-derived values of definition `name` (schemathesis' generator), cached."""
        s = self._strategies.get(name)
        if s is None:
            if name not in self.defs:
                raise KeyError(f"no definition {name!r}")
            operation = self._schemathesis_schema()[f"/{name}"]["POST"]
            s = self._strategies[name] = operation.as_strategy().map(_body)
        return s

    def action_strategy(self, action_type: str) -> st.SearchStrategy[Json]:
        """Schema-only values for one action type (knows nothing about any state)."""
        return self.strategy(self.action_definition(action_type))

    def prepare(self) -> None:
        """Load the generator's OpenAPI view of all definitions now (it is otherwise lazy)."""
        self._schemathesis_schema()

    def closure(self, name: str) -> dict[str, Any]:
        """Definition `name` and every definition it reaches through `$ref`s."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop()
            if n in seen or n not in self.defs:
                continue
            seen.add(n)
            todo.extend(_refs_of(self.defs[n]))
        return {n: self.defs[n] for n in sorted(seen)}

    def _schemathesis_schema(self) -> Any:
        if self._openapi is None:
            import schemathesis  # heavy import, only when generating

            self._openapi = schemathesis.openapi.from_dict(self.openapi_document())
        return self._openapi


def _body(case: Any) -> Any:
    return case.body


def _const_type(body: Json, defs: Json) -> str | None:
    """The `properties.type.const` of an action definition; for a union of variants that all
    share one const (e.g. approved/denied tool-call confirmation), that const."""
    const = body.get("properties", {}).get("type", {}).get("const")
    if isinstance(const, str):
        return const
    members = body.get("oneOf")
    if isinstance(members, list) and members:
        consts = {
            _const_type(defs.get(_local_target(m.get("$ref", "")) or "", {}), defs) for m in members
        }
        if len(consts) == 1:
            return consts.pop()
    return None


def schema_set_from_env(explicit: str | None = None, **kwargs: Any) -> SchemaSet | None:
    """The `SchemaSet` of `--spec`/`$AHP_SPEC_DIR`, or None when no spec directory is given."""
    spec = SpecDir.from_env(explicit)
    return SchemaSet.from_spec_dir(spec, **kwargs) if spec is not None else None
