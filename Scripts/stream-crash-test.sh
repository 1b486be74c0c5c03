#!/usr/bin/env bash
# Kills `pushtrail consume` with SIGKILL at random moments and checks that every message
# is stored exactly once: EVENTS generated events published in 8 partitions to a
# nats-server started here; a consumer of partitions 0-3 killed and restarted POINTS
# times, then run to the end. The store must hold every event of its partitions once,
# in each partition's order, pass verify, and hold the partitions' last sequences;
# publishing the same events again must change neither the stream nor the store.
#
#   Scripts/stream-crash-test.sh [--points N] [--events N] [--seed S]
#
# Defaults: 10 points, 20,000 events; the consumer commits every 2,000 events
# (PUSHTRAIL_BATCH_EVENTS). The full campaign is --points 100 --events 200000.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

points=10
events=20000
seed=3
while [ $# -gt 0 ]; do
    case "$1" in
        --points) points="$2"; shift 2 ;;
        --events) events="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) say "stream-crash-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
need_packages nats-server
command -v python3 >/dev/null || need_packages python3
say "stream-crash-test: building release…"
for product in pushtrail pushtrail-stream pushtrail-gen; do swift build -c release --product "$product" >/dev/null; done
bin="$(swift build -c release --show-bin-path)"
nats="$(command -v nats-server || echo /usr/sbin/nats-server)"

work="${TMPDIR:-/tmp}/pushtrail-stream-crash-$$"
rm -rf "$work"; mkdir -p "$work"
trap 'pkill -KILL -f "pushtrail-stream consume --server .* --store $work/" 2>/dev/null || true; rm -rf "$work"' EXIT
say "stream-crash-test: $points kills of a consumer of 4 of 8 partitions, $events events (seed $seed)"
# A commit every 2,000 events, so that kills land among many commits.
PUSHTRAIL_BATCH_EVENTS="${PUSHTRAIL_BATCH_EVENTS:-2000}" python3 Scripts/reliability/stream_crash.py "$bin/pushtrail" "$bin/pushtrail-stream" "$bin/pushtrail-gen" "$nats" \
    "$work" "$points" "$events" "$seed"
