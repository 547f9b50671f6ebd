package gen_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
)

// TestGenerateOutput checks every generated file of the test specs: sorted
// names, the header and version guard, and imports of the standard
// library, rt and rt/codec only.
func TestGenerateOutput(t *testing.T) {
	for name, spec := range map[string]func() *gen.Spec{"kitchen": testspecs.Kitchen, "streams": testspecs.Streams} {
		t.Run(name, func(t *testing.T) {
			files, err := gen.Generate(spec(), gen.Config{Package: name + "rpc"})
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range files {
				if i > 0 && files[i-1].Name >= f.Name {
					t.Errorf("files not sorted: %s before %s", files[i-1].Name, f.Name)
				}
				checkFile(t, f)
			}
		})
	}
}

func checkFile(t *testing.T, f gen.File) {
	t.Helper()
	if !strings.HasSuffix(f.Name, ".yrpc.go") {
		t.Errorf("file %s does not end in .yrpc.go", f.Name)
	}
	if !bytes.HasPrefix(f.Content, []byte("// "+gen.Header+"\n")) {
		t.Errorf("%s lacks the header", f.Name)
	}
	if !bytes.Contains(f.Content, []byte("const _ = rt.SupportPackageIsVersion1")) {
		t.Errorf("%s lacks the version guard", f.Name)
	}
	file, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Content, 0)
	if err != nil {
		t.Errorf("%s does not parse: %v", f.Name, err)
		return
	}
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		switch {
		case path == "reflect" || path == "unsafe":
			t.Errorf("%s imports %s", f.Name, path)
		case path == "github.com/yrpc/yrpc/rt", path == "github.com/yrpc/yrpc/rt/codec":
		case strings.Contains(strings.Split(path, "/")[0], "."):
			t.Errorf("%s imports %s: generated code imports only the standard library, rt and rt/codec", f.Name, path)
		}
	}
}

func TestMethodID(t *testing.T) {
	// FNV-1a 32 of the full name; "a" is a published test vector.
	for name, want := range map[string]uint32{"a": 0xe40c292c, "bench.Hello/Say": 0xfe06e7b7} {
		if got := gen.MethodID(name); got != want {
			t.Errorf("MethodID(%q) = %#x, want %#x", name, got, want)
		}
	}
	if gen.MethodID("p.S/MMRaNcZK") != gen.MethodID("p.S/MBuCppvv") {
		t.Fatal("the known collision no longer collides")
	}
}

// TestGenerateConfig checks what Generate rejects before it checks the
// spec (TestCheck covers the spec's problems).
func TestGenerateConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *gen.Spec
		cfg  gen.Config
		want string
	}{
		{"nil spec", nil, gen.Config{Package: "p"}, "gen: nil spec"},
		{"no package", &gen.Spec{}, gen.Config{}, "gen: Config.Package is required"},
		{"bad package", &gen.Spec{}, gen.Config{Package: "a-b"}, `gen: package name "a-b" is not a Go identifier`},
		{"keyword package", &gen.Spec{}, gen.Config{Package: "func"}, `gen: package name "func" is not a Go identifier`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := gen.Generate(tc.spec, tc.cfg); err == nil || err.Error() != tc.want {
				t.Errorf("Generate = %v, want %q", err, tc.want)
			}
		})
	}
}
