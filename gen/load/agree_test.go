package load

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/yrpc/yrpc/gen"
)

// TestLoadAgreesWithGenerate checks, on the schemas under testdata that
// run and on the users example, that the loader reports exactly the
// problems of the spec that Generate reports, with the positions mapped to
// the schema's files: each of Generate's problems is in Load's list (or
// stands on the line of a builder error, which says the same first), and
// each of Load's problems that did not come from the source or the
// builders is one of Generate's.
func TestLoadAgreesWithGenerate(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		clean bool // the spec passes gen.Check (the source or the builders may still fail)
	}{
		{"./testdata/numbers", false}, {"./testdata/clash", false}, {"./testdata/refs", false},
		{"./testdata/methods", false}, {"./testdata/enums", false}, {"./testdata/builders", false},
		{"./testdata/panics", true}, {"../../examples/users/schema", true},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			pkg, raw, spec, err := describe(context.Background(), tc.dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			display := func(pos string) string { return displayPos(pkg.cwd, pkg.dir, pos) }
			var generated []Problem
			if _, err := gen.Generate(spec, gen.Config{Package: "x"}); err != nil {
				var gerr *gen.Error
				if !errors.As(err, &gerr) {
					t.Fatal(err)
				}
				for _, p := range gerr.Problems {
					p.Pos = display(p.Pos)
					generated = append(generated, p)
				}
			}
			if tc.clean != (len(generated) == 0) {
				t.Fatalf("Generate reports %d problems", len(generated))
			}
			// What the source and the builders report, and the builders' lines.
			own, builderLines := map[Problem]bool{}, map[string]bool{}
			for _, p := range pkg.problems {
				own[p] = true
			}
			for _, p := range raw.Problems {
				pos := display(relPos(pkg.dir, p.Pos))
				own[Problem{Pos: pos, Type: p.Type, Msg: p.Msg}] = true
				builderLines[pos] = true
			}
			loaded := problems(pkg, raw, spec)
			for _, p := range loaded {
				if !own[p] && !slices.Contains(generated, p) {
					t.Errorf("Load reports a problem that Generate does not: %s", p)
				}
			}
			for _, p := range generated {
				if !slices.Contains(loaded, p) && !builderLines[p.Pos] {
					t.Errorf("Generate reports a problem that Load does not: %s", p)
				}
			}
		})
	}
}
