# Shared by the scripts: find or install what pushtrail needs on Debian/Ubuntu.
# Sourced, not run.

PT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '%s\n' "$*" >&2; }

# need_packages PKG… : installs the Debian packages that are missing (as root with
# apt-get), or prints the exact command and fails.
need_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing: ${missing[*]}"
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
            apt-get update -qq >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || {
                say "error: could not install ${missing[*]}"; return 1; }
        fi
    elif command -v apt-get >/dev/null 2>&1; then
        say "error: missing packages: ${missing[*]}"
        say "install them with: sudo apt-get install -y ${missing[*]}"
        return 1
    else
        say "error: missing ${missing[*]} (on macOS: brew install lmdb openssl@3 zstd pkg-config)"
        return 1
    fi
}

# The build needs LMDB's, OpenSSL's libcrypto, zstd's, libmicrohttpd's, libnats's and libcurl's
# headers, and pkg-config to find them.
need_build_deps() {
    if [ "$(uname -s)" = Darwin ]; then
        command -v pkg-config >/dev/null && pkg-config --exists lmdb libcrypto libzstd libmicrohttpd libnats libcurl && return 0
        say "error: install the libraries with: brew install lmdb openssl@3 zstd libmicrohttpd cnats curl pkg-config"
        return 1
    fi
    need_packages pkg-config liblmdb-dev libssl-dev libzstd-dev libmicrohttpd-dev libnats-dev libcurl4-openssl-dev
}

need_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$d/swift" ] && export PATH="$d:$PATH" && return 0
    done
    say "error: no Swift toolchain on PATH (Swift 6 is needed: https://www.swift.org/install)"
    return 1
}
