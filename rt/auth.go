package rt

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
)

// An Authenticator decides who makes a call, on the server, before the
// request is validated and the handler runs: from the connection's peer
// (its TLS state and verified certificate) and the call's metadata it
// returns the principal — a name the authorization rules and the handler
// (PeerFrom) see — or an error, which refuses the call with
// Unauthenticated (or the code of an *Error it returns) without running
// the handler. Implementations must be safe for concurrent use; give one
// with WithAuthenticator.
//
// Without an Authenticator, a call's principal is the SPIFFE ID of the
// client's verified certificate, else its common name, else "".
type Authenticator interface {
	Authenticate(ctx context.Context, req AuthRequest) (principal string, err error)
}

// AuthRequest is what an Authenticator decides on.
type AuthRequest struct {
	Peer *Peer     // the connection's client; Principal is ""
	MD   MD        // the call's request metadata
	Info *CallInfo // the service and method called
}

// AuthenticatorFunc is an Authenticator.
type AuthenticatorFunc func(ctx context.Context, req AuthRequest) (string, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(ctx context.Context, req AuthRequest) (string, error) {
	return f(ctx, req)
}

// WithAuthenticator makes the server authenticate every call with a.
// Default: none (see Authenticator for the principal without one).
func WithAuthenticator(a Authenticator) ServerOption {
	return serverOption(func(c *serverConfig) { c.auth = a })
}

// MDAuthorization is the request metadata key of bearer credentials
// ("Bearer TOKEN"), as in HTTP and gRPC.
const MDAuthorization = "authorization"

// BearerTokens returns an Authenticator of static bearer tokens: a call
// must carry "authorization: Bearer TOKEN" with a TOKEN of tokens, and its
// principal is that token's value. Tokens are compared in constant time,
// as SHA-256 digests, so that the time taken tells neither which token
// matched nor how long they are. An empty token admits no one (a token
// read from an unset variable must not open the server to "Bearer " with
// nothing after it).
func BearerTokens(tokens map[string]string) Authenticator {
	type entry struct {
		digest    [sha256.Size]byte
		principal string
	}
	es := make([]entry, 0, len(tokens))
	for t, p := range tokens {
		if t != "" {
			es = append(es, entry{sha256.Sum256([]byte(t)), p})
		}
	}
	return AuthenticatorFunc(func(_ context.Context, req AuthRequest) (string, error) {
		v, ok := strings.CutPrefix(req.MD.Get(MDAuthorization), "Bearer ")
		if !ok {
			return "", errors.New("no bearer token")
		}
		got := sha256.Sum256([]byte(v))
		principal := ""
		for _, e := range es {
			// Look at every token, so the time taken does not tell
			// which one matched.
			if subtle.ConstantTimeCompare(got[:], e.digest[:]) == 1 {
				principal = e.principal
			}
		}
		if principal == "" {
			return "", errors.New("bad bearer token")
		}
		return principal, nil
	})
}

// Credentials give a client's calls their credentials: metadata added to
// every call, e.g. a bearer token. Give them with WithCredentials.
// Implementations must be safe for concurrent use.
type Credentials interface {
	// RequestMetadata returns the metadata for a call of info.
	RequestMetadata(ctx context.Context, info *CallInfo) (MD, error)
	// RequireTLS reports whether the credentials are secret: a client
	// without TLS refuses to send them (NewClient fails), and a client
	// with TLS refuses to call plaintext gRPC providers (grpc://) with
	// them (FailedPrecondition).
	RequireTLS() bool
}

// WithCredentials adds c's metadata to every call of the client: it asks
// c for it per call and stream, except for a BearerToken, whose metadata
// does not change and is made once. A client without WithTLS refuses
// credentials that require TLS.
func WithCredentials(c Credentials) ClientOption {
	return clientOption(func(cc *clientConfig) { cc.creds = c })
}

// BearerToken is Credentials of a static bearer token
// ("authorization: Bearer Token"). It requires TLS unless AllowPlaintext
// is set, for a trusted network.
type BearerToken struct {
	Token          string
	AllowPlaintext bool
}

// RequestMetadata returns the token's authorization pair.
func (b BearerToken) RequestMetadata(context.Context, *CallInfo) (MD, error) {
	return MD{MDAuthorization, "Bearer " + b.Token}, nil
}

// RequireTLS reports !AllowPlaintext.
func (b BearerToken) RequireTLS() bool { return !b.AllowPlaintext }

func (BearerToken) staticMetadata() {}

// staticCredentials are Credentials whose metadata is the same for every
// call: the client asks for it once, when it is made, instead of per call.
type staticCredentials interface {
	Credentials
	staticMetadata()
}

// credentials returns the client's credentials' metadata for a call of
// info in ctx (nil without credentials).
func (c *Client) credentials(ctx context.Context, info *CallInfo) (MD, error) {
	if c.credsMD != nil {
		return c.credsMD, nil // shared: requestMD copies it into each call's metadata
	}
	if c.o.creds == nil {
		return nil, nil
	}
	return c.o.creds.RequestMetadata(ctx, info)
}

// defaultPrincipal is a call's principal without an Authenticator: the
// verified client certificate's SPIFFE ID, else its common name.
func defaultPrincipal(p *Peer) string {
	if p.SPIFFEID != "" {
		return p.SPIFFEID
	}
	return p.CommonName
}

// AccessRules allow principals to call services and methods, at run time:
// keys are "package.Service" or "package.Service/Method", values the
// principal patterns allowed (see allowed). A key set here replaces the
// schema's rules for that service or method; an empty list allows no one.
type AccessRules map[string][]string

// WithAccessRules sets run-time authorization rules (see AccessRules).
// Calls that the rules do not allow fail with PermissionDenied before the
// handler runs. Default: the schema's rules only.
func WithAccessRules(r AccessRules) ServerOption {
	return serverOption(func(c *serverConfig) { c.access = r })
}

// accessRule resolves the principals allowed to call method m of sd: the
// method's rule (run time, else schema), else the service's; nil when
// nothing restricts it.
func accessRule(sd *ServiceDesc, m *MethodDesc, rt AccessRules) []string {
	if r, ok := rt[m.FullName]; ok {
		return nonNil(r)
	}
	if m.Policy.Allow != nil {
		return m.Policy.Allow
	}
	if r, ok := rt[sd.Name]; ok {
		return nonNil(r)
	}
	return sd.Policy.Allow
}

func nonNil(r []string) []string {
	if r == nil {
		return []string{}
	}
	return r
}

// allowed reports whether principal matches one of the patterns: "*" is
// any non-empty principal, a pattern ending in "*" a prefix
// ("spiffe://example.org/ns/shop/*"), anything else the exact principal.
func allowed(patterns []string, principal string) bool {
	if principal == "" {
		return false
	}
	for _, p := range patterns {
		switch {
		case p == "*" || p == principal:
			return true
		case strings.HasSuffix(p, "*") && strings.HasPrefix(principal, p[:len(p)-1]):
			return true
		}
	}
	return false
}

// ProtocolYRPC names yrpc's own wire protocol in registry payloads.
const ProtocolYRPC = "yrpc"

// MDToken carries a provider's registry token with each call.
const MDToken = "yrpc-token"

// WithRegistryToken makes the server, Dubbo-style, generate a random token
// when it is made (NewServer), publish it in its registry entries, and refuse calls
// that do not carry it (Unauthenticated, marked as not run so that the
// client may try another provider). Clients attach the token of the
// provider they picked, from the registry, without configuration.
//
// What it stops: callers that bypass the registry — a client given the
// provider's address by hand, a scan of the network. What it does not
// stop: anyone who can read the registry can read the token; lock the
// registry's reads down (an ACL policy of your own: zkreg's DigestPolicy
// lets everyone read) and use TLS where that matters. The
// token travels with every call: in plaintext only to providers that do
// not require TLS (see WithTLS). Default: off.
func WithRegistryToken(on bool) ServerOption {
	return serverOption(func(c *serverConfig) { c.registryToken = on })
}

// newRegistryToken returns 128 random bits, hex encoded.
func newRegistryToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// tokenOK reports whether a call's metadata carries the server's registry
// token (compared in constant time); true when the server has none.
func (s *Server) tokenOK(md MD) bool {
	return s.token == "" || subtle.ConstantTimeCompare([]byte(md.Get(MDToken)), []byte(s.token)) == 1
}
