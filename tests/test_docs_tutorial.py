"""The docs' commands run, so the docs cannot drift from the program.

A runnable block in docs/tutorial.md or docs/howto.md is a ```sh block preceded by
`<!-- doc-test: exit=N expect="a line it prints" … -->`; `<!-- doc-test: skip (reason) -->`
marks one that is not run. Every block of the tutorial must be marked one way or the other (the
how-to has sections by several authors: there, only marked blocks run). The blocks of a page run
in order, as bash, in one fresh folder that sees the repository's virtualenv as `.venv` (and on
PATH, for the how-to's bare `ahp-fuzz`), and `tests/` and `corpora/` as in a checkout; each must
exit with the status promised and print every promised line (stdout or stderr).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"(?:<!--\s*doc-test:(?P<marker>.*?)-->\s*\n)?```sh\n(?P<code>.*?)\n```", re.S)


@dataclass
class Block:
    line: int
    code: str
    skip: str | None = None
    exit: int | None = None
    expect: list[str] = field(default_factory=list)


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        b = Block(text.count("\n", 0, m.start("code")), m.group("code"))
        marker = (m.group("marker") or "").strip()
        if marker.startswith("skip"):
            b.skip = marker[4:].strip() or "no reason given"
        elif marker:
            for token in shlex.split(marker):
                key, _, value = token.partition("=")
                if key == "exit":
                    b.exit = int(value)
                elif key == "expect":
                    b.expect.append(value)
                else:
                    raise AssertionError(f"{page.name}:{b.line}: unknown doc-test key {key!r}")
        out.append(b)
    return out


def _workdir(tmp: Path) -> dict[str, str]:
    venv = Path(sys.executable).parent.parent
    (tmp / ".venv").symlink_to(venv)
    for name in ("tests", "corpora", "constraints.txt"):
        (tmp / name).symlink_to(ROOT / name)
    # Hypothesis caches the constants it collects from the code under .hypothesis/ of the working
    # folder; sharing the checkout's cache spares each run seconds of collecting them again.
    (ROOT / ".hypothesis").mkdir(exist_ok=True)
    (tmp / ".hypothesis").symlink_to(ROOT / ".hypothesis")
    env = dict(os.environ)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run_page(page: Path, tmp: Path) -> None:
    env = _workdir(tmp)
    ran = 0
    for b in blocks(page):
        if b.skip is not None or b.exit is None:
            continue
        done = subprocess.run(["bash", "-c", b.code], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        said = done.stdout + done.stderr
        where = f"{page.name}:{b.line}: {b.code.splitlines()[0]}"
        assert done.returncode == b.exit, f"{where}\nexit {done.returncode}, promised {b.exit}\n{said}"
        for line in b.expect:
            assert line in said, f"{where}\npromised {line!r}, printed:\n{said}"
        ran += 1
    assert ran, f"{page.name}: no runnable block"


def test_every_tutorial_block_is_marked() -> None:
    unmarked = [b.line for b in blocks(DOCS / "tutorial.md") if b.skip is None and b.exit is None]
    assert not unmarked, f"docs/tutorial.md: sh blocks without a doc-test marker at lines {unmarked}"


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    _run_page(DOCS / "tutorial.md", tmp_path)


def test_the_howto_runs_as_written(tmp_path: Path) -> None:
    _run_page(DOCS / "howto.md", tmp_path)


def test_a_broken_promise_is_caught(tmp_path: Path) -> None:
    """The checker bites: a page promising a line the program does not print fails."""
    page = tmp_path / "page.md"
    page.write_text('<!-- doc-test: exit=0 expect="no such line" -->\n```sh\necho hello\n```\n')
    with pytest.raises(AssertionError, match="promised 'no such line'"):
        _run_page(page, tmp_path / "w" if (tmp_path / "w").mkdir() is None else tmp_path)
    page.write_text('<!-- doc-test: exit=1 -->\n```sh\ntrue\n```\n')
    with pytest.raises(AssertionError, match="exit 0, promised 1"):
        _run_page(page, tmp_path / "v" if (tmp_path / "v").mkdir() is None else tmp_path)
