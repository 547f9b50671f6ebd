package zkctl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// world is a test root with providers registered through zkreg. The
// root is removed from the shared ZooKeeper when the test ends.
type world struct {
	t        *testing.T
	zk, root string
	reg      *zkreg.Registry
	// admin are the credentials that may delete every node under root (an
	// operator's, when o.ACL locks the registry down); read at cleanup.
	admin []zkreg.Credential
}

func newWorld(t *testing.T, o zkreg.Options) *world {
	t.Helper()
	w := &world{t: t, zk: zktest.Addr(t), root: fmt.Sprintf("/yrpcctl-%08x", rand.Uint32())}
	own := len(o.Servers) > 0 // a server of the test's own, gone with the test
	if own {
		w.zk = o.Servers[0]
	}
	o.Servers, o.Root = []string{w.zk}, w.root
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := zkreg.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		reg.Close()
		if !own {
			removeTree(t, w.zk, w.root, w.admin...)
		}
	})
	w.reg = reg
	return w
}

func (w *world) provide(k registry.Key, addr string, methods ...string) {
	w.t.Helper()
	e := registry.Endpoint{Key: k, Role: registry.Provider, Addr: addr, Methods: methods}
	if err := w.reg.Register(context.Background(), e); err != nil {
		w.t.Fatal(err)
	}
}

// keys returns the keys listed under the root, and their configs.
func (w *world) keys() map[string]registry.Config {
	w.t.Helper()
	ls, err := w.reg.List(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]registry.Config{}
	for _, l := range ls {
		out[l.Key.String()] = l.Config
	}
	return out
}

func (w *world) ctl(args ...string) (int, string, string) {
	w.t.Helper()
	return ctl(w.t, w.zk, w.root, args...)
}

var (
	catalogEU = registry.Key{Service: "shop.Catalog", Group: "EU"}
	orders    = registry.Key{Service: "shop.Orders"}
)

// TestRefusals: ctl refuses what no provider publishes, names the close
// matches, writes nothing, and writes with --force.
func TestRefusals(t *testing.T) {
	w := newWorld(t, zkreg.Options{})
	w.provide(catalogEU, "10.0.0.1:7001", "Get", "List")
	w.provide(catalogEU, "10.0.0.2:7001", "Get", "List")
	w.provide(registry.Key{Service: "shop.Catalog", Group: "US", Version: "2"}, "10.0.1.1:7001", "Get")
	w.provide(orders, "10.0.2.1:7001") // an older provider: no method list
	if code, out, errs := w.ctl("limit", "shop.Catalog", "9", "9", "--group", "EU"); code != ExitOK {
		t.Fatalf("limit = %d %q %q", code, out, errs)
	}
	before := w.keys()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"drain", "shop.Catalgo", "10.0.0.1:7001", "--group", "EU"},
			`unknown service "shop.Catalgo": no provider or consumer of it is registered; did you mean "shop.Catalog"?`},
		{[]string{"limit", "shop.catalog", "1", "1"}, `did you mean "shop.Catalog"?`},
		{[]string{"limit", "nothing.Like", "1", "1"}, `known: "shop.Catalog", "shop.Orders"`},
		{[]string{"drain", "shop.Catalog", "10.0.0.1:7001"},
			`shop.Catalog has no providers in the default group and version; it has providers in group "EU" (--group EU), group "US" version "2" (--group US --version 2)`},
		{[]string{"drain", "shop.Catalog", "10.0.0.1:7001", "--group", "EUR"}, `has no providers in group "EUR"`},
		{[]string{"drain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU", "--version", "2"}, `in group "EU" version "2"`},
		{[]string{"drain", "shop.Catalog", "10.0.0.1:701", "--group", "EU"},
			`shop.Catalog[EU] has no provider at "10.0.0.1:701"; did you mean "10.0.0.1:7001" or "10.0.0.2:7001"?`},
		{[]string{"weight", "shop.Catalog", "10.9.9.9:80", "5", "--group", "EU"}, `known: "10.0.0.1:7001", "10.0.0.2:7001"`},
		{[]string{"undrain", "shop.Catalog", "10.0.0.3:7001", "--group", "EU"}, `has no provider at "10.0.0.3:7001"`},
		{[]string{"mock", "shop.Catalog", "Gett", "empty", "--always", "--group", "EU"}, `shop.Catalog[EU] has no method "Gett"; did you mean "Get"?`},
		{[]string{"mock", "shop.Catalog", "list", "off", "--group", "EU"}, `did you mean "List"?`},
		{[]string{"rm", "shop.Catalog", "mock", "Get", "--group", "EU"}, `shop.Catalog[EU] has no mock of "Get" to remove`},
		{[]string{"rm", "shop.Catalog", "limit", "--group", "US", "--version", "2"}, `shop.Catalog has no config in group "US" version "2"; it has config in group "EU" (--group EU)`},
		{[]string{"rm", "shop.Orders", "all"}, `shop.Orders has no config`},
		{[]string{"rm", "shop.Ordres", "all"}, `unknown service "shop.Ordres"`},
	} {
		for _, dry := range []bool{false, true} {
			args := tc.args
			if dry {
				args = append(slices.Clone(args), "--dry-run")
			}
			code, out, errs := w.ctl(args...)
			if code != ExitError || !strings.Contains(errs, tc.want) || !strings.HasSuffix(errs, "(--force writes it anyway)\n") || out != "" {
				t.Errorf("ctl %q = %d, %q, %q; want exit 1 and %q", args, code, out, errs, tc.want)
			}
		}
	}
	if diff := cmp.Diff(before, w.keys()); diff != "" {
		t.Errorf("refused commands changed the registry (-before +after):\n%s", diff)
	}

	// The checks pass for what exists, and note what they cannot check.
	code, out, errs := w.ctl("mock", "shop.Orders", "Anything", "empty")
	if code != ExitOK || !strings.Contains(errs, `publish no method list (an older yrpc); method "Anything" not checked`) {
		t.Errorf("mock of an unlisted method = %d %q %q; want a note", code, out, errs)
	}
	// --force writes a typo anyway; undrain of what is drained needs no provider.
	for _, args := range [][]string{
		{"drain", "shop.Catalgo", "10.0.0.1:7001", "--group", "EU", "--force"},
		{"undrain", "shop.Catalgo", "10.0.0.1:7001", "--group", "EU"},
	} {
		if code, out, errs := w.ctl(args...); code != ExitOK {
			t.Errorf("ctl %q = %d %q %q", args, code, out, errs)
		}
	}
}

// TestDryRunAndRm: --dry-run prints the change and writes nothing; rm
// removes each kind of entry; the emptied key leaves `ls` (no stray
// "shop.Typo - - -" row).
func TestDryRunAndRm(t *testing.T) {
	w := newWorld(t, zkreg.Options{})
	w.provide(catalogEU, "10.0.0.1:7001", "Get")
	eu := []string{"--group", "EU"}
	run := func(want string, args ...string) {
		t.Helper()
		code, out, errs := w.ctl(append(args, eu...)...)
		if code != ExitOK || out != want {
			t.Fatalf("ctl %q = %d, %q, %q; want %q", args, code, out, errs, want)
		}
	}
	run("shop.Catalog[EU]: instance 10.0.0.1:7001: (none) -> draining\ndry run: nothing written\n", "drain", "shop.Catalog", "10.0.0.1:7001", "--dry-run")
	if cfg := w.keys()["shop.Catalog[EU]"]; !cfg.IsZero() {
		t.Fatalf("dry run wrote %+v", cfg)
	}
	run("shop.Catalog[EU]: instance 10.0.0.1:7001: (none) -> draining\n", "drain", "shop.Catalog", "10.0.0.1:7001")
	run("shop.Catalog[EU]: instance 10.0.0.1:7001: draining -> draining, weight 7\n", "weight", "shop.Catalog", "10.0.0.1:7001", "7")
	run("shop.Catalog[EU]: limit: (none) -> 5/s burst 6 per client IP\n", "limit", "shop.Catalog", "5", "6")
	run("shop.Catalog[EU]: mock Get: (none) -> empty, on failure\n", "mock", "shop.Catalog", "Get", "empty")
	run("shop.Catalog[EU]: limit: 5/s burst 6 per client IP -> (none)\n", "rm", "shop.Catalog", "limit")
	run("shop.Catalog[EU]: mock Get: empty, on failure -> (none)\ndry run: nothing written\n", "rm", "shop.Catalog", "mock", "Get", "--dry-run")
	run("shop.Catalog[EU]: mock Get: empty, on failure -> (none)\n", "rm", "shop.Catalog", "mock", "Get")
	run("shop.Catalog[EU]: instance 10.0.0.1:7001: draining, weight 7 -> (none)\n", "rm", "shop.Catalog", "instance", "10.0.0.1:7001")
	run("shop.Catalog[EU]: mock Get: (none) -> fail Internal, on failure\n", "mock", "shop.Catalog", "Get", "fail", "Internal")
	run("shop.Catalog[EU]: mock Get: fail Internal, on failure -> (none)\n", "rm", "shop.Catalog", "all")
	if cfg := w.keys()["shop.Catalog[EU]"]; !cfg.IsZero() {
		t.Errorf("config after rm all = %+v", cfg)
	}

	// The stray row: a config for a key without providers, then removed.
	typo := []string{"drain", "shop.Typo", "10.0.0.1:7001", "--force"}
	if code, out, errs := w.ctl(typo...); code != ExitOK {
		t.Fatalf("ctl %q = %d %q %q", typo, code, out, errs)
	}
	if _, out, _ := w.ctl("ls"); !strings.Contains(out, "shop.Typo") {
		t.Fatalf("ls lacks the forced key:\n%s", out)
	}
	if code, out, errs := w.ctl("rm", "shop.Typo", "instance", "10.0.0.1:7001"); code != ExitOK {
		t.Fatalf("rm = %d %q %q", code, out, errs)
	}
	if _, out, _ := w.ctl("ls"); strings.Contains(out, "shop.Typo") {
		t.Errorf("ls still lists the emptied key:\n%s", out)
	}
}

// TestMockValueHook: `mock ... value --json J --schema DIR` hands the JSON
// to Env.MockValue and stores the bytes it returns.
func TestMockValueHook(t *testing.T) {
	w := newWorld(t, zkreg.Options{})
	w.provide(orders, "10.0.2.1:7001", "Get")
	type call struct{ schema, service, method, json string }
	var calls []call
	for _, args := range [][]string{
		{"mock", "shop.Orders", "Get", "value", "--json", `{"id": 1}`, "--schema", "./schema"},
		{"mock", "shop.Orders", "Get", "value", `--json={"id": 2}`, "--schema=./schema", "--always"},
	} {
		var out, errb strings.Builder
		e := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
			MockValue: func(_ context.Context, schema, service, method, json string) ([]byte, error) {
				calls = append(calls, call{schema, service, method, json})
				return []byte{0x08, byte(len(calls))}, nil
			}}
		if code := e.Run(context.Background(), append([]string{"-zk", w.zk, "-root", w.root}, args...)); code != ExitOK {
			t.Fatalf("ctl %q = %d %q %q", args, code, out.String(), errb.String())
		}
	}
	want := []call{{"./schema", "shop.Orders", "Get", `{"id": 1}`}, {"./schema", "shop.Orders", "Get", `{"id": 2}`}}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("MockValue calls = %q, want %q", calls, want)
	}
	if m := w.keys()["shop.Orders"].Mocks["Get"]; string(m.Value) != "\x08\x02" || !m.Force || m.Action != "value" {
		t.Errorf("mock = %+v", m)
	}
}

func TestCloseMatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known []string
		want  string
	}{
		{"shop.Catalgo", []string{"shop.Catalog", "shop.Orders"}, `["shop.Catalog"]`},
		{"Gett", []string{"Get", "List", "Set"}, `["Get"]`},
		{"Gt", []string{"Get", "Set", "List"}, `["Get"]`},
		{"get", []string{"Get", "Set"}, `["Get"]`},
		{"10.0.0.1:701", []string{"10.0.0.1:7001", "10.0.0.2:7001", "10.0.0.3:7001"}, `["10.0.0.1:7001" "10.0.0.2:7001" "10.0.0.3:7001"]`},
		{"Delete", []string{"Get", "List"}, `[]`},
		{"Get", []string{"Get"}, `[]`}, // itself is no suggestion
	} {
		if got := fmt.Sprintf("%q", closeMatches(tc.name, tc.known)); got != tc.want {
			t.Errorf("closeMatches(%q, %q) = %s, want %s", tc.name, tc.known, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"Catalgo", "Catalog", 1}} {
		if got := distance(tc.a, tc.b); got != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
