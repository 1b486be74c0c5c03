#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
#   Scripts/test.sh            all tests
#   Scripts/test.sh --filter X passes --filter X to swift test
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

need_swift
need_build_deps
need_packages lmdb-utils   # mdb_stat / mdb_dump: the store-layout and concurrency tests
need_packages zstd   # the zstd tool decompresses a stored record by hand (CompressionTests)
need_packages zsh fish man-db   # the shell-integration tests load completions in each shell
command -v cc >/dev/null || need_packages gcc   # builds the disk-fault injection shim
need_packages nats-server   # the JetStream tests start their own servers on loopback ports
# Headless Chromium renders the HTML reports (report-check.sh): installed where we
# can (CI runs as root); elsewhere the browser check is skipped, saying so.
command -v chromium >/dev/null || need_packages chromium || say "no chromium: the browser check will be skipped"

say "checking the format: swift format lint (the committed .swift-format), lines within 120 columns…"
swift format lint --strict --recursive --parallel Sources Tests Fuzz Package.swift
command -v python3 >/dev/null || need_packages python3
python3 Scripts/line-length.py Sources Tests Fuzz

say "building (debug, with tests)…"
swift build --build-tests

if [ $# -eq 0 ]; then
    # A 200,000-event ingest is mostly one transaction by default, so most kills would
    # find nothing committed yet; a commit every 8,192 events puts kills between and
    # inside many commits (the default path has its own 500-point run by hand).
    say "crash safety: SIGKILL at 20 random moments of a 200,000-event ingest committing every 8,192 events…"
    PUSHTRAIL_BATCH_EVENTS=8192 Scripts/crash-test.sh --points 20 --events 200000
    say "server crash safety: SIGKILL at 20 random moments while 8 clients POST batches…"
    Scripts/server-crash-test.sh --points 20
    say "stream crash safety: SIGKILL of a JetStream consumer at 10 random moments, every message stored once…"
    Scripts/stream-crash-test.sh --points 10 --events 40000
    say "stream failover: SIGKILL of the stream's leader in a 3-server cluster mid-stream, the consumer goes on…"
    Scripts/stream-failover-test.sh
    say "a cluster answers as one store: 200,000 events through JetStream into 4 shards, 2 served, every reading command compared…"
    Scripts/cluster-test.sh --events 200000 --seed 7
    # A fixed seed keeps CI's run repeatable; by hand, leave --seed out for new requests.
    say "hostile HTTP: 10,000 randomised and ~2,000 fixed hostile requests against pushtrail-server…"
    Scripts/hostile-test.sh --requests 10000 --seed 11
    say "install under a temporary prefix and check the man page and completions…"
    Scripts/shell-check.sh
    if command -v chromium >/dev/null; then
        say "rendering HTML reports in headless Chromium…"
        Scripts/report-check.sh
    else
        say "skipping the browser check: install chromium to run Scripts/report-check.sh"
    fi
    say "the support site in headless Chromium (Selenium): the support stories, XSS, keyboard, 375 and 1440 px…"
    Scripts/ui-test.sh
    say "fuzzing the event decoder and the time parser, 60 s each…"
    Scripts/fuzz.sh --seconds 60
fi

say "running tests…"
swift test --skip-build "$@"
