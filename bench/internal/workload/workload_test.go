package workload

import (
	"slices"
	"strings"
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
	if err := Check(dst, NewRequest()); err != nil {
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
		{"short field4", func(m *benchpb.BenchmarkMessage) { m.Field4 = m.Field4[1:] }},
	}
	for _, tt := range tests {
		m := Answer(NewRequest())
		tt.mutate(m)
		if Check(m, NewRequest()) == nil {
			t.Errorf("%s: Check accepted a bad reply", tt.name)
		}
	}
}

func TestNewSized(t *testing.T) {
	for _, size := range []int{0, 48, 64, 100, 580, RequestSize, 582, 700, 16 << 10, 256 << 10, 1 << 20} {
		m, err := NewSized(size)
		if err != nil {
			t.Errorf("NewSized(%d): %v", size, err)
			continue
		}
		want := size
		if want == 0 {
			want = RequestSize
		}
		if got := proto.Size(m); got != want {
			t.Errorf("NewSized(%d) encodes to %d bytes", size, got)
		}
		if size > RequestSize && (m.Field9 != Text || m.Field131 != Int || !strings.HasPrefix(m.Field4, Text+" ")) {
			t.Errorf("NewSized(%d) lost the workload's fields", size)
		}
		rep := proto.Clone(m).(*benchpb.BenchmarkMessage)
		if err := Check(Answer(rep), m); err != nil {
			t.Errorf("NewSized(%d): the answer does not check: %v", size, err)
		}
		again, _ := NewSized(size)
		if !proto.Equal(m, again) {
			t.Errorf("NewSized(%d) is not deterministic", size)
		}
	}
	if _, err := NewSized(2); err == nil {
		t.Error("NewSized(2) succeeded")
	}
}

// TestNewSized64 pins the 64-byte request that the README describes.
func TestNewSized64(t *testing.T) {
	m, err := NewSized(64)
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	r := m.ProtoReflect()
	for i, fields := 0, r.Descriptor().Fields(); i < fields.Len(); i++ {
		if fd := fields.Get(i); r.Has(fd) {
			set = append(set, string(fd.Name()))
		}
	}
	want := []string{"field80", "field81", "field2", "field3", "field280", "field6", "field22", "field4",
		"field59", "field16", "field130", "field12", "field17", "field13", "field14", "field104", "field100"}
	if !slices.Equal(set, want) || len(m.Field4) != 2 {
		t.Errorf("NewSized(64) sets %v with a %d-byte field4, want %v and 2", set, len(m.Field4), want)
	}
}

func TestSameTail(t *testing.T) {
	long := PadText(1000)
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{long, long[:999] + "!", false},
		{long, "!" + long[1:], true}, // only the tail is compared
	}
	for _, tt := range tests {
		if got := SameTail(tt.a, tt.b); got != tt.want {
			t.Errorf("SameTail(%.10q, %.10q) = %v", tt.a, tt.b, got)
		}
	}
}
