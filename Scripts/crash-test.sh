#!/usr/bin/env bash
# Kills `pushtrail ingest` with SIGKILL at random moments and checks that nothing
# committed is lost and nothing half-written is visible (issue: crash safety).
#
#   Scripts/crash-test.sh [--points N] [--events N] [--seed S]
#
# Each point starts an ingest of a generated stream into a fresh store and kills it
# after a random delay within the time a full ingest takes. After every kill: the
# store opens, `verify` passes, every stored event is one of the input's lines (byte
# for byte) and none is stored twice. Then (every --rerun-every points, and at the
# last) the same ingest is run again to completion and the store must hold exactly
# the whole input. Defaults: 20 points, 200,000 events, re-run every 4th point.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

points=20
events=200000
seed=11
rerun_every=4
while [ $# -gt 0 ]; do
    case "$1" in
        --points) points="$2"; shift 2 ;;
        --events) events="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --rerun-every) rerun_every="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) say "crash-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
command -v python3 >/dev/null || need_packages python3
say "crash-test: building release…"
swift build -c release --product pushtrail >/dev/null
swift build -c release --product pushtrail-gen >/dev/null
bin="$(swift build -c release --show-bin-path)"

work="${TMPDIR:-/tmp}/pushtrail-crash-$$"
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
input="$work/events.ndjson"
store="$work/store"
"$bin/pushtrail-gen" --events "$events" --seed "$seed" -o "$input"

# How long a full ingest takes, to spread the kill points over it.
start=$(date +%s%N)
"$bin/pushtrail" --store "$work/probe" ingest -q "$input" >/dev/null
full_ms=$(( ( $(date +%s%N) - start ) / 1000000 ))
rm -rf "$work/probe"
say "crash-test: a full ingest takes ${full_ms} ms; $points kill points, $events events"

check() { python3 "$PT_ROOT/Scripts/reliability/check_store.py" "$bin/pushtrail" "$store" "$input" "$@"; }

RANDOM=$seed
killed=0
reruns=0
for i in $(seq 1 "$points"); do
    rm -rf "$store"
    delay_ms=$(( (RANDOM * 32768 + RANDOM) % (full_ms + 1) ))
    "$bin/pushtrail" --store "$store" ingest -q "$input" >/dev/null 2>"$work/err" &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
    wait "$pid" 2>/dev/null || true
    if [ ! -e "$store/data.mdb" ]; then
        echo "point $i: killed at ${delay_ms} ms, before the store was created"
        continue
    fi
    if ! out=$(check --partial); then
        say "crash-test: FAILED after kill point $i (at ${delay_ms} ms): $out"
        exit 1
    fi
    echo "point $i: killed at ${delay_ms} ms: $out"
    if [ $((i % rerun_every)) -eq 0 ] || [ "$i" -eq "$points" ]; then
        "$bin/pushtrail" --store "$store" ingest -q "$input" >/dev/null
        out=$(check --complete) || { say "crash-test: FAILED re-running after point $i: $out"; exit 1; }
        reruns=$((reruns + 1))
        echo "point $i: re-run: $out"
    fi
done
echo "crash-test: $killed ingests killed mid-way, $reruns re-runs completed the input"
echo "crash-test: $points passed, 0 failed"
