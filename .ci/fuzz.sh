#!/usr/bin/env bash
# Fuzzes every input reader of iosched (docs/reliability.md) for SECONDS seconds each (default
# 45): scenario, disksim, seek, trace, calibration, trace-readers, mqsim. Exits non-zero on any failure: a panic
# (the fuzz profile has overflow checks on), a hang, a stack overflow (the process dies) or an
# error message that does not describe the problem. Failing inputs are saved in
# target/fuzz-crashes/. Usage: .ci/fuzz.sh [SECONDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-45}"
seed="${2:-$(date +%s)}"
cargo build --quiet -p iosched-fuzz --profile fuzz
status=0
"${CARGO_TARGET_DIR:-target}/fuzz/iosched-fuzz" --all --seconds "$seconds" --seed "$seed" || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: FAILED (exit $status; seed $seed). Inputs: target/fuzz-crashes/ (*.input; *.last = the input running when the process died)." >&2
  echo "fuzz.sh: reproduce with: cargo run -p iosched-fuzz --profile fuzz -- --target TARGET --reproduce FILE" >&2
fi
exit "$status"
