package rt_test

import (
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// roomy returns a copy of sd whose methods that answer make their
// responses as generated descriptors do, with room for the answer's bytes
// (rt.WithRoom): ownedMsg, where NewResponse makes msg, so that a test
// can tell which made a response.
func roomy(sd *rt.ServiceDesc) *rt.ServiceDesc {
	c := *sd
	c.Methods = append([]rt.MethodDesc(nil), sd.Methods...)
	for i := range c.Methods {
		if m := &c.Methods[i]; !m.Oneway {
			m.NewResponseWithRoom = rt.WithRoom[ownedMsg]
		}
	}
	return &c
}

// TestWithRoom checks that WithRoom makes a message and its room in one
// allocation up to 4 KiB, and in two above, with a room of exactly n
// bytes (not nil for 0, so that an empty answer still decodes).
func TestWithRoom(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, n := range []int{0, 1, 32, 33, 527, 581, 1000, 4095, 4096, 4097, 100_000} {
		want := 1.0
		if n > 4096 {
			want = 2
		}
		var m rt.Message
		var room []byte
		allocs := testing.AllocsPerRun(100, func() { m, room = rt.WithRoom[ownedMsg](n) })
		if _, ok := m.(*ownedMsg); !ok || room == nil || len(room) != n || cap(room) != n {
			t.Errorf("WithRoom(%d) = %T and %d bytes (cap %d, nil %v)", n, m, len(room), cap(room), room == nil)
		}
		if allocs != want {
			t.Errorf("WithRoom(%d): %v allocations, want %v", n, allocs, want)
		}
	}
}

// TestInvokeNew makes calls whose response the call makes (as generated
// XxxClient methods do) on the paths that answer them: a provider, a
// failover past a failing one, a hedge, a fork, with answers of no bytes
// and of more than WithRoom's ladder; TestInvokeNewGRPC, over gRPC.
func TestInvokeNew(t *testing.T) {
	c := newClusterWith(t, 3, func(i int, impl *testImpl) { impl.fail = i == 0 },
		rt.WithClock(wallClock{}), rt.WithRetryBudget(1, 1000))
	desc := roomy(&testDesc)
	for _, tc := range []struct {
		name string
		m    int
	}{{"failover", 2}, {"hedge", 3}, {"fork", 4}} {
		// Round robin: every provider, the failing one included.
		invokeNewEach(t, c.cli, desc, tc.m, 6)
	}
	if resp, err := rt.InvokeNew(ctxT(t), c.cli, desc, 1, &msg{S: "fired"}); resp != nil || err != nil {
		t.Errorf("oneway: %v, %v; want nil and nil", resp, err)
	}
}

func TestInvokeNewGRPC(t *testing.T) {
	g := newGRPCTarget(t, false, nil)
	desc := roomy(&testDesc)
	invokeNewEach(t, g.cli, desc, 0, 1)
	if resp, err := rt.InvokeNew(ctxT(t), g.cli, desc, 0, &msg{S: "reply:bad"}); resp != nil || rt.CodeOf(err) != rt.Internal {
		t.Errorf("an answer that does not decode: %v, %v; want nil and Internal", resp, err)
	}
}

// invokeNewEach makes n calls of method m of sd with InvokeNew for each of
// a few sizes of answer, and checks their answers.
func invokeNewEach(t *testing.T, cli *rt.Client, sd *rt.ServiceDesc, m, n int) {
	t.Helper()
	for _, s := range []string{"x", "", strings.Repeat("y", 581), strings.Repeat("z", 5000)} {
		for range n {
			resp, err := rt.InvokeNew(ctxT(t), cli, sd, m, &msg{S: s})
			if got, ok := resp.(*ownedMsg); err != nil || !ok || got.S != s {
				t.Fatalf("%s: InvokeNew(%d bytes) = %T, %v", sd.Methods[m].FullName, len(s), resp, err)
			}
		}
	}
}
