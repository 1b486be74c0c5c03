#!/usr/bin/env bash
# Kills the nats-server that leads the stream while `pushtrail consume` is mid-stream,
# and checks that the consumer says so, goes on by itself and loses nothing: three
# clustered nats-servers with JetStream on free loopback ports; half the generated
# events published to an R3 stream in 8 partitions; a consumer started into a fresh
# store; the stream's leader killed with SIGKILL once the store holds a fifth of them;
# the other half published through the two servers left, once they have elected a new
# leader. The same consumer, never restarted, must store every event of its partitions
# exactly once, byte for byte and in each partition's order, pass verify, hold the
# partitions' last sequences as the stream has them, and exit 0 on SIGTERM.
#
#   Scripts/stream-failover-test.sh [--events N] [--seed S] [--partitions LIST]
#                                   [--connect leader|follower] [--keep]
#
# Defaults: 100,000 events, partitions 0-7, the consumer connected first to the leader
# (so it loses its connection too); with --connect follower, it keeps its connection
# and loses only the consumers the leader held. --keep leaves the servers' logs and the
# store in the work directory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

events=100000
seed=7
owned=0-7
connect=leader
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --events) events="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --partitions) owned="$2"; shift 2 ;;
        --connect) connect="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) say "stream-failover-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done
case "$connect" in leader|follower) ;; *) say "stream-failover-test: --connect takes leader or follower"; exit 2 ;; esac
[ "$events" -ge 1000 ] 2>/dev/null || { say "stream-failover-test: --events takes a number, at least 1000"; exit 2; }

fail() { say "stream failover: FAILED: $*"; exit 1; }

need_swift
need_build_deps
need_packages nats-server curl
command -v python3 >/dev/null || need_packages python3
say "stream-failover-test: building release…"
for product in pushtrail pushtrail-stream pushtrail-gen; do
    swift build -c release --product "$product" >/dev/null ||
        fail "the release build of $product failed (swift build -c release --product $product says why)"
done
bin="$(swift build -c release --show-bin-path)"
nats="$(command -v nats-server || echo /usr/sbin/nats-server)"
helper=(python3 "$PT_ROOT/Scripts/reliability/stream_failover.py")

work="$(mktemp -d "${TMPDIR:-/tmp}/pushtrail-stream-failover-XXXXXX")"
server_pid=("" "" "")
cpid=""
ppid=""
cleanup() {
    local status=$?
    for pid in "$cpid" "$ppid" "${server_pid[@]}"; do
        if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    { wait; } 2>/dev/null || true
    if [ "$keep" = 1 ]; then
        say "stream failover: kept $work"
    else
        rm -rf "$work" || say "stream failover: could not remove $work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The binaries run from a copy, so that a build in the tree during the run changes
# nothing (pushtrail finds pushtrail-stream beside itself).
mkdir -p "$work/bin"
cp "$bin/pushtrail" "$bin/pushtrail-stream" "$bin/pushtrail-gen" "$work/bin/"
pt="$work/bin/pushtrail"
store="$work/store"

now_ms() { local t="${EPOCHREALTIME//[.,]/}"; echo $((t / 1000)); }
seconds() { printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100)); }
# The events the store holds (its last seq: the consumer stores each event once).
stored() {
    local out
    out="$("$pt" --store "$store" head --json 2>/dev/null)" || { echo 0; return; }
    out="${out#*\"seq\":}"
    echo "${out%%[!0-9]*}"
}
consumer_alive() {
    kill -0 "$cpid" 2>/dev/null && return 0
    wait "$cpid" && status=0 || status=$?
    cpid=""
    fail "the consumer exited ($status) during the run: $(tail -n 1 "$work/consume.err")"
}

# Three servers, clustered through routes; each with its store, log and monitoring port.
read -r -a port <<<"$("${helper[@]}" ports 9)"
cport=("${port[@]:0:3}")   # clients
rport=("${port[@]:3:3}")   # routes
mport=("${port[@]:6:3}")   # monitoring (/jsz)
name=(n1 n2 n3)
url=()
for i in 0 1 2; do url+=("nats://127.0.0.1:${cport[$i]}"); done
for i in 0 1 2; do
    routes=""
    for j in 0 1 2; do
        [ "$j" = "$i" ] || routes="$routes${routes:+,}nats://127.0.0.1:${rport[$j]}"
    done
    "$nats" -js -sd "$work/${name[$i]}" -n "${name[$i]}" -a 127.0.0.1 -p "${cport[$i]}" -m "${mport[$i]}" \
        --cluster "nats://127.0.0.1:${rport[$i]}" --routes "$routes" --cluster_name pushtrail-failover \
        -l "$work/${name[$i]}.log" &
    server_pid[i]=$!
done
# JetStream is ready once the three servers name one meta leader.
deadline=$(($(now_ms) + 30000))
while :; do
    metas=()
    for i in 0 1 2; do
        kill -0 "${server_pid[$i]}" 2>/dev/null ||
            fail "nats-server ${name[$i]} exited at start: $(tail -n 1 "$work/${name[$i]}.log" 2>/dev/null)"
        read -r meta _ _ _ <<<"$("${helper[@]}" status "${mport[$i]}")"
        metas+=("$meta")
    done
    [ "${metas[0]}" != - ] && [ "${metas[0]}" = "${metas[1]}" ] && [ "${metas[1]}" = "${metas[2]}" ] && break
    [ "$(now_ms)" -lt "$deadline" ] || fail "the cluster elected no JetStream meta leader in 30 s (see --keep)"
    sleep 0.2
done
say "stream failover: cluster of ${name[*]} ready, meta leader ${metas[0]}"

# Two runs of the generator: the events published before the kill and those after it.
half=$((events / 2))
"$work/bin/pushtrail-gen" --events "$half" --seed "$seed" --android-share 0.3 -o "$work/before.ndjson"
"$work/bin/pushtrail-gen" --events $((events - half)) --seed $((seed + 1)) --android-share 0.3 \
    --start 2026-03-01 -o "$work/after.ndjson"
read -r first second <<<"$("${helper[@]}" expect 8 "$owned" "$work/before.ndjson" "$work/after.ndjson")"
total=$((first + second))
if [ "$first" -eq 0 ] || [ "$second" -eq 0 ]; then fail "partitions $owned hold no events before or after the kill"; fi

all_urls="$(IFS=,; echo "${url[*]}")"
"$pt" publish "$work/before.ndjson" --server "$all_urls" --partitions 8 --replicas 3 2>"$work/publish1.err" ||
    fail "publishing before the kill: $(tail -n 1 "$work/publish1.err")"

leader=-
deadline=$(($(now_ms) + 30000))
while [ "$leader" = - ]; do
    read -r _ leader _ _ <<<"$("${helper[@]}" status "${mport[0]}")"
    [ "$(now_ms)" -lt "$deadline" ] || fail "the stream has no leader 30 s after it was created"
    [ "$leader" = - ] && sleep 0.2
done
for k in 0 1 2; do [ "${name[$k]}" = "$leader" ] && break; done
survivors=()
for i in 0 1 2; do [ "$i" = "$k" ] || survivors+=("$i"); done
# The consumer's first server (libnats tries them in order): the leader or a follower.
if [ "$connect" = leader ]; then order=("$k" "${survivors[@]}"); else order=("${survivors[@]}" "$k"); fi
consumer_urls=""
for i in "${order[@]}"; do consumer_urls="$consumer_urls${consumer_urls:+,}${url[$i]}"; done
survivor_urls="${url[${survivors[0]}]},${url[${survivors[1]}]}"

# The consumer commits every 1,000 events, so the kill lands among many commits.
start=$(now_ms)
PUSHTRAIL_BATCH_EVENTS=1000 "$pt" --store "$store" consume --server "$consumer_urls" --partitions "$owned" \
    2>"$work/consume.err" &
cpid=$!
deadline=$((start + 30000))
while [ "$(stored)" -lt $((first / 5)) ]; do
    consumer_alive
    [ "$(now_ms)" -lt "$deadline" ] || fail "the consumer stored $(stored) of $first events in 30 s, before any kill"
    sleep 0.02
done

# Where the leader's consumers are, as it says, then the kill.
curl -sf "http://127.0.0.1:${mport[$k]}/jsz?streams=true&consumers=true&config=true" -o "$work/leader-jsz.json" ||
    true
killed=$(now_ms)
# (Waited for at once, inside the redirection: bash's "Killed" notice goes nowhere.)
{ kill -KILL "${server_pid[$k]}"; wait "${server_pid[$k]}"; } 2>/dev/null || true
at_kill=$(stored)
server_pid[k]=""
[ "$at_kill" -lt "$first" ] ||
    fail "the consumer had stored all $first events before the kill: not mid-stream (try more --events)"
read -r _ _ _ held <<<"$("${helper[@]}" status "${mport[$k]}" "$leader" "$work/leader-jsz.json")"
say "stream failover: killed $leader (the stream's leader, holding the consumers of partitions $held)" \
    "$(seconds $((killed - start))) into consuming, with $at_kill of $first events stored"

# Until the store holds every event: the survivors elect a leader, the rest is published
# through them, and the consumer must go on alone.
said="" new_leader="" elected="" caught_up="" published="" done_at=""
deadline=$((killed + 120000))
while :; do
    consumer_alive
    now=$(now_ms)
    n=$(stored)
    if [ -z "$said" ] && grep -q '^pushtrail: lost ' "$work/consume.err"; then said=$now; fi
    if [ -z "$caught_up" ] && [ "$n" -ge "$first" ]; then caught_up=$now; fi
    if [ -z "$new_leader" ]; then
        read -r _ l _ _ <<<"$("${helper[@]}" status "${mport[${survivors[0]}]}")"
        if [ "$l" != - ] && [ "$l" != "$leader" ]; then
            new_leader=$l
            elected=$now
            "$pt" publish "$work/after.ndjson" --server "$survivor_urls" --partitions 8 2>"$work/publish2.err" &
            ppid=$!
        fi
    elif [ -z "$published" ] && ! kill -0 "$ppid" 2>/dev/null; then
        wait "$ppid" && status=0 || status=$?
        ppid=""
        [ "$status" = 0 ] || fail "publishing after the kill exited $status: $(tail -n 1 "$work/publish2.err")"
        published=$now
    fi
    if [ -n "$published" ] && [ "$n" -ge "$total" ]; then done_at=$now; break; fi
    [ "$now" -lt "$deadline" ] || fail "120 s after the kill the store holds $n of $total events" \
        "(new leader: ${new_leader:-none}); the consumer last said: $(tail -n 1 "$work/consume.err")"
    sleep 0.05
done

# SIGTERM: the consumer commits its batch and exits 0.
kill -TERM "$cpid"
wait "$cpid" && status=0 || status=$?
cpid=""
[ "$status" = 0 ] || fail "the consumer exited $status on SIGTERM: $(tail -n 1 "$work/consume.err")"

# It said so: the connection it lost, when it was on the leader; else the consumers the
# leader held.
leader_url="${url[$k]}"
if [ "$connect" = leader ]; then
    grep -qF "lost the connection to NATS at $leader_url" "$work/consume.err" ||
        fail "the consumer did not say it lost $leader_url: $(head -n 1 "$work/consume.err")"
    grep -q "connected to NATS again at" "$work/consume.err" || fail "the consumer did not say it reconnected"
elif [ "$held" != - ]; then
    grep -q "lost the consumers\? of partitions\? .* on NATS server $leader" "$work/consume.err" ||
        fail "the consumer did not say it lost the consumers of partitions $held on $leader"
fi
if [ -z "$said" ] && { [ "$connect" = leader ] || [ "$held" != - ]; }; then
    fail "the consumer said nothing of the lost leader"
fi

result="$("${helper[@]}" check "$pt" "$store" "${cport[${survivors[0]}]}" "${mport[${survivors[0]}]}" 8 "$owned" \
    "$work/before.ndjson" "$work/after.ndjson")" || fail "${result#FAIL: }"

say "stream failover: the consumer said:"
grep -v '^pushtrail: consumed ' "$work/consume.err" | sed 's/^/    /' >&2 || say "    (nothing: it lost nothing)"
say "stream failover: $events events ($first and $second of partitions $owned before and after the kill);" \
    "$leader killed with $at_kill stored; new leader $new_leader after $(seconds $((elected - killed)));" \
    "${said:+the consumer said so after $(seconds $((${said:-0} - killed))),}" \
    "held everything published before the kill after $(seconds $((caught_up - killed)))" \
    "and all $total after $(seconds $((done_at - killed)))"
say "stream failover: every event stored once, byte for byte, in each partition's order; verify ok;" \
    "positions $result, the stream's ends; exit 0 on SIGTERM"
echo "stream failover: passed"
