#!/usr/bin/env bash
# Build the Go adapter (bench/wild/go-adapter) over the reducers of an
# upstream checkout's Go client (CHECKOUT/clients/go, packages ahp and ahptypes).
#
#   bench/wild/build-go-adapter.sh CHECKOUT [OUT]
#
# OUT defaults to bench/wild/go-adapter/ahp-go-adapter. Then:
#   ahp-fuzz run --target adapter:bench/wild/go-adapter/ahp-go-adapter
#
# What it does, and why:
# * Works offline: no module proxy, no checksum database (GOPROXY=off,
#   GOSUMDB=off, GOFLAGS=-mod=mod, GOTOOLCHAIN=local, GOWORK=off).
# * Never modifies CHECKOUT. It copies the non-test .go files of
#   clients/go/ahp and clients/go/ahptypes into a temporary build directory
#   (under $TMPDIR, removed on exit) with a go.mod of its own that
#     - drops the upstream `require github.com/coder/websocket`: only package
#       ahpws needs it, the adapter does not import ahpws, and an offline build
#       cannot resolve it;
#     - keeps the upstream `go` line (1.22 at the time of writing) when the
#       toolchain is at least that new, otherwise lowers it to the toolchain's
#       version, with a warning (see below).
#   The adapter's go.mod, copied beside it, gets a `replace` of the upstream
#   module path by that copy.
# * Chooses the newest Go it finds: $GO if set, else the newest of
#   /usr/lib/go-1.*/bin/go (Debian's golang-1.NN packages) and `go` on PATH.
#   With a Go older than the upstream `go` line (Debian bookworm's go 1.19
#   against `go 1.22`) the code still compiles (it uses no min/max builtins,
#   slices/maps/cmp packages nor range-over-int), but the loop variables have
#   pre-1.22 semantics (one variable per loop, not per iteration). A Go >= 1.22
#   is exact; on Debian bookworm it comes from bookworm-backports:
#     echo 'deb http://deb.debian.org/debian bookworm-backports main' \
#       > /etc/apt/sources.list.d/backports.list
#     apt-get update && apt-get install -t bookworm-backports golang-1.22-go
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { echo "usage: $0 CHECKOUT [OUT]   (CHECKOUT: an agent-host-protocol checkout with clients/go)" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
checkout="$(cd "$1" && pwd)" || usage
out="${2:-$here/go-adapter/ahp-go-adapter}"
[[ "$out" = /* ]] || out="$PWD/$out"
src="$checkout/clients/go"
module="github.com/microsoft/agent-host-protocol/clients/go"
for d in ahp ahptypes; do
  [[ -d "$src/$d" ]] || { echo "$0: $src/$d not found: CHECKOUT must hold clients/go (the Go client)" >&2; exit 2; }
done
grep -q "^module $module\$" "$src/go.mod" || { echo "$0: $src/go.mod is not module $module" >&2; exit 2; }

# --- toolchain -----------------------------------------------------------
minor() { "$1" env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9][0-9]*\).*/\1/p'; }
go_bin="${GO:-}"
if [[ -z "$go_bin" ]]; then
  best=-1
  for cand in /usr/lib/go-1.*/bin/go "$(command -v go || true)"; do
    [[ -n "$cand" && -x "$cand" ]] || continue
    m="$(minor "$cand")"
    [[ -n "$m" ]] || continue
    if (( m > best )); then best=$m; go_bin="$cand"; fi
  done
fi
[[ -n "$go_bin" ]] || { echo "$0: no Go toolchain found (apt-get install golang-go, or set GO=/path/to/go)" >&2; exit 2; }
have="$(minor "$go_bin")"
[[ -n "$have" ]] || { echo "$0: cannot tell the version of $go_bin" >&2; exit 2; }
want_line="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$src/go.mod" | head -n1)"
want="$(echo "$want_line" | sed -n 's/^1\.\([0-9][0-9]*\).*/\1/p')"
go_line="$want_line"
if [[ -n "$want" ]] && (( have < want )); then
  go_line="1.$have"
  echo "$0: warning: $go_bin is go1.$have, older than the client's 'go $want_line'; building with 'go $go_line' in a copy of its go.mod (pre-1.22 loop-variable semantics)" >&2
fi

# --- build directory (outside the project and the checkout) ---------------
build="$(mktemp -d "${TMPDIR:-/tmp}/ahp-go-adapter.XXXXXX")"
trap 'rm -rf "$build"' EXIT
mkdir -p "$build/client/ahp" "$build/client/ahptypes" "$build/adapter"
for d in ahp ahptypes; do
  for f in "$src/$d"/*.go; do
    [[ "$f" == *_test.go ]] || cp "$f" "$build/client/$d/"
  done
done
printf 'module %s\n\ngo %s\n' "$module" "$go_line" > "$build/client/go.mod"
cp "$here/go-adapter/main.go" "$here/go-adapter/go.mod" "$build/adapter/"

export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GONOSUMDB="*" GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
(
  cd "$build/adapter"
  "$go_bin" mod edit -replace="$module=$build/client"
  client_version="$(tr -d ' \n' < "$src/VERSION" 2>/dev/null || true)"
  mkdir -p "$(dirname "$out")"
  "$go_bin" build -trimpath -ldflags "-X main.clientVersion=${client_version:-unknown}" -o "$out" .
)
echo "built $out ($("$go_bin" env GOVERSION), client module from $src, go line $go_line)" >&2
