package hellorpc_test

import (
	"context"
	"testing"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
)

// TestSayIntoAllocs calls over loopback TCP, client and server in this
// process: Say allocates the response it returns together with the
// answer's bytes that its strings share, one allocation; SayInto into a
// reused response allocates only the bytes. The server makes two (the
// request, and the call's record with the request's bytes).
func TestSayIntoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	hc, stop := tcpEnv(t)
	defer stop()
	var req, resp hellorpc.BenchmarkMessage
	fill(&req)
	ctx := context.Background()
	say := func() {
		if _, err := hc.Say(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	into := func() {
		if err := hc.SayInto(ctx, &req, &resp); err != nil {
			t.Fatal(err)
		}
	}
	say() // connect
	plain := testing.AllocsPerRun(500, say)
	reused := testing.AllocsPerRun(500, into)
	t.Logf("allocations per call, client and server: Say %v, SayInto %v", plain, reused)
	if plain != reused || plain > 3 {
		t.Errorf("Say makes %v allocations per call, SayInto %v: want 3 each", plain, reused)
	}
	if resp.Field1 != "OK" || resp.Field2 != 100 || resp.Field129 != req.Field129 {
		t.Errorf("SayInto's response: field1 %q field2 %d field129 %q", resp.Field1, resp.Field2, resp.Field129)
	}
}

func BenchmarkSayIntoTCP(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	var req, resp hellorpc.BenchmarkMessage
	fill(&req)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := hc.SayInto(ctx, &req, &resp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSayIntoTCPParallel(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var req, resp hellorpc.BenchmarkMessage
		fill(&req)
		ctx := context.Background()
		for pb.Next() {
			if err := hc.SayInto(ctx, &req, &resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
