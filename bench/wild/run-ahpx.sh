#!/bin/bash
# Issue 23's wild set: the ahpx test mock host (bench/wild/ahpx) under ahp-fuzz.
#
#   bench/wild/run-ahpx.sh HARNESS OUT [BUDGET]
#
# HARNESS: a checkout (or `git worktree`) of ahp-fuzz whose code runs (PYTHONPATH=HARNESS);
# OUT: a new folder for the run folders and the summary; BUDGET: per run (default 60s).
# For each scenario of the mock (echo, toolcall): `run` over host-cmd: and over ws:// (a mock
# this script starts and stops itself); `commands` over host-cmd: (all methods, and
# --methods ping,createChat,createTerminal as issue 23 did); and the version claims of the
# issue (--profile 0.5.0 / 0.6.0 / 9.9.9, spec folders whose CHANGELOG names 9.9.9 or 0.5.0,
# --profile 9.9.9 against host:embedded with a 5 s budget).
# Each command's exit code and wall seconds go to OUT/runs.tsv; ahpx/summarize.py OUT prints
# the table of bench/results/wild.md from it and the run folders.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 HARNESS OUT [BUDGET]" >&2
    exit 2
fi
HARNESS=$(cd "$1" && pwd) || exit 2
OUT=$2
BUDGET=${3:-60s}
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK="$HERE/ahpx/mock.sh"
PY=${PY:-/work/main/.venv/bin/python}
export AHP_SPEC_DIR=${AHP_SPEC_DIR:-/work/shared/ahp-spec/0.7.0}
"$HERE/ahpx/setup.sh" >/dev/null || exit 2
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
: >"$OUT/runs.tsv"
printf 'harness\t%s\t%s\n' "$HARNESS" "$(git -C "$HARNESS" rev-parse --short HEAD 2>/dev/null)" >"$OUT/meta.tsv"

# record NAME ARGS… : one ahp-fuzz command; stdout/stderr kept, exit code and wall time noted.
record() {
    local name=$1
    shift
    local start end rc
    echo "== $name: ahp-fuzz $*" >&2
    start=$(date +%s.%N)
    (cd "$HARNESS" && PYTHONPATH="$HARNESS" "$PY" -m harness.cli "$@") \
        >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
    rc=$?
    end=$(date +%s.%N)
    printf '%s\t%s\t%.1f\t%s\n' "$name" "$rc" "$(echo "$end - $start" | bc)" "$*" >>"$OUT/runs.tsv"
    echo "   exit $rc" >&2
}

# start_mock SCENARIO : a mock of our own (for ws://); sets MOCK_PID and MOCK_URL.
start_mock() {
    "$MOCK" "$1" >"$OUT/mock-$1.url" 2>"$OUT/mock-$1.stderr" &
    MOCK_PID=$!
    MOCK_URL=
    for _ in $(seq 1 100); do
        MOCK_URL=$(head -n1 "$OUT/mock-$1.url")
        [ -n "$MOCK_URL" ] && break
        sleep 0.1
    done
    ss -ltnp 2>/dev/null | grep "pid=$MOCK_PID," >"$OUT/mock-$1.listen"
}

stop_mock() {
    if kill -0 "$MOCK_PID" 2>/dev/null; then
        echo alive >"$OUT/mock-$1.end"
        kill -TERM "$MOCK_PID"
    else
        echo died >"$OUT/mock-$1.end"
    fi
    wait "$MOCK_PID" 2>/dev/null
}

for scenario in echo toolcall; do
    record "run-hostcmd-$scenario" run --target "host-cmd:$MOCK $scenario" \
        --budget "$BUDGET" --seed 1 --out "$OUT/run-hostcmd-$scenario"
    start_mock "$scenario"
    if [ -n "$MOCK_URL" ]; then
        record "run-ws-$scenario" run --target "$MOCK_URL" \
            --budget "$BUDGET" --seed 1 --out "$OUT/run-ws-$scenario"
    else
        printf '%s\t%s\t%s\t%s\n' "run-ws-$scenario" "-" "-" "the mock printed no URL" >>"$OUT/runs.tsv"
    fi
    stop_mock "$scenario"
    record "commands-hostcmd-$scenario" commands --target "host-cmd:$MOCK $scenario" \
        --budget "$BUDGET" --seed 1 --out "$OUT/commands-hostcmd-$scenario"
done
record commands-hostcmd-echo-must commands --target "host-cmd:$MOCK echo" \
    --methods ping,createChat,createTerminal --budget "$BUDGET" --seed 1 \
    --out "$OUT/commands-hostcmd-echo-must"

# The issue's version claims.
record run-profile-0.5.0 run --target "host-cmd:$MOCK echo" --profile 0.5.0 \
    --budget 20s --seed 1 --out "$OUT/run-profile-0.5.0"
record run-profile-0.6.0 run --target "host-cmd:$MOCK echo" --profile 0.6.0 \
    --budget 10s --seed 1 --out "$OUT/run-profile-0.6.0"
record run-profile-9.9.9 run --target "host-cmd:$MOCK echo" --profile 9.9.9 \
    --budget 10s --seed 1 --out "$OUT/run-profile-9.9.9"
# spec_naming VERSION : a copy of $AHP_SPEC_DIR whose CHANGELOG names VERSION as its one
# released version (every version heading of the original dropped; prints the copy's path).
spec_naming() {
    local dir="$OUT/spec-$1"
    rm -rf "$dir"
    cp -r "$AHP_SPEC_DIR" "$dir"
    "$PY" - "$dir/CHANGELOG.md" "$1" <<'PYEOF'
import re, sys
path, version = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
m = re.search(r"^## \[\d+\.\d+\.\d+\]", text, re.M)
head = f"## [{version}] — 2026-11-01\n\nSpec version: `{version}`\n"
open(path, "w", encoding="utf-8").write(text[: m.start()] + head)
PYEOF
    echo "$dir"
}
record run-spec-9.9.9 run --target "host-cmd:$MOCK echo" --spec "$(spec_naming 9.9.9)" \
    --budget 10s --seed 1 --out "$OUT/run-spec-9.9.9"
record run-spec-0.5.0 run --target "host-cmd:$MOCK echo" --spec "$(spec_naming 0.5.0)" \
    --budget 10s --seed 1 --out "$OUT/run-spec-0.5.0"
# The same unknown profile against the embedded host (no version trouble of its own): is
# 9.9.9 refused up front, and is the budget held?
record embedded-profile-9.9.9 run --target host:embedded --profile 9.9.9 \
    --budget 5s --seed 1 --out "$OUT/embedded-profile-9.9.9"

"$PY" "$HERE/ahpx/summarize.py" "$OUT"
