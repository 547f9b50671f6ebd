package wire

import (
	"math/bits"
	"sync"
)

// Buffer classes of a BufferPool: powers of two from 4 KiB to 1 GiB;
// larger buffers are not pooled.
const (
	minClassShift = 12
	maxClassShift = 30
)

// BufferPool lends Readers the buffers they need only for a while: those
// for frames and decompressed bodies larger than their BatchSize. It keeps
// one sync.Pool per power-of-two size, so memory it holds is freed by the
// garbage collector when the pool goes unused. The zero value is ready to
// use. A BufferPool is safe for concurrent use and must not be copied
// after first use; share one between the connections of a side.
type BufferPool struct {
	classes [maxClassShift - minClassShift + 1]sync.Pool // of *[]byte
}

// get returns a buffer of at least n bytes, its length its capacity: from
// the pool's class for n, or, with a nil pool, a new one of exactly n
// bytes.
func (p *BufferPool) get(n int) *[]byte {
	shift := max(bits.Len(uint(n-1)), minClassShift)
	if p == nil || shift > maxClassShift {
		b := make([]byte, n)
		return &b
	}
	c := &p.classes[shift-minClassShift]
	if b, ok := c.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 1<<shift)
	return &b
}

// put gives back a buffer from get; a nil buffer or pool does nothing.
func (p *BufferPool) put(b *[]byte) {
	if p == nil || b == nil {
		return
	}
	shift := bits.Len(uint(cap(*b))) - 1
	if shift < minClassShift || shift > maxClassShift || cap(*b) != 1<<shift {
		return // not one of ours
	}
	*b = (*b)[:cap(*b)]
	p.classes[shift-minClassShift].Put(b)
}
