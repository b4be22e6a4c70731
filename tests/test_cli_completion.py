"""Shell completion (issue 24): `ahp-fuzz completion bash|zsh|fish` prints the script that
registers ahp-fuzz with the shell, and ahp-fuzz answers the shell's completion requests
(argcomplete's protocol) from its own parser: subcommands, options, choices."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("shell", "says"), [
    ("bash", "-F _python_argcomplete ahp-fuzz"),
    ("zsh", "#compdef ahp-fuzz"),
    ("fish", "complete --command ahp-fuzz"),
])
def test_the_completion_script_of_each_shell(shell: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    assert says in capsys.readouterr().out


def _complete(line: str, tmp_path: Path) -> list[str]:
    """What ahp-fuzz answers when a shell asks it to complete `line` (cursor at the end)."""
    answer = tmp_path / "completions"
    env = {**os.environ, "_ARGCOMPLETE": "1", "COMP_LINE": line, "COMP_POINT": str(len(line)),
           "_ARGCOMPLETE_IFS": "\n", "_ARGCOMPLETE_STDOUT_FILENAME": str(answer), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "harness.cli"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return answer.read_text().split("\n")


def test_it_completes_subcommands_options_and_choices(tmp_path: Path) -> None:
    assert _complete("ahp-fuzz r", tmp_path) == ["run", "replay", "report"]
    assert "--budget" in [c.strip() for c in _complete("ahp-fuzz run --bu", tmp_path)]
    assert _complete("ahp-fuzz run --lane ", tmp_path) == ["fast", "hypothesis"]
    assert {"bash", "zsh", "fish"} <= set(_complete("ahp-fuzz completion ", tmp_path))


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_through_the_registered_function(tmp_path: Path) -> None:
    """The whole way: the script `completion bash` prints, evaluated in bash, fills COMPREPLY."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "ahp-fuzz"  # ahp-fuzz on PATH, as in an activated virtualenv
    wrapper.write_text(f'#!/bin/sh\nexport PYTHONPATH="{ROOT}"\nexec "{sys.executable}" -m harness.cli "$@"\n')
    wrapper.chmod(0o755)
    script = ('eval "$(ahp-fuzz completion bash)"; COMP_LINE="ahp-fuzz re"; COMP_POINT=11; '
              'COMP_WORDS=(ahp-fuzz re); COMP_CWORD=1; _python_argcomplete ahp-fuzz re ahp-fuzz; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["replay", "report"], done.stdout + done.stderr
