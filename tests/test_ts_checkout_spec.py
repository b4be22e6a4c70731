"""`ts:DIR` is a spec directory too (issue 15 item 6): `run`, `replay` and `conformance` use the
checkout's schema, fixtures and CHANGELOG unless `--spec` names another folder.

The fake checkout links `schema/`, `types/` and `CHANGELOG.md` of the shared 0.7.0 folder into a
temporary folder (it has no TypeScript reducers, so a command that opens the target stops there
— after choosing its spec folder, which is what is tested).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import _profiles, main
from harness.spec.specdir import ENV_VAR

from .conftest import sibling_spec


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    shared = sibling_spec("0.7.0").path
    root = tmp_path / "agent-host-protocol"
    root.mkdir()
    for name in ("schema", "types", "CHANGELOG.md"):
        (root / name).symlink_to(shared / name)
    return root


def test_a_ts_checkout_is_the_spec_folder_unless_spec_says_otherwise(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v060 = sibling_spec("0.6.0").path
    monkeypatch.setenv(ENV_VAR, str(v060))
    found = _profiles.spec_or_usage(None, target=f"ts:{checkout}")
    assert found is not None and found.path == checkout.resolve()
    explicit = _profiles.spec_or_usage(str(v060), target=f"ts:{checkout}")
    assert explicit is not None and explicit.path == v060
    # other targets: the environment, as before
    env = _profiles.spec_or_usage(None, target="reference")
    assert env is not None and env.path == v060
    # a ts: folder that is not a spec folder: the environment
    assert _profiles.spec_or_usage(None, target=f"ts:{checkout / 'nowhere'}").path == v060  # type: ignore[union-attr]


def test_conformance_against_a_ts_checkout_finds_its_fixtures(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    code = main(["conformance", "--target", f"ts:{checkout}", "--timeout", "30"])
    err = capsys.readouterr().err
    assert "no spec directory" not in err  # before: exit 2 "no spec directory"
    if code == 2:  # no TypeScript reducers in the fake checkout (or no node/tsx here)
        assert "ts:" in err or "node" in err or "tsx" in err or "reducer" in err, err
    else:
        assert code in (0, 1)


def test_run_against_a_ts_checkout_records_its_schema_switches(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    spec = _profiles.spec_or_usage(None, target=f"ts:{checkout}")
    switches = _profiles.run_switches(spec)
    assert switches.to_json() == {"payloadSchema": "0.7.0", "publishedSchema": "0.7.0"}
    assert _profiles.checks_off_notices(spec) == ()
    assert _profiles.schema_of(spec) is not None


def test_replay_of_a_ts_finding_uses_the_checkout_for_its_recorded_schemas(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    finding = json.loads(
        (Path(__file__).resolve().parent.parent / "corpora/known/inv-014-session-ce4c27b1cdd5.json").read_text()
    )
    finding["extra"]["verdict"] = {"payloadSchema": "0.7.0", "publishedSchema": "0.7.0"}

    class F:
        extra = finding["extra"]

    schema, published, line = _profiles.replay_switches(F(), _profiles.spec_or_usage(None, target=f"ts:{checkout}"))
    assert schema is not None and published is not None and published.path == checkout.resolve()
    assert "0.7.0" in line
