package zkreg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
)

// Credential is one identity the registry presents to ZooKeeper (its
// addauth command). Its String, GoString, LogValue and MarshalJSON never
// show the secret, so a Credential may be logged or printed with %v.
//
// The zero value is no credential. A Credential is a value; copies are
// independent.
type Credential struct {
	// Scheme is the ZooKeeper authentication scheme: "digest". (An x509
	// identity is the TLS client certificate of Options.TLS.)
	Scheme string
	// Secret is what the scheme takes: "user:password" for digest.
	Secret string
}

// ParseCredential parses "digest:USER:PASSWORD" (the form of `yrpcc ctl
// --auth` and $YRPC_ZK_AUTH). The password may contain ':'; the user may
// not. Its errors never repeat the input.
func ParseCredential(s string) (Credential, error) {
	scheme, secret, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return Credential{}, errors.New("zkreg: credential: want digest:USER:PASSWORD")
	}
	c := Credential{Scheme: scheme, Secret: secret}
	if err := c.check(); err != nil {
		return Credential{}, err
	}
	return c, nil
}

// check validates c without showing its secret.
func (c Credential) check() error {
	switch {
	case c.Scheme == "":
		return errors.New("zkreg: credential has no scheme")
	case c.Scheme == "x509":
		return errors.New(`zkreg: credential scheme "x509": an x509 identity is not a credential but the TLS client certificate (Options.TLS; yrpcc ctl --zk-tls-cert)`)
	case c.Scheme != "digest":
		return fmt.Errorf("zkreg: credential scheme %q: only digest is supported", c.Scheme)
	}
	user, pass, ok := strings.Cut(c.Secret, ":")
	switch {
	case !ok || user == "":
		return errors.New("zkreg: digest credential: want USER:PASSWORD")
	case pass == "":
		return fmt.Errorf("zkreg: digest credential of user %q has an empty password", user)
	}
	return nil
}

// User returns the user name of a digest credential ("" if none).
func (c Credential) User() string {
	user, _, _ := strings.Cut(c.Secret, ":")
	return user
}

// DigestID returns the ZooKeeper ACL id of a digest credential,
// "user:base64(sha1(user:password))", for Roles. The id is what ZooKeeper
// stores in ACLs and shows to anyone who may read them: it is not a
// secret, but it allows offline guessing of a weak password.
func (c Credential) DigestID() string {
	user, pass, _ := strings.Cut(c.Secret, ":")
	return zk.DigestACL(0, user, pass)[0].ID
}

// String returns "scheme:user:REDACTED".
func (c Credential) String() string {
	if c.Scheme == "" && c.Secret == "" {
		return ""
	}
	return c.Scheme + ":" + c.User() + ":REDACTED"
}

// GoString is String, so that %#v shows no secret either.
func (c Credential) GoString() string { return "zkreg.Credential(" + c.String() + ")" }

// LogValue logs the credential without its secret.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes String, never the secret.
func (c Credential) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", c.String())), nil }

// startAuth presents every credential on conn, the registry's new current
// connection, in the background, and reports the outcome on the returned
// channel. Writes wait until ZooKeeper has accepted them (writeConn, and
// the session loop checks authedConn); reads need no credential. Once
// accepted, go-zk presents them again on every reconnection before it
// sends anything else. A request flushed because the connection dropped
// (or no server answered) is sent again. startAuth stops trying when conn
// is replaced or the registry closes.
func (r *Registry) startAuth(conn *zk.Conn) <-chan error {
	done := make(chan error, 1)
	if len(r.auth) == 0 {
		r.authed.Store(conn)
		done <- nil
		return done
	}
	abandon := make(chan struct{})
	r.mu.Lock()
	if r.authStop != nil {
		close(r.authStop) // the previous connection's, which is being replaced
	}
	r.authStop = abandon
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		err := addAuth(conn, r.auth, abandon)
		switch {
		case err == nil:
			r.authed.Store(conn)
			r.kickSession()
		case !isClosed(abandon):
			r.log.Error("zkreg: ZooKeeper refused the credentials; writes will fail", "err", err)
		}
		done <- err
	}()
	return done
}

// authRetry is the pause before presenting credentials again.
const authRetry = 50 * time.Millisecond

// authedConn reports whether conn has presented the credentials.
func (r *Registry) authedConn(conn *zk.Conn) bool { return r.authed.Load() == conn }

// writeConn returns the current connection once it has presented the
// credentials (at once without credentials): a write sent before them
// would be refused. It gives up when ctx is done or the registry closes.
func (r *Registry) writeConn(ctx context.Context) (*zk.Conn, error) {
	conn := r.conn()
	if r.authedConn(conn) {
		return conn, nil
	}
	tick := time.NewTicker(10 * time.Millisecond) // polls; bounded by ctx
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for ZooKeeper to accept the credentials: %w", ctx.Err())
		case <-r.quit:
			return nil, registry.ErrClosed
		case <-tick.C:
		}
		if conn = r.conn(); r.authedConn(conn) {
			return conn, nil
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func addAuth(conn *zk.Conn, creds []Credential, abandon <-chan struct{}) error {
	for _, c := range creds {
		for {
			err := conn.AddAuth(c.Scheme, []byte(c.Secret))
			switch {
			case err == nil:
			case isClosed(abandon):
				return registry.ErrClosed
			case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrClosing):
				// Queued again for the next connection, after a pause that
				// bounds the loop should go-zk fail it at once.
				select {
				case <-abandon:
					return registry.ErrClosed
				case <-time.After(authRetry):
				}
				continue
			default:
				return fmt.Errorf("zkreg: ZooKeeper refused credential %s: %w", c, err)
			}
			break
		}
	}
	return nil
}
