package zkreg

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

// Without Options.Logger, warnings (here: a provider payload skipped)
// reach slog.Default(), and nothing below Warn does (go-zookeeper's lines
// are Debug).
func TestWarningsReachTheDefaultLogger(t *testing.T) {
	var logs logBuf
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)

	e := newEnv(t)
	c := e.open(e.options()) // no Logger
	p := e.open(e.options())
	k := registry.Key{Service: "pkg.DefaultLog"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	if _, err := e.raw.Create(p.paths.providers(k)+"/10.0.0.2:80", []byte(`{not json`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the good provider only", registrytest.HasAddrs("10.0.0.1:80"))
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "skipping a provider with a bad payload") {
		t.Fatalf("the skipped payload's warning did not reach slog.Default():\n%s", out)
	}
	if strings.Contains(out, "level=DEBUG") || strings.Contains(out, "level=INFO") {
		t.Fatalf("records below Warn reached slog.Default() without Options.Logger:\n%s", out)
	}
}
