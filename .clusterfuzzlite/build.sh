#!/bin/bash -eu
# Build one Atheris fuzzer per AHP state kind. Each runs the differential state machine
# (harness/campaign/atheris_entry.py) through Hypothesis' fuzz_one_input; a broken invariant
# is a crash for libFuzzer and a JSON finding in $AHP_FUZZ_FINDINGS for ahp-fuzz replay.
cd "$SRC/ahp-fuzz"
pip3 install -c constraints.txt .
for kind in chat session terminal changeset annotations root resourceWatch; do
  fuzzer="$SRC/ahp_fuzz_${kind}.py"
  cat > "$fuzzer" <<PY
import os
import sys

os.environ.setdefault("AHP_FUZZ_KINDS", "${kind}")

from harness.campaign.atheris_entry import main

if __name__ == "__main__":
    sys.exit(main())
PY
  compile_python_fuzzer "$fuzzer" --collect-submodules=harness --collect-submodules=strategies
done
