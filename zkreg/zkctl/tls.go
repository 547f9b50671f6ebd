package zkctl

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strconv"

	"github.com/yrpc/yrpc/zkreg"
)

// tlsFlags are the flags of TLS to ZooKeeper.
type tlsFlags struct {
	on            bool   // --zk-tls
	ca            string // --zk-tls-ca
	cert, key     string // --zk-tls-cert, --zk-tls-key
	plaintextAuth bool   // --zk-plaintext-auth
}

// setting is a flag's value, else its environment variable's, and which
// of them gave it (for errors).
func (c *cli) setting(flagValue, flagName, env string) (value, from string) {
	if flagValue != "" {
		return flagValue, flagName
	}
	return c.Getenv(env), "$" + env
}

// boolSetting is a boolean flag, else its environment variable ("1",
// "true", ...).
func (c *cli) boolSetting(flagValue bool, env string) (bool, error) {
	v := c.Getenv(env)
	if flagValue || v == "" {
		return flagValue, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usagef("$%s: want 1 or 0", env)
	}
	return b, nil
}

// zkTLS returns the TLS config of the connection to ZooKeeper (nil:
// plaintext) and the x509 id of its client certificate ("" if none, or if
// it cannot be named).
func (c *cli) zkTLS(f tlsFlags) (cfg *tls.Config, certID string, err error) {
	on, err := c.boolSetting(f.on, EnvTLS)
	if err != nil {
		return nil, "", err
	}
	ca, caFrom := c.setting(f.ca, "--zk-tls-ca", EnvTLSCA)
	cert, certFrom := c.setting(f.cert, "--zk-tls-cert", EnvTLSCert)
	key, keyFrom := c.setting(f.key, "--zk-tls-key", EnvTLSKey)
	if !on && ca == "" && cert == "" && key == "" {
		return nil, "", nil
	}
	cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, "", usagef("%s: %v", caFrom, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, "", usagef("%s: %s holds no PEM certificate", caFrom, ca)
		}
	}
	switch {
	case cert == "" && key == "":
		return cfg, "", nil
	case cert == "" || key == "":
		return nil, "", usagef("a client certificate needs both --zk-tls-cert and --zk-tls-key (or $%s and $%s)", EnvTLSCert, EnvTLSKey)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, "", usagef("%s, %s: %v", certFrom, keyFrom, err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	certID, _ = zkreg.X509ID(pair.Leaf) // "": the roles must name operators
	return cfg, certID, nil
}

// checkPlaintextAuth refuses to send a digest credential to ZooKeeper
// without TLS unless --zk-plaintext-auth or $YRPC_ZK_PLAINTEXT_AUTH allows
// it, as rt's clients refuse secret credentials without TLS.
func (c *cli) checkPlaintextAuth(f tlsFlags, authFrom string, o zkreg.Options) error {
	if o.TLS != nil || len(o.Auth) == 0 {
		return nil
	}
	allowed, err := c.boolSetting(f.plaintextAuth, EnvPlaintextAuth)
	if err != nil || allowed {
		return err
	}
	return usagef("%s: refusing to send a digest credential to ZooKeeper in plaintext: connect over TLS (--zk-tls-ca FILE, or --zk-tls for the system's CAs), or allow it on a trusted network with --zk-plaintext-auth or $%s=1", authFrom, EnvPlaintextAuth)
}

// refusedIdentity names the ZooKeeper identity of a refused write (""
// for none: the world identity).
func refusedIdentity(o zkreg.Options, certID string) string {
	switch {
	case len(o.Auth) > 0:
		// ZooKeeper takes any digest password: a wrong one is just an
		// identity that the ACLs do not name.
		return fmt.Sprintf("the credentials of user %q (--auth or $%s; is the password right?)", o.Auth[0].User(), EnvAuth)
	case certID != "":
		return fmt.Sprintf("the client certificate's identity %q (--zk-tls-cert or $%s)", certID, EnvTLSCert)
	case o.TLS != nil && len(o.TLS.Certificates) > 0:
		return fmt.Sprintf("the client certificate (--zk-tls-cert or $%s)", EnvTLSCert)
	}
	return ""
}
