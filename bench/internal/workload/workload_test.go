package workload

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/bench/benchpb"
)

func TestSizes(t *testing.T) {
	req := NewRequest()
	if got := proto.Size(req); got != RequestSize {
		t.Errorf("request size = %d, want %d", got, RequestSize)
	}
	rep := Answer(NewRequest())
	if got := proto.Size(rep); got != ReplySize {
		t.Errorf("reply size = %d, want %d", got, ReplySize)
	}
	if len(req.Field5) != 0 {
		t.Errorf("field5 = %v, want empty", req.Field5)
	}
}

func TestCopyCheck(t *testing.T) {
	src := Answer(NewRequest())
	dst := new(benchpb.BenchmarkMessage)
	Copy(dst, src)
	if !proto.Equal(dst, src) {
		t.Fatalf("Copy lost fields")
	}
	if err := Check(dst); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*benchpb.BenchmarkMessage)
	}{
		{"request", func(m *benchpb.BenchmarkMessage) { m.Field1 = Text }},
		{"field2", func(m *benchpb.BenchmarkMessage) { m.Field2 = 0 }},
		{"lost string", func(m *benchpb.BenchmarkMessage) { m.Field129 = "" }},
		{"lost int", func(m *benchpb.BenchmarkMessage) { m.Field131 = 0 }},
		{"lost bool", func(m *benchpb.BenchmarkMessage) { m.Field80 = false }},
	}
	for _, tt := range tests {
		m := Answer(NewRequest())
		tt.mutate(m)
		if Check(m) == nil {
			t.Errorf("%s: Check accepted a bad reply", tt.name)
		}
	}
}
