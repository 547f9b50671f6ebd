//go:build !unix

package sock

import (
	"net"
	"time"
)

// Peeker would tell whether the peer closed a connection; there is no
// non-blocking peek here, so a close by the server is noticed when the
// connection is read.
type Peeker struct{}

func NewPeeker(net.Conn) *Peeker { return &Peeker{} }

func (*Peeker) PeerClosed() bool { return false }

func (*Peeker) State() (closed, readable bool) { return false, false }

func (*Peeker) Await(time.Duration, *SpinGate) {}
