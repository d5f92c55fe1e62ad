#!/usr/bin/env bash
# Static checks: gofmt, go vet, templ fmt, and generated templ code up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0

# Go files outside .git and bin, minus generated ones.
go_files() {
	find . \( -path ./.git -o -path ./bin -o -path ./vendor -o -name node_modules \) -prune \
		-o -type f -name '*.go' -print |
		xargs -r grep -L -E '^// Code generated .* DO NOT EDIT\.$' || true
}

unformatted=$(go_files | xargs -r gofmt -l)
if [ -n "$unformatted" ]; then
	echo "lint: these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	fail=1
fi

go vet ./... || fail=1

templ_files=$(find . \( -path ./.git -o -path ./bin -o -name node_modules \) -prune -o -type f -name '*.templ' -print)
for f in $templ_files; do
	if ! go tool templ fmt -stdout "$f" 2>/dev/null | cmp -s - "$f"; then
		echo "lint: $f needs go tool templ fmt" >&2
		fail=1
	fi
done

# templ generate must not change the generated files.
snapshot() {
	find . \( -path ./.git -o -name node_modules \) -prune -o -type f -name '*_templ.go' -print |
		sort | xargs -r sha256sum
}
before=$(snapshot)
go tool templ generate -log-level warn
after=$(snapshot)
if [ "$before" != "$after" ]; then
	echo "lint: go tool templ generate changed generated files; commit the regenerated *_templ.go:" >&2
	diff <(echo "$before") <(echo "$after") >&2 || true
	fail=1
fi
# In CI the tree is a clean checkout, so the generated files must also match git.
if [ -n "${CI:-}" ] && ! git diff --exit-code --stat -- '*_templ.go' >&2; then
	echo "lint: *_templ.go differ from git after go tool templ generate" >&2
	fail=1
fi

exit "$fail"
