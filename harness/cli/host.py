"""`ahp-fuzz host`: run the embedded reference host standalone on 127.0.0.1.

Prints its URL (one line, flushed) and serves until SIGINT/SIGTERM, then exits 0. There is no
option to bind another address: the host is loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from harness.errors import UsageError
from harness.host import DEFECTS, HostConfig, UnknownDefect, serve_host
from harness.host.clock import wall_clock
from harness.host.core import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_VERSIONS
from harness.host.params import CommandParams
from harness.spec.versions import KNOWN_VERSIONS, parse_version

from ._profiles import env_spec_or_usage


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "host",
        help="run the embedded reference host (loopback only)",
        description="Serve the embedded AHP reference host on ws://127.0.0.1:PORT/, optionally with "
        "named defects injected. Prints the URL on stdout; stops cleanly on SIGINT/SIGTERM.",
    )
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = any free port; default 0)")
    p.add_argument("--defect", action="append", default=[], metavar="NAME", help="inject a named defect (repeatable; see --list-defects)")
    p.add_argument("--list-defects", action="store_true", help="print the defects, one per line (name first), and exit")
    p.add_argument(
        "--versions",
        "--version-range",
        dest="versions",
        default=",".join(DEFAULT_VERSIONS),
        metavar="V1,V2",
        help=f"protocol versions to negotiate, most preferred first (default {','.join(DEFAULT_VERSIONS)})",
    )
    p.add_argument("--immutable-primary", action="store_true", help="advertise and enforce multipleWorkingDirectories.immutablePrimary")
    p.add_argument("--single-directory", action="store_true", help="do not advertise multipleWorkingDirectories")
    p.add_argument("--seed", type=int, default=0, help="seed of the scripted agent (default 0)")
    p.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES, help="frame size limit; larger frames close with 1009")
    p.add_argument("--wall-clock", action="store_true", help="timestamps from the real clock instead of the deterministic fake clock")
    p.set_defaults(func=run)


def _config(args: argparse.Namespace) -> HostConfig:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    if args.max_message_bytes < 1024:
        raise UsageError("--max-message-bytes must be at least 1024")
    versions = tuple(v.strip() for v in args.versions.split(",") if v.strip())
    if not versions:
        raise UsageError("--versions needs at least one version")
    for v in versions:
        try:
            parse_version(v.removeprefix("^"))  # ^V: a caret range (the 1.0.0 rule)
        except ValueError as e:
            raise UsageError(str(e)) from e
    newest = max((v.removeprefix("^") for v in versions), key=parse_version)
    if parse_version(newest) > (0, 7, 0) and newest not in KNOWN_VERSIONS:
        raise UsageError(f"--versions: the host's model needs rules for {newest} (known: {', '.join(KNOWN_VERSIONS)})")
    unknown = [d for d in args.defect if d not in DEFECTS]
    if unknown:
        raise UsageError(f"unknown defect(s) {', '.join(unknown)}; see 'ahp-fuzz host --list-defects'")
    return HostConfig(
        versions=versions,
        defects=tuple(args.defect),
        immutable_primary=args.immutable_primary,
        multiple_working_directories=not args.single_directory,
        seed=args.seed,
        clock=wall_clock if args.wall_clock else None,
        max_message_bytes=args.max_message_bytes,
        # with a spec folder ($AHP_SPEC_DIR), params its commands schema rejects are -32602
        params=CommandParams.from_spec(env_spec_or_usage()),
    )


#: Exit status of `ahp-fuzz host` when a defect makes the host die (`dies-on-null`): EX_SOFTWARE.
DIED_STATUS = 70


def _die(reason: str) -> None:
    """The standalone host dies as a host in the wild would: a traceback on stderr, a non-zero exit."""
    print("Traceback (most recent call last):\n  File \"harness/host/core.py\", in handle_frame", file=sys.stderr)
    print(reason, file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(DIED_STATUS)


async def _serve(config: HostConfig, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        server = await serve_host(config, port=port, on_death=_die)
    except OSError as e:
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}") from e
    except UnknownDefect as e:
        raise UsageError(str(e)) from e
    print(server.url, flush=True)
    try:
        await stop.wait()
    finally:
        server.host.close_all()
        await asyncio.sleep(0)
        await server.aclose()


def run(args: argparse.Namespace) -> int:
    if args.list_defects:
        for d in DEFECTS.values():
            invariants = ",".join(d.invariants) or "-"
            print(f"{d.name}\t{invariants}\t{d.description}")
        return 0
    config = _config(args)
    asyncio.run(_serve(config, args.port))
    sys.stdout.flush()
    return 0
