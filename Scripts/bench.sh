#!/usr/bin/env bash
# The side-by-side benchmark: pushtrail against sqlite3, mdb_load and jq on the same
# generated events, and pushtrail-server under load. Installs what is missing, builds the
# release binaries, prints a Markdown table and writes bench-results/bench-N.json.
# See docs/PERFORMANCE.md.
set -euo pipefail
started_ns="$(date +%s%N)"
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

usage() {
    cat <<'EOF'
usage: Scripts/bench.sh [--events N] [--android-share F] [--workdir DIR] [--ingest-reps N]
                        [--query-reps N] [--jq-reps N] [--server-seconds N] [--skip LIST] [--keep]

Generates N events (pushtrail-gen --events N --seed 42) and measures, each as the
median (min–max) of repeated runs in the same invocation:
  ingest      pushtrail ingest (fresh store each run) vs sqlite3 loading the same file
              with the same indexes in one transaction, vs mdb_load of the same lines
              as raw key/values, vs a raw LMDB load at pushtrail's batch size
  queries     thread replay, task rebuild, export, log --user: pushtrail vs the
              indexed sqlite3 query (fresh processes) vs a jq scan of the NDJSON
  verify, audit of the whole store; store size; peak RSS of the ingest
  server      pushtrail-server on the same store: GET /v1/tasks/{id} and /v1/threads/{id}
              under wrk (32 keep-alive clients, a few hundred real ids) vs the CLI asking
              the same questions a process each; the support site's pages (user, thread,
              task, event, search, audit) under wrk with 8 clients; POST /v1/events of
              the whole input into a fresh store with 1, 2 and 4 clients vs the CLI
              ingest; the server's anonymous memory (RssAnon) before, during and after
              each load
Prints a Markdown table (stdout; progress on stderr) and writes
bench-results/bench-N.json. When bench-results/ holds a result for 10× (or 1/10 of)
the events, the table also shows how thread and task queries grow.

options:
  --events N       events to generate (default 1000000; 10000000 for the growth row)
  --android-share F
                   fraction 0…1 of Android users in the stream (pushtrail-gen
                   --android-share; default 0); results are kept apart per share
  --workdir DIR    temporary data (default ${TMPDIR:-/tmp}/pushtrail-bench); emptied at
                   the start, removed at the end unless --keep
  --ingest-reps N  runs of each ingest, verify, audit and server append (per client
                   count) (default 3; 1 above 2M events; verify at least 5 up to 2M
                   events, 3 above, after a first run reported on its own)
  --query-reps N   timed runs of each query (default 20)
  --jq-reps N      runs of each jq scan (default 1; 0 skips jq)
  --server-seconds N
                   length of each wrk run (default 10; 3 below 200,000 events)
  --skip LIST      comma-separated parts to leave out: sqlite3, mdb_load, lmdb_floor,
                   jq, server (mdb_load commits every 100 records: at 10M events it
                   alone takes ~15 minutes a run here)
  --keep           keep the work dir (stores, NDJSON) for inspection
  -h, --help       show this help

Needs: Swift 6, liblmdb-dev, libssl-dev, libmicrohttpd-dev, sqlite3 (3.38+ for ->>), jq,
lmdb-utils, wrk, python3, /usr/bin/time. Missing Debian packages are installed when run as root.
EOF
}

events=1000000
android_share=0
workdir="${TMPDIR:-/tmp}/pushtrail-bench"
ingest_reps=""
query_reps=20
jq_reps=""
server_seconds=""
skip=""
keep=()
args=("$@")

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { say "error: $1 needs a value (see --help)"; exit 2; }; }
need_count() {
    case "$2" in ''|*[!0-9]*) say "error: $1 takes a whole number, not '$2'"; exit 2;; esac
}

while [ $# -gt 0 ]; do
    case "$1" in
        --events) need_value "$@"; need_count "$1" "$2"; events="$2"; shift 2 ;;
        --events=*) events="${1#*=}"; need_count --events "$events"; shift ;;
        --android-share) need_value "$@"; android_share="$2"; shift 2 ;;
        --android-share=*) android_share="${1#*=}"; shift ;;
        --workdir) need_value "$@"; workdir="$2"; shift 2 ;;
        --workdir=*) workdir="${1#*=}"; shift ;;
        --ingest-reps) need_value "$@"; need_count "$1" "$2"; ingest_reps="$2"; shift 2 ;;
        --query-reps) need_value "$@"; need_count "$1" "$2"; query_reps="$2"; shift 2 ;;
        --jq-reps) need_value "$@"; need_count "$1" "$2"; jq_reps="$2"; shift 2 ;;
        --server-seconds) need_value "$@"; need_count "$1" "$2"; server_seconds="$2"; shift 2 ;;
        --skip) need_value "$@"; skip="$2"; shift 2 ;;
        --skip=*) skip="${1#*=}"; shift ;;
        --keep) keep=(--keep); shift ;;
        -h|--help) usage; exit 0 ;;
        *) say "error: unknown option '$1' (see --help)"; exit 2 ;;
    esac
done

[ "$events" -ge 1000 ] || { say "error: --events must be at least 1000"; exit 2; }
[ "$query_reps" -ge 1 ] || { say "error: --query-reps must be at least 1"; exit 2; }
if [ -z "$ingest_reps" ]; then
    if [ "$events" -gt 2000000 ]; then ingest_reps=1; else ingest_reps=3; fi
fi
[ "$ingest_reps" -ge 1 ] || { say "error: --ingest-reps must be at least 1"; exit 2; }
[ -n "$jq_reps" ] || jq_reps=1
if [ -z "$server_seconds" ]; then
    if [ "$events" -lt 200000 ]; then server_seconds=3; else server_seconds=10; fi
fi
[ "$server_seconds" -ge 1 ] || { say "error: --server-seconds must be at least 1"; exit 2; }
IFS=',' read -r -a skips <<< "$skip"
server=1
for s in "${skips[@]}"; do
    case "$s" in
        sqlite3|mdb_load|lmdb_floor|jq) ;;
        server) server=0 ;;
        *) say "error: --skip takes sqlite3, mdb_load, lmdb_floor, jq or server, not '$s'"; exit 2 ;;
    esac
done

need_swift
need_build_deps
need_packages sqlite3 jq lmdb-utils
[ "$server" = 0 ] || need_packages wrk
[ -x /usr/bin/time ] || need_packages time
command -v python3 >/dev/null 2>&1 || need_packages python3
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' ||
    { say "error: python3 3.9 or later is needed"; exit 1; }
sqlite3 :memory: "SELECT '{\"a\":1}'->>'\$.a';" >/dev/null 2>&1 ||
    { say "error: sqlite3 $(sqlite3 --version | cut -d' ' -f1) lacks the ->> operator (3.38+ is needed)"; exit 1; }

if [ "$server" = 1 ]; then say "building pushtrail, pushtrail-gen and pushtrail-server (release)…"
else say "building pushtrail and pushtrail-gen (release)…"; fi
swift build -c release --product pushtrail
swift build -c release --product pushtrail-gen
[ "$server" = 0 ] || swift build -c release --product pushtrail-server
bin="$(swift build -c release --show-bin-path)"

mkdir -p "$PT_ROOT/bench-results"
export PYTHONDONTWRITEBYTECODE=1     # no __pycache__ in Scripts/bench/
python3 -B "$PT_ROOT/Scripts/bench/bench.py" \
    --events "$events" --android-share "$android_share" --workdir "$workdir" --results "$PT_ROOT/bench-results" \
    --pushtrail "$bin/pushtrail" --gen "$bin/pushtrail-gen" --server "$bin/pushtrail-server" \
    --ingest-reps "$ingest_reps" --query-reps "$query_reps" --jq-reps "$jq_reps" --server-seconds "$server_seconds" \
    --skip "$skip" "${keep[@]}" \
    --command "Scripts/bench.sh${args[*]:+ ${args[*]}}" --started-ns "$started_ns"

elapsed=$(( ($(date +%s%N) - started_ns) / 1000000000 ))
say "total runtime: $((elapsed / 60))m$(printf '%02d' $((elapsed % 60)))s"
