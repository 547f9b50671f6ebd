package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yrpc/yrpc/bench/benchpb"
)

// padField is the field that NewSized grows or shrinks to reach a size: a
// string that the server leaves alone and that every peer's codec moves as
// a length-delimited blob.
const padField = 4

// NewSized returns a request whose protobuf encoding is exactly size bytes;
// 0 means RequestSize, which is NewRequest's request.
//
// Above RequestSize it is NewRequest's request with field4 grown: Text,
// then a space and padding text (PadText) up to the size. Below it, the
// fields that do not fit are left empty: every string field but field4,
// then the other fields from the end of benchmark.proto's declaration
// order, until the rest plus a field4 of at least one byte fits; field4's
// padding then makes up the size. NewSized(64) keeps the first 16 of the
// 31 integer and bool fields (field80 to field100, 60 bytes) and a 2-byte
// field4.
func NewSized(size int) (*benchpb.BenchmarkMessage, error) {
	if size == 0 || size == RequestSize {
		return NewRequest(), nil
	}
	m := NewRequest()
	if size > RequestSize {
		m.Field4 = Text + " "
		return m, pad(m, size)
	}
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Kind() == protoreflect.StringKind && fd.Number() != padField {
			r.Clear(fd)
		}
	}
	m.Field4 = ""
	// Field4 of one byte takes three; drop fields from the end until it fits.
	for i := fields.Len() - 1; i >= 0 && proto.Size(m)+3 > size; i-- {
		r.Clear(fields.Get(i))
	}
	return m, pad(m, size)
}

// pad appends padding text to m's field4 until m encodes to size bytes.
func pad(m *benchpb.BenchmarkMessage, size int) error {
	head, minPad := m.Field4, 0
	base := proto.Size(m)
	if head == "" {
		base, minPad = base+2, 1 // a non-empty field4 adds its tag and length
	}
	// The length prefix grows with the padding: start from the gap and
	// shorten until the encoding fits.
	for k := size - base; k >= minPad; k-- {
		m.Field4 = head + PadText(k)
		if n := proto.Size(m); n <= size {
			if n != size {
				return fmt.Errorf("workload: no request of exactly %d bytes (got %d)", size, n)
			}
			return nil
		}
	}
	return fmt.Errorf("workload: a request cannot be as small as %d bytes", size)
}

// padWords are the words of PadText: prose-like ASCII that lz4 compresses
// about as well as it does ordinary text, unlike one repeated phrase
// (which it would shrink to nothing) or random bytes (not at all).
const padWords = `the of and to in is was that for on with as by at from his her an
	which or had are this be not but were have it one all their there been has when who will more
	no if out so said what up its about into than them can only other new some could time these two
	may then do first any my now such like our over man me even most made after also did many before
	must through back years where much your way well down should because each just those people how
	too little state good very make world still own see men work long get here between both life
	being under never day same another know while last might us great old year off come since against
	go came right used take three`

// PadText returns n bytes of padding text: words of a fixed vocabulary in
// an order drawn from a fixed seed, separated by spaces, so the same n
// always gives the same text.
func PadText(n int) string {
	if n <= 0 {
		return ""
	}
	words := strings.Fields(padWords)
	rnd := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		b.WriteString(words[rnd.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}
