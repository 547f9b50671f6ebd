package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMetadataRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		kv   []string
		want []string
	}{
		{"nil", nil, nil},
		{"one pair", []string{"k", "v"}, []string{"k", "v"}},
		{"empty strings", []string{"", ""}, []string{"", ""}},
		{"repeated key", []string{"k", "1", "k", "2"}, []string{"k", "1", "k", "2"}},
		{"odd", []string{"k", "v", "lonely"}, []string{"k", "v", "lonely", ""}},
		{"long value", []string{"k", strings.Repeat("x", 300)}, []string{"k", strings.Repeat("x", 300)}},
		{"utf8 and binary", []string{"ключ", "\x00\xff"}, []string{"ключ", "\x00\xff"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := AppendMetadata(nil, c.kv)
			if len(b) != MetadataSize(c.kv) {
				t.Errorf("block is %d bytes, MetadataSize says %d", len(b), MetadataSize(c.kv))
			}
			got, err := ParseMetadata(b, []string{"keep"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append([]string{"keep"}, c.want...), got); diff != "" {
				t.Errorf("parsed (-want +got):\n%s", diff)
			}
			clear(b) // the strings must not alias b
			if cmp.Diff(append([]string{"keep"}, c.want...), got) != "" {
				t.Errorf("parsed strings alias the block")
			}
		})
	}
}

func TestParseMetadataErrors(t *testing.T) {
	tooMany := AppendMetadata(nil, make([]string, 2*MaxMetadataPairs+2))
	for _, c := range []struct {
		name string
		in   string
		msg  string
	}{
		{"key without value", "\x01k", `key "k" has no value`},
		{"length past end", "\x05ab", "string of 5 bytes at offset 1 runs past the end of the 3-byte block"},
		{"truncated varint", "\x01k\x80", "bad length at offset 2 of 3"},
		{"varint overflow", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "bad length at offset 0"},
		{"huge length", "\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "runs past the end"},
		{"too many pairs", string(tooMany), "more than 1024 pairs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := []string{"keep"}
			got, err := ParseMetadata([]byte(c.in), dst)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q, want ErrMalformed saying %q", err, c.msg)
			}
			if len(got) != 1 || got[0] != "keep" {
				t.Errorf("dst changed on error: %q", got)
			}
		})
	}
	if _, err := ParseMetadata(AppendMetadata(nil, make([]string, 2*MaxMetadataPairs)), nil); err != nil {
		t.Errorf("exactly MaxMetadataPairs pairs: %v", err)
	}
}
