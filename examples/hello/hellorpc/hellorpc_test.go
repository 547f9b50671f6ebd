package hellorpc_test

import (
	"context"

	"github.com/yrpc/yrpc/rt/codec/codectest"
	"testing"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
)

// fill sets m as the benchmark workload of bench/README.md does: every
// string the same 54-byte text, every integer 100000, every bool true,
// field5 empty.
func fill(m *hellorpc.BenchmarkMessage) {
	const s = "许多往事在眼前一幕一幕，变的那麼模糊"
	*m = hellorpc.BenchmarkMessage{
		Field1: s, Field9: s, Field18: s, Field80: true, Field81: true, Field2: 100000, Field3: 100000,
		Field280: 100000, Field6: 100000, Field22: 100000, Field4: s, Field59: true, Field7: s,
		Field16: 100000, Field130: 100000, Field12: true, Field17: true, Field13: true, Field14: true,
		Field104: 100000, Field100: 100000, Field101: 100000, Field102: s, Field103: s, Field29: 100000,
		Field30: true, Field60: 100000, Field271: 100000, Field272: 100000, Field150: 100000, Field23: 100000,
		Field24: true, Field25: 100000, Field78: true, Field67: 100000, Field68: 100000, Field128: 100000,
		Field129: s, Field131: 100000,
	}
}

func TestWorkloadSize(t *testing.T) {
	var m hellorpc.BenchmarkMessage
	fill(&m)
	if n := len(m.MarshalAppend(nil)); n != 581 {
		t.Fatalf("encoded workload is %d bytes, want 581", n)
	}
}

func BenchmarkSize(b *testing.B) {
	var m hellorpc.BenchmarkMessage
	fill(&m)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Size()
	}
}

func BenchmarkMarshal(b *testing.B) {
	var m hellorpc.BenchmarkMessage
	fill(&m)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = m.MarshalAppend(buf[:0])
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	var m hellorpc.BenchmarkMessage
	fill(&m)
	data := m.MarshalAppend(nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalUnmarshal(b *testing.B) {
	var in, out hellorpc.BenchmarkMessage
	fill(&in)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = in.MarshalAppend(buf[:0])
		if err := out.Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMessages(t *testing.T) {
	codectest.Suite[hellorpc.BenchmarkMessage](t, "BenchmarkMessage", 1, 2000)
}

func FuzzBenchmarkMessage(f *testing.F) { codectest.Fuzz[hellorpc.BenchmarkMessage](f, 1) }

func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var in, out hellorpc.BenchmarkMessage
	fill(&in)
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = in.MarshalAppend(buf[:0]) }); n != 0 {
		t.Errorf("MarshalAppend into a reused buffer: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = in.MarshalAppend(nil) }); n != 1 {
		t.Errorf("MarshalAppend(nil): %v allocs, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = out.Unmarshal(buf) }); n > 1 {
		t.Errorf("Unmarshal: %v allocs, want at most 1 (the copy of the input)", n)
	}
}

type echo struct{}

func (echo) Say(ctx context.Context, req *hellorpc.BenchmarkMessage) (*hellorpc.BenchmarkMessage, error) {
	resp := *req
	resp.Field1, resp.Field2 = "OK", 100
	return &resp, nil
}

func TestSay(t *testing.T) {
	var lb codectest.Loopback
	hellorpc.RegisterHello(&lb, echo{})
	var req hellorpc.BenchmarkMessage
	fill(&req)
	resp, err := hellorpc.NewHelloClient(&lb).Say(context.Background(), &req)
	if err != nil || resp.Field1 != "OK" || resp.Field2 != 100 || resp.Field129 != req.Field129 {
		t.Fatalf("Say = %+v, %v", resp, err)
	}
	if n := len(resp.MarshalAppend(nil)); n != 527 {
		t.Errorf("reply is %d bytes, want 527", n)
	}
	if id := hellorpc.HelloServiceDesc.Methods[0].ID; hellorpc.HelloServiceDesc.Methods[0].FullName != "bench.Hello/Say" || id == 0 {
		t.Errorf("Say is %q, ID %#x", hellorpc.HelloServiceDesc.Methods[0].FullName, id)
	}
}
