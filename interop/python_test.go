package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
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

// Python's grpcio calls examples/users on a yrpc server, with messages
// that protoc --python_out made of `yrpcc proto`'s output, as the README
// shows: python/users_client.py checks the answers.
func TestPythonClient(t *testing.T) {
	py := pythonWithGRPC(t)
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		need(t, "protoc is not installed (Debian: apt-get install protobuf-compiler)")
	}
	gen := t.TempDir()
	if out, err := exec.Command(protoc, "-I", "proto", "--python_out="+gen, "users.proto").CombinedOutput(); err != nil {
		t.Fatalf("protoc --python_out: %v\n%s", err, out)
	}
	e := start(t, transports(t)[0]) // h2c: grpc.insecure_channel
	cmd := exec.CommandContext(ctxT(t), py, filepath.Join("python", "users_client.py"), e.addr)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+gen, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "checks passed") {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
