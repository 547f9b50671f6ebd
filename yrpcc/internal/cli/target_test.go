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

// TestGenerateRefusesAnotherSchemasTarget checks that generate does not
// replace the code of one schema package with another's: two schema
// directories beside each other in a module (./schema and ./admin, say)
// have the same default target, and the second generate used to remove
// the first one's files without a word.
func TestGenerateRefusesAnotherSchemasTarget(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"schema", "admin", "moved"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(pkg, msg string) *gen.Spec {
		return &gen.Spec{Version: gen.SpecVersion, SchemaPkg: pkg, Package: "api", Messages: []*gen.Message{{Name: msg}}}
	}
	specs := map[string]*gen.Spec{
		"./schema": spec("example.com/api/schema", "User"),
		"./admin":  spec("example.com/api/admin", "Grant"),
		"./moved":  spec("", "User"), // a spec without a schema package
	}
	e := &Env{
		Dir: root,
		Load: func(_ context.Context, pattern string, _ load.Options) (*gen.Spec, error) {
			return specs[pattern], nil
		},
		Generate: gen.Generate,
	}
	target := filepath.Join(root, "apirpc")
	if code, _, errOut := run(t, e, "generate", "./schema"); code != 0 {
		t.Fatalf("generate ./schema: exit %d: %s", code, errOut)
	}
	code, _, errOut := run(t, e, "generate", "./admin")
	if code != 1 || !strings.Contains(errOut, "holds the code generated from the schema example.com/api/schema, not from example.com/api/admin") {
		t.Errorf("generate ./admin into ./schema's target: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(target, "user.yrpc.go")); err != nil {
		t.Errorf("./schema's code is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "grant.yrpc.go")); err == nil {
		t.Error("./admin's code was written into ./schema's target")
	}
	// Its own target, and the same schema again, are fine; so is a spec
	// that names no schema package.
	for _, args := range [][]string{
		{"generate", "--target", "adminrpc", "./admin"},
		{"generate", "./schema"},
		{"generate", "--target", "apirpc", "./moved"},
	} {
		if code, _, errOut := run(t, e, args...); code != 0 {
			t.Errorf("yrpcc %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
}
