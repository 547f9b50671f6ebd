package proto_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/gen/names"
	"github.com/yrpc/yrpc/gen/proto"
	"github.com/yrpc/yrpc/rt/codec"
)

var update = flag.Bool("update", false, "rewrite the committed .proto files")

// TestGolden writes the .proto of each spec and compares it with its
// committed counterpart: the examples' exports that gen/protocompat
// compiles with protoc, and golden/proto for the in-memory test specs, the
// streams of gen/load/testdata/streams and the two versions of
// examples/evolution (v2 keeps a renamed message's protobuf name).
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
		{"evolution-v1", "../../golden/proto/evolution_v1.proto", fromSchema("../../examples/evolution/v1/schema")},
		{"evolution-v2", "../../golden/proto/evolution_v2.proto", fromSchema("../../examples/evolution/v2/schema")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec(t)
			var b bytes.Buffer
			if err := proto.Write(&b, spec, proto.Options{}); err != nil {
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
			compareDescriptor(t, spec, protoc(t, spec.Package, b.Bytes()))
		})
	}
}

// compareDescriptor checks that gen.FileDescriptor of spec, which
// generated code embeds, is byte for byte the FileDescriptorProto that
// protoc made from proto.Write's output (nil when protoc is missing).
func compareDescriptor(t *testing.T, spec *gen.Spec, fromProtoc []byte) {
	t.Helper()
	if fromProtoc == nil {
		return
	}
	desc, err := gen.FileDescriptor(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the descriptor of %s: %d bytes", names.ProtoFile(spec.Package), len(desc))
	if !bytes.Equal(desc, fromProtoc) {
		t.Errorf("gen.FileDescriptor differs from protoc's descriptor (-protoc +gen):\n%s",
			cmp.Diff(strings.Split(decodeDescriptor(t, fromProtoc), "\n"), strings.Split(decodeDescriptor(t, desc), "\n")))
	}
}

// decodeDescriptor prints a FileDescriptorProto as protoc's text format,
// or as protoc --decode_raw prints it when it does not decode.
func decodeDescriptor(t *testing.T, desc []byte) string {
	t.Helper()
	for _, args := range [][]string{{"-I/usr/include", "--decode=google.protobuf.FileDescriptorProto", "google/protobuf/descriptor.proto"}, {"--decode_raw"}} {
		cmd := exec.Command(protocBin, args...)
		cmd.Stdin = bytes.NewReader(desc)
		if out, err := cmd.Output(); err == nil {
			return string(out)
		}
	}
	return fmt.Sprintf("%q", desc)
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
	maxU64, minI64, half := float64(math.MaxUint64), float64(math.MinInt64), 0.5
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
		// Bounds of 64-bit kinds in digits, as the generated Validate's
		// errors give them (not 1.8446744073709552e+19).
		{proto.FieldRules(&gen.Field{Kind: gen.KindUint64, Validate: gen.Validators{Min: &min, Max: &maxU64}}), "range=[0, 18446744073709551615]"},
		{proto.FieldRules(&gen.Field{Kind: gen.KindSint64, Validate: gen.Validators{Min: &minI64}}), "min=-9223372036854775808"},
		{proto.FieldRules(&gen.Field{Kind: gen.KindFloat32, Validate: gen.Validators{Max: &half}}), "max=0.5"},
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
	compareDescriptor(t, spec, protoc(t, spec.Package, b.Bytes()))
}

// TestProtoNames checks that a message with a protobuf name of its own
// (schema.ProtoName) is declared and referenced by it: by fields, map
// values, methods (qualified where a method of the same name shadows it)
// and its own map entries; and that protoc's descriptor of the output is
// gen.FileDescriptor's.
func TestProtoNames(t *testing.T) {
	spec := &gen.Spec{Package: "p", Messages: []*gen.Message{
		{Name: "Product", ProtoName: "Item", Fields: []*gen.Field{
			{Name: "parts", Number: 1, Kind: gen.KindMessage, Message: "Product", List: true},
			{Name: "by_name", Number: 2, Kind: gen.KindMessage, Message: "Product", MapKey: gen.KindString},
		}},
		{Name: "Item", ProtoName: "Row", Fields: []*gen.Field{
			{Name: "product", Number: 1, Kind: gen.KindMessage, Message: "Product"},
		}},
	}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
		{Name: "Item", Request: "Product", Response: "Item"},
		{Name: "Get", Request: "Item", Response: "Product"},
	}}}}
	if ps := gen.Check(spec); ps != nil {
		t.Fatal(ps)
	}
	var b bytes.Buffer
	if err := proto.Write(&b, spec, proto.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rpc Item(.p.Item) returns (Row);", "rpc Get(Row) returns (.p.Item);",
		"// yrpc: go-type=Product\nmessage Item {\n  repeated Item parts = 1;\n  map<string, Item> by_name = 2;\n}",
		"// yrpc: go-type=Item\nmessage Row {\n  Item product = 1;\n}",
	} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	if bytes.Contains(b.Bytes(), []byte("Product")) != bytes.Contains(b.Bytes(), []byte("go-type=Product")) || bytes.Count(b.Bytes(), []byte("Product")) != 1 {
		t.Errorf("the Go name Product appears in the output other than as go-type:\n%s", b.String())
	}
	compareDescriptor(t, spec, protoc(t, spec.Package, b.Bytes()))
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

// protocBin is Debian's protoc (package protobuf-compiler).
const protocBin = "/usr/bin/protoc"

// protoc compiles src, saved as the file of protobuf package pkg
// (names.ProtoFile), with protoc if it is installed, and returns the
// FileDescriptorProto that protoc made of it; nil, with the reason
// logged, when protoc is missing.
func protoc(t *testing.T, pkg string, src []byte) []byte {
	t.Helper()
	if _, err := os.Stat(protocBin); err != nil {
		t.Logf("%s is not installed (Debian: apt-get install protobuf-compiler); the output was not compiled", protocBin)
		return nil
	}
	dir := t.TempDir()
	name := names.ProtoFile(pkg)
	if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-I" + dir}
	if _, err := os.Stat("/usr/include/google/protobuf/timestamp.proto"); err == nil {
		args = append(args, "-I/usr/include")
	}
	set := filepath.Join(dir, "out.pb")
	args = append(args, "--descriptor_set_out="+set, filepath.Join(dir, name))
	if out, err := exec.Command(protocBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	data, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	// A FileDescriptorSet of one file: field 1 holding it.
	tag, n := codec.ConsumeVarint(data)
	if n <= 0 || tag != codec.Tag(1, codec.BytesType) {
		t.Fatalf("protoc wrote no FileDescriptorSet: % x", data)
	}
	file, m := codec.ConsumeBytes(data[n:])
	if m <= 0 || n+m != len(data) {
		t.Fatalf("protoc wrote a FileDescriptorSet of more than one file: % x", data)
	}
	return file
}
