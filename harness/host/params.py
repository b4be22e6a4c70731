"""Command params checked against the spec folder's commands schema (WIRE.md §2: invalid params
are -32602).

The handlers check what they read (types of the keys they use, URIs, cursors); a request whose
params the published schema rejects anywhere else — a `subscribe` whose `view` is not an
object, a `listSessions` whose `_meta` is a boolean, a `createSession` whose `fork` lacks its
`turnId` — is refused as a whole, -32602, before its handler runs, as a strict host must
(schemathesis' `negative_data_rejection`, ST-NEGATIVE-DATA). The check needs the schema: the
host ships no spec data, so it is on when the host is given a spec folder (`$AHP_SPEC_DIR`, as
the model's payload checks) and off otherwise. `<method>` is checked against `<Method>Params`;
a method the schema does not define is not checked (`ping` is answered before any check,
whatever its params, WIRE.md §10).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema_rs


class CommandParams:
    """`problem(method, params)`: why `params` is not a schema-valid `<Method>Params`, or None."""

    def __init__(self, defs: Mapping[str, Any], source: str = "") -> None:
        self._defs = dict(defs)
        self.source = source
        self._validators: dict[str, Any] = {}

    @classmethod
    def from_spec(cls, spec: Any) -> CommandParams | None:
        """The commands schema of a `SpecDir` (None: no spec folder, or no commands schema)."""
        if spec is None:
            return None
        return _cached(str(spec.path))

    @classmethod
    def from_env(cls) -> CommandParams | None:
        """The commands schema of `$AHP_SPEC_DIR` (None when unset, or not a sound spec folder:
        the command line refuses that before any host starts)."""
        from harness.spec.specdir import SpecDir, SpecDirError

        try:
            return cls.from_spec(SpecDir.from_env())
        except SpecDirError:
            return None

    def problem(self, method: str, params: Any) -> str | None:
        name = f"{method[:1].upper()}{method[1:]}Params"
        if name not in self._defs:
            return None
        validator = self._validators.get(name)
        if validator is None:
            validator = jsonschema_rs.validator_for({"$ref": f"#/$defs/{name}", "$defs": self._defs})
            self._validators[name] = validator
        error = next(iter(validator.iter_errors(params)), None)
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.instance_path)
        return f"params{where}: {str(error.message)[:200]} (the {name} schema)"


@lru_cache(maxsize=8)
def _cached(path: str) -> CommandParams | None:
    from harness.spec.specdir import SpecDir

    doc = SpecDir(Path(path)).schemas.get("commands")
    defs = doc.get("$defs") if isinstance(doc, Mapping) else None
    return CommandParams(defs, path) if isinstance(defs, Mapping) else None


__all__ = ["CommandParams"]
