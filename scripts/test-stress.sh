#!/usr/bin/env bash
# make test-stress: the whole test suite, RUNS times, while HOGS busy loops compete with it for the CPU.
#
# A test that passes only on an idle machine fails CI and newcomers at random; this run finds it. The tests are
# built first (without the hogs); then each run is one `swift test --skip-build`, as in `make test`. The hogs are
# plain shell loops at normal priority: with two of them on a 2-core machine the tests get about half the CPU.
#
# Environment: RUNS (default 3), HOGS (default: the number of cores), SWIFT, HOMEAPPS_PYTHON, STRESS_LOG_DIR
# (default .build/stress), SWIFT_TEST_ARGS (extra arguments for `swift test`, e.g. "--filter Media").
# Prints each run's wall time and failed tests, then the flake count; exits 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
HOGS=${HOGS:-$(nproc)}
SWIFT=${SWIFT:-swift}
LOG_DIR=${STRESS_LOG_DIR:-.build/stress}
mkdir -p "$LOG_DIR"

hog_pids=()
stop_hogs() {
    for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait "${hog_pids[@]}" 2>/dev/null
    hog_pids=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT TERM

echo "test-stress: building the tests"
$SWIFT build --build-tests || exit 1

for _ in $(seq "$HOGS"); do
    bash -c 'while :; do :; done' &
    hog_pids+=($!)
done
echo "test-stress: $HOGS CPU hog(s) running (pids ${hog_pids[*]}); $RUNS run(s); logs in $LOG_DIR"

failed_runs=0
failed_tests=0
summary=()
for run in $(seq "$RUNS"); do
    log="$LOG_DIR/run-$run.log"
    started=$(date +%s)
    # shellcheck disable=SC2086
    $SWIFT test --skip-build ${SWIFT_TEST_ARGS:-} >"$log" 2>&1
    status=$?
    wall=$(($(date +%s) - started))
    # Swift Testing marks a failed test or suite with ✘; XCTest prints "error:" lines.
    failures=$(grep -E '^✘ Test .*(failed|recorded an issue)' "$log" | grep -v '^✘ Test run' | sed -E 's/^✘ Test //' \
        | sed -E 's/ (failed|recorded an issue).*//' | sort -u)
    count=$(printf '%s' "$failures" | grep -c . || true)
    if [ "$status" -ne 0 ] || [ "$count" -ne 0 ]; then
        failed_runs=$((failed_runs + 1))
        failed_tests=$((failed_tests + count))
        summary+=("run $run: FAILED in ${wall} s (exit $status), $count failed test(s):")
        while IFS= read -r line; do [ -n "$line" ] && summary+=("    $line"); done <<<"$failures"
        [ "$count" -eq 0 ] && summary+=("    (no test named; see $log)")
    else
        summary+=("run $run: passed in ${wall} s ($(grep -Eo 'Test run with [0-9]+ tests' "$log" | head -1))")
    fi
    echo "${summary[-1]}" | head -1
done

stop_hogs
echo
echo "test-stress summary ($HOGS hog(s), $RUNS run(s)):"
printf '  %s\n' "${summary[@]}"
echo "  flakes: $failed_tests failed test(s) in $failed_runs of $RUNS run(s)"
[ "$failed_runs" -eq 0 ]
