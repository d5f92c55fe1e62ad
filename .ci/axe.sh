#!/usr/bin/env bash
# Installs axe-core (the accessibility engine the page tests run in
# Chromium) from the npm registry into .cache/axe when it is missing.
# Idempotent and silent when it is there.
set -euo pipefail

version=4.14.1
dir=.cache/axe
file=$dir/node_modules/axe-core/axe.min.js
if [ -f "$file" ] && grep -q "axe v$version" "$file" 2>/dev/null; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "axe.sh: npm not found; install Node.js and npm (apt-get install -y npm)" >&2
	exit 1
fi
mkdir -p "$dir"
echo "axe.sh: installing axe-core@$version into $dir" >&2
npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "axe-core@$version" >&2
[ -f "$file" ] || { echo "axe.sh: $file missing after install" >&2; exit 1; }
