#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ with swiftc (not SwiftPM: libFuzzer brings its
# own main, which clashes with the package's executables) and runs each for a while.
#   Scripts/fuzz.sh                          every target, 60 s each
#   Scripts/fuzz.sh --seconds 600            every target, 10 minutes each
#   Scripts/fuzz.sh --target TimeExpressionFuzz --seconds 30
#   Scripts/fuzz.sh --keep-going             go on after a crash and collect them all
#   Scripts/fuzz.sh --build-only
#
# Seeds come from Fuzz/corpus/TARGET/ (committed, small); what libFuzzer learns goes
# to .build/fuzz/corpus-TARGET/, kept between runs. A crash, timeout or out-of-memory
# input is written under .build/fuzz/artifacts/TARGET/ and its path printed; the
# script then exits 1. Keep such an input in Fuzz/regressions/ and add a test for it
# to Tests/PushTrailCLITests/HostileInputTests.swift. To replay one input:
#   .build/fuzz/EventDecoderFuzz PATH
# The targets also check that every error message is one line without control
# characters; PUSHTRAIL_FUZZ_SKIP_MESSAGES=1 turns that off, to fuzz on for crashes
# while such a message bug is open.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"
self="$PT_ROOT/Scripts/fuzz.sh"

seconds=60
targets=()
keep_going=0
build_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
        --seconds=*) seconds="${1#--seconds=}"; shift ;;
        --target) targets+=("${2:?--target needs a name}"); shift 2 ;;
        --target=*) targets+=("${1#--target=}"); shift ;;
        --keep-going) keep_going=1; shift ;;
        --build-only) build_only=1; shift ;;
        -h|--help) sed -n '2,18p' "$self" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) say "fuzz.sh: unknown argument $1 (see --help)"; exit 2 ;;
    esac
done
case "$seconds" in ''|*[!0-9]*) say "fuzz.sh: --seconds takes a whole number, not $seconds"; exit 2 ;; esac
if [ ${#targets[@]} -eq 0 ]; then
    for f in Fuzz/*Fuzz.swift; do targets+=("$(basename "$f" .swift)"); done
fi
for t in "${targets[@]}"; do
    [ -f "Fuzz/$t.swift" ] || { say "fuzz.sh: no target Fuzz/$t.swift"; exit 2; }
done

need_swift
need_build_deps

out=.build/fuzz
mkdir -p "$out/modules" "$out/obj"
# -O: the speed that makes a minute worth fuzzing; -g: readable stacks in crash reports.
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name pushtrail -I "$out/modules")

# stale OUTPUT INPUT… : whether OUTPUT is missing or older than an input or this script.
stale() {
    local target="$1"; shift
    [ -f "$target" ] || return 0
    [ "$self" -nt "$target" ] && return 0
    for f in "$@"; do [ "$f" -nt "$target" ] && return 0; done
    return 1
}

# The targets fuzz the pure rules (the decoder, the time parser): PushTrailModel is
# compiled once as the same module SwiftPM builds, instrumented, and each target
# imports it like any client. It needs no C library.
mapfile -t model < <(find Sources/PushTrailModel -name '*.swift' | sort)
if stale "$out/obj/PushTrailModel.o" "${model[@]}"; then
    say "fuzz: compiling PushTrailModel…"
    swiftc "${flags[@]}" -module-name PushTrailModel -wmo -c "${model[@]}" \
        -emit-module -emit-module-path "$out/modules/PushTrailModel.swiftmodule" -o "$out/obj/PushTrailModel.o"
    touch "$out/obj/PushTrailModel.o"  # swiftc leaves an unchanged object's time alone
fi
for t in "${targets[@]}"; do
    if stale "$out/$t" "Fuzz/$t.swift" "$out/obj/PushTrailModel.o"; then
        say "fuzz: linking $t…"
        # lld: gold warns about every local ASan symbol it cannot export.
        swiftc "${flags[@]}" -use-ld=lld -module-name "$t" "Fuzz/$t.swift" "$out/obj/PushTrailModel.o" -o "$out/$t"
        touch "$out/$t"
    fi
done
[ "$build_only" = 1 ] && { say "fuzz: built ${targets[*]} in $out"; exit 0; }

failed=0
for t in "${targets[@]}"; do
    work="$out/corpus-$t"
    artifacts="$out/artifacts/$t"
    log="$out/$t.log"
    mkdir -p "$work" "$artifacts"
    args=("$work" "Fuzz/corpus/$t" -max_total_time="$seconds" -max_len=70000 -timeout=2 -rss_limit_mb=2048
        -artifact_prefix="$artifacts/" -print_final_stats=1)
    [ -f "Fuzz/$t.dict" ] && args+=(-dict="Fuzz/$t.dict")
    [ "$keep_going" = 1 ] && args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    marker="$out/.started-$t"
    : > "$marker"
    say "fuzz: running $t for ${seconds}s (log: $log)…"
    set +e
    # Swift's own crash reporter would trip over ASan; libFuzzer reports the crash.
    SWIFT_BACKTRACE=enable=no "$out/$t" "${args[@]}" > "$log" 2>&1
    status=$?
    set -e
    # What a reader wants from the log: the start, the end and the totals.
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE|pulse|NEW|REDUCE|RELOAD)|^#[0-9]+: cov:' "$log" | sed -n '1p;$p' | sed "s/^/$t: /" || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" | sed "s/^/$t: /" || true
    mapfile -t found < <(find "$artifacts" -type f -newer "$marker" | sort)
    if [ "$status" -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
        failed=1
        say "fuzz: $t FAILED (exit $status); what it found:"
        grep -E 'Fuzz: |Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY:|Test unit written to' "$log" | head -20 >&2 || true
        for f in "${found[@]:0:10}"; do say "fuzz: crash input: $f"; done
        [ ${#found[@]} -gt 10 ] && say "fuzz: … and $(( ${#found[@]} - 10 )) more in $artifacts"
        [ ${#found[@]} -eq 0 ] && tail -20 "$log" >&2
    fi
done
exit "$failed"
