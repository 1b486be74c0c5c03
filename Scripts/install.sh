#!/usr/bin/env bash
# Builds pushtrail and its companions pushtrail-server, pushtrail-stream and pushtrail-cluster (release)
# and installs them side by side, with pushtrail's man page and its bash, zsh and fish completions,
# under a prefix.
#   Scripts/install.sh [--prefix DIR]     (default: /usr/local)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

prefix=/usr/local
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
        *) say "install: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
say "building pushtrail, pushtrail-server, pushtrail-stream and pushtrail-cluster (release)…"
swift build -c release --product pushtrail >/dev/null
# `pushtrail serve` runs the pushtrail-server in its own directory, publish and consume pushtrail-stream,
# a reading command over a cluster with served shards pushtrail-cluster.
swift build -c release --product pushtrail-server >/dev/null
swift build -c release --product pushtrail-stream >/dev/null
swift build -c release --product pushtrail-cluster >/dev/null
bin_dir="$(swift build -c release --show-bin-path)"
bin="$bin_dir/pushtrail"

install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
install -m 0755 "$bin" "$prefix/bin/pushtrail"
install -m 0755 "$bin_dir/pushtrail-server" "$prefix/bin/pushtrail-server"
install -m 0755 "$bin_dir/pushtrail-stream" "$prefix/bin/pushtrail-stream"
install -m 0755 "$bin_dir/pushtrail-cluster" "$prefix/bin/pushtrail-cluster"
"$bin" manpage > "$prefix/share/man/man1/pushtrail.1"
"$bin" completion bash > "$prefix/share/bash-completion/completions/pushtrail"
"$bin" completion zsh > "$prefix/share/zsh/site-functions/_pushtrail"
"$bin" completion fish > "$prefix/share/fish/vendor_completions.d/pushtrail.fish"
chmod 0644 "$prefix/share/man/man1/pushtrail.1" "$prefix/share/bash-completion/completions/pushtrail" \
    "$prefix/share/zsh/site-functions/_pushtrail" "$prefix/share/fish/vendor_completions.d/pushtrail.fish"
echo "installed pushtrail, pushtrail-server, pushtrail-stream and pushtrail-cluster into $prefix (bin, man page, bash/zsh/fish completions)"
