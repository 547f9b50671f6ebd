package rt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
)

// Peer is who is on the other end of the call a handler serves: the
// connection's address and TLS state, the identity in the client's
// verified certificate, and the principal an Authenticator gave the call.
// Handlers and server interceptors get it with PeerFrom.
type Peer struct {
	// Addr is the client's address.
	Addr net.Addr
	// TLS is the connection's TLS state; nil for plaintext.
	TLS *tls.ConnectionState
	// Cert is the client's verified certificate (mutual TLS); nil when
	// the client sent none or it was not verified. VerifiedChains of TLS
	// holds the whole chains. Only crypto/tls's own verification counts
	// (ClientAuth VerifyClientCertIfGiven or RequireAndVerifyClientCert):
	// a server that checks certificates in VerifyPeerCertificate alone
	// (RequireAnyClientCert, as some SPIFFE libraries configure it) gets
	// no Cert, SPIFFEID, URIs or CommonName, so access rules on them deny
	// its calls; read TLS.PeerCertificates there, as that callback saw
	// them.
	Cert *x509.Certificate
	// SPIFFEID is the client certificate's first spiffe:// URI SAN, e.g.
	// "spiffe://example.org/ns/shop/sa/web"; "" when it has none.
	SPIFFEID string
	// URIs are the client certificate's URI SANs.
	URIs []*url.URL
	// CommonName is the client certificate's subject common name.
	CommonName string
	// Principal is what the server's Authenticator returned for the call;
	// "" without an Authenticator.
	Principal string

	addr string // Addr.String(), formatted once per connection (see addrString)
}

// newPeer describes the client of a connection; st is nil for plaintext.
func newPeer(addr net.Addr, st *tls.ConnectionState) *Peer {
	p := &Peer{Addr: addr, TLS: st}
	if addr != nil {
		p.addr = addr.String()
	}
	if st == nil || len(st.VerifiedChains) == 0 || len(st.VerifiedChains[0]) == 0 {
		return p
	}
	cert := st.VerifiedChains[0][0]
	p.Cert, p.URIs, p.CommonName = cert, cert.URIs, cert.Subject.CommonName
	for _, u := range cert.URIs {
		if u.Scheme == "spiffe" {
			p.SPIFFEID = u.String()
			break
		}
	}
	return p
}

// addrString returns Addr as text ("" for none): formatted when the
// connection was accepted, so that a per-call access log does not format
// it again.
func (p *Peer) addrString() string {
	if p.addr == "" && p.Addr != nil {
		return p.Addr.String() // a Peer not made by newPeer
	}
	return p.addr
}

// PeerFrom returns the peer of the call that ctx serves (a handler's or a
// server interceptor's context), and false for other contexts.
func PeerFrom(ctx context.Context) (Peer, bool) {
	c, ok := ctx.Value(serverCallKey{}).(*callCtx)
	if !ok || c.peer == nil {
		return Peer{}, false
	}
	p := *c.peer
	p.Principal = c.principal
	return p, true
}
