#!/usr/bin/env bash
# Installs pushtrail under a temporary prefix with Scripts/install.sh and checks what
# landed: the binary runs, pushtrail-server is beside it for serve, the man page
# renders, each shell loads its completion, and the systemd unit of docs/SERVE.md,
# run from the prefix, passes systemd-analyze's checks (nothing here runs systemd).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"
need_packages bash zsh fish man-db systemd

prefix="$(mktemp -d "${TMPDIR:-/tmp}/pushtrail-install-XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
Scripts/install.sh --prefix "$prefix" >/dev/null

passed=0
check() {
    local what="$1"; shift
    if "$@" >/dev/null 2>&1; then passed=$((passed + 1)); else say "shell-check: FAILED: $what"; exit 1; fi
}
check "the installed binary runs" "$prefix/bin/pushtrail" --version
check "pushtrail-server is installed beside pushtrail" test -x "$prefix/bin/pushtrail-server"
check "the installed pushtrail-server runs" "$prefix/bin/pushtrail-server" --help
check "pushtrail serve --help works from the prefix" bash -c "'$prefix/bin/pushtrail' serve --help | grep -q -- --max-body"
# With nothing on PATH, serve must find the server beside it: the server refuses the
# bad --listen (its own words, whatever they are), not pushtrail's "not installed".
serve_runs_server() {
    local out status=0
    out="$(env PATH=/nonexistent "$prefix/bin/pushtrail" --store "$prefix/none" serve --listen bad 2>&1)" || status=$?
    [ "$status" -ne 0 ] && ! grep -q "not installed" <<<"$out"
}
check "serve runs the installed pushtrail-server" serve_runs_server
check "bash completes 'pushtrail serve --tls-'" bash -c "source '$prefix/share/bash-completion/completions/pushtrail'; COMP_WORDS=(pushtrail serve --tls-); COMP_CWORD=2; _pushtrail; [[ \"\${COMPREPLY[*]}\" == '--tls-cert --tls-key' ]]"
check "the man page renders" man -l -P cat "$prefix/share/man/man1/pushtrail.1"
check "bash completes 'pushtrail ver'" bash -c "source '$prefix/share/bash-completion/completions/pushtrail'; COMP_WORDS=(pushtrail ver); COMP_CWORD=1; _pushtrail; [[ \"\${COMPREPLY[*]}\" == verify ]]"
check "zsh loads _pushtrail" zsh -c "fpath=('$prefix/share/zsh/site-functions' \$fpath); autoload -U compinit && compinit -u && autoload -U _pushtrail && whence -w _pushtrail"
check "fish completes 'pushtrail ver'" fish -c "source '$prefix/share/fish/vendor_completions.d/pushtrail.fish'; complete -C'pushtrail ver' | grep -q verify"
# The unit as docs/SERVE.md shows it, starting the installed binary: systemd-analyze
# checks its directives and the binary, and rates its hardening offline (0 is the best
# exposure, 10 the worst; the documented unit is to stay at 2.0 or below).
unit="$prefix/pushtrail.service"
awk '/^# \/etc\/systemd\/system\/pushtrail.service/ { inside = 1 } inside && /^```/ { exit } inside' docs/SERVE.md \
    | sed "s#/usr/local/bin/pushtrail#$prefix/bin/pushtrail#" >"$unit"
check "docs/SERVE.md holds the unit" grep -q '^ExecStart=' "$unit"
check "systemd-analyze verify passes the documented unit" systemd-analyze verify "$unit"
check "the documented unit's exposure is 2.0 or below" \
    systemd-analyze security --offline=yes --threshold=20 "$unit"
echo "shell-check: $passed passed, 0 failed"
