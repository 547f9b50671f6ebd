#!/usr/bin/env bash
# test.sh: the test command of yrpc (CI runs it through .ci/run).
#
# 1. Installs Debian's zookeeper package if missing and starts a throwaway
#    standalone ZooKeeper and a three-node ensemble on 127.0.0.1
#    (scripts/zk.sh); both are stopped on exit. YRPC_ZK and
#    YRPC_ZK_ENSEMBLE(_DIR) point the integration tests at them, and
#    YRPC_ZK_REQUIRED=1 turns their "no ZooKeeper" skip into a failure.
# 2. Root module: gofmt check, go vet ./..., staticcheck ./... (a pinned
#    release, built by go run), go vet and the generator's
#    and wire's tests for 32-bit (GOARCH=386, the tests where 386
#    binaries run), go test -race ./...
#    (YRPC_TEST_RACE=0 drops -race, e.g. on a slow machine), with GOWORK=off:
#    the root module alone, with its own go.mod's versions, as users get it.
# 3. Every nested module (a go.mod below the root): go vet ./...,
#    staticcheck ./... and go test ./..., in the workspace of ./go.work, so that they build against
#    this checkout's root module (their go.mod requires a released version);
#    bench/ is vetted and its unit tests run with -short, with and without
#    its yrpc build tag (which run.sh builds with), so that the harness and
#    yrpc's adapter keep compiling and working; the benchmarks themselves
#    are long: run them by hand (bench/run.sh). interop/ runs a Python gRPC client too: Debian's protobuf-compiler,
#    python3-grpcio and python3-protobuf are installed if missing, and
#    YRPC_INTEROP_REQUIRED=1 turns the test's "not installed" skip into a
#    failure.
# 4. Old build: scripts/oldpeer, built from this checkout and from yrpc's
#    first release (commit 62211c3, taken from this clone's history with
#    git archive), serves and calls bench.Hello in each direction between
#    the two versions (and within each, to check the check). Skipped, with
#    a message, in a clone without that commit (a shallow one).
#
# Extra arguments go to every `go test`, e.g. ./scripts/test.sh -run Zk -v
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# shellcheck source=scripts/zk.sh
source scripts/zk.sh

step() { printf '\n==> %s\n' "$*" >&2; }

# old_release is yrpc's first release: the last commit of the first round.
old_release=62211c3ee601bd7358a1686e918dc5a2992631c0
old_dir=

# old_build_interop builds scripts/oldpeer from this checkout and from
# old_release, and has every server of the two call every client: a
# release must keep talking to the one before it, both ways.
old_build_interop() {
	if ! git cat-file -e "$old_release^{commit}" 2>/dev/null; then
		echo "test.sh: commit $old_release (the first release) is not in this clone's history (a shallow clone?): the old-build interop test is skipped" >&2
		return 0
	fi
	old_dir=$(mktemp -d /tmp/yrpc-oldbuild.XXXXXX)
	mkdir -p "$old_dir/src"
	git archive "$old_release" | tar -x -C "$old_dir/src"
	mkdir -p "$old_dir/src/cmd/oldpeer"
	grep -v '^//go:build ignore$' scripts/oldpeer/main.go >"$old_dir/src/cmd/oldpeer/main.go"
	(cd "$old_dir/src" && GOWORK=off go build -o "$old_dir/old" ./cmd/oldpeer)
	GOWORK=off go vet scripts/oldpeer/main.go
	GOWORK=off go build -o "$old_dir/new" scripts/oldpeer/main.go
	local srv cli pid out
	for srv in new old; do
		for cli in new old; do
			rm -f "$old_dir/addr"
			"$old_dir/$srv" serve "$old_dir/addr" &
			pid=$!
			for _ in $(seq 100); do
				[[ -s $old_dir/addr ]] && break
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if ! out=$(timeout 60 "$old_dir/$cli" call "$(cat "$old_dir/addr" 2>/dev/null)" 2>&1); then
				kill "$pid" 2>/dev/null || true
				echo "test.sh: the $cli build calling the $srv build's server failed: $out" >&2
				return 1
			fi
			kill "$pid"
			wait "$pid" 2>/dev/null || true
			echo "server $srv, client $cli: $out" >&2
		done
	done
}

# interop_install installs, from Debian, what the interop module's Python
# client needs when it is missing: protoc and Python's grpcio and protobuf
# (for /usr/bin/python3, which the test tries first).
interop_install() {
	local missing=()
	command -v protoc >/dev/null || missing+=(protobuf-compiler)
	/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null || missing+=(python3-grpcio python3-protobuf)
	((${#missing[@]} == 0)) && return 0
	echo "test.sh: installing Debian's ${missing[*]}" >&2
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null || { echo "test.sh: need root (or sudo) to apt-get install ${missing[*]}" >&2; return 1; }
		sudo=(sudo -n)
	fi
	"${sudo[@]}" apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}" >&2
}

step "gRPC interop: protoc, python3-grpcio"
interop_install
export YRPC_INTEROP_REQUIRED=1

step "ZooKeeper: a standalone server and a three-node ensemble"
zk_install
trap 'zk_stop; zk_ensemble_stop; rm -rf ${old_dir:+"$old_dir"}' EXIT
zk_ensemble_launch # elects its leader while gofmt and vet run
zk_start
export YRPC_ZK YRPC_ZK_ENSEMBLE YRPC_ZK_ENSEMBLE_DIR YRPC_ZK_REQUIRED=1

race=(-race)
[[ ${YRPC_TEST_RACE:-1} == 0 ]] && race=()
# staticcheck's release, pinned; go run builds it once into the build cache.
staticcheck=(go run honnef.co/go/tools/cmd/staticcheck@v0.8.2)

step "modules: go.work and the nested go.mod files agree"
scripts/release.sh check

step "gofmt"
unformatted=$(find . -name '*.go' -not -path '*/testdata/*' -not -path '*/.*' -print0 | xargs -0 -r gofmt -l)
if [[ -n $unformatted ]]; then
	echo "not gofmt-clean:" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "root module: go vet"
GOWORK=off go vet ./...
step "root module: staticcheck"
GOWORK=off "${staticcheck[@]}" ./...
step "root module: 32-bit (GOARCH=386), where int is 32 bits: go vet, and the generator's and wire's tests"
GOWORK=off GOARCH=386 go vet ./...
if GOWORK=off GOARCH=386 go test -run '^$' ./gen >/dev/null 2>&1; then
	GOWORK=off GOARCH=386 go test ./gen/... ./schema/... ./rt/wire/... ./rt/codec/... ./rt/internal/grpcwire/...
else
	echo "test.sh: this machine does not run 386 binaries: the 32-bit tests are skipped" >&2
fi
step "ZooKeeper ensemble ready"
zk_ensemble_ready
step "root module: go test ${race[*]}"
GOWORK=off go test "${race[@]}" -timeout 20m ./... "$@"

step "old build: this checkout and the first release ($old_release) call each other"
old_build_interop

export GOWORK=$root/go.work

while IFS= read -r mod; do
	dir=$(dirname "$mod")
	step "module $dir: go vet, staticcheck"
	(cd "$dir" && go vet ./... && "${staticcheck[@]}" ./...)
	if [[ $dir == ./bench ]]; then
		step "module $dir: go vet, staticcheck and go test -short, with and without -tags yrpc (the benchmarks are not run here)"
		(cd "$dir" && go vet -tags yrpc ./... && "${staticcheck[@]}" -tags yrpc ./... && go test -short ./... "$@" && go test -short -tags yrpc ./... "$@")
		continue
	fi
	step "module $dir: go test"
	(cd "$dir" && go test -timeout 10m ./... "$@")
done < <(find . -name go.mod -not -path ./go.mod -not -path '*/testdata/*' -not -path './.git/*' | sort)

cd "$root"
step "all tests passed"
