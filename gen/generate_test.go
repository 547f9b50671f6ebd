package gen_test

import (
	"bytes"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"slices"
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

// TestGenerateFileNames generates messages and a package whose snake_case
// names end in a GOOS, a GOARCH or "test": message AgentWindows was written
// to agent_windows.yrpc.go, which the go command builds only on Windows,
// so the package did not compile elsewhere ("undefined: AgentWindows").
func TestGenerateFileNames(t *testing.T) {
	s := validSpec()
	s.Package = "shop_js"
	for _, name := range []string{"AgentWindows", "BuildArm64", "LinuxAmd64", "AppLinuxTest", "LoadTest"} {
		s.Messages = append(s.Messages, &gen.Message{Name: name, Fields: []*gen.Field{{Name: "x", Number: 1, Kind: gen.KindInt32}}})
	}
	files, err := gen.Generate(s, gen.Config{Package: "shoprpc"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Name)
		checkFile(t, f)
	}
	for _, want := range []string{"agent_windows_message.yrpc.go", "build_arm64_message.yrpc.go", "load_test_message.yrpc.go", "shop_js_proto.proto.yrpc.go", "user.yrpc.go", "users_service.yrpc.go"} {
		if !slices.Contains(got, want) {
			t.Errorf("no file %s in %v", want, got)
		}
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
	// The go command builds every file on every platform: no file name
	// carries a GOOS or GOARCH constraint, and none is a test file.
	for _, platform := range [][2]string{{"linux", "amd64"}, {"windows", "arm64"}, {"darwin", "arm64"}, {"js", "wasm"}, {"plan9", "386"}} {
		ctxt := build.Default
		ctxt.GOOS, ctxt.GOARCH = platform[0], platform[1]
		ctxt.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.Content)), nil }
		if ok, err := ctxt.MatchFile(".", f.Name); !ok || err != nil {
			t.Errorf("%s is not built on %s/%s (%v)", f.Name, platform[0], platform[1], err)
		}
	}
	if strings.HasSuffix(f.Name, "_test.go") {
		t.Errorf("%s is a test file", f.Name)
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

// TestNoVacuousBounds: a range bound that every value of the field's kind
// meets generates no comparison, which could never be true (kitchen's
// Checked: serial is a uint64 in [0, math.MaxUint64], offset an sfixed64
// in [math.MinInt64, math.MaxInt64]; age-like bounds such as Range(0, 150)
// on an unsigned field keep only their upper check).
func TestNoVacuousBounds(t *testing.T) {
	files, err := gen.Generate(testspecs.Kitchen(), gen.Config{Package: "kitchenrpc"})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f gen.File) bool { return f.Name == "checked.yrpc.go" })
	if i < 0 {
		t.Fatal("no checked.yrpc.go")
	}
	src := string(files[i].Content)
	for _, cmp := range []string{"m.Serial <", "m.Serial >", "m.Offset <", "m.Offset >"} {
		if strings.Contains(src, cmp) {
			t.Errorf("checked.yrpc.go compares %s a bound that every value meets", cmp)
		}
	}
}
