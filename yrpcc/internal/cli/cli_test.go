package cli

import (
	"bytes"
	"context"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

const (
	usersSchema   = "../../../examples/users/schema"
	greeterSchema = "../../../examples/greeter/schema"
)

// run runs yrpcc with args in-process.
func run(t *testing.T, e *Env, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if e == nil {
		e = New(nil, nil)
	}
	e.Stdout, e.Stderr = &out, &errOut
	code = e.Run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"help"},
		{"init", "--help"}, {"generate", "--help"}, {"describe", "-h"},
		{"proto", "--help"}, {"version", "--help"}, {"ctl", "--help"},
	} {
		code, out, errOut := run(t, nil, args...)
		if code != 0 || !strings.Contains(out, "yrpcc") || errOut != "" || strings.Count(strings.ToLower(out), "usage") != 1 {
			t.Errorf("yrpcc %v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestHelpCommand checks that yrpcc help CMD prints CMD's usage, as
// yrpcc CMD --help does, for every command.
func TestHelpCommand(t *testing.T) {
	_, top, _ := run(t, nil, "help")
	for _, c := range commands() {
		code, out, errOut := run(t, nil, "help", c.name)
		_, want, _ := run(t, nil, c.name, "--help")
		if code != 0 || errOut != "" || out != want || out == top || !strings.Contains(strings.ToLower(out), "usage: yrpcc "+c.name) {
			t.Errorf("yrpcc help %s: code %d, stdout %q, stderr %q; want %q", c.name, code, out, errOut, want)
		}
	}
}

// TestMainDoc checks that go doc of the yrpcc command shows every command.
func TestMainDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	for _, c := range commands() {
		if !strings.Contains(doc, "\tyrpcc "+c.name+" ") && !strings.Contains(doc, "\tyrpcc "+c.name+"\n") {
			t.Errorf("the doc of yrpcc/main.go does not show the command %s:\n%s", c.name, doc)
		}
	}
	if !strings.Contains(doc, "go get -tool github.com/yrpc/yrpc/yrpcc") {
		t.Error("the doc of yrpcc/main.go does not say how to add yrpcc as a tool")
	}
}

// TestNotice checks that a slow load says what it is doing on stderr, and
// a fast one says nothing.
func TestNotice(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "schema"), 0o755); err != nil {
		t.Fatal(err)
	}
	said := make(chan struct{})
	stderr := &signalWriter{said: said}
	e := &Env{
		Dir:    root,
		Notice: time.Nanosecond,
		Load: func(context.Context, string, load.Options) (*gen.Spec, error) {
			select { // a cold load: it ends only after the notice
			case <-said:
			case <-time.After(10 * time.Second):
				t.Error("no notice within 10s")
			}
			return fakeSpec, nil
		},
		Generate: func(*gen.Spec, gen.Config) ([]gen.File, error) { return nil, nil },
	}
	e.Stdout, e.Stderr = io.Discard, stderr
	if code := e.Run(context.Background(), []string{"generate", "--target", "out", "./schema"}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || lines[0] != "yrpcc generate: loading schema ./schema (the first run builds it, this can take a minute)..." ||
		!strings.HasPrefix(lines[1], "yrpcc generate: loading schema ./schema took ") {
		t.Errorf("stderr:\n%s", stderr.String())
	}

	var quiet bytes.Buffer
	e.Notice = time.Hour
	e.Load = func(context.Context, string, load.Options) (*gen.Spec, error) { return fakeSpec, nil }
	e.Stderr = &quiet
	if code := e.Run(context.Background(), []string{"generate", "--target", "out", "./schema"}); code != 0 || quiet.Len() != 0 {
		t.Errorf("a fast load: exit %d, stderr %q", code, quiet.String())
	}
}

// signalWriter is a buffer that closes said at its first write.
type signalWriter struct {
	bytes.Buffer
	said chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if w.Len() == 0 {
		defer close(w.said)
	}
	return w.Buffer.Write(p)
}

// TestBadUsage checks that bad input exits non-zero with one line on
// stderr.
func TestBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"generate"}, 2, "want one schema package, got 0 arguments"},
		{[]string{"generate", "a", "b"}, 2, "got 2 arguments"},
		{[]string{"generate", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"generate", "--package", "no-dash", usersSchema}, 2, `--package "no-dash" is not a Go identifier`},
		{[]string{"generate", "example.com/some/schema"}, 2, "--target is required"},
		{[]string{"describe", "./no/such/dir"}, 1, "yrpcc describe: load: "},
		{[]string{"generate", "./no/such/dir"}, 1, `yrpcc generate: schema directory "./no/such/dir" does not exist`},
		{[]string{"init"}, 2, "give the names"},
		{[]string{"init", "lower"}, 2, `"lower" is not an exported Go identifier`},
		{[]string{"version", "extra"}, 2, "unexpected arguments"},
		{[]string{"ctl", "frobnicate"}, 2, `yrpcc ctl: unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, 2, `yrpcc help: unknown command "frobnicate"`},
		{[]string{"help", "init", "generate"}, 2, `yrpcc help: want one command`},
		{[]string{"ctl", "-zk", "127.0.0.1:1", "ls"}, 1, "yrpcc ctl: connect to ZooKeeper 127.0.0.1:1"},
	} {
		code, _, errOut := run(t, nil, tc.args...)
		if code != tc.code {
			t.Errorf("yrpcc %v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
		if tc.code == 2 && len(tc.args) == 0 {
			continue // the usage text
		}
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("yrpcc %v: stderr %q, want one line containing %q", tc.args, errOut, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "yrpcc "+Version) {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestDescribe(t *testing.T) {
	code, out, errOut := run(t, nil, "describe", usersSchema)
	if code != 0 {
		t.Fatalf("describe: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"service Users  group=HK  version=1.2.0  rate-limit=300/s burst 500  breaker=50% of >=20 calls, open 5s  balance=consistent_hash",
		"idempotent timeout=1s try-timeout=300ms retry=3 tries every 50ms x2 max 1s ±20% hash-key=id",
		"mock=on-failure empty",
		`mock=on-failure value {"id":0,"name":"guest"}`,
		`mock=force fail Unavailable "deletes are disabled"`,
		"oneway  TouchUser",
		"fault=failsafe",
		"idempotent fault=forking(2)",
		"fault=failover hedge=50ms",
		"message User  reserved 6, 12",
		"not-empty max-len=64",
		"values=member=0,admin=1,owner=10",
		"map[string]Address",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestDescribeProtoName checks that describe shows the protobuf name that
// schema.ProtoName gives a message whose Go type was renamed.
func TestDescribeProtoName(t *testing.T) {
	code, out, errOut := run(t, nil, "describe", "../../../examples/evolution/v2/schema")
	if code != 0 {
		t.Fatalf("describe: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"\nmessage Product  protobuf=Item  reserved 4\n", "\nmessage GetItem\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q:\n%s", want, out)
		}
	}
}

// TestStreams checks the commands on a schema with a stream of every kind:
// describe shows the kinds, proto writes stream keywords (and protoc
// compiles them), generate writes their typed APIs.
func TestStreams(t *testing.T) {
	const schema = "../../../gen/load/testdata/streams"
	code, out, errOut := run(t, nil, "describe", schema)
	if code != 0 {
		t.Fatalf("describe: exit %d: %s", code, errOut)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 5 {
			rows[f[0]] = strings.Join(f[:5], " ")
		}
	}
	for _, want := range []string{
		"Watch server_stream Watch Event idempotent", "Upload client_stream Chunk Uploaded timeout=10m0s",
		"Chat bidi_stream Line Line -", "Last unary Watch Event idempotent",
	} {
		if got := rows[strings.Fields(want)[0]]; got != want {
			t.Errorf("describe row %q, want %q", got, want)
		}
	}
	if !strings.Contains(out, "max-message-size=65536") {
		t.Errorf("describe lacks the message size limit:\n%s", out)
	}

	code, out, errOut = run(t, nil, "proto", schema)
	if code != 0 {
		t.Fatalf("proto: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"rpc Watch(.streams.v1.Watch) returns (stream Event) {", "rpc Upload(stream Chunk) returns (Uploaded);",
		"rpc Chat(stream Line) returns (stream Line);",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("proto output lacks %q", want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "streams.v1.proto"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	protoc(t, dir, "streams.v1.proto")

	target := t.TempDir()
	code, _, errOut = run(t, nil, "generate", "--target", target, "--package", "streamsrpc", schema)
	if code != 0 {
		t.Fatalf("generate: exit %d, stderr %q", code, errOut)
	}
	svc, err := os.ReadFile(filepath.Join(target, "feed_service.yrpc.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Watch(req *Watch, stream rt.ServerStreamingServer[Event]) error",
		"Upload(ctx context.Context, opts ...rt.CallOption) (rt.ClientStreamingClient[Chunk, Uploaded], error)",
		"Chat(ctx context.Context, opts ...rt.CallOption) (rt.BidiStreamingClient[Line, Line], error)",
	} {
		if !strings.Contains(string(svc), want) {
			t.Errorf("generated service lacks %q", want)
		}
	}
}

// TestProto checks the proto export of the users example, with protoc
// when it is installed.
func TestProto(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "users.proto")
	code, _, errOut := run(t, nil, "proto", "--out", out, "--go-package", "example.com/userspb", usersSchema)
	if code != 0 {
		t.Fatalf("proto: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, want := range []string{
		`syntax = "proto3";`,
		"package users;",
		`import "google/protobuf/timestamp.proto";`,
		`import "google/protobuf/duration.proto";`,
		`import "google/protobuf/empty.proto";`,
		`option go_package = "example.com/userspb";`,
		"rpc Touch(TouchUser) returns (google.protobuf.Empty);",
		"option idempotency_level = IDEMPOTENT;",
		"google.protobuf.Timestamp created_at = 100;",
		"optional uint32 age = 9;",
		"optional string nickname = 10 [deprecated = true];",
		"repeated int32 unpacked_i32s = 21 [packed = false];",
		"map<string, Address> addresses = 19;",
		"sint64 last = 536870911;",
		"reserved 6, 12;",
		"enum UserRole {\n  USER_ROLE_MEMBER = 0;\n  USER_ROLE_ADMIN = 1;\n  USER_ROLE_OWNER = 10;\n}",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("proto output lacks %q", want)
		}
	}
	protoc(t, dir, "users.proto")
}

// TestProtoHello checks that the hello example exports the message of
// ../shared/bench/benchmark.proto.
func TestProtoHello(t *testing.T) {
	code, out, errOut := run(t, nil, "proto", "../../../examples/hello/schema")
	if code != 0 {
		t.Fatalf("proto: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"package bench;", "rpc Say(BenchmarkMessage) returns (BenchmarkMessage);", "repeated fixed64 field5 = 5;", "int32 field131 = 131;"} {
		if !strings.Contains(out, want) {
			t.Errorf("proto output lacks %q", want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.proto"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	protoc(t, dir, "hello.proto")
}

// protoc compiles dir/file with /usr/bin/protoc, or skips.
func protoc(t *testing.T, dir, file string) {
	t.Helper()
	const bin = "/usr/bin/protoc"
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not installed; the output was not compiled", bin)
	}
	args := []string{"-I" + dir}
	if _, err := os.Stat("/usr/include/google/protobuf/timestamp.proto"); err == nil {
		args = append(args, "-I/usr/include")
	}
	args = append(args, "--descriptor_set_out="+filepath.Join(dir, "out.pb"), filepath.Join(dir, file))
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
}

// fakeSpec is what the fake loader returns.
var fakeSpec = &gen.Spec{Version: gen.SpecVersion, SchemaPkg: "example.com/api/schema", Package: "x", Messages: []*gen.Message{{Name: "M"}}}

func TestGenerateWritesAndRemovesStale(t *testing.T) {
	root := t.TempDir()
	schemaDir := filepath.Join(root, "api", "schema")
	// The default target: beside the schema, named after the import path
	// element above it (fakeSpec's example.com/api/schema) plus "rpc".
	target := filepath.Join(root, "api", "apirpc")
	for _, dir := range []string{schemaDir, target} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(target, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stale.yrpc.go", generatedHeader+"\n\npackage api\n")
	write("mine.go", "// Package api is hand-written.\npackage api\n")
	write("other_gen.go", "// Code generated by stringer. DO NOT EDIT.\n\npackage api\n")

	var gotCfg gen.Config
	var gotOpts load.Options
	files := []gen.File{
		{Name: "m.yrpc.go", Content: []byte(generatedHeader + "\n\npackage api\n\ntype M struct{}\n")},
		{Name: "m_service.yrpc.go", Content: []byte(generatedHeader + "\n\npackage api\n")},
	}
	e := &Env{
		Dir: root,
		Load: func(_ context.Context, pattern string, opts load.Options) (*gen.Spec, error) {
			gotOpts = opts
			if pattern != "./api/schema" {
				t.Errorf("pattern %q", pattern)
			}
			return fakeSpec, nil
		},
		Generate: func(spec *gen.Spec, cfg gen.Config) ([]gen.File, error) {
			gotCfg = cfg
			return files, nil
		},
	}
	code, out, errOut := run(t, e, "generate", "-v", "./api/schema")
	if code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errOut)
	}
	// The Go package is the target's; the protobuf package (method IDs) is
	// left to the loader's default, as describe and proto use.
	if gotCfg.Package != "apirpc" || gotOpts.Package != "" || gotOpts.Dir != root {
		t.Errorf("config %+v, options %+v", gotCfg, gotOpts)
	}
	wantOut := "wrote " + filepath.Join(target, "m.yrpc.go") + "\nwrote " + filepath.Join(target, "m_service.yrpc.go") + "\nremoved " + filepath.Join(target, "stale.yrpc.go") + "\n"
	if out != wantOut {
		t.Errorf("output:\n%s\nwant:\n%s", out, wantOut)
	}
	for name, want := range map[string]bool{"m.yrpc.go": true, "m_service.yrpc.go": true, "mine.go": true, "other_gen.go": true, "stale.yrpc.go": false} {
		if _, err := os.Stat(filepath.Join(target, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(target, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// A second run with the same output rewrites nothing.
	code, out, _ = run(t, e, "generate", "-v", "--package", "apipb", "./api/schema")
	if code != 0 || out != "" || gotCfg.Package != "apipb" {
		t.Errorf("second run: exit %d, output %q, package %q", code, out, gotCfg.Package)
	}

	// As go generate runs it: in the schema directory, on ".".
	if err := os.RemoveAll(target); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Chdir(schemaDir)
	e.Dir = ""
	e.Load = func(context.Context, string, load.Options) (*gen.Spec, error) { return fakeSpec, nil }
	if code, _, errOut := run(t, e, "generate", "."); code != 0 {
		t.Fatalf("generate .: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(target, "m.yrpc.go")); err != nil {
		t.Errorf("generate . in the schema directory: %v", err)
	}
	t.Chdir(wd)
	e.Dir = root

	// --target elsewhere.
	code, _, errOut = run(t, e, "generate", "--target", "out/v1", "./api/schema")
	if code != 0 || gotCfg.Package != "v1" {
		t.Fatalf("generate --target: exit %d (%s), package %q", code, errOut, gotCfg.Package)
	}
	if _, err := os.Stat(filepath.Join(root, "out", "v1", "m.yrpc.go")); err != nil {
		t.Error(err)
	}
}

func TestGenerateErrors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "api")
	if err := os.MkdirAll(filepath.Join(root, "schema"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &Env{
		Dir:  root,
		Load: func(context.Context, string, load.Options) (*gen.Spec, error) { return fakeSpec, nil },
		Generate: func(*gen.Spec, gen.Config) ([]gen.File, error) {
			return nil, errors.New("gen: generator not built yet")
		},
	}
	code, _, errOut := run(t, e, "generate", "./schema")
	if code != 1 || errOut != "yrpcc generate: gen: generator not built yet\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	e.Generate = func(*gen.Spec, gen.Config) ([]gen.File, error) {
		return []gen.File{{Name: "../escape.go", Content: []byte("package x\n")}}, nil
	}
	code, _, errOut = run(t, e, "generate", "./schema")
	if code != 1 || !strings.Contains(errOut, `bad file name "../escape.go"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestGenerateExamples runs the real loader and generator on two examples
// into temporary directories: the output is the generated code committed
// in the repository, which gen's golden test compares with the generator.
func TestGenerateExamples(t *testing.T) {
	for _, ex := range []struct{ schema, pkg, committed string }{
		{greeterSchema, "greeterrpc", "../../../examples/greeter/greeterrpc"},
		{usersSchema, "userrpc", "../../../examples/users/userrpc"},
	} {
		target := t.TempDir()
		code, _, errOut := run(t, nil, "generate", "--target", target, "--package", ex.pkg, ex.schema)
		if code != 0 {
			t.Fatalf("generate %s: exit %d: %s", ex.schema, code, errOut)
		}
		files, _ := filepath.Glob(filepath.Join(target, "*.go"))
		committed, _ := filepath.Glob(filepath.Join(ex.committed, "*.yrpc.go"))
		if len(files) == 0 || len(files) != len(committed) {
			t.Fatalf("%s: generated %d files, %d committed", ex.schema, len(files), len(committed))
		}
		for _, f := range files {
			got, _ := os.ReadFile(f)
			want, err := os.ReadFile(filepath.Join(ex.committed, filepath.Base(f)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s differs from the committed %s (%v)", f, ex.committed, err)
			}
		}
	}
}

func TestInit(t *testing.T) {
	// The scaffold must compile against this module, so it goes in a
	// temporary directory inside the package ("_" hides it from ./...).
	dir, err := os.MkdirTemp(".", "_init-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// LoadTest and AgentWindows were scaffolded in load_test.go (a test
	// file) and agent_windows.go (built only on Windows), which the
	// loader then did not see.
	code, out, errOut := run(t, nil, "init", "--dir", dir, "User", "GetUser", "LoadTest", "AgentWindows", "--service", "Users")
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"user.go", "get_user.go", "load_test_schema.go", "agent_windows_schema.go", "users.go", "generate.go"} {
		if !strings.Contains(out, filepath.Join(dir, name)) {
			t.Errorf("init output %q lacks %s", out, name)
		}
	}
	gen, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	if err != nil || !strings.Contains(string(gen), "\n//go:generate go tool yrpcc generate .\n") {
		t.Errorf("generate.go: %v\n%s", err, gen)
	}
	if !strings.Contains(out, "go get -tool github.com/yrpc/yrpc/yrpcc") {
		t.Errorf("init does not say how to make yrpcc a tool of the module:\n%s", out)
	}
	// Refuses to overwrite, and writes nothing then.
	code, _, errOut = run(t, nil, "init", "--dir", dir, "Address", "User")
	if code != 1 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second init: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "address.go")); err == nil {
		t.Error("init wrote address.go although user.go exists")
	}
	spec, err := load.Load(context.Background(), "./"+dir, load.Options{})
	if err != nil {
		t.Fatalf("loading the scaffold: %v", err)
	}
	if len(spec.Messages) != 4 || len(spec.Services) != 1 || spec.Services[0].Name != "Users" {
		t.Errorf("scaffold spec: %d messages, %d services", len(spec.Messages), len(spec.Services))
	}
}
