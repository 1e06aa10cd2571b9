#!/bin/sh
# check-gomod.sh: go.mod's direct requirements (those without
# "// indirect") are exactly the modules the code imports, tests
# included. `go mod tidy` keeps this split, but it cannot run where the
# module proxy is out of reach, so go.mod is edited by hand; make vet runs
# this to keep the hand edit right.
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
imported=$($GO list -f '{{join .Imports "\n"}}
{{join .TestImports "\n"}}
{{join .XTestImports "\n"}}' ./... | sort -u | grep -E '^[^/]+\.[^/]+/' |
	xargs $GO list -f '{{if .Module}}{{if not .Module.Main}}{{.Module.Path}}{{end}}{{end}}' | sort -u)
direct=$(awk '/^require \($/ { inblock = 1; next }
	inblock && /^\)/ { inblock = 0; next }
	inblock && !/\/\/ indirect/ { print $1 }
	/^require [^(]/ && !/\/\/ indirect/ { print $2 }' go.mod | sort -u)
if [ "$imported" != "$direct" ]; then
	echo "go.mod: the direct requirements differ from the modules the code imports"
	echo "imported but marked indirect or missing (<) / marked direct but not imported (>):"
	printf '%s\n' "$imported" >/tmp/check-gomod.imported.$$
	printf '%s\n' "$direct" >/tmp/check-gomod.direct.$$
	diff /tmp/check-gomod.imported.$$ /tmp/check-gomod.direct.$$ | grep '^[<>]' || true
	rm -f /tmp/check-gomod.imported.$$ /tmp/check-gomod.direct.$$
	exit 1
fi
