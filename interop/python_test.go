package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// required reports whether a missing tool fails the test instead of
// skipping it: YRPC_INTEROP_REQUIRED=1, as scripts/test.sh sets after
// installing the tools.
func required() bool { return os.Getenv("YRPC_INTEROP_REQUIRED") == "1" }

// need skips the test (fails it when required) for a missing tool.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	if required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// pythonWithGRPC returns a Python 3 that imports grpc and google.protobuf:
// $YRPC_PYTHON, else Debian's /usr/bin/python3 (where python3-grpcio
// installs), else python3 on $PATH.
func pythonWithGRPC(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("YRPC_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import grpc, google.protobuf").Run() == nil {
			return path
		}
	}
	need(t, "no python3 with grpcio and protobuf among %q (Debian: apt-get install python3-grpcio python3-protobuf)", candidates)
	return ""
}

// pythonMessages writes users_pb2.py as the README does: protoc
// --python_out=. users.proto, in a directory holding the committed
// `yrpcc proto` export. It returns the directory.
func pythonMessages(t *testing.T) string {
	t.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		need(t, "protoc is not installed (Debian: apt-get install protobuf-compiler)")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("proto", "users.proto"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.proto"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "--python_out=.", "users.proto")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return dir
}

// runPython runs python with args and users_pb2 of dir on its path, and
// returns its output.
func runPython(t *testing.T, py, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctxT(t), py, args...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// Python's grpcio calls examples/users on a yrpc server, with messages
// that protoc --python_out made of `yrpcc proto`'s output:
// python/users_client.py checks the answers.
func TestPythonClient(t *testing.T) {
	py := pythonWithGRPC(t)
	dir := pythonMessages(t)
	e := start(t, transports(t)[0]) // h2c: grpc.insecure_channel
	out := runPython(t, py, dir, filepath.Join("python", "users_client.py"), e.addr)
	if !strings.Contains(out, "checks passed") {
		t.Fatalf("users_client.py:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(out))
}

// The README's Python example, run as written (its address replaced by
// the test server's), prints what the README says it prints.
func TestREADMEPython(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Skipf("no README beside the module: %v", err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Calling yrpc from other languages\n")
	if !ok {
		t.Fatal(`README.md has no section "Calling yrpc from other languages"`)
	}
	blocks := fencedBlocks(section)
	i := slices.IndexFunc(blocks, func(b [2]string) bool { return b[0] == "python" })
	if i < 0 || i+1 >= len(blocks) {
		t.Fatal("the README section has no python block followed by its output")
	}
	code, want := blocks[i][1], blocks[i+1][1]
	const addr = "127.0.0.1:50051"
	if !strings.Contains(code, addr) {
		t.Fatalf("the README's example does not call %s", addr)
	}
	py := pythonWithGRPC(t)
	dir := pythonMessages(t)
	e := start(t, transports(t)[0])
	script := filepath.Join(dir, "readme_example.py")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(code, addr, e.addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runPython(t, py, dir, script); got != want {
		t.Errorf("the README's example printed\n%s\nthe README says\n%s", got, want)
	}
}

// fencedBlocks returns the fenced code blocks of markdown: each block's
// info string and text, its lines unindented as far as its fence is.
func fencedBlocks(markdown string) [][2]string {
	var blocks [][2]string
	lines := strings.SplitAfter(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		var text strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			line := lines[i]
			if len(line)-len(strings.TrimLeft(line, " ")) >= indent {
				line = line[indent:]
			}
			text.WriteString(line)
		}
		blocks = append(blocks, [2]string{info, text.String()})
	}
	return blocks
}

// proto/users.proto is `yrpcc proto`'s current export of examples/users:
// the root module's gen/proto tests keep gen/protocompat's copy so.
func TestProtoExportCurrent(t *testing.T) {
	ours, err := os.ReadFile(filepath.Join("proto", "users.proto"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "gen", "protocompat", "proto", "users.proto"))
	if err != nil {
		t.Skipf("no gen/protocompat beside the module: %v", err)
	}
	if string(ours) != string(golden) {
		t.Error("proto/users.proto is not yrpcc proto's export of examples/users: run ./regen.sh")
	}
}
