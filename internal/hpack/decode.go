package hpack

import (
	"errors"
	"fmt"
)

// DefaultTableSize is the dynamic table size both sides start with
// (SETTINGS_HEADER_TABLE_SIZE's initial value, RFC 9113 section 6.5.2).
const DefaultTableSize = 4096

// Decoder decodes the header blocks of one connection's direction. The
// zero value is not usable; use NewDecoder. It is not safe for concurrent
// use.
type Decoder struct {
	table     dynTable
	maxTable  uint32 // the most a table size update may ask for
	maxString int
	buf       []byte // Huffman-decoded strings, reused
}

// NewDecoder returns a decoder whose dynamic table may grow to maxTable
// bytes (the SETTINGS_HEADER_TABLE_SIZE this side announced; it starts at
// that size) and that refuses strings longer than maxString bytes, coded
// or decoded.
func NewDecoder(maxTable uint32, maxString int) *Decoder {
	return &Decoder{table: dynTable{max: maxTable}, maxTable: maxTable, maxString: maxString}
}

// Errors of Decode. Any error leaves the decoder's table out of step
// with the peer's: the connection must end (COMPRESSION_ERROR).
var (
	ErrTruncated  = errors.New("hpack: header block ends inside a field")
	ErrStringSize = errors.New("hpack: string longer than the limit")
)

// Decode decodes the complete header block p, calling emit with each
// field in order.
func (d *Decoder) Decode(p []byte, emit func(Field)) error {
	first := true
	for len(p) > 0 {
		var err error
		b := p[0]
		switch {
		case b&0x80 != 0: // indexed field
			var i uint64
			if i, p, err = readInt(p, 7); err != nil {
				return err
			}
			f, ok := d.table.at(i)
			if !ok {
				return fmt.Errorf("hpack: index %d is outside the tables (%d entries)", i, len(staticTable)+len(d.table.entries))
			}
			emit(Field{Name: f.Name, Value: f.Value})
		case b&0xe0 == 0x20: // dynamic table size update
			if !first {
				return errors.New("hpack: dynamic table size update after a field")
			}
			var n uint64
			if n, p, err = readInt(p, 5); err != nil {
				return err
			}
			if n > uint64(d.maxTable) {
				return fmt.Errorf("hpack: dynamic table size update to %d bytes; the limit is %d", n, d.maxTable)
			}
			d.table.setMax(uint32(n))
			continue // still at the block's start
		default: // a literal
			if p, err = d.literal(p, emit); err != nil {
				return err
			}
		}
		first = false
	}
	return nil
}

// literal decodes a literal field at the start of p (RFC 7541 section
// 6.2) and returns what follows it.
func (d *Decoder) literal(p []byte, emit func(Field)) ([]byte, error) {
	b := p[0]
	prefix, index, sensitive := 4, false, b&0xf0 == 0x10
	if b&0xc0 == 0x40 {
		prefix, index = 6, true
	}
	i, p, err := readInt(p, prefix)
	if err != nil {
		return nil, err
	}
	var f Field
	if i > 0 {
		e, ok := d.table.at(i)
		if !ok {
			return nil, fmt.Errorf("hpack: name index %d is outside the tables (%d entries)", i, len(staticTable)+len(d.table.entries))
		}
		f.Name = e.Name
	} else if f.Name, p, err = d.readString(p); err != nil {
		return nil, err
	}
	if f.Value, p, err = d.readString(p); err != nil {
		return nil, err
	}
	if index {
		d.table.add(f)
	}
	f.Sensitive = sensitive
	emit(f)
	return p, nil
}

// readInt reads an integer with an n-bit prefix (RFC 7541 section 5.1)
// at the start of p, which is not empty. Integers beyond 32 bits are
// refused: no index, length or size can be that large.
func readInt(p []byte, n int) (uint64, []byte, error) {
	mask := byte(1<<n - 1)
	v := uint64(p[0] & mask)
	p = p[1:]
	if v < uint64(mask) {
		return v, p, nil
	}
	for shift := 0; ; shift += 7 {
		if len(p) == 0 {
			return 0, nil, ErrTruncated
		}
		c := p[0]
		p = p[1:]
		v += uint64(c&0x7f) << shift
		if v > 1<<32-1 {
			return 0, nil, errors.New("hpack: integer beyond 32 bits")
		}
		if c&0x80 == 0 {
			return v, p, nil
		}
	}
}

// readString reads a string literal (RFC 7541 section 5.2) at the start
// of p.
func (d *Decoder) readString(p []byte) (string, []byte, error) {
	if len(p) == 0 {
		return "", nil, ErrTruncated
	}
	huffman := p[0]&0x80 != 0
	n, p, err := readInt(p, 7)
	switch {
	case err != nil:
		return "", nil, err
	case n > uint64(d.maxString):
		return "", nil, ErrStringSize
	case n > uint64(len(p)):
		return "", nil, ErrTruncated
	}
	raw, rest := p[:n], p[n:]
	if !huffman {
		return string(raw), rest, nil
	}
	if d.buf, err = appendUnhuffman(d.buf[:0], raw); err != nil {
		return "", nil, err
	}
	if len(d.buf) > d.maxString {
		return "", nil, ErrStringSize
	}
	return string(d.buf), rest, nil
}
