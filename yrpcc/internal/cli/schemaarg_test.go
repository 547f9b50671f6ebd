package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// TestBareSchemaDirectory checks that a schema directory named without
// "./" (yrpcc generate schema, the directory init writes) is read as the
// directory, not as an import path: the go command would answer "package
// schema is not in std", and generate without --target "--target is
// required when the schema "schema" is an import path".
func TestBareSchemaDirectory(t *testing.T) {
	root := filepath.Join(t.TempDir(), "api")
	if err := os.MkdirAll(filepath.Join(root, "schema"), 0o755); err != nil {
		t.Fatal(err)
	}
	var patterns []string
	e := &Env{
		Dir: root,
		Load: func(_ context.Context, pattern string, _ load.Options) (*gen.Spec, error) {
			patterns = append(patterns, pattern)
			return fakeSpec, nil
		},
		Generate: func(*gen.Spec, gen.Config) ([]gen.File, error) {
			return []gen.File{{Name: "m.yrpc.go", Content: []byte(generatedHeader + "\n\npackage apirpc\n")}}, nil
		},
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "schema"}, "./schema"},
		{[]string{"describe", "schema"}, "./schema"},
		{[]string{"proto", "schema"}, "./schema"},
		{[]string{"describe", "example.com/api/schema"}, "example.com/api/schema"}, // no such directory: an import path
	} {
		patterns = nil
		code, _, errOut := run(t, e, tt.args...)
		if code != 0 || len(patterns) != 1 || patterns[0] != tt.want {
			t.Errorf("yrpcc %s: exit %d (%s), loaded %q, want %q", strings.Join(tt.args, " "), code, errOut, patterns, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "apirpc", "m.yrpc.go")); err != nil {
		t.Errorf("generate schema did not write the default target: %v", err)
	}

	// With the real loader.
	code, out, errOut := run(t, &Env{Dir: "../../../examples/greeter", Load: load.Load}, "describe", "schema")
	if code != 0 || !strings.Contains(out, "Greeter") {
		t.Errorf("describe schema in examples/greeter: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
