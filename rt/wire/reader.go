package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pierrec/lz4/v4"
)

// ReaderOptions configure a Reader. The zero value means the defaults
// (and no negotiated features); negative values also mean the defaults.
type ReaderOptions struct {
	// MaxFrameSize is the largest frame accepted, header included, and the
	// largest decompressed body; 0 means DefaultMaxFrameSize. Announce it to
	// the peer in the Preface (Settings.MaxFrameSize).
	MaxFrameSize int
	// MaxMetadataSize is the largest metadata block accepted; 0 means
	// DefaultMaxMetadataSize. Announce it in the Settings.
	MaxMetadataSize int
	// BufferSize is the size of the read buffer the Reader starts with and
	// returns to on Release; 0 means DefaultBufferSize (4 KiB).
	BufferSize int
	// BatchSize is the size up to which the read buffer doubles while
	// reads fill it, and which it keeps until Release; 0 means
	// DefaultBatchSize (64 KiB). A frame larger than that is read into a
	// buffer that grows with the bytes received (doubling, never past the
	// frame's size) and that the Reader no longer needs once the frame
	// has been returned.
	BatchSize int
	// Features are the features negotiated with the peer (Peer.Features):
	// with FeatureLZ4 the peer may send compressed bodies, with
	// FeatureStreams the stream frames; without them such frames are a
	// *FrameError wrapping ErrMalformed.
	Features Features
	// Pool, if not nil, lends the buffers larger than BatchSize (for large
	// frames and large decompressed bodies), and the Reader gives each
	// back as soon as the frame that needed it has been returned: an idle
	// Reader then holds at most BatchSize. Share one pool between a side's
	// connections. With no pool the Reader keeps the largest such buffer
	// (and its decompression buffer) for the next large frame until
	// Release. Either way a connection reading large frames allocates
	// nothing in steady state.
	Pool *BufferPool
}

// Frame is one decoded frame. Metadata is the raw metadata block (decode it
// with ParseMetadata); Body is the body, decompressed if Flags has
// FlagCompressed. Both alias the Reader's buffers: they are valid only until
// the next call to Next or Release.
type Frame struct {
	Header
	Metadata []byte
	Body     []byte
	// Increment is a WindowUpdate's credit increment (1 to MaxWindow); 0
	// for the other types.
	Increment uint32
}

// maxEmptyReads is how many (0, nil) reads in a row make Next give up with
// io.ErrNoProgress.
const maxEmptyReads = 100

// Reader reads frames from a stream (after the handshake). It reads in
// large chunks and decodes every frame already buffered before reading
// again, and in steady state it does not allocate.
//
// Its memory follows the bytes received, never the sizes a peer claims: it
// starts with a buffer of BufferSize, which doubles up to BatchSize while
// reads fill it; a larger frame is read into a buffer that doubles only
// when the bytes already received fill it (so a peer that claims a large
// frame and stalls makes it allocate at most twice what it sent). With a
// Pool that buffer is borrowed and given back once the frame has been
// returned; without one the Reader keeps it for the next large frame.
// Release gives back all but BufferSize when the connection goes idle.
//
// The zero value is not usable; make one with NewReader. A Reader is not
// safe for concurrent use.
type Reader struct {
	src      io.Reader
	buf      []byte  // read into; own or *loan
	r, w     int     // unread bytes are buf[r:w]
	full     bool    // the last read filled buf
	returned bool    // Next returned a frame and has not been called since
	own      []byte  // the buffer kept between frames
	loan     *[]byte // buf when it is larger than own
	spare    *[]byte // with no pool: the largest loan given back, for the next
	scratch  []byte  // decompressed bodies (with a pool: up to batch bytes)
	sLoan    *[]byte // with a pool: a larger decompressed body
	pool     *BufferPool
	size     int // BufferSize
	batch    int // BatchSize
	maxFrame int
	maxMD    int
	features Features
	frame    Frame
	rerr     error // read error to report once the buffered bytes are used
	err      error // sticky error returned by Next
}

// NewReader returns a Reader of frames from src.
func NewReader(src io.Reader, opts ReaderOptions) *Reader {
	if opts.MaxFrameSize <= 0 {
		opts.MaxFrameSize = DefaultMaxFrameSize
	}
	if opts.MaxMetadataSize <= 0 {
		opts.MaxMetadataSize = DefaultMaxMetadataSize
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = DefaultBufferSize
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	size := max(opts.BufferSize, HeaderLen)
	own := make([]byte, size)
	return &Reader{
		src:      src,
		buf:      own,
		own:      own,
		pool:     opts.Pool,
		size:     size,
		batch:    max(opts.BatchSize, size),
		maxFrame: opts.MaxFrameSize,
		maxMD:    opts.MaxMetadataSize,
		features: opts.Features,
	}
}

// Buffered returns how many bytes are buffered but not yet returned as
// frames. When it is at least HeaderLen a frame may be ready without a read
// from the stream; when it is 0 the next Next will read.
func (r *Reader) Buffered() int { return r.w - r.r }

// Ready reports whether a whole frame is buffered, so that the next Next
// returns it without reading from the stream (or fails on it at once).
// When it is false, Next will read, and may wait for the peer.
func (r *Reader) Ready() bool {
	n := r.w - r.r
	if n < HeaderLen {
		return false
	}
	return uint64(HeaderLen)+uint64(binary.LittleEndian.Uint32(r.buf[r.r+13:])) <= uint64(n)
}

// Release gives back the memory the Reader holds beyond a buffer of
// BufferSize (the batch buffer, and without a Pool the buffers kept for
// large frames and bodies): call it when the connection goes idle
// (Buffered() == 0, no frame for a while). It does nothing while more than
// BufferSize bytes are buffered. The last frame returned is invalid
// afterwards.
func (r *Reader) Release() {
	unread := r.w - r.r
	if unread > r.size {
		return
	}
	r.returnScratch()
	r.scratch, r.spare = nil, nil
	if r.loan == nil && len(r.own) == r.size {
		return
	}
	own := make([]byte, r.size)
	r.w = copy(own, r.buf[r.r:r.w])
	r.r = 0
	if r.pool != nil {
		r.pool.put(r.loan)
	}
	r.loan, r.own, r.buf, r.full = nil, own, own, false
}

// Next returns the next frame. The frame and the slices in it are valid
// only until the next call. At the end of the stream Next returns io.EOF, or
// an error wrapping io.ErrUnexpectedEOF if it ended inside a frame. A frame
// that breaks the format or the limits gives a *FrameError (errors.Is
// ErrMalformed, ErrFrameTooLarge, ErrMetadataTooLarge or ErrVersion); other
// errors are the stream's own. A read timeout (an error that is
// os.ErrDeadlineExceeded) leaves the Reader as it was: the bytes read so
// far stay buffered and the next Next goes on. After any other error the
// Reader stays failed and returns the same error.
func (r *Reader) Next() (*Frame, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.settle()
	for r.w-r.r < HeaderLen {
		if err := r.fill(HeaderLen); err != nil {
			return nil, r.fail(err)
		}
	}
	h, size, err := r.parseFixed(r.buf[r.r : r.r+HeaderLen])
	if err != nil {
		return nil, r.fail(err)
	}
	for r.w-r.r < size {
		if err := r.fill(size); err != nil {
			return nil, r.fail(err)
		}
	}
	payload := r.buf[r.r+HeaderLen : r.r+size]
	r.r += size
	if err := r.decode(h, payload); err != nil {
		return nil, r.fail(err)
	}
	r.returned = true
	return &r.frame, nil
}

func (r *Reader) fail(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err // not sticky: see Next
	}
	r.err = err
	r.frame = Frame{}
	return err
}

// settle runs at the start of Next, once the last frame is no longer in
// use: it gives back the buffers only that frame needed (not those of a
// frame still arriving, as after a read timeout).
func (r *Reader) settle() {
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
	if !r.returned {
		return
	}
	r.returned = false
	r.returnScratch()
	if r.loan != nil && r.w-r.r <= len(r.own) {
		r.w = copy(r.own, r.buf[r.r:r.w])
		r.r = 0
		r.giveBack(r.loan)
		r.loan, r.buf, r.full = nil, r.own, false
	}
}

// borrow returns a buffer of at least n bytes (its length its capacity)
// for a frame larger than own: from the pool, else the spare if it is
// large enough, else the heap.
func (r *Reader) borrow(n int) *[]byte {
	if r.pool != nil {
		return r.pool.get(n)
	}
	if s := r.spare; s != nil && len(*s) >= n {
		r.spare = nil
		return s
	}
	b := make([]byte, n)
	return &b
}

// giveBack takes a buffer from borrow back: to the pool, else as the spare
// if it is the largest.
func (r *Reader) giveBack(b *[]byte) {
	switch {
	case b == nil:
	case r.pool != nil:
		r.pool.put(b)
	case r.spare == nil || len(*b) > len(*r.spare):
		r.spare = b
	}
}

func (r *Reader) returnScratch() {
	if r.sLoan != nil {
		r.pool.put(r.sLoan)
		r.sLoan = nil
	}
}

// fill reads at least one byte, first making room for a frame of need bytes
// starting at r.r.
func (r *Reader) fill(need int) error {
	if r.rerr != nil {
		return r.readErr()
	}
	if r.r+need > len(r.buf) {
		r.makeRoom(need)
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			return fmt.Errorf("wire: source returned an invalid count %d from Read", n)
		}
		r.w += n
		r.full = r.w == len(r.buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if n > 0 {
				return nil
			}
			return err // not sticky: see Next
		}
		if n > 0 {
			r.rerr = err // reported once the bytes are used
			return nil
		}
		if err != nil {
			r.rerr = err
			return r.readErr()
		}
	}
	return io.ErrNoProgress
}

// makeRoom makes room in buf for the rest of a frame of need bytes that
// starts at r.r and does not fit. It moves the unread bytes to the front,
// and grows buf only as the bytes received justify: twofold when they fill
// it (the frame's bytes, or a read that filled the whole buffer), so the
// buffer is never more than twice what arrived. (With no pool, a spare
// buffer kept from an earlier frame, memory already held, may serve at
// once.)
func (r *Reader) makeRoom(need int) {
	size, unread := len(r.buf), r.w-r.r
	grow := 0
	switch {
	case unread == size && need > size: // the frame's bytes fill buf
		grow = min(2*size, need)
	case r.full && r.loan == nil && size < r.batch: // a loaded connection
		grow = 2 * size
	}
	nb, old := r.buf, r.loan
	switch {
	case grow == 0: // just move the unread bytes to the front
	case r.loan == nil && size < r.batch:
		nb = make([]byte, min(2*size, r.batch))
		r.own = nb
	default:
		r.loan = r.borrow(grow)
		nb = *r.loan
	}
	r.w = copy(nb, r.buf[r.r:r.w])
	r.r = 0
	r.buf = nb
	if r.loan != old && r.pool != nil {
		r.pool.put(old) // with no pool it is dropped: the new loan is larger
	}
}

// readErr returns the stream's read error, io.EOF turned into
// io.ErrUnexpectedEOF inside a frame.
func (r *Reader) readErr() error {
	if r.rerr == io.EOF && r.w > r.r {
		return fmt.Errorf("wire: stream ended %d bytes into a frame: %w", r.w-r.r, io.ErrUnexpectedEOF)
	}
	return r.rerr
}

// rule says what a frame type may carry besides its id.
type rule struct {
	flags  Flags // the flags allowed
	status bool  // Status may be non-zero
	method bool  // Method may be non-zero
	body   bool  // a body may follow the optional section
	id     bool  // ID must not be 0
}

// unaryRule is the rule of types 1-7, as lenient as version 1 always was.
var unaryRule = rule{flags: knownFlags, status: true, method: true, body: true}

// streamRules are the rules of the stream types, from TypeStreamOpen on.
var streamRules = [...]rule{
	//lint:ignore SA4000 each index is its type's offset from TypeStreamOpen, the first's too
	TypeStreamOpen - TypeStreamOpen:      {flags: FlagDeadline | FlagMetadata, method: true, id: true},
	TypeStreamMessage - TypeStreamOpen:   {flags: FlagCompressed, body: true, id: true},
	TypeStreamHalfClose - TypeStreamOpen: {id: true},
	TypeStreamClose - TypeStreamOpen:     {flags: FlagMetadata, status: true, body: true, id: true},
	TypeStreamReset - TypeStreamOpen:     {status: true, body: true, id: true},
	TypeWindowUpdate - TypeStreamOpen:    {body: true},
}

// parseFixed checks the fixed header b and returns it with the frame size.
func (r *Reader) parseFixed(b []byte) (Header, int, error) {
	if b[0] != Magic {
		return Header{}, 0, malformed("bad frame magic 0x%02x, want 0x%02x (stream at that point: %q)", b[0], Magic, b[:min(len(b), 8)])
	}
	if b[1] != Version {
		return Header{}, 0, &FrameError{Reason: fmt.Sprintf("frame of protocol version %d, this side supports %d", b[1], Version), Err: ErrVersion}
	}
	h := Header{
		Type:   Type(b[2]),
		Flags:  Flags(b[3]),
		Status: b[4],
		ID:     binary.LittleEndian.Uint32(b[5:]),
		Method: binary.LittleEndian.Uint32(b[9:]),
	}
	ru := unaryRule
	switch {
	case h.Type == 0 || h.Type > maxType:
		return h, 0, malformed("bad frame type %d", b[2])
	case h.Type == TypeSettings:
		return h, 0, malformed("Settings frame after the handshake")
	case h.Type.IsStream():
		if !r.features.Has(FeatureStreams) {
			return h, 0, malformed("%s frame %d, but streams were not negotiated", h.Type, h.ID)
		}
		ru = streamRules[h.Type-TypeStreamOpen]
	}
	switch {
	case h.Flags&^knownFlags != 0:
		return h, 0, malformed("%s frame %d has reserved flags set (%s)", h.Type, h.ID, h.Flags)
	case h.Flags&^ru.flags != 0:
		return h, 0, malformed("%s frame %d may not have flags %s", h.Type, h.ID, h.Flags&^ru.flags)
	case h.Flags&FlagCompressed != 0 && !r.features.Has(FeatureLZ4):
		return h, 0, malformed("%s frame %d is compressed, but lz4 was not negotiated", h.Type, h.ID)
	case h.Status != 0 && !ru.status:
		return h, 0, malformed("%s frame %d has status %d, want 0", h.Type, h.ID, h.Status)
	case h.Method != 0 && !ru.method:
		return h, 0, malformed("%s frame %d has method %#x, want 0", h.Type, h.ID, h.Method)
	case h.ID == 0 && ru.id:
		return h, 0, malformed("%s frame with id 0", h.Type)
	}
	size := uint64(HeaderLen) + uint64(binary.LittleEndian.Uint32(b[13:]))
	if size > uint64(r.maxFrame) {
		return h, 0, &FrameError{
			Reason: fmt.Sprintf("%s frame %d of %d bytes exceeds the limit of %d bytes", h.Type, h.ID, size, r.maxFrame),
			Err:    ErrFrameTooLarge,
		}
	}
	if !ru.body && size > HeaderLen && h.Flags == 0 {
		return h, 0, malformed("%s frame %d has a body of %d bytes, want none", h.Type, h.ID, size-HeaderLen)
	}
	return h, int(size), nil
}

// decode parses the optional section and body of a frame with header h into
// r.frame.
func (r *Reader) decode(h Header, p []byte) error {
	f := &r.frame
	*f = Frame{Header: h}
	if h.Flags&FlagDeadline != 0 {
		us, k := binary.Uvarint(p)
		if k <= 0 {
			return malformed("%s frame %d: bad timeout varint", h.Type, h.ID)
		}
		if us == 0 {
			return malformed("%s frame %d: deadline flag with a zero timeout", h.Type, h.ID)
		}
		f.Timeout = microsTimeout(us)
		p = p[k:]
	}
	if h.Flags&FlagMetadata != 0 {
		n, k := binary.Uvarint(p)
		switch {
		case k <= 0:
			return malformed("%s frame %d: bad metadata length varint", h.Type, h.ID)
		case n == 0:
			return malformed("%s frame %d: metadata flag with an empty block", h.Type, h.ID)
		case n > uint64(r.maxMD):
			return &FrameError{
				Reason: fmt.Sprintf("%s frame %d: metadata of %d bytes exceeds the limit of %d bytes", h.Type, h.ID, n, r.maxMD),
				Err:    ErrMetadataTooLarge,
			}
		case n > uint64(len(p)-k):
			return malformed("%s frame %d: metadata of %d bytes overruns the %d bytes left in the frame", h.Type, h.ID, n, len(p)-k)
		}
		f.Metadata = p[k : k+int(n)]
		p = p[k+int(n):]
	}
	f.Body = p
	switch {
	case h.Type == TypeWindowUpdate:
		return r.increment(p)
	case len(p) > 0 && h.Type.IsStream() && !streamRules[h.Type-TypeStreamOpen].body:
		return malformed("%s frame %d has a body of %d bytes, want none", h.Type, h.ID, len(p))
	case h.Flags&FlagCompressed != 0:
		return r.decompress(p)
	}
	return nil
}

// increment decodes a WindowUpdate body p: exactly one uvarint, 1 to
// MaxWindow.
func (r *Reader) increment(p []byte) error {
	f := &r.frame
	inc, k := binary.Uvarint(p)
	switch {
	case k <= 0 || k != len(p):
		return malformed("WindowUpdate frame %d: body % x is not one uvarint", f.ID, p)
	case inc == 0 || inc > MaxWindow:
		return malformed("WindowUpdate frame %d: increment %d out of range 1-%d", f.ID, inc, MaxWindow)
	}
	f.Increment = uint32(inc)
	return nil
}

// maxLZ4Ratio bounds how many bytes an lz4 block can decode to per byte of
// block (a match of n bytes takes at least n/255 bytes to encode); a
// claimed length above it is a lie, refused before any allocation.
const maxLZ4Ratio = 256

// decompress decodes a compressed body p into a scratch buffer.
func (r *Reader) decompress(p []byte) error {
	f := &r.frame
	n, k := binary.Uvarint(p)
	switch {
	case k <= 0:
		return malformed("%s frame %d: bad decompressed length varint", f.Type, f.ID)
	case n == 0:
		return malformed("%s frame %d: compressed empty body", f.Type, f.ID)
	case n > uint64(r.maxFrame):
		return &FrameError{
			Reason: fmt.Sprintf("%s frame %d: decompressed body of %d bytes exceeds the limit of %d bytes", f.Type, f.ID, n, r.maxFrame),
			Err:    ErrFrameTooLarge,
		}
	case n > maxLZ4Ratio*uint64(len(p)-k):
		return malformed("%s frame %d: %d compressed bytes cannot decode to the %d bytes claimed", f.Type, f.ID, len(p)-k, n)
	}
	out := r.scratchFor(int(n))
	got, err := lz4.UncompressBlock(p[k:], out)
	if err != nil || got != len(out) {
		return malformed("%s frame %d: corrupt lz4 body (%d compressed bytes, %d of %d decoded)", f.Type, f.ID, len(p)-k, got, n)
	}
	f.Body = out
	return nil
}

// scratchFor returns n bytes to decompress into: with a pool, a loan for a
// body larger than BatchSize; else the kept scratch buffer, grown to fit.
func (r *Reader) scratchFor(n int) []byte {
	if n > r.batch && r.pool != nil {
		r.sLoan = r.pool.get(n)
		return (*r.sLoan)[:n]
	}
	if n > len(r.scratch) {
		r.scratch = make([]byte, max(n, min(2*len(r.scratch), r.batch)))
	}
	return r.scratch[:n]
}
