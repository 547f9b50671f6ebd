package limiter

import (
	"net/netip"
	"strings"
)

// ClientIP returns the host part of a network address as a key for
// [Keyed], so that all connections from one machine share a bucket:
// "10.0.0.7:51234" and "10.0.0.7:51235" both give "10.0.0.7". It accepts
// what net.Addr.String returns for TCP and UDP ("host:port",
// "[v6]:port"), a bare IPv4 or IPv6 address, and IPv4-mapped IPv6
// ("[::ffff:10.0.0.7]:80" gives "10.0.0.7", the same key as plain IPv4).
// Anything else (a Unix socket path, "") is returned unchanged.
//
// The result is a substring of addr: ClientIP never allocates. A server
// computes it once per connection, not per call.
func ClientIP(addr string) string {
	host := addr
	if strings.HasPrefix(host, "[") {
		// "[v6]:port" or "[v6]"
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return addr
		}
		host = host[1:end]
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host, ':') == i {
		// exactly one colon: "v4:port" or "name:port"; more than one
		// colon without brackets is a bare IPv6 address
		host = host[:i]
	}
	if len(host) > 7 && strings.EqualFold(host[:7], "::ffff:") && strings.IndexByte(host[7:], '.') >= 0 && strings.IndexByte(host[7:], ':') < 0 {
		// IPv4-mapped "::ffff:a.b.c.d"; "::ffff:0:a.b.c.d" is not one
		host = host[7:]
	}
	return host
}

// ClientKey is [ClientIP] with IPv6 clients keyed by their /64 network
// ("2001:db8:1:2::/64") instead of their address: an IPv6 host usually
// owns a whole /64 and could otherwise step past a per-IP limit by
// changing addresses. IPv4 (and IPv4-mapped) clients are keyed by
// address; what is not an IP address is returned as ClientIP returns it.
//
// ClientKey allocates for IPv6 clients; call it once per connection.
func ClientKey(addr string) string {
	host := ClientIP(addr)
	a, err := netip.ParseAddr(host)
	if err != nil || a.Is4() || a.Is4In6() {
		return host
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return host
	}
	return p.String()
}
