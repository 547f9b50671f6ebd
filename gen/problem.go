package gen

import (
	"fmt"
	"strings"
)

// Problem is one mistake in a spec, placed as precisely as the spec
// allows: Pos is the position of the field or method involved (else of the
// type), exactly as the spec holds it, so that gen/load can map it to the
// schema's file:line. The zero value is an empty problem.
type Problem struct {
	Pos    string // the spec's position, e.g. "users.go:12"; "" when the spec has none
	Type   string // the message or service involved; "" for a spec-wide problem
	Field  string // the schema name of the field involved, if any
	Method string // the name of the method involved, if any
	Msg    string // what is wrong
}

// String formats p as `pos: Type: field "name": msg` (or `method Get:`),
// leaving out the parts p does not have.
func (p Problem) String() string {
	var b strings.Builder
	for _, s := range []string{p.Pos, p.Type} {
		if s != "" {
			b.WriteString(s)
			b.WriteString(": ")
		}
	}
	switch {
	case p.Field != "":
		fmt.Fprintf(&b, "field %q: ", p.Field)
	case p.Method != "":
		fmt.Fprintf(&b, "method %s: ", p.Method)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error lists the problems of a spec or schema; it never holds zero
// problems. Generate returns it with Pkg "gen", and gen/load (as
// load.Error) with Pkg "load". errors.As finds it. The zero Pkg means
// "gen".
type Error struct {
	Pkg      string // the reporting package, which prefixes the message
	Problems []Problem
}

// Error returns "gen: <problem>" for one problem, else a header line and
// one indented line per problem.
func (e *Error) Error() string {
	pkg := e.Pkg
	if pkg == "" {
		pkg = "gen"
	}
	if len(e.Problems) == 1 {
		return pkg + ": " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: schema has %d problems:", pkg, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

// Check checks spec and returns every problem that Generate would report
// for it (nil when there is none): wire numbers, names that clash in Go or
// in file names, references, enums, validators, policies, hash keys, mock
// values and method IDs. It is the one check of a spec: gen/load runs it
// on the specs it loads and Generate on the specs it renders. A spec
// without Package is a problem here, while Generate defaults it to
// Config.Package.
func Check(spec *Spec) []Problem {
	if spec == nil {
		return []Problem{{Msg: "spec is nil"}}
	}
	_, ps := check(spec, spec.Package)
	return ps
}
