package rt

import "testing"

// A stream's pipe stays within about twice what it holds when its reader
// keeps up without ever emptying it: the bytes read are dropped before
// the buffer grows. Before, they stayed at its start, and such a reader
// made the buffer grow with every byte the stream ever carried.
func TestH2PipeDropsWhatWasRead(t *testing.T) {
	st := &h2Stream{h: new(h2Conn)}
	st.recvEnded.Store(true) // no window updates to write
	p := &h2Pipe{st: st, wake: make(chan struct{}, 1)}
	chunk, buf := make([]byte, 1000), make([]byte, 999)
	const rounds = 10_000 // 10 MB through the pipe, 10 KB left in it
	for range rounds {
		p.write(chunk, true) // its connection window went back: none to write
		if n, err := p.Read(buf); n != len(buf) || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
	}
	if held := len(p.buf) - p.off; held != rounds {
		t.Fatalf("the pipe holds %d bytes, want %d", held, rounds)
	}
	if c := cap(p.buf); c > 4*rounds {
		t.Errorf("the pipe's buffer is %d bytes for %d held", c, rounds)
	}
}
