#!/usr/bin/env bash
# Walks the support web UI in a real browser: Debian's headless Chromium, driven by
# Selenium through chromedriver, against pushtrail-server on a loopback port with a
# temporary store. See Scripts/ui/ui_test.py for what it checks.
#
#   Scripts/ui-test.sh [--out DIR]
#
# Installs chromium, chromium-driver and python3-selenium when missing. The screenshots
# (each page at 375 and 1440 px) stay in --out (default: a temporary directory, named
# at the end).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) say "ui-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
need_packages chromium chromium-driver python3-selenium
swift build --product pushtrail >/dev/null
swift build --product pushtrail-server >/dev/null
bin="$(swift build --show-bin-path)"
[ -n "$out" ] || out="$(mktemp -d "${TMPDIR:-/tmp}/pushtrail-ui-XXXXXX")"
# Debian's Python carries python3-selenium (a pyenv or venv python3 on PATH may not).
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" Scripts/ui/ui_test.py "$bin/pushtrail" "$bin/pushtrail-server" "$out"
say "screenshots: $out"
