package rt

import (
	"context"
	"slices"
	"strings"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcclient"
	"github.com/yrpc/yrpc/rt/registry"
)

// transport is how the client reaches one provider: yrpc's multiplexed
// connections (conn.Pool), or gRPC over HTTP/2 (grpcclient.Pool). Both
// take the same conn.Request and answer with package conn's errors, so
// the call path above them (balancers, breakers, retries, mocks, metrics)
// does not tell them apart.
type transport interface {
	// get returns a connection; its errors are *conn.NotSent.
	get(ctx context.Context) (transportConn, error)
	// redialNow ends the redial backoff of failed dials: the next get
	// dials at once (the provider is known to be back).
	redialNow()
}

// transportConn is a connection of a transport.
type transportConn interface {
	Call(ctx context.Context, r *conn.Request, p *conn.Pending) error
	openStream(ctx context.Context, r *conn.Request, onEnd func(error)) (connStream, error)
	// lostWith returns the connection whose loss err (as Call returned
	// it) is, for the breaker to count the loss once; nil when err is one
	// call's failure, or the transport cannot tell.
	lostWith(err error) *conn.Conn
}

// connStream is an open stream of a transportConn.
type connStream interface {
	Send(m conn.Message) error
	Recv(m conn.Message) error
	CloseSend() error
	Trailer() []string
	Reset(code uint8, reason string, err error)
}

type yrpcTransport struct{ p *conn.Pool }

func (t yrpcTransport) redialNow() { t.p.RedialNow() }

func (t yrpcTransport) get(ctx context.Context) (transportConn, error) {
	c, err := t.p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return yrpcConn{c}, nil
}

type yrpcConn struct{ *conn.Conn }

func (c yrpcConn) openStream(ctx context.Context, r *conn.Request, onEnd func(error)) (connStream, error) {
	s, err := c.OpenStream(ctx, r, onEnd)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (c yrpcConn) lostWith(err error) *conn.Conn {
	if c.LostWith(err) {
		return c.Conn
	}
	return nil
}

// refusedTransport is a provider the client must not call: every call
// and stream fails with err, and nothing is sent.
type refusedTransport struct{ err *conn.NotSent }

func (t refusedTransport) get(context.Context) (transportConn, error) { return nil, t.err }
func (refusedTransport) redialNow()                                   {}

type grpcClientTransport struct{ p *grpcclient.Pool }

func (t grpcClientTransport) redialNow() { t.p.RedialNow() }

func (t grpcClientTransport) get(ctx context.Context) (transportConn, error) {
	c, err := t.p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return grpcConn{c}, nil
}

type grpcConn struct{ *grpcclient.Conn }

func (c grpcConn) openStream(ctx context.Context, r *conn.Request, onEnd func(error)) (connStream, error) {
	s, err := c.OpenStream(ctx, r, onEnd)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// lostWith: a gRPC connection's loss counts once per call it failed.
func (grpcConn) lostWith(error) *conn.Conn { return nil }

// target says how the client reaches provider p: p.Addr itself for a
// gRPC address (grpc://host:port, grpcs://host:port); for a provider
// whose payload lists gRPC and not yrpc among its protocols, its address
// as a gRPC address (over TLS when the client has WithTLS); else p.Addr,
// called over yrpc.
func (c *Client) target(p registry.Endpoint) string {
	switch {
	case strings.HasPrefix(p.Addr, registry.SchemeGRPC), strings.HasPrefix(p.Addr, registry.SchemeGRPCS):
		return p.Addr
	case slices.Contains(p.Protocols, ProtocolGRPC) && !slices.Contains(p.Protocols, ProtocolYRPC):
		if c.o.tls != nil {
			return registry.SchemeGRPCS + p.Addr
		}
		return registry.SchemeGRPC + p.Addr
	}
	return p.Addr
}

// transport returns the transport of a target (see target), shared by
// the services that call it.
func (c *Client) transport(target string) transport {
	addr, ok := strings.CutPrefix(target, registry.SchemeGRPC)
	secure := false
	if !ok {
		addr, secure = strings.CutPrefix(target, registry.SchemeGRPCS)
	}
	if !ok && !secure {
		return yrpcTransport{c.pool(target)}
	}
	if ok && c.o.creds != nil && c.o.creds.RequireTLS() {
		// h2c: the credentials' metadata would cross the network in
		// plaintext (NewClient's check sees only that the client has TLS).
		return refusedTransport{&conn.NotSent{Err: &conn.Error{Code: uint8(FailedPrecondition),
			Message: "provider " + target + " is plaintext gRPC and the client's credentials require TLS: call it as " + registry.SchemeGRPCS + addr}}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.gpools[target]
	if p == nil {
		p = grpcclient.NewPool(addr, secure, &c.gcfg)
		c.gpools[target] = p
		if c.closed {
			p.Close(&conn.Error{Code: uint8(ErrClientClosed.Code), Message: ErrClientClosed.Message})
		}
	}
	return grpcClientTransport{p}
}
