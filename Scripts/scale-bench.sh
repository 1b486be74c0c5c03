#!/usr/bin/env bash
# The scale benchmark: what predicts how pushtrail scales past one machine. Publishing to
# NATS JetStream, consuming from it against ingesting the same events, and answering over
# a cluster of shard stores against one store. Installs what is missing, builds the
# release binaries, prints a Markdown table and writes bench-results/scale-N.json.
# See docs/PERFORMANCE.md#scale.
set -euo pipefail
started_ns="$(date +%s%N)"
caller_pwd="$PWD"
# shellcheck source=Scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

usage() {
    cat <<'EOF'
usage: Scripts/scale-bench.sh [--events N] [--workdir DIR] [--reps N] [--query-reps N] [--keep]

Generates N events (pushtrail-gen --events N --seed 42 --anomalies 0.02
--android-share 0.3), starts one nats-server with JetStream on a free loopback port in
the work dir, and measures side by side in the same run:
  publish     pushtrail publish --partitions 8 into a new stream each run (every
              acknowledgement awaited): events/s (target >= 50,000)
  consume     pushtrail consume --partitions 0-7 into a new store until it holds every
              event, then SIGTERM (must exit 0), against pushtrail ingest of the NDJSON
              into a new store, taking turns: CPU per event (target: consume <= 1.3x
              ingest), wall time and events/s, peak RssAnon (target: consume <= 150 MB)
  cluster     four shard stores consumed one after another (partitions 0-1, 2-3, 4-5,
              6-7; two of them served by pushtrail serve with read tokens): their sizes
              and events; task N, thread task-N and log --user U (--json), 5 ids each, on
              the single ingested store vs over four local shards vs over two local and
              two served shards, under hyperfine (targets: task <= 1.2x, thread and log
              --user <= 2x the single store)
Figures are reported, not asserted; only a step that fails stops the run. Prints a
Markdown table (stdout; progress on stderr) and writes bench-results/scale-N.json
(python3 Scripts/bench/scale.py --render FILE prints it again).

Takes about 4-5 minutes at 1,000,000 events on 2 cores after the build: the three
consume runs with their ingests ~2 minutes (a consume of 1M takes 17-29 s), the three
publish runs ~1 minute, the four shard consumes ~40 s, hyperfine ~30 s (15 ids x 3
targets x (3 + --query-reps) processes). --events 100000 takes well under a minute.

options:
  --events N       events to generate (default 1000000; at least 1000)
  --workdir DIR    temporary data: NDJSON, JetStream's store, the stores (default
                   ${TMPDIR:-/tmp}/pushtrail-scale); emptied at the start, removed at the
                   end unless --keep (or the run failed); ~3 GB at 1M events
  --reps N         runs of publish, ingest and consume each (default 3)
  --query-reps N   hyperfine's timed runs of each query, per id and target (default 30)
  --keep           keep the work dir for inspection
  -h, --help       show this help

Needs: Swift 6, the build's libraries (liblmdb-dev, libssl-dev, libzstd-dev,
libmicrohttpd-dev, libnats-dev, libcurl4-openssl-dev), nats-server (2.2+, JetStream),
hyperfine (1.13+ for -N), python3 3.9+. Missing Debian packages are installed when run
as root. Runs with PUSHTRAIL_* variables cleared: PUSHTRAIL_NOSYNC is never used.
EOF
}

events=1000000
workdir="${TMPDIR:-/tmp}/pushtrail-scale"
reps=3
query_reps=30
keep=()
args=("$@")

need_value() {
    if [ $# -lt 2 ] || [ -z "$2" ]; then say "error: $1 needs a value (see --help)"; exit 2; fi
}
need_count() {
    case "$2" in ''|*[!0-9]*) say "error: $1 takes a whole number, not '$2'"; exit 2;; esac
}

while [ $# -gt 0 ]; do
    case "$1" in
        --events) need_value "$@"; need_count "$1" "$2"; events="$2"; shift 2 ;;
        --events=*) events="${1#*=}"; need_count --events "$events"; shift ;;
        --workdir) need_value "$@"; workdir="$2"; shift 2 ;;
        --workdir=*) workdir="${1#*=}"; shift ;;
        --reps) need_value "$@"; need_count "$1" "$2"; reps="$2"; shift 2 ;;
        --reps=*) reps="${1#*=}"; need_count --reps "$reps"; shift ;;
        --query-reps) need_value "$@"; need_count "$1" "$2"; query_reps="$2"; shift 2 ;;
        --query-reps=*) query_reps="${1#*=}"; need_count --query-reps "$query_reps"; shift ;;
        --keep) keep=(--keep); shift ;;
        -h|--help) usage; exit 0 ;;
        *) say "error: unknown option '$1' (see --help)"; exit 2 ;;
    esac
done

case "$workdir" in /*) ;; *) workdir="$caller_pwd/$workdir" ;; esac
[ "$events" -ge 1000 ] || { say "error: --events must be at least 1000"; exit 2; }
[ "$reps" -ge 1 ] || { say "error: --reps must be at least 1"; exit 2; }
[ "$query_reps" -ge 2 ] || { say "error: --query-reps must be at least 2 (hyperfine)"; exit 2; }

need_swift
need_build_deps
need_packages nats-server hyperfine
command -v python3 >/dev/null 2>&1 || need_packages python3
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' ||
    { say "error: python3 3.9 or later is needed"; exit 1; }
nats="$(command -v nats-server || echo /usr/sbin/nats-server)"
[ -x "$nats" ] || { say "error: nats-server is not installed (apt-get install nats-server)"; exit 1; }

say "building pushtrail, pushtrail-stream, pushtrail-server, pushtrail-cluster and pushtrail-gen (release)…"
for product in pushtrail pushtrail-stream pushtrail-server pushtrail-cluster pushtrail-gen; do
    swift build -c release --product "$product" >&2     # stdout is the table's
done
bin="$(swift build -c release --show-bin-path)"

# The driver stops what it starts; should it be killed itself, the processes it listed
# (nats-server, consumers, servers) are ended here, by id, if they still run on the work dir.
stop_listed() {
    local pids="$workdir/.pids" pid
    [ -f "$pids" ] || return 0
    while read -r pid; do
        [ -n "$pid" ] || continue
        if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "$workdir/"; then
            kill -TERM "$pid" 2>/dev/null || true
        fi
    done < "$pids"
}
trap stop_listed EXIT

mkdir -p "$PT_ROOT/bench-results"
export PYTHONDONTWRITEBYTECODE=1     # no __pycache__ in Scripts/bench/
python3 -B "$PT_ROOT/Scripts/bench/scale.py" \
    --events "$events" --workdir "$workdir" --results "$PT_ROOT/bench-results" \
    --bin "$bin" --nats "$nats" --reps "$reps" --query-reps "$query_reps" "${keep[@]}" \
    --command "Scripts/scale-bench.sh${args[*]:+ ${args[*]}}" --started-ns "$started_ns"

elapsed=$(( ($(date +%s%N) - started_ns) / 1000000000 ))
say "total runtime: $((elapsed / 60))m$(printf '%02d' $((elapsed % 60)))s"
