//go:build yrpc

package impl

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// TestYRPCWire checks that yrpc's request encodes to the same bytes as the
// protobuf peers' and that its reply decodes where theirs does.
func TestYRPCWire(t *testing.T) {
	req := newYRPCRequest()
	got := req.MarshalAppend(nil)
	want, err := proto.Marshal(workload.NewRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workload.RequestSize {
		t.Errorf("yrpc request is %d bytes, want %d", len(got), workload.RequestSize)
	}
	var back benchpb.BenchmarkMessage
	if err := proto.Unmarshal(got, &back); err != nil {
		t.Fatalf("protobuf cannot decode yrpc's request: %v", err)
	}
	if !proto.Equal(&back, workload.NewRequest()) {
		t.Errorf("yrpc request decodes to %v", &back)
	}
	if len(want) != len(got) {
		t.Errorf("sizes differ: yrpc %d, protobuf %d", len(got), len(want))
	}
	rep := newYRPCRequest()
	if err := rep.Unmarshal(mustMarshal(t, workload.Answer(workload.NewRequest()))); err != nil {
		t.Fatal(err)
	}
	if err := checkYRPC(rep); err != nil {
		t.Error(err)
	}
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
	go func() { served <- serveYRPC(sctx, lis, nil) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for _, into := range []bool{false, true} {
		cl, err := dialYRPCWith(ctx, lis.Addr().String(), 2, nil, into)
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
		if err := checkYRPC(y.resps[1]); err != nil {
			t.Errorf("worker 1's response: %v", err)
		}
		if y.resps[0].Size() != 0 {
			t.Errorf("worker 0's response was written: %+v", y.resps[0])
		}
	}
}
