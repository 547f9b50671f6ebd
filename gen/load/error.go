package load

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/yrpc/yrpc/gen"
)

// Problem is one mistake in a schema: the generator's check problems and
// the loader's own (syntax, compiler and builder errors, panics), with Pos
// as "dir/file.go:12" relative to Options.Dir (or "file.go:12:5" from the
// compiler), and "" when unknown.
type Problem = gen.Problem

// Error lists every problem found in a schema, with Pkg "load". Load
// returns it (never with zero problems); errors.As finds it.
type Error = gen.Error

// errorOf returns nil or an *Error holding ps sorted by position.
func errorOf(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		af, al := splitPos(a.Pos)
		bf, bl := splitPos(b.Pos)
		if c := cmp.Compare(af, bf); c != 0 {
			return c
		}
		return cmp.Compare(al, bl)
	})
	return &Error{Pkg: "load", Problems: ps}
}

// splitPos splits "file.go:12[:5]" into the file and the line.
func splitPos(pos string) (string, int) {
	file, rest, ok := strings.Cut(pos, ".go:")
	if !ok {
		return pos, 0
	}
	line, _, _ := strings.Cut(rest, ":")
	n, _ := strconv.Atoi(line)
	return file + ".go", n
}
