#!/usr/bin/env bash
# Installs the system packages the tests and benchmarks need (redis-server,
# chromium) when they are missing, and generates the en_US.UTF-8 locale the
# Redis tests run their servers under (so a server's Lua compares strings by
# that locale's collation, as a production one may). Idempotent and silent
# when nothing is missing.
set -euo pipefail

# has_locale reports whether en_US.UTF-8 is generated ("locale -a" spells
# it en_US.utf8).
has_locale() {
	locale -a 2>/dev/null | grep -qix 'en_US\.utf-\?8'
}

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

need_locale=0
if ! has_locale; then
	need_locale=1
	# localedef (libc-bin) needs the locale sources that the locales
	# package ships.
	if [ ! -e /usr/share/i18n/locales/en_US ] || ! command -v localedef >/dev/null 2>&1; then
		missing+=(locales)
	fi
fi

if [ "${#missing[@]}" -eq 0 ] && [ "$need_locale" -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=(sudo -n)
elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
	sudo=(sudo) # may ask for a password at the terminal
else
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "deps.sh: missing system packages: ${missing[*]}" >&2
		echo "deps.sh: install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	fi
	if [ "$need_locale" -eq 1 ]; then
		echo "deps.sh: missing locale en_US.UTF-8; generate it with: sudo localedef -i en_US -f UTF-8 en_US.UTF-8" >&2
	fi
	exit 1
fi

if [ "${#missing[@]}" -gt 0 ] && ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: apt-get not found; install these packages by hand: ${missing[*]}" >&2
	exit 1
fi

if [ "${#missing[@]}" -gt 0 ]; then
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
fi

if [ "$need_locale" -eq 1 ]; then
	# localedef adds it to the locale archive. It exits non-zero for mere
	# warnings about the sources too, so the locale's presence decides.
	out=$("${sudo[@]}" localedef -i en_US -f UTF-8 en_US.UTF-8 2>&1) || true
	if ! has_locale; then
		echo "deps.sh: localedef -i en_US -f UTF-8 en_US.UTF-8 did not make the locale:" >&2
		printf '%s\n' "$out" >&2
		exit 1
	fi
	echo "deps.sh: generated the en_US.UTF-8 locale" >&2
fi
