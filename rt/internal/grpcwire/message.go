package grpcwire

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// HeaderLen is the size of a message's prefix: flags and length.
const HeaderLen = 5

// Flags of a message prefix.
const (
	// FlagCompressed: the message is compressed with the stream's
	// grpc-encoding.
	FlagCompressed byte = 1
	// FlagTrailers: (gRPC-Web) the frame holds the trailers, not a
	// message.
	FlagTrailers byte = 0x80
)

// minBuffer is the size a Reader's buffer starts at.
const minBuffer = 4 << 10

// TooLargeError reports a message longer than the reader's limit.
type TooLargeError struct {
	Size uint64 // the message's length, as its prefix or its decompression says
	Max  int    // the limit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("grpcwire: message of %d bytes exceeds the limit of %d", e.Size, e.Max)
}

// AppendHeader appends the prefix of a message of n bytes with flags.
func AppendHeader(dst []byte, flags byte, n int) []byte {
	return append(dst, flags, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// Reader reads length-prefixed messages from a body. Its buffer grows with
// the bytes received (at most doubling what it holds), never to the size a
// prefix claims before the bytes are there. The zero value is not usable;
// use NewReader. A Reader is not safe for concurrent use.
type Reader struct {
	src  io.Reader
	max  int
	buf  []byte // the whole capacity; buf[r:w] is unread
	r, w int
	err  error // the source's error, once it returned one
}

// NewReader returns a Reader of src that refuses messages longer than max
// bytes; buf, if not nil, is storage it may use (and grow).
func NewReader(src io.Reader, max int, buf []byte) *Reader {
	rd := &Reader{}
	rd.Reset(src, max, buf)
	return rd
}

// Reset makes r read src with the limit max, keeping buf as storage (nil:
// r's own).
func (r *Reader) Reset(src io.Reader, max int, buf []byte) {
	if buf == nil {
		buf = r.buf
	}
	*r = Reader{src: src, max: max, buf: buf[:cap(buf)]}
}

// Buffer returns the reader's storage, for reuse once r is done.
func (r *Reader) Buffer() []byte { return r.buf[:0] }

// Next returns the next message: its flags and bytes, valid until the next
// call of Next or Reset. It returns io.EOF at the end of the body between
// messages, io.ErrUnexpectedEOF inside one, a *TooLargeError (without
// reading the message) when the prefix claims more than the limit, or the
// body's error.
func (r *Reader) Next() (flags byte, msg []byte, err error) {
	if err := r.fill(HeaderLen); err != nil {
		return 0, nil, err
	}
	h := r.buf[r.r : r.r+HeaderLen]
	flags, n := h[0], binary.BigEndian.Uint32(h[1:])
	if uint64(n) > uint64(max(r.max, 0)) {
		return flags, nil, &TooLargeError{Size: uint64(n), Max: r.max}
	}
	r.r += HeaderLen
	if err := r.fill(int(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	end := r.r + int(n)
	msg = r.buf[r.r:end:end]
	r.r = end
	return flags, msg, nil
}

// fill makes n unread bytes available, or returns io.EOF when the body
// ended with none unread, io.ErrUnexpectedEOF when it ended with fewer,
// or the body's error.
func (r *Reader) fill(n int) error {
	for r.w-r.r < n {
		if r.err != nil {
			if r.err == io.EOF && r.w > r.r {
				return io.ErrUnexpectedEOF
			}
			return r.err
		}
		if r.r > 0 {
			r.w = copy(r.buf, r.buf[r.r:r.w])
			r.r = 0
		}
		if r.w == len(r.buf) {
			// Full: double what was received, up to what is needed.
			grown := make([]byte, min(max(2*len(r.buf), minBuffer), max(n, minBuffer)))
			r.w = copy(grown, r.buf[:r.w])
			r.buf = grown
		}
		m, err := r.src.Read(r.buf[r.w:])
		r.w += m
		if err != nil {
			r.err = err
		} else if m == 0 {
			r.err = io.ErrNoProgress
		}
	}
	return nil
}

// Compress appends the gzip encoding of src to dst, written by zw (reset
// here; pool them, they are large).
func Compress(zw *gzip.Writer, dst, src []byte) []byte {
	w := appender{dst}
	zw.Reset(&w)
	_, _ = zw.Write(src) // an appender does not fail
	_ = zw.Close()
	return w.b
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// Decompress appends the gunzipped src to dst, read by zr (reset here).
// Output beyond max bytes is a *TooLargeError: it stops there, so a small
// message that inflates hugely costs at most max bytes.
func Decompress(zr *gzip.Reader, dst, src []byte, max int) ([]byte, error) {
	if err := zr.Reset(bytes.NewReader(src)); err != nil {
		return dst, fmt.Errorf("grpcwire: gzip: %w", err)
	}
	zr.Multistream(false)
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		limit := min(cap(dst), start+max+1)
		n, err := zr.Read(dst[len(dst):limit])
		dst = dst[:len(dst)+n]
		if len(dst)-start > max {
			return dst[:start], &TooLargeError{Size: uint64(len(dst) - start), Max: max}
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst[:start], fmt.Errorf("grpcwire: gzip: %w", err)
		case n == 0 && len(dst) == limit:
			return dst[:start], errors.New("grpcwire: gzip: no progress")
		}
	}
}

// Cut returns the first message of b, a body's bytes received so far:
// its flags, its bytes (aliasing b) and the bytes after it. It returns
// io.ErrUnexpectedEOF when b holds only part of it (io.EOF when b is
// empty), and a *TooLargeError when its prefix claims more than limit
// bytes.
func Cut(b []byte, limit int) (flags byte, msg, rest []byte, err error) {
	if len(b) < HeaderLen {
		if len(b) == 0 {
			return 0, nil, b, io.EOF
		}
		return 0, nil, b, io.ErrUnexpectedEOF
	}
	flags, n := b[0], binary.BigEndian.Uint32(b[1:])
	if uint64(n) > uint64(max(limit, 0)) {
		return flags, nil, b, &TooLargeError{Size: uint64(n), Max: limit}
	}
	if end := HeaderLen + uint64(n); uint64(len(b)) >= end {
		return flags, b[HeaderLen:end:end], b[end:], nil
	}
	return flags, nil, b, io.ErrUnexpectedEOF
}
