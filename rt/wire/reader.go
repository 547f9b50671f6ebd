package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pierrec/lz4/v4"
)

// ReaderOptions configure a Reader. The zero value means the defaults;
// negative values also mean the defaults.
type ReaderOptions struct {
	// MaxFrameSize is the largest frame accepted, header included, and the
	// largest decompressed body; 0 means DefaultMaxFrameSize. Announce it to
	// the peer in the Preface.
	MaxFrameSize int
	// MaxMetadataSize is the largest metadata block accepted; 0 means
	// DefaultMaxMetadataSize.
	MaxMetadataSize int
	// BufferSize is the initial size of the read buffer; 0 means
	// DefaultBufferSize. The buffer grows to hold a larger frame (up to
	// MaxFrameSize) and keeps that size.
	BufferSize int
}

// Frame is one decoded frame. Metadata is the raw metadata block (decode it
// with ParseMetadata); Body is the body, decompressed if Flags has
// FlagCompressed. Both alias the Reader's buffers: they are valid only until
// the next call to Next.
type Frame struct {
	Header
	Metadata []byte
	Body     []byte
}

// maxEmptyReads is how many (0, nil) reads in a row make Next give up with
// io.ErrNoProgress.
const maxEmptyReads = 100

// Reader reads frames from a stream (after the preface). It reads in large
// chunks and decodes every frame already buffered before reading again, and
// in steady state it does not allocate. The zero value is not usable; make
// one with NewReader. A Reader is not safe for concurrent use.
type Reader struct {
	src      io.Reader
	buf      []byte
	r, w     int // unread bytes are buf[r:w]
	maxFrame int
	maxMD    int
	scratch  []byte // decompressed bodies
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
	return &Reader{
		src:      src,
		buf:      make([]byte, max(opts.BufferSize, HeaderLen)),
		maxFrame: opts.MaxFrameSize,
		maxMD:    opts.MaxMetadataSize,
	}
}

// Buffered returns how many bytes are buffered but not yet returned as
// frames. When it is at least HeaderLen a frame may be ready without a read
// from the stream; when it is 0 the next Next will read.
func (r *Reader) Buffered() int { return r.w - r.r }

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
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
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

// fill reads at least one byte, first making room for a frame of need bytes
// starting at r.r.
func (r *Reader) fill(need int) error {
	if r.rerr != nil {
		return r.readErr()
	}
	if r.r+need > len(r.buf) {
		if need > len(r.buf) {
			// Grow at least twofold, so that a run of ever larger frames
			// does not allocate each time, but not past the frame limit.
			nb := make([]byte, max(need, min(2*len(r.buf), r.maxFrame)))
			copy(nb, r.buf[r.r:r.w])
			r.buf = nb
		} else {
			copy(r.buf, r.buf[r.r:r.w])
		}
		r.w -= r.r
		r.r = 0
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			return fmt.Errorf("wire: source returned an invalid count %d from Read", n)
		}
		r.w += n
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

// readErr returns the stream's read error, io.EOF turned into
// io.ErrUnexpectedEOF inside a frame.
func (r *Reader) readErr() error {
	if r.rerr == io.EOF && r.w > r.r {
		return fmt.Errorf("wire: stream ended %d bytes into a frame: %w", r.w-r.r, io.ErrUnexpectedEOF)
	}
	return r.rerr
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
	if h.Type == 0 || h.Type > maxType {
		return h, 0, malformed("bad frame type %d", b[2])
	}
	if h.Flags&^knownFlags != 0 {
		return h, 0, malformed("%s frame %d has reserved flags set (%s)", h.Type, h.ID, h.Flags)
	}
	size := HeaderLen + int(binary.LittleEndian.Uint32(b[13:]))
	if size > r.maxFrame {
		return h, 0, &FrameError{
			Reason: fmt.Sprintf("%s frame %d of %d bytes exceeds the limit of %d bytes", h.Type, h.ID, size, r.maxFrame),
			Err:    ErrFrameTooLarge,
		}
	}
	return h, size, nil
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
	if h.Flags&FlagCompressed != 0 {
		return r.decompress(p)
	}
	return nil
}

// decompress decodes a compressed body p into r.scratch.
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
	}
	if uint64(cap(r.scratch)) < n {
		r.scratch = make([]byte, n)
	}
	out := r.scratch[:n]
	got, err := lz4.UncompressBlock(p[k:], out)
	if err != nil || got != len(out) {
		return malformed("%s frame %d: corrupt lz4 body (%d compressed bytes, %d of %d decoded)", f.Type, f.ID, len(p)-k, got, n)
	}
	f.Body = out
	return nil
}
