"""Shared fixtures: the spec directory (optional) and Hypothesis profiles."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from harness.spec.specdir import ENV_VAR, SpecDir

# A test whose ahp-fuzz run tested nothing fails (unless marked `expect_untested`).
from tests.untested_guard import pytest_configure, pytest_runtest_call, pytest_runtest_setup  # noqa: F401

# The CI lane is deterministic: derandomized, no deadline (2-core CI machines vary), and no
# example database writes that could change what a later run tries.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _spec_root() -> Path | None:
    value = os.environ.get(ENV_VAR)
    return Path(value) if value else None


@pytest.fixture(scope="session")
def spec_dir() -> SpecDir:
    """The spec directory named by $AHP_SPEC_DIR (the pinned 0.7.0 folder in CI)."""
    root = _spec_root()
    if root is None:
        pytest.skip(f"{ENV_VAR} not set: point it at a spec directory such as ../shared/ahp-spec/0.7.0")
    return SpecDir(root)


def sibling_spec(name: str) -> SpecDir:
    """A sibling of $AHP_SPEC_DIR (e.g. `0.6.0`, `later`), or skip with the reason."""
    root = _spec_root()
    if root is None:
        pytest.skip(f"{ENV_VAR} not set: the {name} spec folder is found beside it")
    path = root.parent / name
    if not path.is_dir():
        pytest.skip(f"no {name} folder beside {ENV_VAR} ({path})")
    return SpecDir(path)


@pytest.fixture(autouse=True)
def _spec_folder_restored() -> object:
    """A command run in-process with `--spec` sets `$AHP_SPEC_DIR` for the processes it starts;
    every test leaves the variable as it found it (one such test made every later test skip for
    want of a sibling spec folder)."""
    saved = os.environ.get(ENV_VAR)
    yield
    if saved is None:
        os.environ.pop(ENV_VAR, None)
    else:
        os.environ[ENV_VAR] = saved
