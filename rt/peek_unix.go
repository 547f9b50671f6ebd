//go:build unix

package rt

import (
	"net"
	"syscall"
)

// peerClosed reports whether the peer of nc has closed the connection
// (or reset it), without reading anything and without waiting: a
// non-blocking MSG_PEEK. It reports false for connections that are not
// sockets.
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == syscall.ECONNRESET || err == syscall.EPIPE
		return true
	})
	return closed || err != nil
}
