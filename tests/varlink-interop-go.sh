#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds tests/varlink-interop-go with Debian's Go and the varlink project's
# Go library (GOPATH mode, nothing fetched) and runs it against the interop
# server.  Skips (77) only when go or the library is not installed.
#
# usage: varlink-interop-go.sh SERVER-BINARY IDL-FILE
set -eu

gopath=/usr/share/gocode
if ! command -v go >/dev/null 2>&1; then
        echo "SKIP: go is not installed (apt-get install golang-go)"
        exit 77
fi
if [ ! -f "$gopath/src/github.com/varlink/go/varlink/idl/idl.go" ]; then
        echo "SKIP: the varlink Go library is not in $gopath (apt-get install golang-github-varlink-go-dev)"
        exit 77
fi

src=$(cd "$(dirname "$0")/varlink-interop-go" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dp-varlink-go.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A build cache and HOME of its own: the test never writes to the user's.
(cd "$src" && HOME=$tmp GOCACHE=$tmp/cache GOPATH=$gopath GO111MODULE=off GOFLAGS= \
        go build -o "$tmp/varlink-interop-go" .)
"$tmp/varlink-interop-go" "$@"
