package rt_test

import (
	"testing"
)

func TestStats(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "x"); err != nil {
		t.Fatal(err)
	}
	cs := e.cli.Stats()
	if cs.Conns != 1 || len(cs.Services) != 1 || cs.Services[0].Name != testDesc.Name || len(cs.Services[0].Providers) != 1 {
		t.Fatalf("client stats %+v, want one connection and one service with one provider", cs)
	}
	if p := cs.Services[0].Providers[0]; p.Breaker != "closed" {
		t.Fatalf("provider %+v, want a closed breaker", p)
	}
	// The server counts the call until its answer is written, which may
	// be just after the client has it.
	waitUntil(t, func() bool { return e.srv.Stats().InFlight == 0 })
	ss := e.srv.Stats()
	if ss.Conns != 1 || ss.InFlight != 0 || !ss.Serving {
		t.Fatalf("server stats %+v, want 1 connection, nothing in flight, serving", ss)
	}
	e.srv.SetServing(false)
	if e.srv.Stats().Serving {
		t.Fatal("Serving after SetServing(false)")
	}
}
