#!/usr/bin/env bash
# release.sh: versions the root module and the nested modules together.
#
# The nested modules (bench, contrib/otel, contrib/prometheus,
# gen/protocompat, interop: every go.mod below the root) require a released version
# of the root module, github.com/yrpc/yrpc vX.Y.Z, never v0.0.0 with a
# replace, so that `go get github.com/yrpc/yrpc/contrib/prometheus` works
# once published. Local development goes through ./go.work, which uses every
# module and replaces that one root version with ./ (a workspace alone does
# not stand in for a version that is not published yet).
#
#   scripts/release.sh check          go.work uses every module, and every nested
#                                     go.mod requires the root at the version
#                                     go.work replaces (scripts/test.sh runs this)
#   scripts/release.sh set vX.Y.Z     make every nested go.mod require the root
#                                     at vX.Y.Z and go.work replace vX.Y.Z
#   scripts/release.sh tags vX.Y.Z    print the git commands that tag HEAD: vX.Y.Z
#                                     for the root, DIR/vX.Y.Z for each nested
#                                     module (e.g. contrib/prometheus/vX.Y.Z)
#
# A release: `scripts/release.sh set vX.Y.Z`, ./scripts/test.sh, commit,
# `scripts/release.sh tags vX.Y.Z | sh`, push the commit and the tags. All
# tags name the same commit, whose nested go.mod files require the root at
# that commit's own tag. After the module proxy serves vX.Y.Z, `GOWORK=off
# go mod tidy` in a nested module adds the root's go.sum lines (users do
# not need them: a consumer's own go.sum is what counts).
set -euo pipefail
cd "$(dirname "$0")/.."

root_path=github.com/yrpc/yrpc

nested() {
	find . -name go.mod -not -path ./go.mod -not -path '*/testdata/*' -not -path './.git/*' -printf '%h\n' | sed 's|^\./||' | sort
}

# required DIR prints the version of the root module that DIR's go.mod
# requires (empty when none).
required() {
	(cd "$1" && GOWORK=off go mod edit -print) |
		awk -v p="$root_path" '$1 == "replace" { next } { for (i = 1; i < NF; i++) if ($i == p && $(i+1) ~ /^v/) { print $(i+1); exit } }'
}

# workspace_version prints the root version that go.work replaces with ./.
workspace_version() {
	GOWORK=off go work edit -print go.work | awk -v p="$root_path" '$1 == "replace" && $2 == p && $4 == "=>" { print $3 }'
}

check_version() {
	[[ $1 =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "release.sh: $1 is not a version like v1.2.3" >&2; exit 2; }
}

cmd=${1:-}
case $cmd in
check)
	[[ -f go.work ]] || { echo "release.sh: no go.work at the root" >&2; exit 1; }
	want=$(workspace_version)
	[[ -n $want ]] || { echo "release.sh: go.work does not replace a version of $root_path with ./" >&2; exit 1; }
	uses=$(GOWORK=off go work edit -print go.work | awk '$1 == "use" && $2 != "(" { print $2 } $1 == "use" && $2 == "(" { in_use = 1; next } in_use && $1 == ")" { in_use = 0 } in_use { print $1 }' | sed 's|^\./||; s|/$||')
	bad=0
	grep -qx '\.' <<<"$uses" || { echo "release.sh: go.work does not use the root module (.)" >&2; bad=1; }
	for dir in $(nested); do
		grep -qx "$dir" <<<"$uses" || { echo "release.sh: go.work does not use ./$dir" >&2; bad=1; }
		got=$(required "$dir")
		[[ $got == "$want" ]] || { echo "release.sh: $dir/go.mod requires $root_path ${got:-(nothing)}, go.work replaces $want" >&2; bad=1; }
		if (cd "$dir" && GOWORK=off go mod edit -print) | grep -q "^replace.*$root_path "; then
			echo "release.sh: $dir/go.mod replaces $root_path: use go.work instead" >&2
			bad=1
		fi
	done
	exit $bad
	;;
set)
	v=${2:-}
	check_version "$v"
	old=$(workspace_version)
	for dir in $(nested); do
		(cd "$dir" && GOWORK=off go mod edit -require "$root_path@$v")
	done
	[[ -n $old ]] && GOWORK=off go work edit -dropreplace "$root_path@$old" go.work
	GOWORK=off go work edit -replace "$root_path@$v=./" go.work
	echo "nested modules now require $root_path $v; go.work replaces it with ./" >&2
	;;
tags)
	v=${2:-}
	check_version "$v"
	echo "git tag -a $v -m 'yrpc $v'"
	for dir in $(nested); do
		echo "git tag -a $dir/$v -m 'yrpc $dir $v'"
	done
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
