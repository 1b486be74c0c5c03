#!/usr/bin/env bash
# The acceptance test "Cluster answers equal one store's": EVENTS generated events (5%
# anomalies, 30% Android users) and 40 notifications that make threads span shards,
# published to a nats-server with JetStream started here, in 8 partitions; four
# consumers follow them into four shard stores (a: 0-1, b: 2-3, c: 4-5, d: 6-7) until
# each holds its partitions' events, then stop on SIGTERM; `ingest` puts the same
# events into one single store. Shards a and b are local stores of the cluster file; c
# and d are behind `pushtrail serve` on loopback, asked with read tokens from
# environment variables (so `pushtrail` runs `pushtrail-cluster`). Then every reading
# command's answer over the cluster must equal the single store's, seq aside
# (Scripts/reliability/cluster_equal.py says what is compared and what is taken out),
# for a seeded random spread of tasks, threads, users, filters and times; the audit's
# counts must be the single store's, with sent_after_unregistered found more often
# than the shards find it each alone; `head --cluster` gives the 4 shards' heads,
# `verify --cluster` passes; with shard c stopped reading commands exit 74 naming it,
# and with --partial answer with "missing_shards" in their JSON.
#
#   Scripts/cluster-test.sh [--events N] [--seed S] [--keep]
#
# Defaults: 200,000 events, a random seed (printed; --seed repeats a run). --keep
# leaves the work directory (stores, cluster file, logs) in place.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

events=200000
seed=""
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --events) events="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) say "cluster-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done
[ "$events" -ge 1000 ] 2>/dev/null || { say "cluster-test: --events takes a number, at least 1000"; exit 2; }
if [ -z "$seed" ]; then seed=$((RANDOM * 32768 + RANDOM)); fi
[ "$seed" -ge 0 ] 2>/dev/null || { say "cluster-test: --seed takes a number"; exit 2; }

now_ms() { local t="${EPOCHREALTIME//[.,]/}"; echo $((t / 1000)); }
seconds() { printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100)); }
timings=()
# phase NAME START: records how long NAME took since START (ms), for the summary.
phase() { timings+=("$1 $(seconds $(($(now_ms) - $2)))"); }
say_timings() {
    local joined
    [ ${#timings[@]} -gt 0 ] || return 0
    printf -v joined '%s, ' "${timings[@]}"
    say "cluster test: timings: ${joined%, }"
}
fail() { say "cluster test: FAILED: $*"; say_timings; exit 1; }

need_swift
need_build_deps
need_packages nats-server
command -v python3 >/dev/null || need_packages python3
t=$(now_ms)
say "cluster-test: building release…"
for product in pushtrail pushtrail-cluster pushtrail-server pushtrail-stream pushtrail-gen; do
    swift build -c release --product "$product" >/dev/null
done
bin="$(swift build -c release --show-bin-path)"
nats="$(command -v nats-server || echo /usr/sbin/nats-server)"
phase build "$t"

work="$(mktemp -d "${TMPDIR:-/tmp}/pushtrail-cluster-test-XXXXXX")"
nats_pid=""
declare -A serve_pid=([c]="" [d]="")
consume_pid=()
cleanup() {
    local status=$?
    for pid in "${consume_pid[@]}" "${serve_pid[c]}" "${serve_pid[d]}" "$nats_pid"; do
        if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    { wait; } 2>/dev/null || true
    if [ "$keep" = 1 ]; then say "cluster test: kept $work"; else rm -rf "$work"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The binaries run from a copy, so that a build in the tree during the run changes
# nothing (pushtrail finds pushtrail-cluster, -server and -stream beside itself).
mkdir -p "$work/bin"
cp "$bin/pushtrail" "$bin/pushtrail-cluster" "$bin/pushtrail-server" "$bin/pushtrail-stream" "$bin/pushtrail-gen" \
    "$work/bin/"
pt="$work/bin/pushtrail"
driver=(python3 "$PT_ROOT/Scripts/reliability/cluster_equal.py")
# Nothing from the caller's environment picks a store or a cluster for us.
unset PUSHTRAIL_STORE PUSHTRAIL_CLUSTER
say "cluster test: $events events, seed $seed, in $work"

t=$(now_ms)
"$work/bin/pushtrail-gen" --events "$events" --seed "$seed" --anomalies 0.05 --android-share 0.3 \
    -o "$work/events.ndjson"
# The generator's threads each stay on their task's shard: 40 notifications more, each
# naming the thread of a task on another shard, make threads that span shards.
"${driver[@]}" cross "$work/events.ndjson" "$seed" 40 8 0-1 2-3 4-5 6-7 >"$work/crossing.ndjson"
cat "$work/crossing.ndjson" >>"$work/events.ndjson"
phase generate "$t"

# wait_for_line FILE REGEX PID WHAT: the first match of REGEX's group 1 in FILE, which
# the process PID writes; fails when PID exits first or after 30 s.
wait_for_line() {
    local file="$1" regex="$2" pid="$3" what="$4" deadline=$(($(now_ms) + 30000)) line
    while :; do
        line="$(grep -Eo -m 1 "$regex" "$file" 2>/dev/null || true)"
        if [ -n "$line" ]; then
            [[ "$line" =~ $regex ]] && echo "${BASH_REMATCH[1]}" && return 0
        fi
        kill -0 "$pid" 2>/dev/null || fail "$what exited at start: $(tail -n 2 "$file" 2>/dev/null)"
        [ "$(now_ms)" -lt "$deadline" ] || fail "$what did not start in 30 s: $(tail -n 2 "$file" 2>/dev/null)"
        sleep 0.05
    done
}

# One nats-server with JetStream on a free loopback port (-p -1: it picks one, and says which).
"$nats" -js -sd "$work/js" -a 127.0.0.1 -p -1 -l "$work/nats.log" &
nats_pid=$!
nats_port="$(wait_for_line "$work/nats.log" 'Listening for client connections on 127\.0\.0\.1:([0-9]+)' \
    "$nats_pid" nats-server)"
url="nats://127.0.0.1:$nats_port"

t=$(now_ms)
"$pt" publish "$work/events.ndjson" --server "$url" --partitions 8 2>"$work/publish.err" ||
    fail "publish exited $?: $(tail -n 1 "$work/publish.err")"
phase publish "$t"

# The single store: the same events, ingested.
t=$(now_ms)
"$pt" --store "$work/single" ingest "$work/events.ndjson" -q >"$work/ingest.out" 2>&1 ||
    fail "ingest into the single store exited $?: $(tail -n 1 "$work/ingest.out")"
phase ingest "$t"

# The four consumers at once, each following its partitions until its store holds all
# their events (its head's seq: a consumer stores each event once), then SIGTERM: each
# must commit and exit 0.
t=$(now_ms)
shards=(a b c d)
declare -A owned=([a]=0-1 [b]=2-3 [c]=4-5 [d]=6-7)
read -r -a expected <<<"$("${driver[@]}" expect "$work/events.ndjson" 8 "${owned[a]}" "${owned[b]}" "${owned[c]}" \
    "${owned[d]}")"
[ "${#expected[@]}" = 4 ] || fail "no event counts for the shards' partitions"
stored() {
    local out
    out="$("$pt" --store "$1" head --json 2>/dev/null)" || { echo 0; return; }
    out="${out#*\"seq\":}"
    echo "${out%%[!0-9]*}"
}
for s in "${shards[@]}"; do
    "$pt" --store "$work/$s" consume --server "$url" --partitions "${owned[$s]}" -q 2>"$work/consume-$s.err" &
    consume_pid+=($!)
done
for i in "${!shards[@]}"; do
    s="${shards[$i]}"
    last=-1
    deadline=$(($(now_ms) + 60000))
    while n=$(stored "$work/$s"); [ "$n" -lt "${expected[$i]}" ]; do
        if ! kill -0 "${consume_pid[$i]}" 2>/dev/null; then
            wait "${consume_pid[$i]}" && status=0 || status=$?
            consume_pid[i]=""
            fail "consume of partitions ${owned[$s]} into shard $s exited $status with $n of ${expected[$i]} events" \
                "stored: $(grep -v '^ *$' "$work/consume-$s.err" | head -n 1)"
        fi
        if [ "$n" != "$last" ]; then last=$n; deadline=$(($(now_ms) + 60000)); fi
        [ "$(now_ms)" -lt "$deadline" ] ||
            fail "shard $s has held $n of ${expected[$i]} events for 60 s: $(tail -n 1 "$work/consume-$s.err")"
        sleep 0.1
    done
done
for i in "${!shards[@]}"; do
    s="${shards[$i]}"
    kill -TERM "${consume_pid[$i]}" 2>/dev/null || true
    wait "${consume_pid[$i]}" && status=0 || status=$?
    consume_pid[i]=""
    [ "$status" = 0 ] || fail "consume of partitions ${owned[$s]} into shard $s exited $status on SIGTERM:" \
        "$(grep -v '^ *$' "$work/consume-$s.err" | head -n 1)"
done
phase consume "$t"

# Each shard holds exactly its partitions' events, through the partitions' last sequences.
t=$(now_ms)
result="$("${driver[@]}" shards "$pt" "$work/events.ndjson" 8 \
    "$work/a:0-1" "$work/b:2-3" "$work/c:4-5" "$work/d:6-7")" || fail "${result#FAIL: }"
say "cluster test: shards $result"
phase "shard check" "$t"

# Shards c and d behind `pushtrail serve` (port 0: the server picks one and says which),
# each with a read token in the variable the cluster file names.
t=$(now_ms)
declare -A port
for s in c d; do
    token="$("$pt" --store "$work/$s" token add cluster-test --role read 2>/dev/null | tail -n 1)"
    [[ "$token" == pt_* ]] || fail "token add for shard $s printed no token"
    export "PUSHTRAIL_TEST_TOKEN_${s^^}=$token"
    "$pt" --store "$work/$s" serve --listen 127.0.0.1:0 2>"$work/serve-$s.log" &
    serve_pid[$s]=$!
    port[$s]="$(wait_for_line "$work/serve-$s.log" 'listening on http://127\.0\.0\.1:([0-9]+)' "${serve_pid[$s]}" \
        "pushtrail serve of shard $s")"
done
cluster="$work/cluster.json"
cat >"$cluster" <<EOF
{"stream": "PUSHTRAIL", "partitions": 8, "shards": [
 {"name": "a", "partitions": [0, 1], "store": "a"},
 {"name": "b", "partitions": [2, 3], "store": "b"},
 {"name": "c", "partitions": [4, 5], "url": "http://127.0.0.1:${port[c]}", "token_env": "PUSHTRAIL_TEST_TOKEN_C"},
 {"name": "d", "partitions": [6, 7], "url": "http://127.0.0.1:${port[d]}", "token_env": "PUSHTRAIL_TEST_TOKEN_D"}]}
EOF
phase serve "$t"

t=$(now_ms)
"${driver[@]}" compare "$pt" "$work/single" "$cluster" "$work/events.ndjson" "$seed" \
    "$work/a" "$work/b" "$work/c" "$work/d" | tee "$work/compare.out" ||
    fail "the cluster's answers differ from the single store's (seed $seed; --keep keeps the stores)"
compared="$(grep -Eo 'all [0-9]+ answers equal' "$work/compare.out")" || fail "the comparison said nothing"
phase compare "$t"

# head: one line per shard, each the shard's own head; verify: every shard's chain intact.
t=$(now_ms)
heads="$("$pt" head --cluster "$cluster")" || fail "head --cluster exited $?"
[ "$(wc -l <<<"$heads")" = 4 ] || fail "head --cluster gave $(wc -l <<<"$heads") lines, not 4: $heads"
for s in "${shards[@]}"; do
    own="$("$pt" --store "$work/$s" head)" || fail "head of shard $s exited $?"
    grep -Eq "^$s +$own$" <<<"$heads" || fail "head --cluster has no line '$s $own': $heads"
done
"$pt" verify --cluster "$cluster" >"$work/verify.out" 2>&1 ||
    fail "verify --cluster exited $?: $(cat "$work/verify.out")"

# Shard c stopped (SIGTERM: exit 0): reading commands fail with 74 naming it; with
# --partial they answer from the others, and their JSON ends naming the missing shard.
kill -TERM "${serve_pid[c]}"
wait "${serve_pid[c]}" && status=0 || status=$?
serve_pid[c]=""
[ "$status" = 0 ] || fail "pushtrail serve of shard c exited $status on SIGTERM"
window="--since 2026-01-01T12:00Z --until 2026-01-01T13:00Z"
for command in "stats --json" "head --json" "log -n 5 --json" "audit --json $window"; do
    read -r -a args <<<"$command"
    "$pt" "${args[@]}" --cluster "$cluster" >"$work/down.out" 2>"$work/down.err" && status=0 || status=$?
    [ "$status" = 74 ] || fail "$command --cluster with shard c stopped exited $status, not 74"
    grep -q "shard c did not answer" "$work/down.err" ||
        fail "$command --cluster with shard c stopped did not name it: $(cat "$work/down.err")"
done
for command in "stats --json" "head --json" "audit --json $window"; do
    read -r -a args <<<"$command"
    "$pt" "${args[@]}" --partial --cluster "$cluster" >"$work/partial.out" 2>"$work/partial.err" && status=0 ||
        status=$?
    # (audit exits 1 when it finds something)
    [ "$status" = 0 ] || { [ "$status" = 1 ] && [ "${args[0]}" = audit ]; } ||
        fail "$command --partial with shard c stopped exited $status: $(cat "$work/partial.err")"
    grep -q '"missing_shards":\["c"\]}$' "$work/partial.out" ||
        fail "$command --partial with shard c stopped: no \"missing_shards\":[\"c\"] at the end of" \
            "$(head -c 300 "$work/partial.out")"
done
phase "head, verify, a shard down" "$t"

say_timings
echo "cluster test: passed ($events events, seed $seed; $compared over 4 shards, 2 of them served;" \
    "head and verify; shard c down: exit 74, --partial answers)"
