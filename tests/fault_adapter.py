"""An adapter that misbehaves on purpose, for the fault-injection tests (tests/test_faults_*.py).

    python tests/fault_adapter.py [--pidfile F] [--child-pidfile F] [--kinds a,b]
        [--hang-before | --hang-after N | --slow MS | --garbage-after N | --crash-after N
         | --signal-after N | --huge-replies | --ignore-term | --diverge-on TYPE]

It serves the reference model in the simple form (one request, one reply) and breaks the
protocol in the one way asked for: hang before announcing, stop answering after N replies,
answer slowly, print garbage, exit, die on a signal, or pad every reply to megabytes (still
valid JSON, still the right state). `--diverge-on TYPE` is a wrong reducer: after an action of
that type the state gains a key the reference model does not have (a divergence finding that
shrinks and replays deterministically). `--child-pidfile` starts a grandchild in the same process
group (as a shell wrapper would) so a test can check that the whole group ends.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

from harness.reference import MalformedAction, Model, Profile


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--pidfile")
    p.add_argument("--child-pidfile")
    p.add_argument("--kinds")
    p.add_argument("--hang-before", action="store_true")
    p.add_argument("--hang-after", type=int)
    p.add_argument("--slow", type=int, default=0, metavar="MS")
    p.add_argument("--garbage-after", type=int)
    p.add_argument("--crash-after", type=int)
    p.add_argument("--signal-after", type=int)
    p.add_argument("--huge-replies", action="store_true")
    p.add_argument("--diverge-on", metavar="TYPE")
    p.add_argument("--ignore-term", action="store_true", help="ignore SIGTERM (only SIGKILL ends it)")
    args = p.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.pidfile:
        with open(args.pidfile, "w") as fh:
            fh.write(str(os.getpid()))
    if args.child_pidfile:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(args.child_pidfile, "w") as fh:
            fh.write(str(child.pid))
    if args.hang_before:
        time.sleep(600)
        return 0
    model = Model(Profile.named(os.environ.get("AHP_PROTOCOL_VERSION", "0.7.0")))
    announcement: dict[str, object] = {"ahpAdapter": 1, "name": "fault-adapter", "forms": ["simple"]}
    if args.kinds:
        announcement["kinds"] = args.kinds.split(",")
    out = sys.stdout
    out.write(json.dumps(announcement) + "\n")
    out.flush()
    answered = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        if args.hang_after is not None and answered >= args.hang_after:
            time.sleep(600)
        if args.garbage_after is not None and answered >= args.garbage_after:
            out.write("this is not JSON\n")
            out.flush()
            continue
        if args.crash_after is not None and answered >= args.crash_after:
            sys.stderr.write("fault adapter: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if args.signal_after is not None and answered >= args.signal_after:
            os.kill(os.getpid(), signal.SIGSEGV)
        req = json.loads(line)
        if args.slow:
            time.sleep(args.slow / 1000)
        try:
            state = model.reduce(req["kind"], req["state"], req["action"], req["now"])
            action = req["action"]
            if args.diverge_on and isinstance(action, dict) and action.get("type") == args.diverge_on:
                state = {**state, "faultAdapterWasHere": True}
            reply = json.dumps({"id": req["id"], "state": state})
        except MalformedAction as e:
            reply = json.dumps({"id": req["id"], "error": {"message": str(e), "type": "MalformedAction"}})
        if args.huge_replies:
            reply = reply[:-1] + " " * (4 << 20) + "}"  # 4 MiB of whitespace: same JSON value
        out.write(reply + "\n")
        out.flush()
        answered += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
