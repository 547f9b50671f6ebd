package load

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Problem is one mistake in a schema. The zero value is an empty problem.
type Problem struct {
	Pos  string // "dir/file.go:12" (or "file.go:12:5" from the compiler); "" when unknown
	Type string // the schema type involved, e.g. "User"; "" for package-wide problems
	Msg  string // what is wrong, naming the call or field
}

// String formats p as "pos: Type: msg".
func (p Problem) String() string {
	var b strings.Builder
	if p.Pos != "" {
		b.WriteString(p.Pos)
		b.WriteString(": ")
	}
	if p.Type != "" {
		b.WriteString(p.Type)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error lists every problem found in a schema. Load and Check return it
// (never with zero problems); errors.As finds it.
type Error struct {
	Problems []Problem
}

// Error returns "load: <problem>" for one problem, else a header line and
// one indented line per problem.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "load: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "load: schema has %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

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
	return &Error{Problems: ps}
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
