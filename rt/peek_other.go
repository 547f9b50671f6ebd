//go:build !unix

package rt

import (
	"net"
	"time"
)

// peeker would tell whether the peer closed a connection; there is no
// non-blocking peek here, so a close by the server is noticed when the
// connection is read.
type peeker struct{}

func newPeeker(net.Conn) *peeker { return &peeker{} }

func (*peeker) peerClosed() bool { return false }

func (*peeker) await(time.Duration, *spinGate) {}
