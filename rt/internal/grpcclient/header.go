package grpcclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// Codes (rt's, gRPC's numbers) beyond the ones package conn names.
const (
	canceled           = conn.Canceled
	unknown            = 2
	invalidArgument    = conn.InvalidArgument
	deadlineExceeded   = conn.DeadlineExceeded
	permissionDenied   = 7
	resourceExhausted  = conn.ResourceExhausted
	failedPrecondition = conn.FailedPrecondition
	unimplemented      = conn.Unimplemented
	internal           = conn.Internal
	unavailable        = conn.Unavailable
	unauthenticated    = 16
	maxCode            = 16
)

func errorf(code uint8, format string, args ...any) *conn.Error {
	return &conn.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ctxError turns a context's error into an *conn.Error naming what waited.
func ctxError(err error, what string) *conn.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &conn.Error{Code: deadlineExceeded, Message: what + ": deadline exceeded", Cause: err}
	}
	return &conn.Error{Code: canceled, Message: what + ": canceled", Cause: err}
}

// Header keys as net/http keeps them (canonical form).
const (
	hdrContentType    = "Content-Type"
	hdrTE             = "Te"
	hdrUserAgent      = "User-Agent"
	hdrTimeout        = "Grpc-Timeout"
	hdrEncoding       = "Grpc-Encoding"
	hdrAcceptEncoding = "Grpc-Accept-Encoding"
	hdrStatus         = "Grpc-Status"
	hdrMessage        = "Grpc-Message"
	hdrDetails        = "Grpc-Status-Details-Bin"
	hdrRefused        = "Yrpc-Refused" // conn.MDRefused
)

// userAgent names this client in requests, as gRPC asks.
const userAgent = "grpc-go-yrpc/1"

// headerValues are request header values every call of a pool shares:
// net/http only reads them.
type headerValues struct {
	contentType, te, encodings, gzip, userAgent []string
}

func (h *headerValues) init() {
	*h = headerValues{contentType: []string{grpcwire.ContentTypeGRPC}, te: []string{"trailers"},
		encodings: []string{"gzip,identity"}, gzip: []string{"gzip"}, userAgent: []string{userAgent}}
}

// fillHeader sets the request headers of a call of name: the protocol's,
// grpc-timeout from timeout (0: none), grpc-encoding gzip when gz, and the
// metadata md ("-bin" values in base64; keys of the transport's own
// headers left out, as gRPC's clients do). Metadata gRPC cannot carry is
// an InvalidArgument error, not sent.
func (p *Pool) fillHeader(h http.Header, name string, md []string, timeout time.Duration, gz bool) error {
	h[hdrContentType] = p.hv.contentType
	h[hdrTE] = p.hv.te
	h[hdrAcceptEncoding] = p.hv.encodings
	h[hdrUserAgent] = p.hv.userAgent
	if gz {
		h[hdrEncoding] = p.hv.gzip
	}
	if timeout > 0 {
		h[hdrTimeout] = []string{string(grpcwire.AppendTimeout(make([]byte, 0, 9), timeout))}
	}
	for i := 0; i+1 < len(md); i += 2 {
		k, v := strings.ToLower(md[i]), md[i+1]
		switch {
		case !grpcwire.ValidKey(k):
			return &conn.NotSent{Err: errorf(invalidArgument, "%s: metadata key %q is not a gRPC header name (letters, digits, '-', '_', '.')", name, md[i])}
		case grpcwire.Reserved(k):
			continue
		case grpcwire.IsBinary(k):
			v = grpcwire.EncodeBinary(v)
		case !grpcwire.ValidValue(v):
			return &conn.NotSent{Err: errorf(invalidArgument, "%s: metadata %q: the value is not printable ASCII (a key ending in \"-bin\" carries bytes)", name, k)}
		}
		if k == "user-agent" {
			h[hdrUserAgent] = []string{v + " " + userAgent}
			continue
		}
		h[k] = append(h[k], v)
	}
	return nil
}

// head checks a response's HTTP status and content type: a server that
// does not answer gRPC fails the call with the code gRPC's HTTP mapping
// gives.
func (p *Pool) head(name string, res *http.Response) *conn.Error {
	if res.StatusCode != http.StatusOK {
		code := uint8(unknown)
		switch res.StatusCode {
		case http.StatusBadRequest:
			code = internal
		case http.StatusUnauthorized:
			code = unauthenticated
		case http.StatusForbidden:
			code = permissionDenied
		case http.StatusNotFound:
			code = unimplemented
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			code = unavailable
		}
		return &conn.Error{Code: code, Remote: true, Message: fmt.Sprintf("%s: %s answered HTTP status %d (%s), not a gRPC response", name, p.addr, res.StatusCode, http.StatusText(res.StatusCode))}
	}
	if ct := first(res.Header[hdrContentType]); grpcwire.ParseContentType(ct) != grpcwire.GRPC {
		return &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s answered content type %q, not application/grpc", name, p.addr, ct)}
	}
	return nil
}

// encoding reads the response's grpc-encoding (true: gzip) and notes
// whether the server accepts gzipped requests.
func (c *Conn) encoding(name string, h http.Header) (bool, *conn.Error) {
	if c.p.cfg.Compress > 0 && !c.gzipOK.Load() {
		for _, v := range h[hdrAcceptEncoding] {
			for e := range strings.SplitSeq(v, ",") {
				if strings.TrimSpace(e) == "gzip" {
					c.gzipOK.Store(true)
				}
			}
		}
	}
	switch e := first(h[hdrEncoding]); e {
	case "", "identity":
		return false, nil
	case "gzip":
		return true, nil
	default:
		return false, &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s answered with grpc-encoding %q, which this client does not decode (gzip and identity)", name, c.p.addr, e)}
	}
}

// status is a call's outcome from its trailers t, else (a Trailers-Only
// answer) its headers h: nil for OK, else a remote *conn.Error, wrapped
// in *conn.NotSent when the server says the call did not run (yrpc's
// refusal trailer).
func (p *Pool) status(name string, h, t http.Header) error {
	st := t
	if len(st[hdrStatus]) == 0 {
		st = h
	}
	v := first(st[hdrStatus])
	if v == "" {
		return &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s ended its answer without grpc-status", name, p.addr)}
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0:
		return &conn.Error{Code: unknown, Remote: true, Message: fmt.Sprintf("%s: %s answered a bad grpc-status %q", name, p.addr, v)}
	case n == 0:
		return nil
	case n > maxCode:
		n = unknown
	}
	e := &conn.Error{Code: uint8(n), Message: grpcwire.DecodeMessage(first(st[hdrMessage])), Remote: true}
	if d := first(st[hdrDetails]); d != "" {
		// Details that do not decode are dropped: the code and message
		// still say what happened.
		if b, err := grpcwire.DecodeBinary(d); err == nil {
			var s grpcwire.Status
			if s.Unmarshal([]byte(b)) == nil {
				for _, a := range s.Details {
					e.Details = append(e.Details, conn.Detail{TypeURL: a.TypeURL, Value: a.Value})
				}
				if e.Message == "" {
					e.Message = s.Message
				}
			}
		}
	}
	if first(h[hdrRefused]) != "" || first(t[hdrRefused]) != "" {
		return &conn.NotSent{Err: e}
	}
	return e
}

// responseMD returns the metadata of a response's headers h and trailers
// t: keys in lowercase, "-bin" values decoded, the transport's own headers
// left out.
func (p *Pool) responseMD(name string, h, t http.Header) ([]string, error) {
	var md []string
	for _, hh := range [2]http.Header{h, t} {
		for k, vs := range hh {
			key := strings.ToLower(k)
			if grpcwire.Reserved(key) {
				continue
			}
			if !grpcwire.IsBinary(key) {
				for _, v := range vs {
					md = append(md, key, v)
				}
				continue
			}
			for _, v := range vs {
				for part := range strings.SplitSeq(v, ",") {
					b, err := grpcwire.DecodeBinary(strings.TrimSpace(part))
					if err != nil {
						return nil, &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s answered metadata %q in bad base64: %v", name, p.addr, key, err)}
					}
					md = append(md, key, b)
				}
			}
		}
	}
	return md, nil
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
