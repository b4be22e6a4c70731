"""The docs' commands run, so the docs cannot drift from the program.

A runnable block in docs/tutorial.md or docs/howto.md is a ```sh block preceded by
`<!-- doc-test: exit=N expect="a line it prints" … -->`; `<!-- doc-test: skip (reason) -->`
marks one that is not run. Every block of the tutorial must be marked one way or the other (the
how-to has sections by several authors: there, only marked blocks run). The blocks of a page run
in order, as bash, starting in one fresh folder that sees the repository's virtualenv as `.venv`
(and on PATH, for the how-to's bare `ahp-fuzz`), and `tests/` and `corpora/` as in a checkout;
each must exit with the status promised and print every promised line (stdout or stderr). As
a reader pasting them one after another into one terminal would, each block starts in the
folder the blocks before it left and sees the shell variables they set (`shell_state`).

A sample output — a fence with no language — is what the runnable block before it printed: it is
marked `<!-- doc-output -->` and each of its lines must be a line that block printed, where `…`
stands for any text and every number for any number (counts and times vary from run to run; the
words do not). `<!-- doc-output: skip (reason) -->` marks one that is not output. Every plain
fence of the tutorial, the how-to and the README is marked one way or the other, so no sample
output can drift from what the program prints.
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
_BLOCK = re.compile(
    r"(?:^<!--\s*doc-(?P<kind>test|output)(?::(?P<marker>[^\n]*?))?\s*-->[ \t]*\n)?"
    r"^```(?P<lang>[a-z]*)\n(?P<code>.*?)\n```",
    re.S | re.M)


@dataclass
class Block:
    line: int
    code: str
    skip: str | None = None
    exit: int | None = None
    expect: list[str] = field(default_factory=list)
    output: bool = False  # a sample output (a plain fence), not a command
    marked: bool = False


def blocks(page: Path) -> list[Block]:
    """The ```sh blocks and the plain (sample output) fences of a page, in order."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        if m.group("lang") not in ("sh", ""):
            continue
        b = Block(text.count("\n", 0, m.start("code")), m.group("code"), output=m.group("lang") == "")
        kind = m.group("kind")
        if kind is not None and (kind == "output") != b.output:
            raise AssertionError(f"{page.name}:{b.line}: doc-{kind} marks a {'plain' if b.output else 'sh'} block")
        b.marked = kind is not None
        marker = (m.group("marker") or "").strip()
        if marker.startswith("skip"):
            b.skip = marker[4:].strip() or "no reason given"
        elif b.output:
            pass
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


def shell_state(code: str, state: Path, base: list[str]) -> str:
    """`code` wrapped to run where the blocks before it left the shell — their folder and the
    variables they set, kept in `state/` — and to leave its own for the next block. `base`: the
    variables a fresh bash has (not saved: they are the environment's and bash's own)."""
    keep = " ".join(sorted(base))
    return (
        f'cd "$(cat {shlex.quote(str(state / "cwd"))} 2>/dev/null || pwd)"\n'
        f'[ -f {shlex.quote(str(state / "vars"))} ] && . {shlex.quote(str(state / "vars"))}\n'
        f"{code}\n"
        "__doc_rc=$?\n"
        f'pwd > {shlex.quote(str(state / "cwd"))}\n'
        f'{{ declare -px; for __doc_v in $(compgen -v); do case " {keep} " in *" $__doc_v "*) ;; '
        f'__doc_*) ;; *) declare -p "$__doc_v" ;; esac; done; }} > {shlex.quote(str(state / "vars"))} 2>/dev/null\n'
        "exit $__doc_rc\n"
    )


def sample_line(line: str) -> re.Pattern[str]:
    """A line of a sample output as a pattern: `…` any text, a number any number."""
    parts = re.split(r"(…|\d[\d,]*(?:\.\d+)?)", line.strip())
    pattern = "".join(".*" if p == "…" else r"\d[\d,]*(?:\.\d+)?" if p and p[0].isdigit() else re.escape(p)
                      for p in parts)
    return re.compile(pattern)


def check_sample(sample: str, said: str) -> list[str]:
    """The lines of `sample` that are no line of `said`."""
    printed = [line.strip() for line in said.splitlines()]
    return [line for line in sample.splitlines()
            if line.strip() and not any(sample_line(line).fullmatch(p) for p in printed)]


def _run_page(page: Path, tmp: Path, *, spec: bool = True) -> None:
    env = _workdir(tmp)
    if not spec:  # a page written for a reader who has set no AHP_SPEC_DIR
        env.pop("AHP_SPEC_DIR", None)
    ran = 0
    said: str | None = None
    where = ""
    state = tmp / ".doc-shell"
    state.mkdir(exist_ok=True)
    base = subprocess.run(["bash", "-c", "compgen -v"], cwd=tmp, env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    for b in blocks(page):
        if b.skip is not None:
            continue
        if b.output:
            if not b.marked:
                continue
            assert said is not None, f"{page.name}:{b.line}: a sample output with no command run before it"
            missing = check_sample(b.code, said)
            assert not missing, f"{page.name}:{b.line}: sample output lines not printed by {where}: {missing}\n{said}"
            continue
        if b.exit is None:
            continue
        done = subprocess.run(["bash", "-c", shell_state(b.code, state, base)], cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        said = done.stdout + done.stderr
        where = f"{page.name}:{b.line}: {b.code.splitlines()[0]}"
        assert done.returncode == b.exit, f"{where}\nexit {done.returncode}, promised {b.exit}\n{said}"
        for line in b.expect:
            assert line in said, f"{where}\npromised {line!r}, printed:\n{said}"
        ran += 1
    assert ran, f"{page.name}: no runnable block"


def test_every_tutorial_block_is_marked() -> None:
    unmarked = [b.line for b in blocks(DOCS / "tutorial.md") if not b.output and b.skip is None and b.exit is None]
    assert not unmarked, f"docs/tutorial.md: sh blocks without a doc-test marker at lines {unmarked}"


@pytest.mark.parametrize("page", [DOCS / "tutorial.md", DOCS / "howto.md", ROOT / "README.md"], ids=lambda p: p.name)
def test_every_sample_output_is_checked(page: Path) -> None:
    """A plain fence is a sample output: checked against what its command prints, or marked as
    not output (with a reason). Unmarked, it could drift (it did: issue 18)."""
    unmarked = [b.line for b in blocks(page) if b.output and not b.marked]
    assert not unmarked, f"{page.name}: plain fences without <!-- doc-output --> at lines {unmarked}"


def test_sample_lines_match_words_not_numbers() -> None:
    assert check_sample("clean: 0 finding(s), 21 hit(s) in 5.0s", "clean: 0 finding(s), 3 hit(s) in 12.5s\n") == []
    assert check_sample("FINDING X after 2 steps (…)", "FINDING X after 1 steps (reproduced)") == []
    assert check_sample("report: a.json", "report: a.json (a.html)") == ["report: a.json"]  # whole lines
    assert check_sample("known: INV-014 on session", "clean\n") == ["known: INV-014 on session"]


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    _run_page(DOCS / "tutorial.md", tmp_path, spec=False)


def test_the_howto_runs_as_written(tmp_path: Path) -> None:
    _run_page(DOCS / "howto.md", tmp_path)


def test_blocks_run_where_the_blocks_before_them_left_the_shell(tmp_path: Path) -> None:
    """A page's blocks paste one after another (issue 35: the how-to's each began with `cd
    their-client`, so pasted in order the second failed): a block sees the folder and the
    variables the blocks before it left, and a block that relies on them passes only so."""
    page = tmp_path / "page.md"
    page.write_text('<!-- doc-test: exit=0 -->\n```sh\nmkdir -p sub && cd sub && A="a value"\n```\n\n'
                    '<!-- doc-test: exit=0 expect="sub a value" -->\n```sh\necho "$(basename "$PWD") $A"\n```\n')
    (tmp_path / "w").mkdir()
    _run_page(page, tmp_path / "w")
    page.write_text('<!-- doc-test: exit=0 -->\n```sh\ncd sub\n```\n\n<!-- doc-test: exit=0 -->\n```sh\ncd sub\n```\n')
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "sub").mkdir()
    with pytest.raises(AssertionError, match="exit 1, promised 0"):  # pasted in order: no sub/sub
        _run_page(page, tmp_path / "v")


def test_a_broken_promise_is_caught(tmp_path: Path) -> None:
    """The checker bites: a page promising a line the program does not print fails."""
    page = tmp_path / "page.md"
    page.write_text('<!-- doc-test: exit=0 expect="no such line" -->\n```sh\necho hello\n```\n')
    with pytest.raises(AssertionError, match="promised 'no such line'"):
        _run_page(page, tmp_path / "w" if (tmp_path / "w").mkdir() is None else tmp_path)
    page.write_text('<!-- doc-test: exit=1 -->\n```sh\ntrue\n```\n')
    with pytest.raises(AssertionError, match="exit 0, promised 1"):
        _run_page(page, tmp_path / "v" if (tmp_path / "v").mkdir() is None else tmp_path)
    page.write_text('<!-- doc-test: exit=0 -->\n```sh\necho "after 1 steps"\n```\n\n'
                    '<!-- doc-output -->\n```\nafter 3 step\n```\n')
    with pytest.raises(AssertionError, match="sample output lines not printed"):
        _run_page(page, tmp_path / "u" if (tmp_path / "u").mkdir() is None else tmp_path)
