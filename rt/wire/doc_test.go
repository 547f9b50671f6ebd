package wire

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"
)

// docExamples returns the hex examples of the code block that follows the
// line of doc.go containing marker: one []byte per frame, where a line
// that starts with hex at the block's indentation starts a frame and an
// indented line continues it. Each line counts its leading two-digit hex
// tokens, up to the first word that is not one.
func docExamples(t *testing.T, marker string) [][]byte {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, marker) {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatalf("doc.go has no %q", marker)
	}
	for at < len(lines) && !strings.HasPrefix(lines[at], "//\t") {
		at++
	}
	var frames [][]byte
	for ; at < len(lines) && strings.HasPrefix(lines[at], "//\t"); at++ {
		l := strings.TrimPrefix(lines[at], "//\t")
		var b []byte
		for _, tok := range strings.Fields(l) {
			x, err := hex.DecodeString(tok)
			if err != nil || len(x) != 1 {
				break
			}
			b = append(b, x...)
		}
		if strings.HasPrefix(l, " ") && len(frames) > 0 {
			frames[len(frames)-1] = append(frames[len(frames)-1], b...)
		} else {
			frames = append(frames, b)
		}
	}
	return frames
}

// TestDocGolden checks the byte-by-byte examples of doc.go against the
// encoders.
func TestDocGolden(t *testing.T) {
	join := func(frames [][]byte) [][]byte { return [][]byte{bytes.Join(frames, nil)} }
	stream := [][]byte{
		AppendStreamOpen(nil, 3, 0x98f998eb, 250*time.Millisecond, []string{"yrpc-app", "web"}),
		AppendFrame(nil, &Header{Type: TypeStreamMessage, ID: 3}, nil, []byte{0x0a, 0x03, 'A', 'd', 'a'}),
		AppendStreamHalfClose(nil, 3),
		AppendStreamClose(nil, 3, 0, "", []string{"n", "2"}),
		AppendStreamReset(nil, 3, 1, "canceled"),
		AppendWindowUpdate(nil, 3, 16384),
	}
	for _, c := range []struct {
		marker string
		whole  bool // the block is one frame written over several lines
		want   [][]byte
	}{
		{"Examples, version 1 with 4 MiB frames", false, [][]byte{
			AppendPreface(nil, Preface{Features: FeatureLZ4}),
			AppendPreface(nil, Preface{Features: FeatureLZ4 | FeatureSettings | FeatureStreams}),
		}},
		{"Example: max metadata size 16 KiB", true, [][]byte{
			AppendSettingsFrame(nil, Settings{MaxMetadataSize: 16 << 10, MaxConcurrentCalls: 100, InitialStreamWindow: 64 << 10, ConnectionWindow: 1 << 20}),
		}},
		{"A request with id 1 for method ID 0x98f998eb", true, [][]byte{
			AppendFrame(nil, &Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}, []string{"yrpc-app", "web"}, []byte{0x0a, 0x03, 'A', 'd', 'a'}),
		}},
		{"Examples for stream 3", false, stream},
	} {
		got := docExamples(t, c.marker)
		if c.whole {
			got = join(got)
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: %d examples in doc.go, want %d", c.marker, len(got), len(c.want))
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], c.want[i]) {
				t.Errorf("%q, example %d:\ndoc.go  % x\nencoder % x", c.marker, i, got[i], c.want[i])
			}
		}
	}
}
