#!/usr/bin/env bash
# Sends hostile HTTP traffic to pushtrail-server and checks that it stays up, answers
# /healthz within a second throughout, never answers 5xx (other than 503), never hangs,
# leaks no bearer token and logs route templates only.
#
#   Scripts/hostile-test.sh [--requests N] [--seed S] [--threads N] [--strict] [--keep]
#
# Builds pushtrail and pushtrail-server (debug), ingests Samples/events.ndjson into a
# temporary store and runs Scripts/reliability/hostile_http.py against a server on it:
# N randomised requests (default 10,000) from --threads workers (default 8), rounds of
# fixed malformed, ambiguous, oversized and slow requests alongside, and afterwards
# `verify` on the store. --strict makes its findings fail the run too; --keep keeps
# the temporary directory (the store and the server's standard error).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --requests|--seed|--threads) args+=("$1" "$2"); shift 2 ;;
        --strict|--keep) args+=("$1"); shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) say "hostile-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
command -v python3 >/dev/null || need_packages python3
say "hostile-test: building pushtrail and pushtrail-server (debug)…"
swift build --product pushtrail-server >/dev/null
swift build --product pushtrail >/dev/null
bin="$(swift build --show-bin-path)"

python3 "$PT_ROOT/Scripts/reliability/hostile_http.py" --bin "$bin" ${args[@]+"${args[@]}"}
