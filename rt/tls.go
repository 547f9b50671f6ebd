package rt

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/yrpc/yrpc/rt/internal/h2"
	"github.com/yrpc/yrpc/rt/wire"
)

// ALPN is the protocol name yrpc negotiates in the TLS handshake.
const ALPN = "yrpc"

// WithTLS makes connections use TLS with cfg (standard library only).
//
// On a server, cfg holds its certificate (Certificates, or GetCertificate
// to rotate certificates without a restart) and, for mutual TLS,
// ClientAuth and ClientCAs. The server then refuses plaintext
// connections: it answers a plaintext preface with an error frame naming
// TLS (see WithPlaintextAllowed for a migration), and registers that it
// requires TLS, so that clients without TLS fail locally with an error
// naming the provider instead of connecting.
//
// On a client, cfg holds the roots that verify servers (RootCAs; nil: the
// system's) and, for mutual TLS, its certificate (Certificates or
// GetClientCertificate). ServerName defaults to the host of each
// provider's address. A client with TLS never sends a call in plaintext.
//
// Both sides default to TLS 1.3 (set MinVersion to tls.VersionTLS12 to
// allow 1.2) and negotiate the ALPN protocol "yrpc"; on a server, the
// configs its GetConfigForClient returns get the same defaults. cfg is
// cloned; change certificates through its callbacks, not by mutating it.
func WithTLS(cfg *tls.Config) Option {
	return sharedOption(func(s *sharedConfig) { s.tls = prepareTLS(cfg) })
}

// prepareTLS clones cfg with yrpc's ALPN and TLS 1.3 unless it says
// otherwise; nil stays nil.
func prepareTLS(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	c := cfg.Clone()
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS13
	}
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{ALPN}
	}
	return c
}

// serverTLS is a server's TLS config: cfg, as WithTLS prepared it, with
// the ALPN protocols of gRPC (grpcTLS). The configs its GetConfigForClient
// returns get the same defaults, else their handshakes would negotiate no
// ALPN protocol (gRPC over TLS fails) and allow TLS 1.2.
func serverTLS(cfg *tls.Config, m GRPCMode) *tls.Config {
	c := grpcTLS(cfg, m)
	if c == nil || c.GetConfigForClient == nil {
		return c
	}
	get := c.GetConfigForClient
	c.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		r, err := get(hi)
		if r == nil || err != nil {
			return r, err
		}
		ps := r.NextProtos
		if r.MinVersion != 0 && len(ps) > 0 && (m == GRPCOff || slices.Contains(ps, alpnH2) && slices.Contains(ps, alpnHTTP1)) {
			return r, nil // nothing to add: no clone per handshake
		}
		return grpcTLS(prepareTLS(r), m), nil
	}
	return c
}

// WithPlaintextAllowed lets a server with WithTLS accept plaintext
// connections too, for a migration: the first bytes tell a TLS
// ClientHello from yrpc's preface. It does not register the server as
// requiring TLS. Default: false (plaintext refused).
func WithPlaintextAllowed(allow bool) ServerOption {
	return serverOption(func(c *serverConfig) { c.plaintextOK = allow })
}

// tlsRecordHandshake is the first byte of a TLS ClientHello.
const tlsRecordHandshake = 0x16

// errPlaintextRefused is sent to plaintext clients of a TLS-only server.
var errPlaintextRefused = &Error{Code: Unavailable, Message: "this server requires TLS: configure the client with rt.WithTLS"}

// accept turns a new connection into the one yrpc frames travel on: it
// tells TLS from plaintext by the first byte and runs the TLS handshake,
// within the preface deadline set on raw. It returns the connection and
// its TLS state (nil for plaintext), or an error after which the caller
// closes raw.
func (c *serverConn) accept(raw net.Conn) (net.Conn, *tls.ConnectionState, error) {
	o := &c.srv.o
	if o.tls == nil {
		return raw, nil, nil
	}
	var first [1]byte
	if _, err := io.ReadFull(raw, first[:]); err != nil {
		return nil, nil, err
	}
	pc := &prefixConn{Conn: raw, prefix: first[:]}
	if first[0] != tlsRecordHandshake {
		if o.plaintextOK {
			return pc, nil, nil
		}
		c.refusePlaintext(pc)
		return nil, nil, fmt.Errorf("rt: plaintext connection from %s refused: this server requires TLS", raw.RemoteAddr())
	}
	tc := tls.Server(pc, o.tls)
	if err := tc.Handshake(); err != nil {
		return nil, nil, fmt.Errorf("rt: TLS handshake with %s: %w", raw.RemoteAddr(), err)
	}
	st := tc.ConnectionState()
	if p := st.NegotiatedProtocol; p != "" && p != ALPN && !c.httpALPN(p) {
		return nil, nil, fmt.Errorf("rt: TLS client %s negotiated protocol %q, not %q", raw.RemoteAddr(), p, ALPN)
	}
	return tc, &st, nil
}

// refusePlaintext answers a client that came without TLS so that it fails
// with a reason naming TLS instead of a bare closed (or reset)
// connection: a yrpc client gets our preface, then a GoAway frame; an
// HTTP/2 client (h2c gRPC) a GOAWAY of INADEQUATE_SECURITY; an HTTP/1.1
// one (gRPC-Web) a 400 answer. Anything else is just closed.
func (c *serverConn) refusePlaintext(nc net.Conn) {
	var first [4]byte
	if _, err := io.ReadFull(nc, first[:]); err != nil {
		return
	}
	switch {
	case string(first[:]) == h2.ClientPreface[:4]:
		c.refuseH2C(&prefixConn{Conn: nc, prefix: first[:]})
		return
	case looksHTTP(first):
		c.refuseHTTP(nc, []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"+
			errPlaintextRefused.Message+"\n"))
		return
	}
	if _, err := wire.ReadPreface(&prefixConn{Conn: nc, prefix: first[:]}); err != nil {
		return
	}
	// A preface without FeatureSettings: the GoAway is the next frame.
	b := wire.AppendPreface(nil, wire.Preface{MaxFrameSize: uint32(c.srv.o.maxFrame)})
	b = wire.AppendFrame(b, &wire.Header{Type: wire.TypeGoAway, Status: uint8(errPlaintextRefused.Code)}, nil, []byte(errPlaintextRefused.Message))
	_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = nc.Write(b)
}

// refuseH2C answers an HTTP/2 client without TLS: SETTINGS (gRPC clients
// wait for them), then, once its first request is in (or after 16
// frames, or a second), a GOAWAY of INADEQUATE_SECURITY. A GOAWAY
// before the request would close the client's connection before the
// request saw why (Go's: "client conn could not be established").
func (c *serverConn) refuseH2C(nc net.Conn) {
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(h2.AppendSettings(nil)); err != nil {
		return
	}
	var pre [len(h2.ClientPreface)]byte
	if _, err := io.ReadFull(nc, pre[:]); err == nil && string(pre[:]) == h2.ClientPreface {
		var h [h2.FrameHeaderLen]byte
		for range 16 {
			if _, err := io.ReadFull(nc, h[:]); err != nil || h2.FrameType(h[3]) == h2.FrameHeaders {
				break
			}
			if _, err := io.CopyN(io.Discard, nc, int64(h[0])<<16|int64(h[1])<<8|int64(h[2])); err != nil {
				break
			}
		}
	}
	c.refuseHTTP(nc, h2.AppendGoAway(nil, 0, h2.ErrInadequateSecurity, []byte(errPlaintextRefused.Message)))
}

// refuseHTTP writes answer to an HTTP client, then closes the write side
// and reads what the client sent until it closes too (for at most a
// second, 64 KiB): closing with its request unread would reset the
// connection, and the client could lose the answer.
func (c *serverConn) refuseHTTP(nc net.Conn, answer []byte) {
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(answer); err != nil {
		return
	}
	if cw, ok := c.raw.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
}

// prefixConn is a connection whose first bytes were read already.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
