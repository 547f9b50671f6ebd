package hpack

// Encoder encodes the header blocks of one connection's direction. The
// zero value is not usable; use NewEncoder. It is not safe for concurrent
// use.
//
// It indexes every field that is not sensitive (literal with incremental
// indexing), refers to fields and names already in the tables, and
// Huffman-codes strings where that is shorter.
type Encoder struct {
	table dynTable
	// The size last announced to the peer differs from table.max: the
	// next field is preceded by a dynamic table size update. lowest is
	// the smallest size the table had meanwhile: when it is below the
	// final one, the peer must evict down to it first (RFC 7541 section
	// 4.2). The update then empties the table (size 0) before it sets the
	// final size: x/net's decoder, which grpc-go and net/http use, refuses
	// a second update while its table holds entries.
	update bool
	lowest uint32
}

// NewEncoder returns an encoder with a dynamic table of DefaultTableSize
// bytes.
func NewEncoder() *Encoder {
	return &Encoder{table: dynTable{max: DefaultTableSize}}
}

// SetMaxTableSize applies the peer's SETTINGS_HEADER_TABLE_SIZE: the
// table stays at most that size (and never above DefaultTableSize), and
// the next block starts with the update.
func (e *Encoder) SetMaxTableSize(v uint32) {
	v = min(v, DefaultTableSize)
	if v == e.table.max {
		return
	}
	if !e.update {
		e.update, e.lowest = true, e.table.max
	}
	e.lowest = min(e.lowest, v)
	e.table.setMax(v)
}

// AppendField appends the field name: value to a header block in b. The
// fields of one block must be appended in order, with no other block's
// between them.
func (e *Encoder) AppendField(b []byte, name, value string, sensitive bool) []byte {
	if e.update {
		e.update = false
		if e.lowest < e.table.max {
			b = appendInt(b, 0x20, 5, 0)
			final := e.table.max
			e.table.setMax(0)
			e.table.setMax(final)
		}
		b = appendInt(b, 0x20, 5, uint64(e.table.max))
	}
	i, exact := staticIndex(name, value)
	if !exact {
		if j, ok := e.table.search(name, value); ok || i == 0 && j > 0 {
			i, exact = j, ok
		}
	}
	switch {
	case exact && !sensitive:
		return appendInt(b, 0x80, 7, uint64(i))
	case sensitive:
		b = appendInt(b, 0x10, 4, uint64(i))
	default:
		b = appendInt(b, 0x40, 6, uint64(i))
		e.table.add(Field{Name: name, Value: value})
	}
	if i == 0 {
		b = appendString(b, name)
	}
	return appendString(b, value)
}

// appendInt appends v with an n-bit prefix; first holds the
// representation's bits above the prefix.
func appendInt(b []byte, first byte, n int, v uint64) []byte {
	mask := uint64(1<<n - 1)
	if v < mask {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(mask))
	for v -= mask; v >= 0x80; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// appendString appends a string literal, Huffman-coded when that is
// shorter.
func appendString(b []byte, s string) []byte {
	if n := huffmanLen(s); n < len(s) {
		return appendHuffman(appendInt(b, 0x80, 7, uint64(n)), s)
	}
	return append(appendInt(b, 0, 7, uint64(len(s))), s...)
}
