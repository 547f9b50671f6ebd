package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"testing"
)

// held returns the bytes of buffers r holds.
func (r *Reader) held() int {
	n := cap(r.own) + cap(r.scratch)
	if r.loan != nil {
		n += cap(*r.loan)
	}
	if r.sLoan != nil {
		n += cap(*r.sLoan)
	}
	if r.spare != nil {
		n += cap(*r.spare)
	}
	return n
}

// stallReader hands out its bytes in reads of at most step, then fails
// every read with a timeout, as a connection whose peer stalls does,
// until more bytes are added.
type stallReader struct {
	b    []byte
	step int
}

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, fmt.Errorf("read tcp: %w", os.ErrDeadlineExceeded)
	}
	n := copy(p[:min(len(p), s.step)], s.b)
	s.b = s.b[n:]
	return n, nil
}

// nextUntilStall calls Next until it reports the stall's timeout, and
// fails on a frame or another error.
func nextUntilStall(t *testing.T, r *Reader) {
	t.Helper()
	for range 1000 {
		f, err := r.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		t.Fatalf("Next on a stalled frame: %v, %v", f, err)
	}
	t.Fatal("no timeout")
}

// A peer that claims a large frame and stalls makes the Reader hold at
// most twice what arrived (plus its batch buffer), not what it claimed;
// the frame still decodes once the rest arrives.
func TestReaderStalledClaim(t *testing.T) {
	const claim = DefaultMaxFrameSize // 4 MiB, header included
	body := incompressible(claim - HeaderLen)
	frame := AppendFrame(nil, &Header{Type: TypeRequest, ID: 1, Method: 2}, nil, body)
	for _, arrived := range []int{HeaderLen, 100, 5000, 100 << 10, 1 << 20} {
		for _, pool := range []*BufferPool{nil, new(BufferPool)} {
			t.Run(fmt.Sprintf("%d bytes, pool %t", arrived, pool != nil), func(t *testing.T) {
				src := &stallReader{b: frame[:arrived], step: 32 << 10}
				r := NewReader(src, ReaderOptions{Pool: pool})
				nextUntilStall(t, r)
				limit := max(DefaultBufferSize, 2*arrived)
				if 2*arrived > DefaultBatchSize {
					limit += DefaultBatchSize // the buffer kept between frames, full
				}
				if r.held() > limit {
					t.Errorf("holds %d bytes after %d of a %d-byte frame arrived, want at most %d", r.held(), arrived, claim, limit)
				}
				src.b = frame[arrived:]
				f, err := r.Next()
				if err != nil || !bytes.Equal(f.Body, body) {
					t.Fatalf("frame after the stall: %v", err)
				}
				if r.held() > 2*claim {
					t.Errorf("holds %d bytes for a %d-byte frame", r.held(), claim)
				}
			})
		}
	}
}

// A 2 GiB length prefix fails with ErrFrameTooLarge before any buffer is
// made for it; a 1 GiB one under a limit that allows it holds only what
// arrives.
func TestReaderHugeClaim(t *testing.T) {
	hdr := rawFrame(TypeRequest, 0, 1)[:HeaderLen-4]
	hdr = binary.LittleEndian.AppendUint32(hdr, 2<<30)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := NewReader(bytes.NewReader(hdr), ReaderOptions{})
	_, err := r.Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("error %v, want ErrFrameTooLarge", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
		t.Errorf("allocated %d bytes to refuse a 2 GiB frame", alloc)
	}

	gib := binary.LittleEndian.AppendUint32(hdr[:HeaderLen-4:HeaderLen-4], 1<<30)
	src := &stallReader{b: append(gib, make([]byte, 1000)...), step: 1 << 20}
	r = NewReader(src, ReaderOptions{MaxFrameSize: math.MaxInt32}) // an int on every platform
	nextUntilStall(t, r)
	if r.held() > DefaultBufferSize {
		t.Errorf("holds %d bytes after 1017 bytes of a 1 GiB frame", r.held())
	}
}

// With a pool, the buffers only a large frame needed go back to it once
// the frame has been returned; without one, the Reader keeps them for the
// next large frame until Release.
func TestReaderGivesBack(t *testing.T) {
	var stream []byte
	stream = AppendFrame(stream, &Header{Type: TypeResponse, ID: 1}, nil, incompressible(300<<10))
	stream = AppendFrame(stream, &Header{Type: TypePing, ID: 2}, nil, nil)
	var comp Compressor
	stream = comp.AppendFrame(stream, &Header{Type: TypeResponse, ID: 3}, nil, compressible(200<<10), 0)
	stream = AppendFrame(stream, &Header{Type: TypePing, ID: 4}, nil, nil)
	for _, pool := range []*BufferPool{nil, new(BufferPool)} {
		src := io.LimitReader(&chunkReader{data: stream, chunk: 64 << 10}, int64(len(stream)))
		r := NewReader(src, ReaderOptions{Pool: pool, Features: FeatureLZ4})
		for id := uint32(1); id <= 4; id++ {
			f, err := r.Next()
			if err != nil || f.ID != id {
				t.Fatalf("frame %d: %v, %v", id, f, err)
			}
			if id == 1 && r.loan == nil {
				t.Errorf("frame 1: no loan for a %d-byte body", len(f.Body))
			}
			if id == 3 && pool != nil && r.sLoan == nil {
				t.Errorf("frame 3: no loan for a %d-byte decompressed body", len(f.Body))
			}
			if id == 2 || id == 4 {
				kept := r.spare != nil && cap(*r.spare) >= 300<<10 && (id == 2 || cap(r.scratch) >= 200<<10)
				switch {
				case r.loan != nil || r.sLoan != nil:
					t.Errorf("pool %t, frame %d: loans still out", pool != nil, id)
				case pool != nil && r.held() > 2*DefaultBatchSize:
					t.Errorf("pool, frame %d: holds %d bytes after the large frame", id, r.held())
				case pool == nil && !kept:
					t.Errorf("no pool, frame %d: did not keep the large buffers (holds %d)", id, r.held())
				}
			}
		}
		r.Release()
		if r.held() != DefaultBufferSize {
			t.Errorf("pool %t: after Release holds %d bytes", pool != nil, r.held())
		}
	}
}

// Under load the buffer doubles up to BatchSize, so one read brings many
// frames, and no further; Release takes it back to BufferSize.
func TestReaderBatchGrowth(t *testing.T) {
	var stream []byte
	for i := range 200 {
		stream = AppendFrame(stream, &Header{Type: TypeRequest, ID: uint32(i + 1), Method: 1}, nil, make([]byte, 600))
	}
	src := &countingReader{r: &loopReader{data: stream}}
	r := NewReader(src, ReaderOptions{})
	if r.held() != DefaultBufferSize {
		t.Fatalf("a new Reader holds %d bytes, want %d", r.held(), DefaultBufferSize)
	}
	for range 2000 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.buf) != DefaultBatchSize || r.loan != nil {
		t.Errorf("buffer of %d bytes under load, want %d", len(r.buf), DefaultBatchSize)
	}
	if perRead := 2000 / src.reads; perRead < 50 {
		t.Errorf("%d frames per read under load, want at least 50", perRead)
	}

	r.Release() // a frame's worth is buffered: it moves over
	if r.held() != DefaultBufferSize {
		t.Errorf("after Release: holds %d bytes, want %d", r.held(), DefaultBufferSize)
	}
	for range 10 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}

	// While more than BufferSize is buffered, Release keeps the buffer.
	r = NewReader(bytes.NewReader(stream), ReaderOptions{BufferSize: 64 << 10})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Release()
	if r.held() != 64<<10 {
		t.Errorf("Release with %d bytes buffered: holds %d", r.Buffered(), r.held())
	}
}

// An idle connection, and one whose frames arrive in small batches, holds
// BufferSize only; Release after a large decompressed body drops the
// scratch buffer too.
func TestReaderIdleCost(t *testing.T) {
	one := AppendFrame(nil, &Header{Type: TypeRequest, ID: 1, Method: 1}, nil, make([]byte, 600))
	r := NewReader(&chunkReader{data: bytes.Repeat(one, 4), chunk: 4 * len(one)}, ReaderOptions{})
	for range 100 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if r.held() != DefaultBufferSize {
		t.Errorf("holds %d bytes with batches of %d bytes, want %d", r.held(), 4*len(one), DefaultBufferSize)
	}

	var comp Compressor
	frame := comp.AppendFrame(nil, &Header{Type: TypeResponse, ID: 1}, nil, compressible(8000), 0)
	r = NewReader(bytes.NewReader(frame), ReaderOptions{Features: FeatureLZ4})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if cap(r.scratch) < 8000 {
		t.Fatalf("scratch %d", cap(r.scratch))
	}
	r.Release()
	if r.held() != DefaultBufferSize {
		t.Errorf("after Release: holds %d", r.held())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after Release: %v, want EOF", err)
	}
}

// A connection reading large frames allocates nothing in steady state,
// with a pool and without.
func TestReaderLargeAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	var comp Compressor
	var stream []byte
	stream = AppendFrame(stream, &Header{Type: TypeResponse, ID: 1}, nil, incompressible(256<<10))
	stream = comp.AppendFrame(stream, &Header{Type: TypeResponse, ID: 2}, nil, compressible(200<<10), 0)
	stream = AppendFrame(stream, &Header{Type: TypeResponse, ID: 3}, nil, incompressible(10))
	for _, pool := range []*BufferPool{nil, new(BufferPool)} {
		if pool != nil && raceEnabled {
			t.Log("with a pool: not counted under the race detector")
			continue
		}
		r := NewReader(&chunkReader{data: stream, chunk: 64 << 10}, ReaderOptions{Pool: pool, Features: FeatureLZ4})
		if n := nextAllocs(t, r, 30, 300); n != 0 {
			t.Errorf("Reader.Next of large frames, pool %t: %v allocs per frame, want 0", pool != nil, n)
		}
	}
}

func TestBufferPool(t *testing.T) {
	var p BufferPool
	for _, c := range []struct{ n, want int }{{1, 4096}, {4096, 4096}, {4097, 8192}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {1<<30 + 1, 1<<30 + 1}} {
		b := p.get(c.n)
		if len(*b) != c.want || cap(*b) != c.want {
			t.Errorf("get(%d) = %d bytes (cap %d), want %d", c.n, len(*b), cap(*b), c.want)
		}
		p.put(b)
	}
	var nilPool *BufferPool
	if b := nilPool.get(5000); len(*b) != 5000 {
		t.Errorf("nil pool get(5000) = %d bytes", len(*b))
	}
	nilPool.put(nil)
	odd := make([]byte, 5000)
	p.put(&odd) // not a class size: dropped
	if b := p.get(5000); cap(*b) != 8192 {
		t.Errorf("pool handed out a foreign buffer of %d", cap(*b))
	}
}

// A read timeout in the middle of a large frame keeps the frame's buffer:
// only a returned frame gives its buffers back.
func TestReaderKeepsLoanOverTimeouts(t *testing.T) {
	body := incompressible(1 << 20)
	frame := AppendFrame(nil, &Header{Type: TypeResponse, ID: 1}, nil, body)
	r := NewReader(&timeoutReader{b: frame, step: 4096}, ReaderOptions{})
	var loan *[]byte
	for range 10000 {
		f, err := r.Next()
		if err == nil {
			if !bytes.Equal(f.Body, body) {
				t.Fatal("body corrupted")
			}
			return
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal(err)
		}
		if loan != nil && r.loan != loan && cap(*r.loan) <= cap(*loan) {
			t.Fatalf("a timeout swapped the frame's buffer of %d bytes for one of %d", cap(*loan), cap(*r.loan))
		}
		if r.loan != nil {
			loan = r.loan
		}
	}
	t.Fatal("no frame")
}
