"""Loading a spec directory laid out like an upstream AHP checkout.

A spec directory has `schema/*.schema.json` and/or `types/test-cases/{reducers,round-trips}/`,
and usually a `CHANGELOG.md`. It is found from `--spec DIR` or the `AHP_SPEC_DIR` environment
variable. The harness never ships spec data itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .versions import Version, format_version, parse_version

ENV_VAR = "AHP_SPEC_DIR"
SCHEMA_NAMES = ("actions", "commands", "errors", "notifications", "state")


class SpecDirError(Exception):
    """The given path is missing or is not a spec directory (a usage/setup error, exit 2)."""


class SpecDirCorrupt(SpecDirError):
    """The folder is a spec directory, but one of its files is not what it must be (a schema or a
    fixture that does not parse as a JSON object): named with the error, a usage error too."""


def pin_env(start_dir: str | os.PathLike[str]) -> str | None:
    """Make a relative `$AHP_SPEC_DIR` absolute, against `start_dir` (the folder the command or
    pytest session was started in), once, at start-up: every later reader — this process after
    a `chdir`, an adapter or worker started elsewhere, a subprocess of a test — then sees the
    folder the user meant. Returns the value now in the environment (None: not set)."""
    value = os.environ.get(ENV_VAR)
    if not value:
        return None
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        path = os.path.normpath(os.path.join(os.fspath(start_dir), path))
    os.environ[ENV_VAR] = path
    return path


def strip_nulls(value: Any) -> Any:
    """Drop every dict key whose value is JSON null, recursively (reducer-fixture rule: null = absent)."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value


@dataclass(frozen=True)
class ReducerFixture:
    name: str  # full file name without .json (numeric prefixes are not unique)
    description: str
    kind: str
    initial: dict[str, Any]
    actions: list[dict[str, Any]]
    expected: dict[str, Any]
    path: Path


@dataclass(frozen=True)
class RoundTripFixture:
    name: str
    description: str
    type: str
    group: str
    input: Any
    canonical: Any  # acceptableOutputs[0]
    preserved: Any | None  # preservedOutput (group B only)
    path: Path


@dataclass(frozen=True)
class ReleaseInfo:
    """What the CHANGELOG says: the newest released version and a pending next version, if any."""

    released: Version | None
    pending: Version | None  # `## [X.Y.Z] — Unreleased`: the folder is main after `released`


_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\]\s*[—-]+\s*(.+?)\s*$", re.MULTILINE)


class SpecDir:
    def __init__(self, path: str | os.PathLike[str]):
        p = Path(path).expanduser()
        if not p.exists():
            raise SpecDirError(f"spec directory not found: {p}")
        if not p.is_dir():
            raise SpecDirError(f"spec path is not a directory: {p}")
        if not (p / "schema").is_dir() and not (p / "types" / "test-cases").is_dir():
            raise SpecDirError(
                f"{p} is not a spec directory: expected schema/ or types/test-cases/ "
                "(point --spec at an AHP checkout or a folder such as ahp-spec/0.7.0)"
            )
        self.path = p.resolve()
        self._validate()

    def _validate(self) -> None:
        """Every schema and every fixture parses as a JSON object, checked once, here, when the
        folder is loaded: a corrupt file is a `SpecDirCorrupt` naming it and the error (exit 2
        from every command), never a traceback mid-run or a run that quietly skips its checks.
        The parsed schemas are kept (`schemas`)."""
        schemas: dict[str, dict[str, Any]] = {}
        schema_dir = self.path / "schema"
        for f in sorted(schema_dir.glob("*.schema.json")) if schema_dir.is_dir() else []:
            doc = _json_object(f, "a JSON Schema")
            name = f.name.removesuffix(".schema.json")
            if name in SCHEMA_NAMES:
                schemas[name] = doc
        for d in (self.reducer_fixture_dir, self.round_trip_fixture_dir):
            for f in sorted(d.glob("*.json")) if d.is_dir() else []:
                _json_object(f, "a fixture")
        self.__dict__["schemas"] = {n: schemas[n] for n in SCHEMA_NAMES if n in schemas}

    def __repr__(self) -> str:
        return f"SpecDir({str(self.path)!r})"

    @classmethod
    def from_env(cls, explicit: str | os.PathLike[str] | None = None) -> SpecDir | None:
        """The spec dir named by `explicit`, else by $AHP_SPEC_DIR, else None."""
        chosen = explicit if explicit is not None else os.environ.get(ENV_VAR) or None
        return cls(chosen) if chosen is not None else None

    # -- fixtures ---------------------------------------------------------------------------

    @property
    def reducer_fixture_dir(self) -> Path:
        return self.path / "types" / "test-cases" / "reducers"

    @property
    def round_trip_fixture_dir(self) -> Path:
        return self.path / "types" / "test-cases" / "round-trips"

    def reducer_fixtures(self) -> list[ReducerFixture]:
        return list(_load_reducer_fixtures(self.reducer_fixture_dir))

    def round_trip_fixtures(self) -> list[RoundTripFixture]:
        out = []
        d = self.round_trip_fixture_dir
        for f in sorted(d.glob("*.json")) if d.is_dir() else []:
            raw = json.loads(f.read_text(encoding="utf-8"))
            outputs = raw["acceptableOutputs"]
            if len(outputs) != 1:
                raise SpecDirError(f"{f}: acceptableOutputs must have exactly one entry")
            out.append(
                RoundTripFixture(
                    name=f.stem,
                    description=raw.get("description", ""),
                    type=raw["type"],
                    group=raw.get("group", "A"),
                    input=raw["input"],
                    canonical=outputs[0],
                    preserved=raw.get("preservedOutput"),
                    path=f,
                )
            )
        return out

    # -- schemas ----------------------------------------------------------------------------

    def schema_path(self, name: str) -> Path:
        return self.path / "schema" / f"{name}.schema.json"

    def has_schemas(self) -> bool:
        return all(self.schema_path(n).is_file() for n in SCHEMA_NAMES)

    @cached_property
    def schemas(self) -> dict[str, dict[str, Any]]:
        """name -> parsed schema document, for each of the five published schemas present."""
        return {
            n: json.loads(self.schema_path(n).read_text(encoding="utf-8"))
            for n in SCHEMA_NAMES
            if self.schema_path(n).is_file()
        }

    # -- version ----------------------------------------------------------------------------

    @cached_property
    def release(self) -> ReleaseInfo:
        log = self.path / "CHANGELOG.md"
        if not log.is_file():
            return ReleaseInfo(None, None)
        released: Version | None = None
        pending: Version | None = None
        for m in _HEADING.finditer(log.read_text(encoding="utf-8")):
            v, when = parse_version(m.group(1)), m.group(2)
            if when.lower().startswith("unreleased"):
                pending = v if pending is None or v > pending else pending
            elif released is None or v > released:
                released = v
        if pending is not None and released is not None and pending <= released:
            pending = None
        return ReleaseInfo(released, pending)

    def describe_version(self) -> str:
        r = self.release
        if r.released is None:
            return "unknown version (no CHANGELOG.md)"
        text = format_version(r.released)
        if r.pending is not None:
            text += f" (main after release; {format_version(r.pending)} pending)"
        return text


def _json_object(f: Path, what: str) -> dict[str, Any]:
    """The JSON object in file `f`, or `SpecDirCorrupt` naming the file and what is wrong."""
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SpecDirCorrupt(f"{f}: not valid JSON ({e.msg}, line {e.lineno} column {e.colno}); "
                             f"the spec folder must hold {what} there") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecDirCorrupt(f"{f}: cannot be read ({e})") from None
    if not isinstance(doc, dict):
        raise SpecDirCorrupt(f"{f}: a JSON {type(doc).__name__} where {what} (a JSON object) belongs")
    return doc


def _load_reducer_fixtures(d: Path) -> Iterator[ReducerFixture]:
    for f in sorted(d.glob("*.json")) if d.is_dir() else []:
        raw = json.loads(f.read_text(encoding="utf-8"))
        missing = {"description", "reducer", "initial", "actions", "expected"} - set(raw)
        if missing:
            raise SpecDirError(f"{f}: not a reducer fixture (missing {', '.join(sorted(missing))})")
        yield ReducerFixture(
            name=f.stem,
            description=raw["description"],
            kind=raw["reducer"],
            initial=strip_nulls(raw["initial"]),
            actions=strip_nulls(raw["actions"]),
            expected=strip_nulls(raw["expected"]),
            path=f,
        )


def load_reducer_fixtures(directory: str | os.PathLike[str]) -> list[ReducerFixture]:
    """Reducer fixtures from any folder of fixture files (e.g. `later/types/test-cases/reducers`)."""
    return list(_load_reducer_fixtures(Path(directory)))
