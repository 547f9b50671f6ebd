package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PrefaceMagic opens every connection, sent by both sides.
const PrefaceMagic = "YRPC"

// PrefaceLen is the size of a preface in bytes.
const PrefaceLen = 13

// MinFrameLimit is the smallest MaxFrameSize a peer may announce.
const MinFrameLimit = 1 << 10

// Features is a bitmask of optional protocol features. Each side announces
// what it supports; a side uses a feature only when both announce it (see
// Preface.Negotiate).
type Features uint32

// Features.
const (
	// FeatureLZ4: the side decodes lz4-compressed bodies.
	FeatureLZ4 Features = 1 << iota
	// FeatureSettings: the side sends and reads a Settings frame right
	// after the prefaces (see ClientHandshake and ServerHandshake).
	FeatureSettings
	// FeatureStreams: the side speaks the stream frames (TypeStreamOpen to
	// TypeWindowUpdate).
	FeatureStreams

	knownFeatures = FeatureLZ4 | FeatureSettings | FeatureStreams
)

var featureNames = [...]string{"lz4", "settings", "streams"}

// Has reports whether every feature in x is in f.
func (f Features) Has(x Features) bool { return f&x == x }

// String returns the set features joined by "|", e.g. "lz4", or "0".
func (f Features) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for i, name := range featureNames {
		if f&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := f &^ knownFeatures; rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(rest), 16))
	}
	return strings.Join(parts, "|")
}

// Preface is what each side announces once, at the start of a connection,
// before any frame. The zero value announces Version, no features and
// DefaultMaxFrameSize (AppendPreface fills zero fields).
type Preface struct {
	Version  uint8
	Features Features
	// MaxFrameSize is the largest frame (header included) the sender of the
	// preface accepts; the peer must not send larger frames.
	MaxFrameSize uint32
}

// Negotiate returns the features both p and peer support.
func (p Preface) Negotiate(peer Preface) Features { return p.Features & peer.Features }

// AppendPreface appends p's 13-byte encoding to dst. A zero Version is sent
// as Version and a zero MaxFrameSize as DefaultMaxFrameSize.
func AppendPreface(dst []byte, p Preface) []byte {
	if p.Version == 0 {
		p.Version = Version
	}
	if p.MaxFrameSize == 0 {
		p.MaxFrameSize = DefaultMaxFrameSize
	}
	dst = append(dst, PrefaceMagic...)
	dst = append(dst, p.Version)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p.Features))
	return binary.LittleEndian.AppendUint32(dst, p.MaxFrameSize)
}

// ReadPreface reads exactly one preface from r. It reads the magic first, so
// a client speaking another protocol is refused as soon as its first four
// bytes arrive. Errors wrap ErrBadPreface (wrong magic, a MaxFrameSize
// below MinFrameLimit), ErrVersion, or the read error (io.EOF,
// io.ErrUnexpectedEOF, ...).
func ReadPreface(r io.Reader) (Preface, error) {
	var b [PrefaceLen]byte
	if _, err := io.ReadFull(r, b[:4]); err != nil {
		return Preface{}, fmt.Errorf("wire: reading preface: %w", err)
	}
	if string(b[:4]) != PrefaceMagic {
		return Preface{}, &FrameError{
			Reason: fmt.Sprintf("bad preface magic %q, want %q%s", b[:4], PrefaceMagic, guessProtocol(b[:4])),
			Err:    ErrBadPreface,
		}
	}
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Preface{}, fmt.Errorf("wire: reading preface: %w", err)
	}
	p := Preface{
		Version:      b[4],
		Features:     Features(binary.LittleEndian.Uint32(b[5:])),
		MaxFrameSize: binary.LittleEndian.Uint32(b[9:]),
	}
	if p.Version != Version {
		return p, &FrameError{
			Reason: fmt.Sprintf("peer speaks protocol version %d, this side supports %d", p.Version, Version),
			Err:    ErrVersion,
		}
	}
	if p.MaxFrameSize < MinFrameLimit {
		return p, &FrameError{
			Reason: fmt.Sprintf("peer's max frame size %d is below the minimum %d", p.MaxFrameSize, MinFrameLimit),
			Err:    ErrBadPreface,
		}
	}
	return p, nil
}

// guessProtocol names the protocol a bad magic most likely belongs to, as a
// hint for the error message.
func guessProtocol(m []byte) string {
	switch {
	case m[0] == 0x16 && m[1] == 0x03:
		return " (a TLS client?)"
	case string(m) == "PRI ":
		return " (an HTTP/2 client?)"
	case m[0] == Magic && m[1] == Version:
		return " (a frame: the peer skipped the preface?)"
	}
	for _, method := range [...]string{"GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC", "CONN", "TRAC"} {
		if string(m) == method {
			return " (an HTTP client?)"
		}
	}
	return ""
}
