#!/usr/bin/env bash
# Fuzzes every input reader of iosched (docs/reliability.md) for SECONDS seconds each (default
# 45): scenario, disksim, seek, trace, calibration, trace-readers, mqsim. Exits non-zero on any failure: a panic
# (the fuzz profile has overflow checks on), a hang, a stack overflow (the process dies) or an
# error message that does not describe the problem. Failing inputs are saved in
# target/fuzz-crashes/. Usage: .ci/fuzz.sh [SECONDS] [SEED] [PROFILE]
# PROFILE: fuzz (the default: its own optimized build) or test (the binary `cargo test` has just
# built, with the same overflow checks and debug assertions at a lower optimization level: no
# third build of the workspace in CI; `cargo test --no-run` below then has nothing to do).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-45}"
seed="${2:-$(date +%s)}"
profile="${3:-fuzz}"
case "$profile" in
  fuzz) cargo build --quiet -p iosched-fuzz --profile fuzz; dir=fuzz ;;
  test) cargo test --quiet --no-run; dir=debug ;;
  *) echo "fuzz.sh: PROFILE must be fuzz or test, got '$profile'" >&2; exit 2 ;;
esac
status=0
"${CARGO_TARGET_DIR:-target}/$dir/iosched-fuzz" --all --seconds "$seconds" --seed "$seed" || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: FAILED (exit $status; seed $seed). Inputs: target/fuzz-crashes/ (*.input; *.last = the input running when the process died)." >&2
  echo "fuzz.sh: reproduce with: cargo run -p iosched-fuzz --profile fuzz -- --target TARGET --reproduce FILE" >&2
fi
exit "$status"
