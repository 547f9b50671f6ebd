//go:build !unix

package rt

import "net"

// peerClosed reports false: there is no non-blocking peek here, so a
// close by the server is noticed when the connection is read.
func peerClosed(net.Conn) bool { return false }
