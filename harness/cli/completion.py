"""`ahp-fuzz completion SHELL`: the tab-completion script for bash, zsh or fish.

Completion is argcomplete's (a well-kept library; `harness/cli/__init__.py` hands the parser to
it when the shell asks for completions, and imports it at no other time): this command prints
the script that registers `ahp-fuzz` with the shell, e.g. `eval "$(ahp-fuzz completion bash)"`
in `~/.bashrc` (README, "Shell completion").
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def command(args: argparse.Namespace) -> int:
    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["ahp-fuzz"], shell=args.shell))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "completion",
        help="print the shell's tab-completion script (bash, zsh, fish)",
        description="Print the script that gives ahp-fuzz tab completion (subcommands, options, file "
        "names) in SHELL: bash and zsh: eval \"$(ahp-fuzz completion bash)\" (or zsh) in the shell's rc "
        "file; fish: ahp-fuzz completion fish | source, or save it as "
        "~/.config/fish/completions/ahp-fuzz.fish. ahp-fuzz must be on PATH (an activated virtualenv).",
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=command)
