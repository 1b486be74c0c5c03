#!/usr/bin/env bash
# Kills `pushtrail ingest` with SIGKILL at random moments and checks that nothing
# committed is lost and nothing half-written is visible (issue: crash safety).
#
#   Scripts/crash-test.sh [--points N] [--events N] [--seed S]
#
# Each point starts an ingest of a generated stream into a fresh store and kills it
# after a random delay within the time a full ingest takes (every tenth within its
# first 50 ms, while the store is created). After every kill: the store opens,
# `verify` passes, every stored event is one of the input's lines (byte for byte)
# and none is stored twice. Then (every --rerun-every points, and at the
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
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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

python3 "$PT_ROOT/Scripts/reliability/crash_test.py" "$bin/pushtrail" "$work" "$input" "$points" "$full_ms" "$seed" "$rerun_every"
