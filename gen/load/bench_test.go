package load_test

import (
	"context"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// BenchmarkLoadUsers measures a warm load of the users example: go list,
// building and running the temporary program, checking the spec. Run it
// with -benchtime=5x; one op takes about a second.
func BenchmarkLoadUsers(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := load.Load(ctx, "../../examples/users/schema", load.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckUsers measures gen.Check on the users example's spec.
func BenchmarkCheckUsers(b *testing.B) {
	spec, err := load.Load(context.Background(), "../../examples/users/schema", load.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ps := gen.Check(spec); ps != nil {
			b.Fatal(ps)
		}
	}
}
