"""`ahp-fuzz commands`: bad options are usage errors (exit 2), before anything is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.cli import main


def test_without_a_spec_dir_it_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.delenv("AHP_SPEC_DIR", raising=False)
    assert main(["commands", "--target", "host:embedded"]) == 2
    assert "--spec" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--methods", "resourceRead,noSuchCommand"], "unknown command"),
        (["--budget", "soon"], "duration"),
        (["--budget", "0s"], "positive"),
        (["--examples", "-1"], "--examples"),
        (["--target", "ws://10.1.2.3:9/"], "loopback"),
        (["--target", "host:elsewhere"], "host:embedded"),
        (["--target", "host:embedded?defect=no-such-defect"], "unknown defect"),
        (["--out", "/proc/forbidden"], "--out /proc/forbidden: cannot write there"),
    ],
)
def test_bad_options_are_usage_errors(spec_dir: Any, tmp_path: Path, capsys: Any, argv: list[str], message: str) -> None:
    base = ["commands", "--target", "host:embedded", "--spec", str(spec_dir.path), "--out", str(tmp_path / "o")]
    assert main(base + argv) == 2  # a repeated --target: the later one wins
    assert message in capsys.readouterr().err
