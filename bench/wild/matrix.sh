#!/usr/bin/env bash
# Issue 26's measurement: the conformance matrix of the wild set — the reference model, the
# upstream TypeScript reducers, the upstream Go client (bench/wild/go-adapter) and the two
# imitation adapters (tests/imitations/) — then every mark's replay command, run.
#
#   bench/wild/matrix.sh CHECKOUT OUT
#
# CHECKOUT  an extracted agent-host-protocol checkout (bench/wild/README.md): the TS target and
#           the spec folder of every column (its CHANGELOG picks the profile)
# OUT       the matrix folder (replaced)
#
# BUDGET (seconds per target, default 90) and SEED (default 1) change the runs. Results:
# bench/results/matrix.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[[ $# -eq 2 ]] || { echo "usage: $0 CHECKOUT OUT" >&2; exit 2; }
checkout="$(cd "$1" && pwd)"
out="$2"
py="${PYTHON:-$root/.venv/bin/python}"
adapter="${GO_ADAPTER:-$here/go-adapter/ahp-go-adapter}"
[[ -x "$adapter" ]] || "$here/build-go-adapter.sh" "$checkout"
cd "$root"
rc=0
AHP_SPEC_DIR= PYTHONPATH="$root" "$py" -m harness.cli matrix \
  --target reference \
  --target "ts:$checkout" \
  --target "adapter:$adapter" \
  --target "adapter:$py tests/imitations/typed_client.py" \
  --target "adapter:$py tests/imitations/untyped_client.py --kinds chat,session" \
  --spec "$checkout" --budget "${BUDGET:-90}s" --seed "${SEED:-1}" --out "$out" --overwrite || rc=$?
echo "matrix: exit $rc"
# every mark's finding, replayed with the command the page shows (exit 1: reproduced)
AHP_SPEC_DIR= PYTHONPATH="$root" "$py" "$here/replay_marks.py" "$out/matrix.json"
