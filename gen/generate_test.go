package gen_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
)

func TestGenerateOutput(t *testing.T) {
	files, err := gen.Generate(testspecs.Kitchen(), gen.Config{Package: "kitchenrpc"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if i > 0 && files[i-1].Name >= f.Name {
			t.Errorf("files not sorted: %s before %s", files[i-1].Name, f.Name)
		}
		if !strings.HasSuffix(f.Name, ".yrpc.go") {
			t.Errorf("file %s does not end in .yrpc.go", f.Name)
		}
		if !bytes.HasPrefix(f.Content, []byte("// "+gen.Header+"\n")) {
			t.Errorf("%s lacks the header", f.Name)
		}
		if !bytes.Contains(f.Content, []byte("const _ = rt.SupportPackageIsVersion1")) {
			t.Errorf("%s lacks the version guard", f.Name)
		}
		if bytes.Contains(f.Content, []byte(`"reflect"`)) {
			t.Errorf("%s imports reflect", f.Name)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Content, 0); err != nil {
			t.Errorf("%s does not parse: %v", f.Name, err)
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
