package rt_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An option given to the side it does not concern does not compile.
func TestOptionMisuseDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gocmd, err := exec.LookPath("go") // go test puts its own first in PATH
	if err != nil {
		t.Fatal(err)
	}
	vet := func(file string) (string, error) {
		out, err := exec.Command(gocmd, "vet", filepath.Join("testdata", "misuse", file)).CombinedOutput()
		return string(out), err
	}
	if out, err := vet("shared.go"); err != nil {
		t.Fatalf("the control file does not compile: %v\n%s", err, out)
	}
	for file, want := range map[string]string{
		"server_to_client.go": "rt.WithWeight(5) (value of interface type rt.ServerOption) as rt.ClientOption value",
		"client_to_server.go": "rt.WithPoolSize(2) (value of interface type rt.ClientOption) as rt.ServerOption value",
	} {
		out, err := vet(file)
		if err == nil {
			t.Errorf("%s compiles; want a type error", file)
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s: error does not say %q:\n%s", file, want, out)
		}
	}
}
