package protocompat_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/gen/protocompat/benchpb"
	"google.golang.org/protobuf/proto"
)

// The workload of bench/README.md: every string field the same 54-byte
// text, every integer 100000, every bool true, field5 empty; 581 bytes.
const text = "许多往事在眼前一幕一幕，变的那麼模糊"

func yrpcMessage() *hellorpc.BenchmarkMessage {
	return &hellorpc.BenchmarkMessage{
		Field1: text, Field9: text, Field18: text, Field80: true, Field81: true, Field2: 100000, Field3: 100000,
		Field280: 100000, Field6: 100000, Field22: 100000, Field4: text, Field59: true, Field7: text,
		Field16: 100000, Field130: 100000, Field12: true, Field17: true, Field13: true, Field14: true,
		Field104: 100000, Field100: 100000, Field101: 100000, Field102: text, Field103: text, Field29: 100000,
		Field30: true, Field60: 100000, Field271: 100000, Field272: 100000, Field150: 100000, Field23: 100000,
		Field24: true, Field25: 100000, Field78: true, Field67: 100000, Field68: 100000, Field128: 100000,
		Field129: text, Field131: 100000,
	}
}

func protoMessage() *benchpb.BenchmarkMessage {
	return &benchpb.BenchmarkMessage{
		Field1: text, Field9: text, Field18: text, Field80: true, Field81: true, Field2: 100000, Field3: 100000,
		Field280: 100000, Field6: 100000, Field22: 100000, Field4: text, Field59: true, Field7: text,
		Field16: 100000, Field130: 100000, Field12: true, Field17: true, Field13: true, Field14: true,
		Field104: 100000, Field100: 100000, Field101: 100000, Field102: text, Field103: text, Field29: 100000,
		Field30: true, Field60: 100000, Field271: 100000, Field272: 100000, Field150: 100000, Field23: 100000,
		Field24: true, Field25: 100000, Field78: true, Field67: 100000, Field68: 100000, Field128: 100000,
		Field129: text, Field131: 100000,
	}
}

func TestWorkload(t *testing.T) {
	y := yrpcMessage().MarshalAppend(nil)
	p, err := proto.Marshal(protoMessage())
	if err != nil {
		t.Fatal(err)
	}
	if len(y) != 581 || len(p) != 581 {
		t.Fatalf("workload is %d bytes in yrpc, %d in protobuf; want 581", len(y), len(p))
	}
	var back hellorpc.BenchmarkMessage
	if err := back.Unmarshal(p); err != nil || !cmp.Equal(&back, yrpcMessage()) {
		t.Fatalf("yrpc decodes protobuf's workload as %+v (err %v)", back, err)
	}
}

func BenchmarkSize(b *testing.B) {
	b.Run("yrpc", func(b *testing.B) {
		m := yrpcMessage()
		b.ReportAllocs()
		for b.Loop() {
			_ = m.Size()
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		m := protoMessage()
		b.ReportAllocs()
		for b.Loop() {
			_ = proto.Size(m)
		}
	})
	b.Run("vtprotobuf", func(b *testing.B) {
		m := protoMessage()
		b.ReportAllocs()
		for b.Loop() {
			_ = m.SizeVT()
		}
	})
}

// BenchmarkMarshal encodes into a reused buffer.
func BenchmarkMarshal(b *testing.B) {
	b.Run("yrpc", func(b *testing.B) {
		m := yrpcMessage()
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf = m.MarshalAppend(buf[:0])
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		m := protoMessage()
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = proto.MarshalOptions{}.MarshalAppend(buf[:0], m)
		}
	})
	b.Run("vtprotobuf", func(b *testing.B) {
		m := protoMessage()
		buf := make([]byte, 1024)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MarshalToVT(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnmarshal decodes into a reused message.
func BenchmarkUnmarshal(b *testing.B) {
	data := yrpcMessage().MarshalAppend(nil)
	b.Run("yrpc", func(b *testing.B) {
		var m hellorpc.BenchmarkMessage
		b.ReportAllocs()
		for b.Loop() {
			if err := m.Unmarshal(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		m := new(benchpb.BenchmarkMessage)
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(data, m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vtprotobuf", func(b *testing.B) {
		m := new(benchpb.BenchmarkMessage)
		b.ReportAllocs()
		for b.Loop() {
			m.Reset()
			if err := m.UnmarshalVT(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMarshalUnmarshal is one encode into a reused buffer and one
// decode into a reused message: what a call costs each side.
func BenchmarkMarshalUnmarshal(b *testing.B) {
	b.Run("yrpc", func(b *testing.B) {
		in := yrpcMessage()
		var out hellorpc.BenchmarkMessage
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf = in.MarshalAppend(buf[:0])
			if err := out.Unmarshal(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		in := protoMessage()
		out := new(benchpb.BenchmarkMessage)
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = proto.MarshalOptions{}.MarshalAppend(buf[:0], in)
			if err := proto.Unmarshal(buf, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vtprotobuf", func(b *testing.B) {
		in := protoMessage()
		out := new(benchpb.BenchmarkMessage)
		buf := make([]byte, 1024)
		b.ReportAllocs()
		for b.Loop() {
			n, err := in.MarshalToVT(buf)
			if err != nil {
				b.Fatal(err)
			}
			out.Reset()
			if err := out.UnmarshalVT(buf[:n]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInterleaved runs yrpc, vtprotobuf and google.golang.org/protobuf
// in alternating batches of 100 calls and reports the fastest batch of
// each, per call (yrpc-ns/op, vt-ns/op, proto-ns/op), and the ratios. On a
// shared, noisy machine the minimum of interleaved batches compares the
// codecs under the same conditions, where separate benchmarks run minutes
// apart under different load. ns/op is the time of one round of all three.
func BenchmarkInterleaved(b *testing.B) {
	yin, yout := yrpcMessage(), new(hellorpc.BenchmarkMessage)
	pin, pout := protoMessage(), new(benchpb.BenchmarkMessage)
	ybuf := make([]byte, 0, 1024)
	vbuf := make([]byte, 1024)
	pbuf := make([]byte, 0, 1024)
	data := yin.MarshalAppend(nil)
	check := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	yrpcMarshal := func() { ybuf = yin.MarshalAppend(ybuf[:0]) }
	vtMarshal := func() { _, err := pin.MarshalToVT(vbuf); check(err) }
	protoMarshal := func() { pbuf, _ = proto.MarshalOptions{}.MarshalAppend(pbuf[:0], pin) }
	yrpcUnmarshal := func() { check(yout.Unmarshal(data)) }
	vtUnmarshal := func() { pout.Reset(); check(pout.UnmarshalVT(data)) }
	protoUnmarshal := func() { check(proto.Unmarshal(data, pout)) }
	b.Run("Size", func(b *testing.B) {
		interleave(b, func() { _ = yin.Size() }, func() { _ = pin.SizeVT() }, func() { _ = proto.Size(pin) })
	})
	b.Run("Marshal", func(b *testing.B) { interleave(b, yrpcMarshal, vtMarshal, protoMarshal) })
	b.Run("Unmarshal", func(b *testing.B) { interleave(b, yrpcUnmarshal, vtUnmarshal, protoUnmarshal) })
	b.Run("MarshalUnmarshal", func(b *testing.B) {
		interleave(b,
			func() { yrpcMarshal(); check(yout.Unmarshal(ybuf)) },
			func() { n, err := pin.MarshalToVT(vbuf); check(err); pout.Reset(); check(pout.UnmarshalVT(vbuf[:n])) },
			func() { protoMarshal(); check(proto.Unmarshal(pbuf, pout)) })
	})
}

func interleave(b *testing.B, yrpc, vt, pb func()) {
	const batch = 100
	codecs := []func(){yrpc, vt, pb}
	best := make([]float64, len(codecs))
	for b.Loop() {
		for i, f := range codecs {
			start := time.Now()
			for range batch {
				f()
			}
			if d := float64(time.Since(start).Nanoseconds()) / batch; best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	b.ReportMetric(best[0], "yrpc-ns/op")
	b.ReportMetric(best[1], "vt-ns/op")
	b.ReportMetric(best[2], "proto-ns/op")
	b.ReportMetric(best[1]/best[0], "vt/yrpc")
	b.ReportMetric(best[2]/best[0], "proto/yrpc")
}
