package load_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// wantRE finds `// want "text"` comments in testdata schemas: the loader
// must report a problem on that line whose message contains text.
var wantRE = regexp.MustCompile(`// want (".*")\s*$`)

type want struct {
	pos  string // "testdata/x/schema.go:12"
	text string
}

func wants(t *testing.T, dir string) []want {
	t.Helper()
	path := filepath.Join(dir, "schema.go")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ws []want
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := wantRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		text, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatalf("%s:%d: bad want: %v", path, line, err)
		}
		ws = append(ws, want{pos: fmt.Sprintf("%s:%d", filepath.ToSlash(path), line), text: text})
	}
	return ws
}

// TestBroken loads each broken schema under testdata and checks that every
// expected problem is reported at its file:line, and nothing else.
func TestBroken(t *testing.T) {
	for _, name := range []string{"notbuild", "panics", "numbers", "clash", "refs", "methods", "enums", "builders", "protonames"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := "testdata/" + name
			ws := wants(t, dir)
			if len(ws) == 0 {
				t.Fatal("no want comments")
			}
			spec, err := load.Load(context.Background(), "./"+dir, load.Options{})
			if err == nil {
				t.Fatalf("Load succeeded: %d messages", len(spec.Messages))
			}
			var lerr *load.Error
			if !errors.As(err, &lerr) {
				t.Fatalf("Load error is %T, want *load.Error: %v", err, err)
			}
			used := make([]bool, len(lerr.Problems))
			for _, w := range ws {
				found := false
				for i, p := range lerr.Problems {
					if !used[i] && (p.Pos == w.pos || strings.HasPrefix(p.Pos, w.pos+":")) && strings.Contains(p.String(), w.text) {
						used[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("%s: no problem containing %q", w.pos, w.text)
				}
			}
			for i, p := range lerr.Problems {
				if !used[i] {
					t.Errorf("unexpected problem: %s", p)
				}
			}
			if t.Failed() {
				t.Logf("error:\n%v", err)
			}
		})
	}
}

// TestSyntax loads a schema that does not parse. The file is written at
// run time so that gofmt and vet never see it.
func TestSyntax(t *testing.T) {
	dir, err := os.MkdirTemp("testdata", "_syntax-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := "package schema\n\nimport \"github.com/yrpc/yrpc/schema\"\n\ntype User struct{ schema.Message }\n\nfunc (User) Fields() []schema.Field {\n\treturn []schema.Field{\n"
	if err := os.WriteFile(filepath.Join(dir, "schema.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = load.Load(context.Background(), "./"+dir, load.Options{})
	want := filepath.ToSlash(dir) + "/schema.go:8:"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "expected") {
		t.Fatalf("Load = %v, want a syntax error at %s", err, want)
	}
}

func TestEmpty(t *testing.T) {
	_, err := load.Load(context.Background(), "./testdata/empty", load.Options{})
	if err == nil || !strings.Contains(err.Error(), "declares no exported type that embeds schema.Message") {
		t.Fatalf("Load = %v", err)
	}
}

func TestMissing(t *testing.T) {
	_, err := load.Load(context.Background(), "./testdata/nosuchdir", load.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "load: ") {
		t.Fatalf("Load = %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	specs := make([]*gen.Spec, 2)
	errs := make([]error, 2)
	for i := range specs {
		wg.Go(func() {
			specs[i], errs[i] = load.Load(context.Background(), "../../examples/greeter/schema", load.Options{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	if len(specs[0].Messages) != 2 || len(specs[1].Messages) != 2 {
		t.Fatalf("messages: %d, %d", len(specs[0].Messages), len(specs[1].Messages))
	}
	left, _ := filepath.Glob("../../examples/greeter/schema/.yrpcc-load-*")
	if len(left) > 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := load.Load(ctx, "../../examples/greeter/schema", load.Options{}); err == nil {
		t.Fatal("Load with a canceled context succeeded")
	}
}

// TestLoadTime shows how long a warm load of the users example takes; the
// issue asks for under 5 s for the whole generation.
func TestLoadTime(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	start := time.Now()
	if _, err := load.Load(context.Background(), "../../examples/users/schema", load.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("loading the users example took %v", time.Since(start))
}

// TestStreams loads a schema with a stream of every kind: the kinds and
// their policies reach the spec, which passes gen.Check and gen.Generate.
func TestStreams(t *testing.T) {
	spec, err := load.Load(context.Background(), "./testdata/streams", load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Package != "streams.v1" || len(spec.Services) != 1 {
		t.Fatalf("package %q, %d services", spec.Package, len(spec.Services))
	}
	want := []*gen.Method{
		{Name: "Watch", Comment: "Watch sends the events of a user as they happen.", Kind: gen.MethodServerStream, Request: "Watch", Response: "Event",
			Idempotent: true, Timeout: time.Hour, Retry: &gen.Retry{Tries: 3, Interval: 100 * time.Millisecond, Backoff: 2, MaxInterval: time.Second},
			HashKey: "user_id", MaxMessageSize: 64 << 10},
		{Name: "Upload", Kind: gen.MethodClientStream, Request: "Chunk", Response: "Uploaded", Timeout: 10 * time.Minute, MaxMessageSize: 1 << 20},
		{Name: "Chat", Kind: gen.MethodBidiStream, Request: "Line", Response: "Line"},
		{Name: "Last", Kind: gen.MethodUnary, Request: "Watch", Response: "Event", Idempotent: true},
	}
	if diff := cmp.Diff(want, spec.Services[0].Methods, cmpopts.IgnoreFields(gen.Method{}, "Pos")); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
	if ps := gen.Check(spec); ps != nil {
		t.Errorf("gen.Check = %v", ps)
	}
	if _, err = gen.Generate(spec, gen.Config{Package: "streamsrpc"}); err != nil {
		t.Errorf("Generate = %v", err)
	}
}

// TestAccessRules loads a schema with schema.Allow and rpc.Allow: the
// rules reach the spec, and the generated descriptor carries them.
func TestAccessRules(t *testing.T) {
	spec, err := load.Load(context.Background(), "./testdata/access", load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Services) != 1 {
		t.Fatalf("%d services", len(spec.Services))
	}
	s := spec.Services[0]
	if want := []string{"spiffe://example.org/ns/shop/*"}; !slices.Equal(s.Allow, want) {
		t.Errorf("service Allow = %q, want %q", s.Allow, want)
	}
	for i, want := range [][]string{nil, {"spiffe://example.org/ns/shop/sa/admin"}, {"*"}} {
		if m := s.Methods[i]; !slices.Equal(m.Allow, want) {
			t.Errorf("method %s Allow = %q, want %q", m.Name, m.Allow, want)
		}
	}
	files, err := gen.Generate(spec, gen.Config{Package: "accessrpc"})
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, f := range files {
		code.Write(f.Content)
	}
	for _, want := range []string{`Allow: []string{"spiffe://example.org/ns/shop/*"}`, `Allow: []string{"spiffe://example.org/ns/shop/sa/admin"}`, `Allow: []string{"*"}`} {
		if !strings.Contains(code.String(), want) {
			t.Errorf("the generated code lacks %s", want)
		}
	}
}
