package rt

import "time"

// Limits bound what peers can make a Server hold, so that one client —
// broken or hostile — cannot take the server's memory, goroutines or file
// descriptors from the others. Exceeding a limit fails that call or that
// connection, never the server and never another connection's calls.
//
// The zero value means the defaults given with each field; a negative
// value turns a limit off. Give them with WithLimits. Three more limits
// concern both sides and are Options: WithMaxFrameSize (4 MiB),
// WithMaxMetadataSize (16 KiB) and WithWriteTimeout (20 s). Limits that a
// client must know to stay within them are announced to it in the
// connection's preface (the frame and metadata sizes, and
// MaxCallsPerConn), so that a client refuses an oversized call locally
// instead of losing the connection.
type Limits struct {
	// MaxCallsPerConn is how many calls of one connection may be in
	// flight at once; beyond it calls are refused with ResourceExhausted,
	// marked as not run so that the client may try another provider.
	// Default 1024.
	MaxCallsPerConn int
	// MaxCalls is how many calls of all connections may be in flight at
	// once, refused the same way beyond it. Default: no limit.
	MaxCalls int
	// MaxRequestBytes is how many bytes of requests the calls in flight of
	// one connection may hold (decoded messages keep their request's
	// bytes). Beyond it the server stops reading that connection until
	// calls finish. Default 16 MiB.
	MaxRequestBytes int
	// MaxTotalRequestBytes is the same bound over all connections.
	// Default 256 MiB.
	MaxTotalRequestBytes int
	// MaxBufferedBytes is how many bytes of answers one connection may
	// have waiting to be written. Beyond it the server stops reading that
	// connection until its client takes them (calls in flight may still
	// add theirs). Default 4 MiB.
	MaxBufferedBytes int
	// MaxConns is how many connections the server keeps open; the ones
	// accepted beyond it are closed at once. Default 10,000.
	MaxConns int
	// MaxConnsPerIP is how many connections one client IP may keep open,
	// the same way. Default 512.
	MaxConnsPerIP int
	// PrefaceTimeout bounds the wait for a new connection's preface.
	// Default 5 s.
	PrefaceTimeout time.Duration
	// FirstFrameTimeout bounds the wait for a connection's first complete
	// frame after the preface. Default 10 s.
	FirstFrameTimeout time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxCallsPerConn      = 1024
	DefaultMaxBufferedBytes     = 4 << 20
	DefaultMaxRequestBytes      = 16 << 20
	DefaultMaxTotalRequestBytes = 256 << 20
	DefaultMaxConns             = 10_000
	DefaultMaxConnsPerIP        = 512
	DefaultPrefaceTimeout       = 5 * time.Second
	DefaultFirstFrameTimeout    = 10 * time.Second
)

// withDefaults returns l with zero fields set to their defaults and
// negative ones to 0 (no limit).
func (l Limits) withDefaults() Limits {
	n := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	d := func(v *time.Duration, def time.Duration) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	n(&l.MaxCallsPerConn, DefaultMaxCallsPerConn)
	n(&l.MaxCalls, 0)
	n(&l.MaxBufferedBytes, DefaultMaxBufferedBytes)
	n(&l.MaxRequestBytes, DefaultMaxRequestBytes)
	n(&l.MaxTotalRequestBytes, DefaultMaxTotalRequestBytes)
	n(&l.MaxConns, DefaultMaxConns)
	n(&l.MaxConnsPerIP, DefaultMaxConnsPerIP)
	d(&l.PrefaceTimeout, DefaultPrefaceTimeout)
	d(&l.FirstFrameTimeout, DefaultFirstFrameTimeout)
	return l
}
