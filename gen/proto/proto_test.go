package proto_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/gen/proto"
)

var update = flag.Bool("update", false, "rewrite the committed .proto files")

// TestGolden writes the .proto of each spec and compares it with its
// committed counterpart: the examples' exports that gen/protocompat
// compiles with protoc, and golden/proto for the in-memory test specs and
// the streams of gen/load/testdata/streams.
// -update rewrites them. When /usr/bin/protoc is installed, every output
// must also compile.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		spec       func(t *testing.T) *gen.Spec
	}{
		{"users", "../protocompat/proto/users.proto", fromSchema("../../examples/users/schema")},
		{"hello", "../protocompat/proto/bench.proto", fromSchema("../../examples/hello/schema")},
		{"kitchen", "../../golden/proto/kitchen.proto", func(*testing.T) *gen.Spec { return testspecs.Kitchen() }},
		{"streams", "../../golden/proto/streams.proto", fromSchema("../load/testdata/streams")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := proto.Write(&b, tc.spec(t), proto.Options{}); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(tc.file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(tc.file); err != nil {
				t.Errorf("%v; run go test ./gen/proto -update", err)
			} else if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("%s differs from Write's output; run go test ./gen/proto -update (-committed +written):\n%s", tc.file, diff)
			}
			protoc(t, b.Bytes())
		})
	}
}

func TestGoPackage(t *testing.T) {
	var b bytes.Buffer
	if err := proto.Write(&b, testspecs.Bench(), proto.Options{GoPackage: "example.com/benchpb"}); err != nil {
		t.Fatal(err)
	}
	if want := "\noption go_package = \"example.com/benchpb\";\n"; !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
}

func TestPolicies(t *testing.T) {
	min, max := 0.0, 150.0
	for _, tc := range []struct{ got, want string }{
		{proto.MethodPolicy(&gen.Method{}), ""},
		{proto.ServicePolicy(&gen.Service{}), ""},
		{proto.FieldRules(&gen.Field{}), ""},
		{proto.MethodPolicy(&gen.Method{Idempotent: true, Timeout: 300e6, TryTimeout: 100e6, Retry: &gen.Retry{Tries: 3, Interval: 50e6}}),
			"idempotent timeout=300ms try-timeout=100ms retry=3 tries every 50ms"},
		{proto.MethodPolicy(&gen.Method{FaultMode: "forking", Forks: 2, Mock: &gen.Mock{Action: "fail", Code: "Unavailable"}}),
			`fault=forking(2) mock=on-failure fail Unavailable ""`},
		{proto.FieldRules(&gen.Field{Validate: gen.Validators{NotEmpty: true, Min: &min, Max: &max}}), "not-empty range=[0, 150]"},
		{proto.FieldRules(&gen.Field{Validate: gen.Validators{Max: &max}}), "max=150"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestShadowedNames checks that a type whose name protoc would resolve to
// something else first is written fully qualified: a method's request
// named like a method of the service, and a field's message named like a
// map entry of its message. protoc compiles the output.
func TestShadowedNames(t *testing.T) {
	spec := &gen.Spec{Package: "p", Messages: []*gen.Message{
		{Name: "M", Fields: []*gen.Field{
			{Name: "labels", Number: 1, Kind: gen.KindString, MapKey: gen.KindString},
			{Name: "entry", Number: 2, Kind: gen.KindMessage, Message: "LabelsEntry"},
			{Name: "M", Number: 3, Kind: gen.KindMessage, Message: "M"},
		}},
		{Name: "LabelsEntry"},
	}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
		{Name: "M", Request: "M", Response: "LabelsEntry"},
		{Name: "N", Kind: gen.MethodBidiStream, Request: "M", Response: "M"},
	}}}}
	if ps := gen.Check(spec); ps != nil {
		t.Fatal(ps)
	}
	var b bytes.Buffer
	if err := proto.Write(&b, spec, proto.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rpc M(.p.M) returns (LabelsEntry);", "rpc N(stream .p.M) returns (stream .p.M);",
		".p.LabelsEntry entry = 2;", "  M M = 3;",
	} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	protoc(t, b.Bytes())
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteError(t *testing.T) {
	if err := proto.Write(errWriter{}, testspecs.Bench(), proto.Options{}); err != os.ErrClosed {
		t.Errorf("Write = %v, want the writer's error", err)
	}
}

// fromSchema loads an example schema the way yrpcc proto does.
func fromSchema(dir string) func(t *testing.T) *gen.Spec {
	return func(t *testing.T) *gen.Spec {
		spec, err := load.Load(context.Background(), dir, load.Options{})
		if err != nil {
			t.Fatalf("load %s: %v", dir, err)
		}
		return spec
	}
}

// protoc compiles src with /usr/bin/protoc, if it is installed.
func protoc(t *testing.T, src []byte) {
	t.Helper()
	const bin = "/usr/bin/protoc"
	if _, err := os.Stat(bin); err != nil {
		t.Logf("%s is not installed; the output was not compiled", bin)
		return
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.proto"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-I" + dir}
	if _, err := os.Stat("/usr/include/google/protobuf/timestamp.proto"); err == nil {
		args = append(args, "-I/usr/include")
	}
	args = append(args, "--descriptor_set_out="+filepath.Join(dir, "out.pb"), filepath.Join(dir, "x.proto"))
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
}
