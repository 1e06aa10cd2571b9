#!/usr/bin/env bash
# Installs the clients of the ecosystem suite (make test-ecosystem) from the
# package registries into $SHEPHERD_ECO_DIR (default: .ecosystem/ in the
# repository, ignored by git): a Python venv, a node_modules, a Maven local
# repository with the jars copied out, the Go modules of the Go apps, and
# go-tpc (TPC-C; go install of one pinned version into $SHEPHERD_ECO_DIR/bin).
# Each part is skipped when already installed (a stamp file names what was
# asked for), so a rerun is fast; a failed part is reported and left out,
# and the suite then reports its apps as not installed.
#
# Usage: scripts/ecosystem-install.sh [python] [node] [java] [go] [gotpc]  (default: all)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
eco=${SHEPHERD_ECO_DIR:-$here/.ecosystem}
apps=$here/internal/ecosystem/apps
mkdir -p "$eco"
parts=${*:-python node java go gotpc}
# go-tpc's version: its PostgreSQL driver came after v1.0.7, the release
# the module proxy lists as latest.
gotpc_version=v1.0.12
status=0

# stamp NAME FILE...: true if the part was installed from these exact files.
stamp_ok() { local n=$1; shift; [ -f "$eco/$n.stamp" ] && [ "$(cat "$@" | sha256sum)" = "$(cat "$eco/$n.stamp")" ]; }
stamp_set() { local n=$1; shift; cat "$@" | sha256sum >"$eco/$n.stamp"; }

for part in $parts; do
	case $part in
	python)
		if stamp_ok python "$apps/python/requirements.txt"; then echo "ecosystem: python clients already installed"; continue; fi
		py=${PYTHON:-python3}
		rm -rf "$eco/venv"
		if "$py" -m venv "$eco/venv" &&
			"$eco/venv/bin/pip" install -q --disable-pip-version-check -r "$apps/python/requirements.txt"; then
			stamp_set python "$apps/python/requirements.txt"
			echo "ecosystem: python clients installed in $eco/venv"
		else
			echo "ecosystem: python clients NOT installed" >&2; status=1
		fi
		;;
	node)
		if stamp_ok node "$apps/node/package.json"; then echo "ecosystem: node clients already installed"; continue; fi
		mkdir -p "$eco/node"
		cp "$apps/node/package.json" "$eco/node/package.json"
		if (cd "$eco/node" && npm install --no-audit --no-fund --loglevel=error --cache "$eco/npm-cache" >/dev/null); then
			stamp_set node "$apps/node/package.json"
			echo "ecosystem: node clients installed in $eco/node/node_modules"
		else
			echo "ecosystem: node clients NOT installed" >&2; status=1
		fi
		;;
	java)
		if stamp_ok java "$apps"/java/pom.xml "$apps"/java/*.java; then echo "ecosystem: java clients already installed"; continue; fi
		rm -rf "$eco/jars" "$eco/java-classes"
		# The apps are compiled once here (the suite falls back to java's
		# source launcher for an app whose source is newer).
		if mvn -q -B -f "$apps/java/pom.xml" -Dmaven.repo.local="$eco/m2" \
			dependency:copy-dependencies -DoutputDirectory="$eco/jars" >"$eco/mvn.log" 2>&1 &&
			javac -nowarn -d "$eco/java-classes" -cp "$eco/jars/*" "$apps"/java/*.java; then
			stamp_set java "$apps"/java/pom.xml "$apps"/java/*.java
			echo "ecosystem: java clients installed in $eco/jars"
		else
			tail -20 "$eco/mvn.log" >&2
			echo "ecosystem: java clients NOT installed" >&2; status=1
		fi
		;;
	go)
		if stamp_ok go "$apps"/go/go.* "$apps"/go/*.go; then echo "ecosystem: go clients already installed"; continue; fi
		mkdir -p "$eco/bin"
		if (cd "$apps/go" && go build -o "$eco/bin/goapps" .); then
			stamp_set go "$apps"/go/go.* "$apps"/go/*.go
			echo "ecosystem: go clients built into $eco/bin/goapps"
		else
			echo "ecosystem: go clients NOT installed" >&2; status=1
		fi
		;;
	gotpc)
		if [ -x "$eco/bin/go-tpc" ] && [ "$(cat "$eco/gotpc.stamp" 2>/dev/null)" = "$gotpc_version" ]; then
			echo "ecosystem: go-tpc already installed"; continue
		fi
		mkdir -p "$eco/bin"
		if (cd "$eco" && GOBIN="$eco/bin" GOFLAGS=-mod=mod go install "github.com/pingcap/go-tpc/cmd/go-tpc@$gotpc_version"); then
			echo "$gotpc_version" >"$eco/gotpc.stamp"
			echo "ecosystem: go-tpc $gotpc_version installed in $eco/bin/go-tpc"
		else
			echo "ecosystem: go-tpc NOT installed" >&2; status=1
		fi
		;;
	*) echo "ecosystem-install: unknown part $part" >&2; exit 2 ;;
	esac
done
exit $status
