#!/usr/bin/env bash
# The long variant of the tamper-evidence test (issue item 7): many more random
# single-byte changes to stored event values than the 1,000 of the automated test,
# each verified in-process and expected to fail at exactly the changed seq, plus the
# deleted, swapped, truncated and rewritten-chain cases and 50 clean stores.
#
#   Scripts/tamper-test.sh [--iterations N]      (default 20,000)
#
# It runs TamperTests (Tests/PushTrailCLITests/TamperTests.swift) with
# TAMPER_ITERATIONS=N in a debug build kept in its own scratch directory, and prints
# the test's summary line ("N of N single-byte changes detected, …").
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

iterations=20000
while [ $# -gt 0 ]; do
    case "$1" in
        --iterations) iterations="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) say "tamper-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done
case "$iterations" in ''|*[!0-9]*) say "tamper-test: --iterations takes a count"; exit 2 ;; esac

need_swift
need_build_deps
scratch="${TMPDIR:-/tmp}/pushtrail-tamper-build"
say "tamper-test: building tests in $scratch…"
swift build --build-tests --scratch-path "$scratch" >/dev/null
say "tamper-test: $iterations single-byte changes…"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
TAMPER_ITERATIONS="$iterations" swift test --skip-build --scratch-path "$scratch" --filter TamperTests >"$log" 2>&1 || status=$?
grep -E '^tamper:' "$log" || true
grep -E '^✘' "$log" | head -20 || true
grep -E 'Test run with' "$log" || true
exit "$status"
