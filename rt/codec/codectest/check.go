package codectest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
)

// Message is a generated message: a pointer to its struct.
type Message[T any] interface {
	*T
	rt.Message
}

// RoundTrip fills n random values of M and checks for each that Size equals
// the encoded length, that MarshalAppend appends after existing bytes (map
// order may differ between two encodings, so only the length is compared), that
// Unmarshal into a dirty message gives back an equal value, and that
// re-encoding gives the same size; and that UnmarshalOwned decodes the
// same value.
func RoundTrip[T any, M Message[T]](t testing.TB, seed uint64, n int) {
	t.Helper()
	f := &Filler{Rand: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	dirty := M(new(T))
	f.Fill(dirty)
	for i := range n {
		in := M(new(T))
		f.Fill(in)
		b := in.MarshalAppend(nil)
		if got := in.Size(); got != len(b) {
			t.Fatalf("value %d: Size() = %d, encoding has %d bytes", i, got, len(b))
		}
		prefixed := in.MarshalAppend([]byte("prefix"))
		if !bytes.Equal(prefixed[:6], []byte("prefix")) || len(prefixed) != 6+len(b) {
			t.Fatalf("value %d: MarshalAppend(prefix) does not append the same bytes", i)
		}
		out := dirty
		if err := out.Unmarshal(b); err != nil {
			t.Fatalf("value %d: Unmarshal: %v\nvalue: %+v", i, err, in)
		}
		// DeepEqual is the fast path: decoded times are UTC like the
		// filled ones; cmp.Equal also compares times with Equal.
		if !reflect.DeepEqual(in, out) && !cmp.Equal(in, out) {
			t.Fatalf("value %d: round trip differs (-in +out):\n%s", i, cmp.Diff(in, out))
		}
		if got := out.Size(); got != len(b) {
			t.Fatalf("value %d: decoded Size() = %d, want %d", i, got, len(b))
		}
		// UnmarshalOwned, into a dirty message, of a buffer it keeps.
		owned, ok := any(M(new(T))).(rt.OwnedUnmarshaler)
		if !ok {
			t.Fatalf("%T has no UnmarshalOwned", in)
		}
		f.Fill(owned.(M))
		if err := owned.UnmarshalOwned(bytes.Clone(b)); err != nil {
			t.Fatalf("value %d: UnmarshalOwned: %v\nvalue: %+v", i, err, in)
		}
		if !reflect.DeepEqual(in, owned.(M)) && !cmp.Equal(in, owned.(M)) {
			t.Fatalf("value %d: UnmarshalOwned round trip differs (-in +out):\n%s", i, cmp.Diff(in, owned.(M)))
		}
	}
}

// Truncations encodes random values of M and decodes every prefix of each
// encoding: a prefix that ends between two top-level fields is a valid
// message, every other prefix must fail with an error wrapping
// codec.ErrTruncated or another codec error, never panic.
func Truncations[T any, M Message[T]](t testing.TB, seed uint64, n int) {
	t.Helper()
	// Small values: decoding every prefix costs time quadratic in the size.
	f := &Filler{Rand: rand.New(rand.NewPCG(seed, seed+1)), MaxDepth: 1, MaxLen: 2}
	for i := range n {
		in := M(new(T))
		f.Fill(in)
		b := in.MarshalAppend(nil)
		for len(b) > 2048 {
			f.Fill(in)
			b = in.MarshalAppend(b[:0])
		}
		bounds := fieldBoundaries(t, b)
		for cut := range len(b) {
			err := M(new(T)).Unmarshal(b[:cut])
			switch {
			case bounds[cut] && err != nil:
				t.Fatalf("value %d: prefix of %d bytes ends between fields but fails: %v", i, cut, err)
			case !bounds[cut] && err == nil:
				t.Fatalf("value %d: prefix of %d bytes (of %d) decodes without error", i, cut, len(b))
			case err != nil:
				var ce *codec.Error
				if !errors.As(err, &ce) {
					t.Fatalf("value %d: prefix of %d bytes: error %v is not a *codec.Error", i, cut, err)
				}
			}
		}
	}
}

// fieldBoundaries returns the offsets in b where a top-level field starts.
func fieldBoundaries(t testing.TB, b []byte) map[int]bool {
	bounds := map[int]bool{0: true}
	for i := 0; i < len(b); {
		tag, n := codec.ConsumeVarint(b[i:])
		if n < 0 {
			t.Fatalf("bad tag at offset %d of a valid encoding", i)
		}
		i += n
		n = codec.Skip(b[i:], tag)
		if n < 0 {
			t.Fatalf("bad field at offset %d of a valid encoding", i)
		}
		i += n
		bounds[i] = true
	}
	return bounds
}

// Malformed is an input that every message must reject with Err.
type Malformed struct {
	Name  string
	Input []byte
	Err   error
}

// MalformedInputs returns a new table of inputs that every message must
// reject. They use field 262143, which no test message declares, so that
// they reach the unknown-field path.
func MalformedInputs() []Malformed {
	return []Malformed{
		{"truncated tag", []byte{0x80}, codec.ErrTruncated},
		{"overlong tag", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, codec.ErrOverflow},
		{"tag 10 bytes over 64 bits", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, codec.ErrOverflow},
		{"field number 0", []byte{0x00, 0x00}, codec.ErrFieldNumber},
		{"wire type 6", []byte{0xf6, 0xff, 0x7f, 0x00}, codec.ErrWireType},
		{"wire type 7", []byte{0xf7, 0xff, 0x7f, 0x00}, codec.ErrWireType},
		{"end group without start", []byte{0xfc, 0xff, 0x7f}, codec.ErrGroup},
		{"unterminated group", []byte{0xfb, 0xff, 0x7f, 0x08, 0x01}, codec.ErrTruncated},
		{"mismatched group end", []byte{0xfb, 0xff, 0x7f, 0xf4, 0xff, 0x7f}, codec.ErrGroup},
		{"truncated varint value", []byte{0xf8, 0xff, 0x7f, 0x80}, codec.ErrTruncated},
		{"overlong varint value", []byte{0xf8, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, codec.ErrOverflow},
		{"truncated fixed32", []byte{0xfd, 0xff, 0x7f, 1, 2, 3}, codec.ErrTruncated},
		{"truncated fixed64", []byte{0xf9, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7}, codec.ErrTruncated},
		{"length past the end", []byte{0xfa, 0xff, 0x7f, 0x05, 1, 2}, codec.ErrTruncated},
		{"huge length", []byte{0xfa, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0x0f}, codec.ErrTruncated},
	}
}

// CheckMalformed checks that M rejects every input of MalformedInputs with
// its error.
func CheckMalformed[T any, M Message[T]](t *testing.T) {
	t.Helper()
	for _, tc := range MalformedInputs() {
		err := M(new(T)).Unmarshal(tc.Input)
		if !errors.Is(err, tc.Err) {
			t.Errorf("%s: Unmarshal(% x) = %v, want %v", tc.Name, tc.Input, err, tc.Err)
		}
	}
}

// Seeds returns the encodings of n random values of M, for f.Add.
func Seeds[T any, M Message[T]](seed uint64, n int) [][]byte {
	// Small values: the fuzzer mutates small inputs faster and better.
	f := &Filler{Rand: rand.New(rand.NewPCG(seed, seed+2)), MaxDepth: 1, MaxLen: 2}
	var out [][]byte
	for range n {
		in := M(new(T))
		f.Fill(in)
		b := in.MarshalAppend(nil)
		for len(b) > 1024 {
			f.Fill(in)
			b = in.MarshalAppend(b[:0])
		}
		out = append(out, b)
	}
	return out
}

// equalOpts compare decoded messages: arbitrary input may hold NaNs and
// present-but-empty bytes that re-encode as absent.
var equalOpts = cmp.Options{cmpopts.EquateNaNs(), cmpopts.EquateEmpty()}

// CheckDecode is the body of a fuzz target: decoding arbitrary b must not
// panic, and when it succeeds, re-encoding the result and decoding that
// must give an equal message whose encoding has the same size.
func CheckDecode[T any, M Message[T]](t *testing.T, b []byte) {
	m := M(new(T))
	if err := m.Unmarshal(b); err != nil {
		var ce *codec.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %v is not a *codec.Error", err)
		}
		return
	}
	enc := m.MarshalAppend(nil)
	if len(enc) != m.Size() {
		t.Fatalf("Size() = %d, encoding has %d bytes", m.Size(), len(enc))
	}
	again := M(new(T))
	if err := again.Unmarshal(enc); err != nil {
		t.Fatalf("re-encoded message does not decode: %v", err)
	}
	if diff := cmp.Diff(m, again, equalOpts); diff != "" {
		t.Fatalf("re-encoded message differs (-first +second):\n%s", diff)
	}
}

// Fuzz seeds f with 20 encoder outputs of M and runs CheckDecode on every
// input: a fuzz target's whole body.
func Fuzz[T any, M Message[T]](f *testing.F, seed uint64) {
	for _, s := range Seeds[T, M](seed, 20) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Fuzz(CheckDecode[T, M])
}

// Suite runs RoundTrip (n values), Truncations (n/20 values) and
// CheckMalformed on M as subtests named name.
func Suite[T any, M Message[T]](t *testing.T, name string, seed uint64, n int) {
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		RoundTrip[T, M](t, seed, n)
		Truncations[T, M](t, seed+1, max(n/20, 1))
		CheckMalformed[T, M](t)
	})
}
