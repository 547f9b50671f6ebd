package rt

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// FuzzIncomingMD turns arbitrary request fields into a gRPC call's
// metadata: no panics, and the metadata is the fields in order without
// the transport's, each "-bin" value base64-decoded (one value per
// comma-separated part), or an InvalidArgument error naming the key.
// fields holds the name, value pairs one a line.
func FuzzIncomingMD(f *testing.F) {
	f.Add("user-agent\ngrpc-go\nx-trace-bin\nAAEC\ngrpc-timeout\n1S")
	f.Add("a-bin\nAAEC, AQ==,AA\nb\nc\nd-bin\nAA")
	f.Add("a-bin\n!!\nb\nc")
	f.Add("a-bin\n,\n:path\n/x")
	f.Add("odd")
	f.Fuzz(func(t *testing.T, fields string) {
		kv := strings.Split(fields, "\n")
		in := slices.Clone(kv)
		md, err := incomingMD("p.S/M", kv)
		var want MD
		var badKey string
		for i := 0; i+1 < len(in) && badKey == ""; i += 2 {
			key, v := in[i], in[i+1]
			switch {
			case grpcwire.Reserved(key):
			case grpcwire.IsBinary(key):
				for part := range strings.SplitSeq(v, ",") {
					b, err := grpcwire.DecodeBinary(strings.TrimSpace(part))
					if err != nil {
						badKey = key
						break
					}
					want = append(want, key, b)
				}
			default:
				want = append(want, key, v)
			}
		}
		if badKey != "" {
			if err == nil || CodeOf(err) != InvalidArgument || !strings.Contains(err.Error(), strconv.Quote(badKey)) {
				t.Fatalf("fields %q: incomingMD = %q, %v; want InvalidArgument naming %q", in, md, err, badKey)
			}
			return
		}
		if err != nil || !slices.Equal(md, want) {
			t.Fatalf("fields %q: incomingMD = %q, %v; want %q", in, md, err, want)
		}
	})
}
