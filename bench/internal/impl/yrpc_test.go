//go:build yrpc

package impl

import (
	"bytes"
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// TestYRPCWire checks that yrpc's requests encode to the same bytes as the
// protobuf peers' at every size of the curve, that their answers decode
// and check where the peers' do, and that yrpc-lz4 is an Extra variant.
func TestYRPCWire(t *testing.T) {
	for _, size := range []int{0, 64, workload.RequestSize, 16 << 10, 1 << 20} {
		want, err := proto.Marshal(mustSized(t, size))
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := yrpcRequests(Options{C: 2, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		if got := reqs[1].MarshalAppend(nil); !bytes.Equal(got, want) {
			t.Errorf("size %d: yrpc's request is %d bytes unlike protobuf's %d", size, len(got), len(want))
		}
		rep := new(hellorpc.BenchmarkMessage)
		if err := rep.Unmarshal(mustMarshal(t, workload.Answer(mustSized(t, size)))); err != nil {
			t.Fatal(err)
		}
		if err := checkYRPC(rep, reqs[0]); err != nil {
			t.Errorf("size %d: %v", size, err)
		}
		rep.Field4 += "x"
		if checkYRPC(rep, reqs[0]) == nil {
			t.Errorf("size %d: a longer field4 checks", size)
		}
	}
	if im, err := Lookup("yrpc-lz4"); err != nil || !im.Extra || slices.Contains(Names(), "yrpc-lz4") {
		t.Errorf("yrpc-lz4: %v, %v; want an Extra implementation outside Names", im, err)
	}
}

func mustSized(t *testing.T, size int) *benchpb.BenchmarkMessage {
	t.Helper()
	m, err := workload.NewSized(size)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestYRPCInto checks that yrpc-into decodes each worker's replies into
// that worker's own response message, and yrpc into fresh ones.
func TestYRPCInto(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serveYRPC(yrpcConfig{})(sctx, lis, Options{}) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for _, into := range []bool{false, true} {
		cl, err := dialYRPC(yrpcConfig{into: into})(ctx, lis.Addr().String(), Options{C: 2})
		if err != nil {
			t.Fatal(err)
		}
		y := cl.(*yrpcClient)
		if err := y.Call(ctx, 1); err != nil {
			t.Errorf("into %v: %v", into, err)
		}
		if err := y.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if !into {
			if y.resps != nil {
				t.Errorf("yrpc has responses of its own: %v", y.resps)
			}
			continue
		}
		if err := checkYRPC(y.resps[1], y.reqs[1]); err != nil {
			t.Errorf("worker 1's response: %v", err)
		}
		if y.resps[0].Size() != 0 {
			t.Errorf("worker 0's response was written: %+v", y.resps[0])
		}
	}
}
