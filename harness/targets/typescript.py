"""`ts:<AHP checkout>` and `js:<module>` — reducers run by Node through the bridge.

`ts:PATH` loads the TypeScript reducers of an AHP checkout's `types/` folder with tsx, which is
installed with npm into a cache on first use (`$AHP_FUZZ_CACHE`, else `~/.cache/ahp-fuzz`).
`js:FILE` loads a JavaScript ES module directly (no tsx). Either way the bridge
(`node_bridge.mjs`) speaks the adapter protocol, both forms, and pins `Date.now()` to the
step's `now`.

Where the reducers are looked for in a checkout (first match per kind wins):
`types/reducers.ts`, then `types/index.ts`, then every `types/channels-*/reducer.ts`.
Export names: see `KIND_EXPORTS`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.reference.profile import DEFAULT_PROFILE, Profile

from .adapter import AdapterTarget, bridge_path
from .base import Target, TargetSetupError, register_target

#: state kind -> the export name the bridge looks for (also documented in docs/adapters.md).
KIND_EXPORTS = {
    "root": "rootReducer",
    "session": "sessionReducer",
    "chat": "chatReducer",
    "terminal": "terminalReducer",
    "changeset": "changesetReducer",
    "annotations": "annotationsReducer",
    "resourceWatch": "resourceWatchReducer",
}
TSX_SPEC = "tsx@4"
CACHE_ENV = "AHP_FUZZ_CACHE"
_TSX_API = Path("node_modules/tsx/dist/esm/api/index.mjs")


def cache_dir() -> Path:
    """Where downloaded helpers live: `$AHP_FUZZ_CACHE`, else `~/.cache/ahp-fuzz`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ahp-fuzz"


def find_node() -> str:
    node = shutil.which("node")
    if node is None:
        raise TargetSetupError(
            "node is not installed (or not on PATH): the ts: and js: targets run the reducers "
            "with Node.js >= 18 (e.g. `apt-get install nodejs npm`)"
        )
    return node


def reducer_modules(checkout: str | os.PathLike[str]) -> list[Path]:
    """The TypeScript files of a checkout that may export reducers, in lookup order:
    `types/reducers.ts`, `types/index.ts`, `types/channels-*/reducer.ts`, then any other
    `types/**/*.ts` (not tests or declarations) whose text exports a reducer name that the
    files before it do not."""
    root = Path(checkout).expanduser()
    if not root.exists():
        raise TargetSetupError(f"ts: AHP checkout not found: {root}")
    types = root / "types"
    if not types.is_dir():
        raise TargetSetupError(
            f"ts: {root} has no types/ folder: point ts: at a checkout of "
            "microsoft/agent-host-protocol (the folder that contains types/, schema/, docs/)"
        )
    found = [p for p in (types / "reducers.ts", types / "index.ts") if p.is_file()]
    found += sorted(types.glob("channels-*/reducer.ts"))
    exported = {name for name in KIND_EXPORTS.values() if any(_exports(p, name) for p in found)}
    for p in sorted(types.rglob("*.ts")):
        if p in found or p.name.endswith((".test.ts", ".d.ts")) or "node_modules" in p.parts:
            continue
        names = {
            name for name in KIND_EXPORTS.values() if name not in exported and _exports(p, name)
        }
        if names:
            found.append(p)
            exported |= names
    if not found:
        raise TargetSetupError(
            f"ts: no reducer module under {types} "
            "(looked for types/reducers.ts, types/index.ts, types/channels-*/reducer.ts "
            f"and any file exporting {', '.join(KIND_EXPORTS.values())})"
        )
    return [p.resolve() for p in found]


def _exports(path: Path, name: str) -> bool:
    """Whether the source text exports `name` directly or re-exports it (a text search)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(
        rf"export\s+(?:async\s+)?(?:function|const|let)\s+{name}\b", text
    ) is not None or (re.search(rf"export\s*\{{[^}}]*\b{name}\b[^}}]*\}}", text) is not None)


def ensure_tsx(*, install: bool = True, timeout_s: float = 300.0) -> Path:
    """The path of tsx's ESM API module, installing tsx with npm into the cache if needed."""
    prefix = cache_dir() / "node"
    api = prefix / _TSX_API
    if api.is_file():
        return api
    if not install:
        raise TargetSetupError(f"tsx is not installed in {prefix}")
    npm = shutil.which("npm")
    if npm is None:
        raise TargetSetupError(
            f"tsx is not in the cache ({prefix}) and npm is not installed to fetch it: "
            f"install npm, or run `npm install --prefix {prefix} {TSX_SPEC}` on a machine that has it"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time across workers
        try:
            if api.is_file():
                return api
            cmd = [
                npm,
                "install",
                "--prefix",
                str(prefix),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                TSX_SPEC,
            ]
            try:
                done = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=timeout_s, check=False
                )
            except subprocess.TimeoutExpired:
                raise TargetSetupError(
                    f"installing tsx timed out after {timeout_s:g} s: {' '.join(cmd)}"
                ) from None
            if done.returncode != 0 or not api.is_file():
                tail = "\n    ".join((done.stderr or done.stdout).strip().splitlines()[-10:])
                raise TargetSetupError(
                    f"installing tsx failed (npm exit code {done.returncode}): {' '.join(cmd)}\n    {tail}"
                )
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock, fcntl.LOCK_UN)
    return api


def bridge_argv(
    modules: Sequence[Path], *, tsx_api: Path | None = None, name: str | None = None
) -> list[str]:
    argv = [find_node(), str(bridge_path())]
    for m in modules:
        argv += ["--module", str(m)]
    if tsx_api is not None:
        argv += ["--tsx", str(tsx_api)]
    if name:
        argv += ["--name", name]
    return argv


def open_typescript_target(
    checkout: str,
    *,
    profile: Profile = DEFAULT_PROFILE,
    timeout_s: float = 5.0,
    startup_timeout_s: float = 60.0,
    **options: Any,
) -> AdapterTarget:
    """The TypeScript reducers of the AHP checkout at `checkout`."""
    if not checkout.strip():
        raise ValueError("ts: needs the path of an AHP checkout, e.g. ts:../agent-host-protocol")
    modules = reducer_modules(checkout)
    find_node()
    api = ensure_tsx()
    root = Path(checkout).expanduser().resolve()
    return AdapterTarget(
        bridge_argv(modules, tsx_api=api, name=f"typescript reducers of {root}"),
        profile=profile,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        description=f"ts:{checkout}",
        cwd=root,
        **options,
    )


def open_javascript_target(
    module: str,
    *,
    profile: Profile = DEFAULT_PROFILE,
    timeout_s: float = 5.0,
    **options: Any,
) -> AdapterTarget:
    """A JavaScript ES module exporting reducers (by the `KIND_EXPORTS` names or `reducers`)."""
    path = Path(module).expanduser()
    if not path.is_file():
        raise TargetSetupError(f"js: module not found: {path}")
    return AdapterTarget(
        bridge_argv([path.resolve()], name=f"javascript reducers of {path}"),
        profile=profile,
        timeout_s=timeout_s,
        description=f"js:{module}",
        **options,
    )


def _open_ts(text: str, *, profile: Profile = DEFAULT_PROFILE, timeout_s: float = 5.0, **options: Any) -> Target:
    return open_typescript_target(text[3:], profile=profile, timeout_s=timeout_s, **options)


def _open_js(text: str, *, profile: Profile = DEFAULT_PROFILE, timeout_s: float = 5.0, **options: Any) -> Target:
    return open_javascript_target(text[3:], profile=profile, timeout_s=timeout_s, **options)


register_target(("ts:",), ("ts:<AHP checkout>",), _open_ts)
register_target(("js:",), ("js:<module>",), _open_js)
