package h2

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// Request is what a request's header block says, decoded by a
// HeaderDecoder. The zero value is an empty request.
type Request struct {
	Method, Scheme, Path, Authority string
	// Fields the server reads itself.
	ContentType, Timeout, Encoding, AcceptEncoding string
	// ContentLength is content-length's value, -1 without one.
	ContentLength int64
	// Meta holds the other fields in order, name then value: the call's
	// metadata (names in lowercase).
	Meta []string
	// Size is the header list's size as RFC 9113 counts it (name and
	// value lengths plus 32 per field).
	Size int
	// TooLarge: the list exceeded the decoder's limit; the fields past
	// it were not kept.
	TooLarge bool
	// Malformed says why the block breaks RFC 9113 section 8 ("" if it
	// does not): the stream must be reset with PROTOCOL_ERROR.
	Malformed string
}

// Bounds of a header block's frames, besides the header list size.
const (
	// MaxBlockFrames bounds the frames of one header block: HEADERS and
	// CONTINUATION frames.
	MaxBlockFrames = 64
	// minBlockBytes is the least MaxBlockBytes allows.
	minBlockBytes = 64 << 10
)

// HeaderDecoder decodes request header blocks with one connection's HPACK
// decoder. The zero value is not usable; use NewHeaderDecoder. A
// HeaderDecoder is not safe for concurrent use.
type HeaderDecoder struct {
	dec      *hpack.Decoder
	maxList  int // the header list size limit
	maxBytes int // the block size limit (bytes of fragments)

	req      *Request // the block's
	trailers bool     // the block is a request's trailers
	regular  bool     // a regular field was seen: no more pseudo-header fields
	bytes    int
	frames   int
}

// NewHeaderDecoder returns a decoder that keeps fields of header lists up
// to maxList bytes (this side's SETTINGS_MAX_HEADER_LIST_SIZE) and
// refuses blocks longer than twice that (at least 64 KiB) or of more than
// MaxBlockFrames frames.
func NewHeaderDecoder(maxList int) *HeaderDecoder {
	d := &HeaderDecoder{maxList: maxList, maxBytes: max(2*maxList, minBlockBytes)}
	d.dec = hpack.NewDecoder(4096, d.emit)
	d.dec.SetMaxStringLength(d.maxBytes)
	return d
}

// Begin starts decoding a block into req (reset here). A trailers block
// (trailers) keeps no fields: req says only whether it is malformed.
func (d *HeaderDecoder) Begin(req *Request, trailers bool) {
	*req = Request{ContentLength: -1}
	d.req, d.trailers, d.regular, d.bytes, d.frames = req, trailers, false, 0, 0
	d.dec.SetEmitEnabled(true)
}

// Write decodes a fragment: the block of a HEADERS frame or of a
// CONTINUATION frame. An error is a connection error: the HPACK state is
// lost, or the block is too long.
func (d *HeaderDecoder) Write(fragment []byte) *ConnError {
	d.frames++
	d.bytes += len(fragment)
	switch {
	case d.frames > MaxBlockFrames:
		return connErr(ErrEnhanceYourCalm, "header block of more than %d frames", MaxBlockFrames)
	case d.bytes > d.maxBytes:
		return connErr(ErrEnhanceYourCalm, "header block of more than %d bytes", d.maxBytes)
	}
	if _, err := d.dec.Write(fragment); err != nil {
		return connErr(ErrCompression, "%v", err)
	}
	return nil
}

// End ends the block.
func (d *HeaderDecoder) End() *ConnError {
	if err := d.dec.Close(); err != nil {
		return connErr(ErrCompression, "%v", err)
	}
	r := d.req
	d.req = nil
	if d.trailers || r.Malformed != "" || r.TooLarge {
		return nil
	}
	switch {
	case r.Method == "" || r.Scheme == "" || r.Path == "":
		r.Malformed = "a request needs :method, :scheme and :path"
	case r.Path[0] != '/' && !(r.Path == "*" && r.Method == "OPTIONS"):
		r.Malformed = fmt.Sprintf(":path %q", r.Path)
	}
	return nil
}

// emit takes one decoded field.
func (d *HeaderDecoder) emit(f hpack.HeaderField) {
	r := d.req
	if r.Malformed != "" {
		return
	}
	r.Size += len(f.Name) + len(f.Value) + 32
	if r.Size > d.maxList {
		r.TooLarge = true
		d.dec.SetEmitEnabled(false) // go on decoding, keeping nothing
		return
	}
	if why := checkField(f.Name, f.Value); why != "" {
		r.Malformed = why
		return
	}
	if f.Name[0] == ':' {
		r.Malformed = d.pseudo(r, f.Name, f.Value)
		return
	}
	d.regular = true
	switch f.Name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		r.Malformed = "connection-specific field " + f.Name
	case "te":
		if f.Value != "trailers" {
			r.Malformed = "te: " + f.Value
		}
	case "content-type":
		r.ContentType = f.Value
	case "content-length":
		n, err := strconv.ParseInt(f.Value, 10, 64)
		if err != nil || n < 0 || r.ContentLength >= 0 && r.ContentLength != n {
			r.Malformed = "content-length: " + f.Value
		}
		r.ContentLength = n
	case "grpc-timeout":
		r.Timeout = f.Value
	case "grpc-encoding":
		r.Encoding = f.Value
	case "grpc-accept-encoding":
		r.AcceptEncoding = f.Value
	default:
		if !d.trailers {
			r.Meta = append(r.Meta, f.Name, f.Value)
		}
	}
}

// pseudo takes a pseudo-header field; it returns why the block is
// malformed, or "".
func (d *HeaderDecoder) pseudo(r *Request, name, value string) string {
	if d.trailers || d.regular {
		return "pseudo-header field " + name + " after the regular ones, or in trailers"
	}
	var p *string
	switch name {
	case ":method":
		p = &r.Method
	case ":scheme":
		p = &r.Scheme
	case ":path":
		p = &r.Path
	case ":authority":
		p = &r.Authority
	default:
		return "pseudo-header field " + name
	}
	if *p != "" || value == "" {
		return "repeated or empty " + name
	}
	*p = value
	return ""
}

// checkField returns why a field is malformed: a name that is not a
// lowercase token (a pseudo-header field's after its ':'), a value with
// control characters other than tab. "" if neither.
func checkField(name, value string) string {
	if name == "" {
		return "empty field name"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if i == 0 && c == ':' {
			continue
		}
		if !tokenLower(c) {
			return fmt.Sprintf("field name %q", name)
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return fmt.Sprintf("control character in the value of %q", name)
		}
	}
	return ""
}

// tokenLower reports whether c is a character of HTTP tokens other than
// an uppercase letter.
func tokenLower(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c != 0 && strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
