package interop_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/net/http2/hpack"

	yhpack "github.com/yrpc/yrpc/internal/hpack"
)

// TestHPACKAgainstXNet checks yrpc's HPACK (internal/hpack, which the
// gRPC side of rt uses) against golang.org/x/net's, which grpc-go and
// net/http use: random header blocks on one connection, with table size
// changes, encoded by each and decoded by the other.
func TestHPACKAgainstXNet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{":status", ":path", "content-type", "grpc-status", "grpc-message", "grpc-timeout", "x-id", "x-bin", "user-agent", "cache-control"}
	field := func() hpack.HeaderField {
		v := make([]byte, rng.IntN(3)*rng.IntN(200))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		if rng.IntN(2) == 0 {
			v = []byte("application/grpc")[:rng.IntN(17)]
		}
		return hpack.HeaderField{Name: names[rng.IntN(len(names))], Value: string(v), Sensitive: rng.IntN(6) == 0}
	}

	// yrpc encodes, x/net decodes.
	yenc := yhpack.NewEncoder()
	var got []hpack.HeaderField
	xdec := hpack.NewDecoder(yhpack.DefaultTableSize, func(f hpack.HeaderField) { got = append(got, f) })
	// x/net encodes, yrpc decodes.
	var xbuf bytes.Buffer
	xenc := hpack.NewEncoder(&xbuf)
	ydec := yhpack.NewDecoder(yhpack.DefaultTableSize, 1<<16)

	for block := range 3000 {
		if rng.IntN(40) == 0 {
			v := uint32(rng.IntN(2 * yhpack.DefaultTableSize))
			yenc.SetMaxTableSize(v)
			xenc.SetMaxDynamicTableSizeLimit(v)
		}
		var want []hpack.HeaderField
		var yb []byte
		xbuf.Reset()
		for range 1 + rng.IntN(10) {
			f := field()
			want = append(want, f)
			yb = yenc.AppendField(yb, f.Name, f.Value, f.Sensitive)
			if err := xenc.WriteField(f); err != nil {
				t.Fatal(err)
			}
		}
		got = got[:0]
		if _, err := xdec.Write(yb); err != nil {
			t.Fatalf("block %d: x/net cannot decode yrpc's block %x: %v", block, yb, err)
		}
		if err := xdec.Close(); err != nil || !slices.Equal(got, want) {
			t.Fatalf("block %d: x/net decoded %v, %v; want %v", block, got, err, want)
		}
		var ygot []hpack.HeaderField
		err := ydec.Decode(xbuf.Bytes(), func(f yhpack.Field) {
			ygot = append(ygot, hpack.HeaderField{Name: f.Name, Value: f.Value, Sensitive: f.Sensitive})
		})
		if err != nil || !slices.Equal(ygot, want) {
			t.Fatalf("block %d: yrpc decoded x/net's block %x as %v, %v; want %v", block, xbuf.Bytes(), ygot, err, want)
		}
	}
}
