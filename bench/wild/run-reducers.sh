#!/usr/bin/env bash
# Issue 22's wild runs: the upstream TypeScript reducers (3 × 150 s), the upstream Go client
# (2 × 150 s) and the strict imitation (90 s, without and with the encoder baseline), then one
# table of every finding and the jsonschema-rs check of its valid-lane steps.
#
#   bench/wild/run-reducers.sh CHECKOUT OUT [HARNESS]
#
# CHECKOUT  an extracted agent-host-protocol checkout (bench/wild/README.md), also the spec
#           folder of every run (its CHANGELOG picks the profile: 0.7.0-main on 2026-08-04's main)
# OUT       a folder for the run folders and logs (created)
# HARNESS   the ahp-fuzz tree to measure (default: this one); a `git worktree` of another commit
#           measures that commit with this tree's venv — the side-by-side baseline
#
# BUDGET (seconds, default 150) and STRICT_BUDGET (default 90) shorten the runs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[[ $# -ge 2 && $# -le 3 ]] || { echo "usage: $0 CHECKOUT OUT [HARNESS]" >&2; exit 2; }
checkout="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
harness="$(cd "${3:-$root}" && pwd)"
budget="${BUDGET:-150}"
strict_budget="${STRICT_BUDGET:-90}"
py="$root/.venv/bin/python"
adapter="$here/go-adapter/ahp-go-adapter"
[[ -x "$adapter" ]] || "$here/build-go-adapter.sh" "$checkout"

fuzz() {  # fuzz NAME ARGS…: one `ahp-fuzz run` of the harness under test, no $AHP_SPEC_DIR
  local name="$1"; shift
  (cd "$harness" && AHP_SPEC_DIR= "$py" -c \
    'import sys; sys.path.insert(0, "."); from harness.cli import main; sys.argv[0] = "ahp-fuzz"; sys.exit(main())' \
    run "$@" --out "$out/$name" --overwrite >"$out/$name.log" 2>&1) || true
  grep -a -E '^(FOUND|CLEAN|clean)' "$out/$name.log" | tail -1 | sed "s|^|$name: |"
}

for s in 1 2 3; do fuzz "ts$s" --target "ts:$checkout" --budget "${budget}s" --seed "$s"; done
for s in 1 2; do
  fuzz "go$s" --target "adapter:$adapter" --spec "$checkout" --budget "${budget}s" --seed "$s"
done
strict="adapter:$py $root/tests/three_cause_adapter.py --causes=wrap,ignore,empty,strict --ignore=chat/usage"
fuzz strict --target "$strict" --budget "${strict_budget}s" --seed 1
fuzz strict-baseline --target "$strict" --budget "${strict_budget}s" --seed 1 \
  --baseline "$root/bench/three_cause_encoder.baseline.json"

"$py" "$here/findings_table.py" --markdown --schema "$checkout" \
  "$out"/ts1 "$out"/ts2 "$out"/ts3 "$out"/go1 "$out"/go2 "$out"/strict "$out"/strict-baseline >"$out/table.md"
echo "table: $out/table.md"
