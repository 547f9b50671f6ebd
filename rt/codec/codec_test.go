package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt/codec"
)

func TestVarint(t *testing.T) {
	tests := []struct {
		v    uint64
		wire []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{300, []byte{0xac, 0x02}},
		{100000, []byte{0xa0, 0x8d, 0x06}},
		{math.MaxUint32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{math.MaxUint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, tc := range tests {
		got := codec.AppendVarint(nil, tc.v)
		if !bytes.Equal(got, tc.wire) {
			t.Errorf("AppendVarint(%d) = % x, want % x", tc.v, got, tc.wire)
		}
		if n := codec.SizeVarint(tc.v); n != len(tc.wire) {
			t.Errorf("SizeVarint(%d) = %d, want %d", tc.v, n, len(tc.wire))
		}
		v, n := codec.ConsumeVarint(append(tc.wire, 0xff))
		if v != tc.v || n != len(tc.wire) {
			t.Errorf("ConsumeVarint(% x) = %d, %d", tc.wire, v, n)
		}
	}
	for i := range 64 {
		v := uint64(1) << i
		if codec.SizeVarint(v) != len(codec.AppendVarint(nil, v)) || codec.SizeVarint(v-1) != len(codec.AppendVarint(nil, v-1)) {
			t.Errorf("SizeVarint wrong around 2^%d", i)
		}
		// Around every power of two, against encoding/binary, appended
		// after existing bytes, and back.
		for _, x := range []uint64{v - 1, v, v + 1} {
			got, want := codec.AppendVarint([]byte{0xee}, x), binary.AppendUvarint([]byte{0xee}, x)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendVarint(%d) = % x, want % x", x, got[1:], want[1:])
			}
			if back, n := codec.ConsumeVarint(got[1:]); back != x || n != len(got)-1 {
				t.Errorf("ConsumeVarint(AppendVarint(%d)) = %d, %d", x, back, n)
			}
		}
	}
}

func TestConsumeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		err  error
	}{
		{"empty", nil, codec.ErrTruncated},
		{"unterminated", []byte{0x80, 0x80}, codec.ErrTruncated},
		{"11 bytes", bytes.Repeat([]byte{0xff}, 11), codec.ErrOverflow},
		{"10th byte over 1", append(bytes.Repeat([]byte{0xff}, 9), 0x02), codec.ErrOverflow},
	}
	for _, tc := range tests {
		_, n := codec.ConsumeVarint(tc.in)
		if err := codec.Err("m", "f", n); n >= 0 || !errors.Is(err, tc.err) {
			t.Errorf("%s: ConsumeVarint = %d (%v), want %v", tc.name, n, err, tc.err)
		}
	}
	if _, n := codec.ConsumeFixed32([]byte{1, 2, 3}); n >= 0 {
		t.Error("ConsumeFixed32 of 3 bytes succeeded")
	}
	if _, n := codec.ConsumeFixed64([]byte{1, 2, 3, 4, 5, 6, 7}); n >= 0 {
		t.Error("ConsumeFixed64 of 7 bytes succeeded")
	}
	if _, n := codec.ConsumeBytes([]byte{0x03, 1, 2}); n >= 0 {
		t.Error("ConsumeBytes past the end succeeded")
	}
}

func TestZigZag(t *testing.T) {
	for _, v := range []int64{0, -1, 1, -2, math.MaxInt64, math.MinInt64} {
		if got := codec.DecodeZigZag64(codec.EncodeZigZag64(v)); got != v {
			t.Errorf("zigzag64 %d -> %d", v, got)
		}
	}
	for _, v := range []int32{0, -1, 1, math.MaxInt32, math.MinInt32} {
		if got := codec.DecodeZigZag32(codec.EncodeZigZag32(v)); got != v {
			t.Errorf("zigzag32 %d -> %d", v, got)
		}
	}
	if codec.EncodeZigZag32(-1) != 1 || codec.EncodeZigZag64(-2) != 3 || codec.EncodeZigZag32(math.MinInt32) != math.MaxUint32 {
		t.Error("zigzag does not map as protobuf does")
	}
}

func TestFixed(t *testing.T) {
	b := codec.AppendFixed64(codec.AppendFixed32(nil, 0x01020304), 0x0102030405060708)
	if want := []byte{4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1}; !bytes.Equal(b, want) {
		t.Fatalf("fixed = % x", b)
	}
	if v, n := codec.ConsumeFixed32(b); v != 0x01020304 || n != 4 {
		t.Fatal("ConsumeFixed32")
	}
	if v, n := codec.ConsumeFixed64(b[4:]); v != 0x0102030405060708 || n != 8 {
		t.Fatal("ConsumeFixed64")
	}
}

func TestSkip(t *testing.T) {
	group := []byte{0x08, 0x01, 0x13, 0x08, 0x02, 0x14, 0x0c} // field 1 group holding field 2 group, then end
	tests := []struct {
		name string
		tag  uint64
		in   []byte
		n    int
	}{
		{"varint", codec.Tag(1, codec.VarintType), []byte{0x80, 0x01, 0xff}, 2},
		{"fixed32", codec.Tag(1, codec.Fixed32Type), []byte{1, 2, 3, 4, 5}, 4},
		{"fixed64", codec.Tag(1, codec.Fixed64Type), make([]byte, 9), 8},
		{"bytes", codec.Tag(1, codec.BytesType), []byte{2, 'a', 'b', 'c'}, 3},
		{"nested groups", codec.Tag(1, codec.StartGroupType), group, len(group)},
		{"wire type 6", 1<<3 | 6, []byte{0}, -1},
		{"field 0", 0, []byte{0}, -1},
		{"lone end group", codec.Tag(1, codec.EndGroupType), nil, -1},
	}
	for _, tc := range tests {
		n := codec.Skip(tc.in, tc.tag)
		if (tc.n < 0 && n >= 0) || (tc.n >= 0 && n != tc.n) {
			t.Errorf("%s: Skip = %d, want %d", tc.name, n, tc.n)
		}
	}
}

func TestDeepGroups(t *testing.T) {
	var b []byte
	for range codec.MaxDepth + 1 {
		b = append(b, 0x0b) // start group 1
	}
	if n := codec.Skip(b[1:], codec.Tag(1, codec.StartGroupType)); !errors.Is(codec.Err("m", "", n), codec.ErrDepth) {
		t.Fatalf("Skip of deep groups = %d", n)
	}
}

func TestWellKnownTypes(t *testing.T) {
	for _, tm := range []time.Time{time.Unix(0, 0), time.Unix(1, 2), time.Unix(-1, 5), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), {}} {
		b := codec.AppendTime(nil, tm)
		if len(b) != codec.SizeBytes(codec.SizeTime(tm)) {
			t.Errorf("%v: size %d, encoded %d", tm, codec.SizeBytes(codec.SizeTime(tm)), len(b))
		}
		got, n := codec.ConsumeTime(b)
		if n != len(b) || !got.Equal(tm) || got.Location() != time.UTC {
			t.Errorf("time %v -> %v (%d)", tm, got, n)
		}
	}
	for _, d := range []time.Duration{0, 1, -1, time.Second + 5, -90 * time.Minute, math.MaxInt64, math.MinInt64} {
		b := codec.AppendDuration(nil, d)
		got, n := codec.ConsumeDuration(b)
		if n != len(b) || got != d || len(b) != codec.SizeBytes(codec.SizeDuration(d)) {
			t.Errorf("duration %v -> %v (%d)", d, got, n)
		}
	}
	// 300 years does not fit a time.Duration.
	big := codec.AppendVarint([]byte{0x08}, uint64(300*365*24*3600))
	if _, n := codec.ConsumeDuration(append([]byte{byte(len(big))}, big...)); !errors.Is(codec.Err("m", "", n), codec.ErrRange) {
		t.Errorf("ConsumeDuration(300 years) = %d", n)
	}
}

func TestErrors(t *testing.T) {
	err := codec.Err("users.User", "name", -1)
	var ce *codec.Error
	if !errors.As(err, &ce) || !errors.Is(err, codec.ErrTruncated) || err.Error() != "codec: decode users.User.name: unexpected end of input" {
		t.Errorf("Err = %v", err)
	}
	if err := codec.Invalid("users.User", "name", "must not be empty"); err.Error() != "codec: invalid users.User.name: must not be empty" {
		t.Errorf("Invalid = %v", err)
	}
}

func FuzzConsumeVarint(f *testing.F) {
	for _, v := range []uint64{0, 1, 127, 128, 1 << 35, math.MaxUint64} {
		f.Add(codec.AppendVarint(nil, v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n := codec.ConsumeVarint(b)
		// encoding/binary's decoder is the reference: same value and
		// length, truncation where it wants more bytes, overflow where
		// it reports one. Ten bytes that all continue are an overflow
		// here (no more bytes could make them valid); binary says short.
		wv, wn := binary.Uvarint(b)
		if wn == 0 && len(b) >= binary.MaxVarintLen64 {
			wn = -1
		}
		switch {
		case wn > 0 && (v != wv || n != wn):
			t.Fatalf("ConsumeVarint(%x) = %d, %d; binary.Uvarint: %d, %d", b, v, n, wv, wn)
		case wn == 0 && (n >= 0 || !errors.Is(codec.Err("m", "f", n), codec.ErrTruncated)):
			t.Fatalf("ConsumeVarint(%x) = %d, %d; want truncated", b, v, n)
		case wn < 0 && (n >= 0 || !errors.Is(codec.Err("m", "f", n), codec.ErrOverflow)):
			t.Fatalf("ConsumeVarint(%x) = %d, %d; want overflow", b, v, n)
		}
		if n < 0 {
			return
		}
		if n > len(b) || n > 10 {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		// Non-canonical encodings (trailing 0x80 0x00) decode too; the
		// canonical one must not be longer.
		if enc := codec.AppendVarint(nil, v); len(enc) > n {
			t.Fatalf("%d re-encodes in %d bytes, read from %d", v, len(enc), n)
		}
	})
}

func FuzzSkip(f *testing.F) {
	f.Add(codec.AppendVarint(nil, 300), uint64(codec.Tag(1, codec.VarintType)))
	f.Add(codec.AppendBytes(nil, []byte("abc")), uint64(codec.Tag(2, codec.BytesType)))
	f.Add([]byte{0x08, 0x01, 0x0c}, uint64(codec.Tag(1, codec.StartGroupType)))
	f.Fuzz(func(t *testing.T, b []byte, tag uint64) {
		if n := codec.Skip(b, tag); n > len(b) {
			t.Fatalf("Skip = %d past %d bytes", n, len(b))
		}
	})
}

func ExampleAppendVarint() {
	b := codec.AppendVarint(nil, 300)
	v, n := codec.ConsumeVarint(b)
	fmt.Printf("% x -> %d (%d bytes)\n", b, v, n)
	// Output: ac 02 -> 300 (2 bytes)
}

func ExampleErr() {
	_, n := codec.ConsumeVarint([]byte{0x80})
	err := codec.Err("users.User", "id", n)
	fmt.Println(err, errors.Is(err, codec.ErrTruncated))
	// Output: codec: decode users.User.id: unexpected end of input true
}
