package hpack

// Field is a header field. Sensitive fields are never indexed, by this
// side or by proxies after it (RFC 7541 section 7.1.3).
type Field struct {
	Name, Value string
	Sensitive   bool
}

// size is the field's size in a dynamic table (RFC 7541 section 4.1).
func (f Field) size() uint32 { return uint32(len(f.Name)+len(f.Value)) + 32 }

// staticTable is RFC 7541 Appendix A: index i+1 is staticTable[i].
var staticTable = [...]Field{
	{Name: ":authority"},
	{Name: ":method", Value: "GET"},
	{Name: ":method", Value: "POST"},
	{Name: ":path", Value: "/"},
	{Name: ":path", Value: "/index.html"},
	{Name: ":scheme", Value: "http"},
	{Name: ":scheme", Value: "https"},
	{Name: ":status", Value: "200"},
	{Name: ":status", Value: "204"},
	{Name: ":status", Value: "206"},
	{Name: ":status", Value: "304"},
	{Name: ":status", Value: "400"},
	{Name: ":status", Value: "404"},
	{Name: ":status", Value: "500"},
	{Name: "accept-charset"},
	{Name: "accept-encoding", Value: "gzip, deflate"},
	{Name: "accept-language"},
	{Name: "accept-ranges"},
	{Name: "accept"},
	{Name: "access-control-allow-origin"},
	{Name: "age"},
	{Name: "allow"},
	{Name: "authorization"},
	{Name: "cache-control"},
	{Name: "content-disposition"},
	{Name: "content-encoding"},
	{Name: "content-language"},
	{Name: "content-length"},
	{Name: "content-location"},
	{Name: "content-range"},
	{Name: "content-type"},
	{Name: "cookie"},
	{Name: "date"},
	{Name: "etag"},
	{Name: "expect"},
	{Name: "expires"},
	{Name: "from"},
	{Name: "host"},
	{Name: "if-match"},
	{Name: "if-modified-since"},
	{Name: "if-none-match"},
	{Name: "if-range"},
	{Name: "if-unmodified-since"},
	{Name: "last-modified"},
	{Name: "link"},
	{Name: "location"},
	{Name: "max-forwards"},
	{Name: "proxy-authenticate"},
	{Name: "proxy-authorization"},
	{Name: "range"},
	{Name: "referer"},
	{Name: "refresh"},
	{Name: "retry-after"},
	{Name: "server"},
	{Name: "set-cookie"},
	{Name: "strict-transport-security"},
	{Name: "transfer-encoding"},
	{Name: "user-agent"},
	{Name: "vary"},
	{Name: "via"},
	{Name: "www-authenticate"},
}

// staticIndex finds a field in the static table: the index of the entry
// with name and value, else of the first entry with name (exact false),
// else 0.
func staticIndex(name, value string) (i int, exact bool) {
	for j := range staticTable {
		e := &staticTable[j]
		if len(e.Name) != len(name) || e.Name != name {
			continue
		}
		if e.Value == value {
			return j + 1, true
		}
		if i == 0 {
			i = j + 1
		}
	}
	return i, false
}

// dynTable is a dynamic table: the newest entry is last. The zero value
// is an empty table of size 0.
type dynTable struct {
	entries []Field
	size    uint32 // the sum of the entries' sizes
	max     uint32 // the table's maximum size
}

// add inserts f, evicting the oldest entries to make room; a field larger
// than the table empties it and is not kept (RFC 7541 section 4.4).
func (t *dynTable) add(f Field) {
	t.evict(t.max - min(t.max, f.size()))
	if f.size() <= t.max {
		t.entries = append(t.entries, f)
		t.size += f.size()
	}
}

// setMax changes the maximum size, evicting what no longer fits.
func (t *dynTable) setMax(max uint32) {
	t.max = max
	t.evict(max)
}

// evict removes the oldest entries until the size is at most limit.
func (t *dynTable) evict(limit uint32) {
	n := 0
	for t.size > limit {
		t.size -= t.entries[n].size()
		n++
	}
	if n == 0 {
		return
	}
	// Move the kept entries to the front so that the array is reused,
	// and clear the tail so that it keeps no strings alive.
	k := copy(t.entries, t.entries[n:])
	clear(t.entries[k:])
	t.entries = t.entries[:k]
}

// at returns the entry of index i in HPACK's numbering (1 is the first
// static entry; the dynamic table starts after the static one, newest
// first).
func (t *dynTable) at(i uint64) (Field, bool) {
	switch {
	case i == 0:
		return Field{}, false
	case i <= uint64(len(staticTable)):
		return staticTable[i-1], true
	}
	d := i - uint64(len(staticTable)) - 1
	if d >= uint64(len(t.entries)) {
		return Field{}, false
	}
	return t.entries[len(t.entries)-1-int(d)], true
}

// search finds a field in the dynamic table, as staticIndex does, giving
// HPACK indexes.
func (t *dynTable) search(name, value string) (i int, exact bool) {
	for j := len(t.entries) - 1; j >= 0; j-- {
		e := &t.entries[j]
		if e.Name != name {
			continue
		}
		idx := len(staticTable) + len(t.entries) - j
		if e.Value == value {
			return idx, true
		}
		if i == 0 {
			i = idx
		}
	}
	return i, false
}
