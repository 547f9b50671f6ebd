package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// handshake runs the client side of TLS over nc for a connection to addr:
// cfg with ServerName set to addr's host when cfg has none.
func handshake(ctx context.Context, nc net.Conn, cfg *tls.Config, addr string) (*tls.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, fmt.Errorf("TLS handshake with %s: the server closed the connection (does it serve TLS?): %w", addr, err)
		}
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// clientCertHint adds to err, a failed handshake of a client with TLS
// config cfg, what a server's TLS alert about the client's certificate
// (RFC 8446 section 6) means for its configuration. crypto/tls reports a
// peer's alert as a net.OpError "remote error" whose error is the alert,
// of an unexported type: it is told by its text.
func clientCertHint(err error, cfg *tls.Config) error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return err
	}
	hasCert := len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil
	switch alert := op.Err.Error(); {
	case alert == "tls: certificate required" && !hasCert:
		return fmt.Errorf("%w (the server requires a client certificate: give the client one in WithTLS's config)", err)
	case alert == "tls: certificate required":
		return fmt.Errorf("%w (the server requires a client certificate and got none: Go's TLS client sends its certificate only if the server's list of accepted CAs names its issuer, so the server likely does not accept its issuer)", err)
	case alert == "tls: bad certificate" || alert == "tls: unknown certificate authority" || alert == "tls: expired certificate":
		return fmt.Errorf("%w (the server refused the client's certificate)", err)
	}
	return err
}
