package hpack

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeAll(d *Decoder, p []byte) ([]Field, error) {
	var fs []Field
	err := d.Decode(p, func(f Field) { fs = append(fs, f) })
	return fs, err
}

// TestRFCExamples encodes and decodes the requests of RFC 7541 Appendix
// C.4 (three requests on one connection, Huffman-coded) and checks the
// blocks byte for byte and the dynamic table after them.
func TestRFCExamples(t *testing.T) {
	reqs := []struct {
		fields [][2]string
		block  string
	}{
		{[][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}},
			"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"},
		{[][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}, {"cache-control", "no-cache"}},
			"8286 84be 5886 a8eb 1064 9cbf"},
		{[][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", "/index.html"}, {":authority", "www.example.com"}, {"custom-key", "custom-value"}},
			"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"},
	}
	enc, dec := NewEncoder(), NewDecoder(DefaultTableSize, 1<<10)
	for i, r := range reqs {
		var b []byte
		var want []Field
		for _, f := range r.fields {
			b = enc.AppendField(b, f[0], f[1], false)
			want = append(want, Field{Name: f[0], Value: f[1]})
		}
		if w := unhex(t, r.block); !bytes.Equal(b, w) {
			t.Errorf("request %d: encoded %x, want %x", i+1, b, w)
		}
		got, err := decodeAll(dec, unhex(t, r.block))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("request %d: decoded %v, %v; want %v", i+1, got, err, want)
		}
	}
	wantTable := []Field{{Name: ":authority", Value: "www.example.com"}, {Name: "cache-control", Value: "no-cache"}, {Name: "custom-key", Value: "custom-value"}}
	for name, tb := range map[string]*dynTable{"encoder": &enc.table, "decoder": &dec.table} {
		if !slices.Equal(tb.entries, wantTable) || tb.size != 164 {
			t.Errorf("%s table = %v (%d bytes), want %v (164 bytes)", name, tb.entries, tb.size, wantTable)
		}
	}
}

// TestHuffman checks strings of RFC 7541 Appendix C.4 and every byte
// value through the coder.
func TestHuffman(t *testing.T) {
	for s, h := range map[string]string{
		"www.example.com": "f1e3c2e5f23a6ba0ab90f4ff",
		"no-cache":        "a8eb10649cbf",
		"custom-key":      "25a849e95ba97d7f",
		"custom-value":    "25a849e95bb8e8b4bf",
	} {
		if got := appendHuffman(nil, s); hex.EncodeToString(got) != h || huffmanLen(s) != len(got) {
			t.Errorf("%q: coded %x (length %d), want %s", s, got, huffmanLen(s), h)
		}
	}
	var all []byte
	for i := range 256 {
		all = append(all, byte(i), byte(255-i), byte(i))
	}
	for n := range len(all) {
		s := string(all[:n])
		got, err := appendUnhuffman(nil, appendHuffman(nil, s))
		if err != nil || string(got) != s {
			t.Fatalf("%d bytes: decoded %q, %v; want %q", n, got, err, s)
		}
	}
}

// TestRoundTrip sends random blocks through an encoder and a decoder,
// changing the table size between blocks, and checks every field arrives
// as sent, sensitive fields marked.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{":status", "content-type", "grpc-status", "grpc-message", "x-id", "x-trace-bin", "user-agent", ":path"}
	enc, dec := NewEncoder(), NewDecoder(DefaultTableSize, 1<<16)
	for block := range 2000 {
		if rng.IntN(50) == 0 {
			enc.SetMaxTableSize(uint32(rng.IntN(2 * DefaultTableSize)))
		}
		var b []byte
		var want []Field
		for range rng.IntN(12) {
			v := make([]byte, rng.IntN(3)*rng.IntN(300))
			for i := range v {
				v[i] = byte(rng.IntN(256))
			}
			if rng.IntN(2) == 0 {
				v = []byte(strings.Repeat("abc", rng.IntN(4))) // repeats
			}
			f := Field{Name: names[rng.IntN(len(names))], Value: string(v), Sensitive: rng.IntN(5) == 0}
			b = enc.AppendField(b, f.Name, f.Value, f.Sensitive)
			want = append(want, f)
		}
		got, err := decodeAll(dec, b)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("block %d: decoded %v, %v; want %v", block, got, err, want)
		}
		if !slices.Equal(enc.table.entries, dec.table.entries) {
			t.Fatalf("block %d: tables differ:\nencoder %v\ndecoder %v", block, enc.table.entries, dec.table.entries)
		}
	}
}

// TestDecodeErrors feeds blocks a hostile or broken peer could send.
func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		want        string // in the error
	}{
		{"index 0", "80", "index 0"},
		{"index past the tables", "be", "index 62"},
		{"name index past the tables", "7f00 00", "name index 63"},
		{"integer beyond 32 bits", "ff ffffffff7f", "beyond 32 bits"},
		{"integer cut short", "ff ff", "ends inside"},
		{"string cut short", "00 03 6162", "ends inside"},
		{"string over the limit", "00 7f 62", "longer than the limit"},
		{"Huffman decoded over the limit", "00 01 61 d0" + strings.Repeat("00", 80), "longer than the limit"}, // 128 "0"s
		{"size update after a field", "82 20", "after a field"},
		{"size update over the limit", "3fe21f", "limit is 4096"},
		{"Huffman padding not ones", "00 81 00 81 00", "padded"},
		{"Huffman padding of 8 bits", "00 81 ff 81 00", "padded"},
		{"Huffman EOS", "00 84 ffffffff 80", "EOS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeAll(NewDecoder(DefaultTableSize, 100), unhex(t, tc.block))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode(%s) = %v, want an error with %q", tc.block, err, tc.want)
			}
		})
	}
	if !errors.Is(func() error { _, err := decodeAll(NewDecoder(0, 10), unhex(t, "00 03 6162")); return err }(), ErrTruncated) {
		t.Error("a cut string is not ErrTruncated")
	}
}

// TestTableSizeUpdates checks that a smaller table the peer asks for is
// announced at the next block, the lowest size first, and applied by the
// decoder.
func TestTableSizeUpdates(t *testing.T) {
	enc, dec := NewEncoder(), NewDecoder(DefaultTableSize, 100)
	b := enc.AppendField(nil, "x-a", "1", false)
	if _, err := decodeAll(dec, b); err != nil {
		t.Fatal(err)
	}
	enc.SetMaxTableSize(0)
	enc.SetMaxTableSize(100)
	b = enc.AppendField(nil, "x-a", "1", false)
	if !bytes.HasPrefix(b, unhex(t, "20 3f45")) { // 0, then 100
		t.Fatalf("block %x does not start with updates to 0 and 100", b)
	}
	if _, err := decodeAll(dec, b); err != nil || dec.table.max != 100 || len(dec.table.entries) != 1 {
		t.Fatalf("decoder: %v, table max %d with %d entries; want max 100, 1 entry", err, dec.table.max, len(dec.table.entries))
	}
	// Shrinking to 2000 and growing back to 3000 empties the table too:
	// the peer must evict as if it had been at 2000.
	enc.SetMaxTableSize(2000)
	enc.SetMaxTableSize(3000)
	if b = enc.AppendField(nil, "x-b", "2", false); !bytes.HasPrefix(b, unhex(t, "20 3f9917")) { // 0, then 3000
		t.Fatalf("block %x does not start with updates to 0 and 3000", b)
	}
	if len(enc.table.entries) != 1 {
		t.Errorf("the encoder's table holds %v, want only x-b", enc.table.entries)
	}
}

// TestEvictionKeepsNothing checks that evicted entries release their
// strings and that a field larger than the table empties it.
func TestEvictionKeepsNothing(t *testing.T) {
	var tb dynTable
	tb.setMax(100)
	tb.add(Field{Name: "a", Value: "1"})
	tb.add(Field{Name: "b", Value: "2"})
	tb.add(Field{Name: "c", Value: strings.Repeat("x", 60)}) // evicts a and b
	if len(tb.entries) != 1 || tb.entries[0].Name != "c" || tb.size != 93 {
		t.Fatalf("table %v (%d bytes), want only c (93 bytes)", tb.entries, tb.size)
	}
	if rest := tb.entries[1:cap(tb.entries)]; slices.ContainsFunc(rest, func(f Field) bool { return f != Field{} }) {
		t.Errorf("the array keeps evicted fields: %v", rest)
	}
	tb.add(Field{Name: "d", Value: strings.Repeat("y", 100)})
	if len(tb.entries) != 0 || tb.size != 0 {
		t.Errorf("after a field larger than the table: %v (%d bytes), want empty", tb.entries, tb.size)
	}
}

// FuzzDecode checks that no block makes the decoder panic or emit a
// string over its limit, and that what it decodes survives a round trip.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "3fe11f 82", "00 81 00 81 00", "7f00 00"} {
		f.Add(unhex(&testing.T{}, s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		fs, err := decodeAll(NewDecoder(DefaultTableSize, 256), p)
		if err != nil {
			return
		}
		enc, dec := NewEncoder(), NewDecoder(DefaultTableSize, 1<<10)
		var b []byte
		for _, f := range fs {
			if len(f.Name) > 256 || len(f.Value) > 256 {
				t.Fatalf("emitted a string over the limit: %d, %d bytes", len(f.Name), len(f.Value))
			}
			b = enc.AppendField(b, f.Name, f.Value, f.Sensitive)
		}
		got, err := decodeAll(dec, b)
		if err != nil || !slices.Equal(got, fs) {
			t.Fatalf("round trip: %v, %v; want %v", got, err, fs)
		}
	})
}
