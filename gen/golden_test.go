package gen_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
	"github.com/yrpc/yrpc/gen/load"
)

var update = flag.Bool("update", false, "rewrite the golden files and the committed generated code")

// generated is one generator input and the directory where its output is
// committed as compiled Go code: the golden files are that code.
type generated struct {
	name string
	dir  string // package directory, relative to gen/
	pkg  string // Go package name
	spec func(t *testing.T) *gen.Spec
}

func fromSpec(s func() *gen.Spec) func(*testing.T) *gen.Spec {
	return func(*testing.T) *gen.Spec { return s() }
}

// fromSchema loads an example schema the way yrpcc generate does.
func fromSchema(dir string) func(*testing.T) *gen.Spec {
	return func(t *testing.T) *gen.Spec {
		spec, err := load.Load(context.Background(), dir, load.Options{})
		if err != nil {
			t.Fatalf("load %s: %v", dir, err)
		}
		return spec
	}
}

var cases = []generated{
	{name: "kitchen", dir: "internal/testspecs/kitchenrpc", pkg: "kitchenrpc", spec: fromSpec(testspecs.Kitchen)},
	{name: "streams", dir: "internal/testspecs/streamsrpc", pkg: "streamsrpc", spec: fromSpec(testspecs.Streams)},
	{name: "bench", dir: "internal/testspecs/benchrpc", pkg: "benchrpc", spec: fromSpec(testspecs.Bench)},
	{name: "greeter", dir: "../examples/greeter/greeterrpc", pkg: "greeterrpc", spec: fromSchema("../examples/greeter/schema")},
	{name: "users", dir: "../examples/users/userrpc", pkg: "userrpc", spec: fromSchema("../examples/users/schema")},
	{name: "hello", dir: "../examples/hello/hellorpc", pkg: "hellorpc", spec: fromSchema("../examples/hello/schema")},
	{name: "feed", dir: "../examples/feed/feedrpc", pkg: "feedrpc", spec: fromSchema("../examples/feed/schema")},
	{name: "tour", dir: "../examples/tour/tourrpc", pkg: "tourrpc", spec: fromSchema("../examples/tour/schema")},
	{name: "evolution-v1", dir: "../examples/evolution/v1/catalogrpc", pkg: "catalogrpc", spec: fromSchema("../examples/evolution/v1/schema")},
	{name: "evolution-v2", dir: "../examples/evolution/v2/catalogrpc", pkg: "catalogrpc", spec: fromSchema("../examples/evolution/v2/schema")},
}

// TestGolden generates every case and compares the output with the
// generated code committed in the repository (the examples' packages and
// the testspecs' kitchenrpc and benchrpc), which is therefore what `yrpcc
// generate` writes; -update rewrites it.
func TestGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			importPath := "github.com/yrpc/yrpc/" + filepath.ToSlash(filepath.Clean(filepath.Join("gen", c.dir)))
			spec := c.spec(t)
			files, err := gen.Generate(spec, gen.Config{Package: c.pkg, ImportPath: importPath})
			if err != nil {
				t.Fatal(err)
			}
			again, err := gen.Generate(spec, gen.Config{Package: c.pkg, ImportPath: importPath})
			if err != nil || !cmp.Equal(files, again) {
				t.Fatalf("a second Generate gives other output (err %v)", err)
			}
			compareDir(t, c.dir, files)
		})
	}
}

// compareDir compares files with the files of dir whose names end in
// ".yrpc.go", or rewrites them with -update.
func compareDir(t *testing.T, dir string, files []gen.File) {
	t.Helper()
	want := map[string][]byte{}
	for _, f := range files {
		want[f.Name] = f.Content
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".yrpc.go") {
			continue
		}
		have[name] = true
		if _, ok := want[name]; !ok {
			if *update {
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s: stale file %s; run go test ./gen -update", dir, name)
		}
	}
	for name, content := range want {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: missing; run go test ./gen -update", path)
			continue
		}
		if diff := cmp.Diff(string(got), string(content)); diff != "" {
			t.Errorf("%s differs from the generator's output; run go test ./gen -update (-committed +generated):\n%s", path, diff)
		}
	}
}
