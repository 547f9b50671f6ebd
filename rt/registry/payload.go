package registry

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Limits of an Endpoint, checked by Validate when an endpoint is
// registered and by consumers on every payload they read from a shared
// store (zkreg), which skip and log an endpoint that breaks them.
const (
	// PayloadVersion is the major version of the endpoint payload format
	// this package writes and reads. A reader skips payloads of a newer
	// major version; fields added within a major version are optional and
	// readers ignore fields they do not know.
	PayloadVersion = 1
	// MaxWeight is the largest provider weight (0 means 100, the default).
	MaxWeight = 10000
	// MaxPayloadSize is the largest encoded endpoint payload, in bytes,
	// that a registry stores or a consumer reads (16 KiB: an address, tags
	// and a few hundred method names fit with room to spare).
	MaxPayloadSize = 16 << 10
)

// Validate reports whether e can be registered, and whether a consumer may
// route to it: it needs a Service, a Role of Provider or Consumer, an Addr,
// a Weight that passes CheckWeight and a PayloadVersion this package reads
// (0 or 1). A provider's Addr must be "host:port", or a gRPC address (see
// CheckAddr). A consumer's Addr is only an identifier.
func (e Endpoint) Validate() error {
	switch {
	case e.Key.Service == "":
		return errors.New("registry: endpoint has no service")
	case e.Role != Provider && e.Role != Consumer:
		return fmt.Errorf("registry: endpoint %q of %s has bad role %q", e.Addr, e.Key, e.Role)
	case e.Addr == "":
		return fmt.Errorf("registry: %s endpoint of %s has no addr", e.Role, e.Key)
	case e.PayloadVersion < 0:
		return fmt.Errorf("registry: endpoint %q of %s has bad payload version %d", e.Addr, e.Key, e.PayloadVersion)
	case e.PayloadVersion > PayloadVersion:
		return fmt.Errorf("registry: endpoint %q of %s has payload version %d, newer than this yrpc reads (%d)", e.Addr, e.Key, e.PayloadVersion, PayloadVersion)
	}
	if err := CheckWeight(e.Weight); err != nil {
		return fmt.Errorf("registry: endpoint %q of %s: %w", e.Addr, e.Key, err)
	}
	if e.Role == Provider {
		if err := CheckAddr(e.Addr); err != nil {
			return fmt.Errorf("registry: provider of %s: %w", e.Key, err)
		}
	}
	return nil
}

// Address schemes of providers that speak plain gRPC only: a yrpc client
// calls "grpc://host:port" over HTTP/2 without TLS (h2c) and
// "grpcs://host:port" over HTTP/2 with TLS.
const (
	SchemeGRPC  = "grpc://"
	SchemeGRPCS = "grpcs://"
)

// CheckAddr reports whether addr is a provider address a client can dial:
// "host:port" with a port in 1..65535 and a host that is an IP address
// (IPv6 in brackets) or a name of letters, digits, '-', '_' and '.',
// optionally after SchemeGRPC or SchemeGRPCS.
func CheckAddr(addr string) error {
	hostPort, ok := strings.CutPrefix(addr, SchemeGRPC)
	if !ok {
		hostPort, _ = strings.CutPrefix(addr, SchemeGRPCS)
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return fmt.Errorf("address %q is not host:port", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' || port[0] == '0' {
		return fmt.Errorf("address %q: port %q is not a number in 1..65535", addr, port)
	}
	switch {
	case host == "":
		return fmt.Errorf("address %q has no host", addr)
	case strings.Contains(host, ":"):
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("address %q: bad IPv6 host %q", addr, host)
		}
	case len(host) > 253 || strings.IndexFunc(host, badHostRune) >= 0:
		return fmt.Errorf("address %q: bad host %q", addr, host)
	}
	return nil
}

func badHostRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.')
}

// redacted replaces a secret in logs and listings.
const redacted = "REDACTED"

// Redacted returns a copy of e whose Token, if any, reads "REDACTED", for
// listings and logs. Tags and the slices are shared with e.
func (e Endpoint) Redacted() Endpoint {
	if e.Token != "" {
		e.Token = redacted
	}
	return e
}

// LogValue logs e without its Token (log/slog calls it for an Endpoint
// attribute).
func (e Endpoint) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("key", e.Key.String()),
		slog.String("role", string(e.Role)),
		slog.String("addr", e.Addr),
	}
	if e.Weight != 0 {
		attrs = append(attrs, slog.Int("weight", e.Weight))
	}
	if e.App != "" {
		attrs = append(attrs, slog.String("app", e.App))
	}
	if e.TLS {
		attrs = append(attrs, slog.Bool("tls", true))
	}
	if e.Token != "" {
		attrs = append(attrs, slog.String("token", redacted))
	}
	return slog.GroupValue(attrs...)
}
