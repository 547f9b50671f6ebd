package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shopSchema is the schema of TestIdentity's module example.com/shop.
const shopSchema = `package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

type Item struct{ schema.Message }

func (Item) Fields() []schema.Field { return []schema.Field{field.Int64("id", 1)} }

type Catalog struct{ schema.Service }

func (Catalog) Methods() []schema.Method {
	return []schema.Method{rpc.Unary("Get", Item.Type, Item.Type).Idempotent()}
}
`

// TestIdentity generates one module, example.com/shop, checked out in two
// directories with different names, shop and shop-main: the output must be
// byte-identical, because the protobuf package (method IDs, registry
// paths) and the Go package name come from the module's import path, never
// from a directory name. describe must show the same identity.
func TestIdentity(t *testing.T) {
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	goLine := ""
	if data, err := os.ReadFile(filepath.Join(repo, "go.mod")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "go ") {
				goLine = line
			}
		}
	}
	root := t.TempDir()
	var outputs []map[string]string
	for _, name := range []string{"shop", "shop-main"} {
		mod := filepath.Join(root, name)
		writeFile(t, filepath.Join(mod, "go.mod"), "module example.com/shop\n\n"+goLine+"\n\nrequire github.com/yrpc/yrpc v0.0.0\n\nreplace github.com/yrpc/yrpc => "+repo+"\n")
		writeFile(t, filepath.Join(mod, "schema", "shop.go"), shopSchema)
		e := New(nil, nil)
		e.Dir = mod
		if code, _, errOut := run(t, e, "generate", "./schema"); code != 0 {
			t.Fatalf("generate in %s: exit %d: %s", name, code, errOut)
		}
		code, out, errOut := run(t, e, "describe", "./schema")
		if code != 0 || !strings.HasPrefix(out, "package shop (schema example.com/shop/schema)\n") {
			t.Errorf("describe in %s: exit %d, %q, %s", name, code, out, errOut)
		}
		files := map[string]string{}
		err := filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".yrpc.go") {
				data, err := os.ReadFile(path)
				rel, _ := filepath.Rel(mod, path)
				files[filepath.ToSlash(rel)] = string(data)
				return err
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, files)
	}
	if len(outputs[0]) == 0 {
		t.Fatal("nothing generated")
	}
	if diff := cmp.Diff(outputs[0], outputs[1]); diff != "" {
		t.Errorf("the output depends on the directory's name (-shop +shop-main):\n%s", diff)
	}
	for name, src := range outputs[0] {
		if !strings.HasPrefix(name, "shoprpc/") || !strings.Contains(src, "\npackage shoprpc\n") {
			t.Errorf("%s: want package shoprpc in ./shoprpc, the default target", name)
		}
		if strings.HasSuffix(name, "_service.yrpc.go") && !strings.Contains(src, `FullName: "shop.Catalog/Get"`) {
			t.Errorf("%s does not name the method shop.Catalog/Get:\n%s", name, src)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
