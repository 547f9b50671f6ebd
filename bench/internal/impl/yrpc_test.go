//go:build yrpc

package impl

import (
	"testing"

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
