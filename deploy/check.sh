#!/usr/bin/env bash
# Static checks of the deployment files in deploy/. Run from anywhere:
#   deploy/check.sh                                  # uses .build/debug/atrium
#   ATRIUM_BIN=/path/to/atrium deploy/check.sh
# Checks that cannot run here (no apt lists, no systemd-analyze) are skipped with a message.
# Every failure is reported; the exit status is 1 if there was any, else 0.
# `A && pass || fail` is intended (pass only echoes); os-release is read at run time.
# shellcheck disable=SC2015,SC1091
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

# ATRIUM_BIN: an absolute path, a path relative to the current directory, or a command in PATH;
# by default the debug build of this checkout.
if [[ -n "${ATRIUM_BIN:-}" ]]; then
    case "$ATRIUM_BIN" in
        /*) ;;
        */*) ATRIUM_BIN="$PWD/$ATRIUM_BIN" ;;
        *) ATRIUM_BIN=$(command -v "$ATRIUM_BIN" || echo "$PWD/$ATRIUM_BIN") ;;
    esac
else
    ATRIUM_BIN="$root/.build/debug/atrium"
fi
cd "$root"

failures=0
pass() { echo "ok:   $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
skip() { echo "skip: $*"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- files ------------------------------------------------------------------------------------
for f in Dockerfile packages-build.txt packages-runtime.txt atrium.service atrium.example.json \
    atrium.env.example docker-compose.yml README.md; do
    [[ -s "deploy/$f" ]] || fail "deploy/$f is missing or empty"
done

# --- package lists ----------------------------------------------------------------------------
# Prints the package names of a list (comments and blank lines dropped); fails on a line with more
# than one word, a name Debian would not accept, or a duplicate.
read_list() {
    local file=$1 line n=0 bad=0
    local -A seen=()
    local -a words
    while IFS= read -r line || [[ -n "$line" ]]; do
        n=$((n + 1))
        line=${line%%#*}
        read -r -a words <<<"$line" || true
        ((${#words[@]} == 0)) && continue
        if ((${#words[@]} > 1)); then
            echo "$file:$n: one package per line, found: ${words[*]}" >&2; bad=1; continue
        fi
        if [[ ! "${words[0]}" =~ ^[a-z0-9][a-z0-9+.-]+$ ]]; then
            echo "$file:$n: not a Debian package name: ${words[0]}" >&2; bad=1; continue
        fi
        if [[ -n "${seen[${words[0]}]:-}" ]]; then
            echo "$file:$n: duplicate: ${words[0]}" >&2; bad=1; continue
        fi
        seen[${words[0]}]=1
        echo "${words[0]}"
    done <"$file"
    return "$bad"
}

build_pkgs=() runtime_pkgs=()
if out=$(read_list deploy/packages-build.txt); then
    if [[ -n "$out" ]]; then
        mapfile -t build_pkgs <<<"$out"
        pass "packages-build.txt: ${#build_pkgs[@]} packages"
    else
        fail "packages-build.txt lists no package"
    fi
else
    fail "packages-build.txt is malformed"
fi
if out=$(read_list deploy/packages-runtime.txt); then
    if [[ -n "$out" ]]; then
        mapfile -t runtime_pkgs <<<"$out"
        pass "packages-runtime.txt: ${#runtime_pkgs[@]} packages"
    else
        fail "packages-runtime.txt lists no package"
    fi
else
    fail "packages-runtime.txt is malformed"
fi

# Each name must be a real package known to apt. One apt-cache call for the whole list (it takes
# about a second on bookworm's lists); it silently skips unknown names, so compare what it printed.
apt_known() {
    local label=$1 found p missing=0
    shift
    (($# == 0)) && return 0
    found=$(apt-cache show --no-all-versions "$@" 2>/dev/null | sed -n 's/^Package: //p' | sort -u) || true
    for p in "$@"; do
        if ! grep -q -x -F -e "$p" <<<"$found"; then
            fail "$label: apt-cache does not know $p"
            missing=1
        fi
    done
    if ((missing == 0)); then pass "$label: all $# packages known to apt-cache"; fi
    return 0
}
if ! command -v apt-cache >/dev/null 2>&1; then
    skip "apt-cache not installed: package names not checked"
elif ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
    skip "no apt package lists (run apt-get update): package names not checked"
else
    apt_known packages-build.txt "${build_pkgs[@]}"
    # The runtime names are Debian bookworm's (the runtime image); other releases rename some.
    codename=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true)
    if [[ "$codename" == bookworm ]]; then
        apt_known packages-runtime.txt "${runtime_pkgs[@]}"
    else
        skip "host is not Debian bookworm (${codename:-unknown}): runtime package names not checked"
    fi
fi

# --- Dockerfile -------------------------------------------------------------------------------
# Logical lines (continuations joined), comments dropped.
awk '
    /^[[:space:]]*#/ { next }
    { line = line $0 }
    /\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, " ", line); next }
    { print line; line = "" }
    END { if (line != "") print line }
' deploy/Dockerfile >"$tmp/Dockerfile.lines"
from_lines=$(grep -n -i -E '^[[:space:]]*FROM[[:space:]]' "$tmp/Dockerfile.lines" | cut -d: -f1 || true)
if [[ $(wc -w <<<"$from_lines") -lt 2 ]]; then
    fail "Dockerfile: expected a multi-stage build (builder and runtime FROM lines)"
else
    last_from=$(tail -n1 <<<"$from_lines")
    head -n $((last_from - 1)) "$tmp/Dockerfile.lines" >"$tmp/builder"
    tail -n +"$last_from" "$tmp/Dockerfile.lines" >"$tmp/runtime"

    grep -q -i -E '^[[:space:]]*FROM[[:space:]]+swift:[^[:space:]]*bookworm' "$tmp/builder" \
        && pass "Dockerfile: builder is a swift bookworm image" \
        || fail "Dockerfile: builder stage is not FROM swift:*-bookworm"
    grep -q -E 'swift build .*-c release.*--static-swift-stdlib|swift build .*--static-swift-stdlib.*-c release' "$tmp/builder" \
        && pass "Dockerfile: builder links the Swift runtime statically" \
        || fail "Dockerfile: builder does not run swift build -c release --static-swift-stdlib"
    grep -q -E 'COPY[[:space:]].*deploy/packages-build\.txt' "$tmp/builder" \
        && grep -q -E 'packages-build\.txt.*\|[[:space:]]*xargs[[:space:]]+apt-get[[:space:]]+install' "$tmp/builder" \
        && pass "Dockerfile: builder installs packages-build.txt" \
        || fail "Dockerfile: builder does not install from deploy/packages-build.txt"

    grep -q -i -E '^[[:space:]]*FROM[[:space:]]+debian:bookworm-slim' "$tmp/runtime" \
        && pass "Dockerfile: runtime stage is debian:bookworm-slim" \
        || fail "Dockerfile: the last stage is not FROM debian:bookworm-slim"
    # The runtime stage installs exactly the list: every apt-get install in it reads the file.
    installs=$(grep -c -E 'apt-get[[:space:]]+(-[^[:space:]]+[[:space:]]+)*install' "$tmp/runtime" || true)
    from_list=$(grep -c -E 'packages-runtime\.txt.*\|[[:space:]]*xargs[[:space:]]+apt-get[[:space:]]+install' "$tmp/runtime" || true)
    if ! grep -q -E 'COPY[[:space:]].*deploy/packages-runtime\.txt' "$tmp/runtime"; then
        fail "Dockerfile: runtime stage does not COPY deploy/packages-runtime.txt"
    elif ((from_list == 0)); then
        fail "Dockerfile: runtime stage does not pipe packages-runtime.txt into xargs apt-get install"
    elif ((installs != from_list)); then
        fail "Dockerfile: runtime stage has an apt-get install that does not read packages-runtime.txt"
    else
        pass "Dockerfile: runtime stage installs exactly packages-runtime.txt"
    fi
    for want in 'EXPOSE.*8800/tcp' 'EXPOSE.*8801/udp' 'VOLUME.*/var/lib/atrium' 'HEALTHCHECK.*/healthz' \
        '^USER[[:space:]]' 'ENTRYPOINT[[:space:]]*\[[[:space:]]*"atrium"[[:space:]]*\]' \
        'CMD[[:space:]]*\[[[:space:]]*"serve",[[:space:]]*"--config",[[:space:]]*"/etc/atrium/atrium.json"[[:space:]]*\]'; do
        grep -q -E "$want" "$tmp/runtime" || fail "Dockerfile: runtime stage lacks /$want/"
    done
    # The health check's tool must come from the list (curl is not in bookworm-slim).
    if grep -E 'HEALTHCHECK' "$tmp/runtime" | grep -q -w curl; then
        printf '%s\n' "${runtime_pkgs[@]}" | grep -q -x curl \
            && pass "Dockerfile: HEALTHCHECK uses curl, which packages-runtime.txt installs" \
            || fail "Dockerfile: HEALTHCHECK uses curl but packages-runtime.txt does not list curl"
    fi
fi

# --- docker-compose.yml -----------------------------------------------------------------------
for want in 'dockerfile:[[:space:]]*deploy/Dockerfile' 'context:[[:space:]]*\.\.' '8800:8800' '8801:8801/udp' \
    '/var/lib/atrium' '/etc/atrium/atrium.json' 'env_file' 'atrium.env' 'restart:[[:space:]]*unless-stopped' \
    'healthcheck:'; do
    grep -q -E "$want" deploy/docker-compose.yml || fail "docker-compose.yml lacks /$want/"
done
if grep -q -w curl deploy/docker-compose.yml && ! printf '%s\n' "${runtime_pkgs[@]}" | grep -q -x curl; then
    fail "docker-compose.yml: healthcheck uses curl but packages-runtime.txt does not list curl"
fi

# --- coturn (docs/firewalls.md) ----------------------------------------------------------------
# The compose service runs deploy/turnserver.conf with the secret from atrium.env: the file itself
# must check credentials with a shared secret and never hold one. The ICE-TCP port is published.
for want in 'coturn:' 'deploy/Dockerfile.coturn' 'turnserver.conf' 'ATRIUM_TURN_SECRET' '8802:8802'; do
    grep -q -F "$want" deploy/docker-compose.yml || fail "docker-compose.yml lacks $want"
done
grep -q -x 'use-auth-secret' deploy/turnserver.conf && pass "turnserver.conf: use-auth-secret" \
    || fail "turnserver.conf lacks use-auth-secret"
if grep -q '^static-auth-secret' deploy/turnserver.conf; then
    fail "turnserver.conf must not hold the secret (it comes from atrium.env)"
fi
grep -q -x 'coturn' <(sed -e 's/#.*//' deploy/Dockerfile.coturn | grep -o -w coturn | head -1) \
    || fail "Dockerfile.coturn does not install Debian's coturn"

# --- systemd unit -----------------------------------------------------------------------------
unit=deploy/atrium.service
for want in 'Type=simple' 'ExecStart=/usr/local/bin/atrium serve --config /etc/atrium/atrium.json' \
    'EnvironmentFile=-/etc/atrium/atrium.env' 'KillSignal=SIGTERM' 'KillMode=mixed' 'TimeoutStopSec=45' 'Restart=on-failure' \
    'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' \
    'ProtectKernelTunables=yes' 'ProtectKernelModules=yes' 'ProtectKernelLogs=yes' 'ProtectControlGroups=yes' \
    'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK' 'RestrictNamespaces=yes' 'LockPersonality=yes' \
    'MemoryDenyWriteExecute=yes' 'SystemCallFilter=@system-service' 'SystemCallArchitectures=native' \
    'CapabilityBoundingSet=' 'AmbientCapabilities=' 'LimitNOFILE=65536' 'StateDirectory=atrium'; do
    grep -q -x -F "$want" "$unit" || fail "atrium.service lacks the line: $want"
done
if ! command -v systemd-analyze >/dev/null 2>&1; then
    skip "systemd-analyze not installed: atrium.service not verified"
else
    # verify insists that ExecStart's binary exists: use the installed one if there is one,
    # else a copy of the unit pointing at ATRIUM_BIN (or at true(1) when that is missing too:
    # this check is about the unit; the binary is checked below).
    if [[ -x /usr/local/bin/atrium ]]; then
        verify_unit=$unit
    else
        stand_in=$ATRIUM_BIN
        [[ -x "$stand_in" ]] || stand_in=$(type -P true)
        mkdir -p "$tmp/unit"
        verify_unit="$tmp/unit/atrium.service"
        sed "s#^ExecStart=/usr/local/bin/atrium #ExecStart=$stand_in #" "$unit" >"$verify_unit"
    fi
    # A non-zero status fails; so does a warning about the unit (unknown key, bad value: verify
    # reports those but still exits 0). Noise about other units is shown, not counted.
    if ! out=$(systemd-analyze verify "$verify_unit" 2>&1); then
        fail "systemd-analyze verify atrium.service:"$'\n'"$out"
    elif grep -q 'atrium\.service' <<<"$out"; then
        fail "systemd-analyze verify atrium.service warns:"$'\n'"$(grep 'atrium\.service' <<<"$out")"
    else
        [[ -z "$out" ]] || echo "note: systemd-analyze verify printed:"$'\n'"$out"
        pass "systemd-analyze verify atrium.service"
    fi
fi

# --- example config and environment file ------------------------------------------------------
if grep -q '"keys"' deploy/atrium.example.json; then
    fail "atrium.example.json must not hold keys (they belong in the environment file)"
fi
grep -q -E '^ATRIUM_KEYS=' deploy/atrium.env.example || fail "atrium.env.example lacks an ATRIUM_KEYS= line"
if [[ ! -x "$ATRIUM_BIN" ]]; then
    fail "no atrium binary at $ATRIUM_BIN (build it, or set ATRIUM_BIN): config not checked"
elif out=$("$ATRIUM_BIN" config check deploy/atrium.example.json 2>&1) && [[ "$out" == *": ok" ]]; then
    pass "atrium config check deploy/atrium.example.json: $out"
else
    fail "atrium config check deploy/atrium.example.json:"$'\n'"$out"
fi

if ((failures > 0)); then
    echo "deploy/check.sh: $failures check(s) failed" >&2
    exit 1
fi
echo "deploy/check.sh: all checks passed"
