#!/usr/bin/env bash
# Installs the system packages the tests and benchmarks need (redis-server,
# chromium) when they are missing. Idempotent and silent when nothing is missing.
set -euo pipefail

missing=()
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
	missing+=(redis-server)
fi
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
	missing+=(chromium)
fi

if ! command -v npm >/dev/null 2>&1; then
	missing+=(npm) # axe-core, the accessibility engine, comes from the npm registry
fi

if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=(sudo -n)
elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
	sudo=(sudo) # may ask for a password at the terminal
else
	echo "deps.sh: missing system packages: ${missing[*]}" >&2
	echo "deps.sh: install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: apt-get not found; install these packages by hand: ${missing[*]}" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2

# Keep Debian's maintainer scripts from starting services (the system
# redis-server on :6379) while we install; the tests start their own servers.
# Only add a policy-rc.d if none exists, and remove only the one we created.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
	created_policy=1
fi
cleanup() {
	if [ "$created_policy" -eq 1 ]; then
		"${sudo[@]}" rm -f "$policy"
	fi
}
trap cleanup EXIT

log=$(mktemp)
run_apt() {
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" >>"$log" 2>&1; then
		echo "deps.sh: apt-get $* failed:" >&2
		tail -n 30 "$log" >&2
		exit 1
	fi
}
run_apt update -qq
run_apt install -y -qq --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	"${missing[@]}"
rm -f "$log"

for bin in "${missing[@]}"; do
	case "$bin" in
	redis-server) command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
		{ echo "deps.sh: redis-server still missing after install" >&2; exit 1; } ;;
	chromium) [ -x /usr/bin/chromium ] || command -v chromium >/dev/null ||
		{ echo "deps.sh: chromium still missing after install" >&2; exit 1; } ;;
	esac
done
echo "deps.sh: installed ${missing[*]}" >&2
