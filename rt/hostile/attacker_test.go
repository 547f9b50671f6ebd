//go:build linux

package hostile

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt/wire"
)

// prefaceV1 is a version-1 preface: "YRPC", version 1, no features, a
// max frame size of 4 MiB. It is spelled out rather than encoded with
// package wire so that it stays what a version-1 peer sends.
var prefaceV1 = []byte{'Y', 'R', 'P', 'C', 1, 0, 0, 0, 0, 0, 0, 0x40, 0}

// sayHello is the wire ID of greeter.Greeter/SayHello.
var sayHello = greeterrpc.GreeterServiceDesc.Methods[0].ID

// attackerIP is the i-th attacker address: 127.0.0.2 and up.
func attackerIP(i int) net.IP { return net.IPv4(127, 0, 0, byte(2+i%250)) }

// dial connects to the target from ip; closeAttackers closes the
// connection.
func (tg *target) dial(ip net.IP) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", tg.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s from %s: %w", tg.addr, ip, err)
	}
	tg.mu.Lock()
	tg.attackers = append(tg.attackers, c)
	tg.mu.Unlock()
	return c, nil
}

// closeAttackers closes every connection dial opened.
func (tg *target) closeAttackers() {
	tg.mu.Lock()
	conns := tg.attackers
	tg.attackers = nil
	tg.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// open dials from ip and exchanges version-1 prefaces.
func (tg *target) open(ip net.IP) (net.Conn, error) {
	c, err := tg.dial(ip)
	if err != nil {
		return nil, err
	}
	if err := handshake(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// handshake sends prefaceV1 on c and reads the server's preface.
func handshake(c net.Conn) error {
	if _, err := c.Write(prefaceV1); err != nil {
		return fmt.Errorf("write preface: %w", err)
	}
	var b [wire.PrefaceLen]byte
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return fmt.Errorf("read preface: %w", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	if string(b[:4]) != wire.PrefaceMagic {
		return fmt.Errorf("server preface %x", b)
	}
	return nil
}

// openMany opens n connections from ips (round robin) with a few dialing
// goroutines, stopping early when stop says so. It returns the
// connections opened and the first error.
func (tg *target) openMany(n int, ips []net.IP, stop func() bool) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	var (
		next  = make(chan int)
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := tg.open(ips[i%len(ips)])
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
				conns[i] = c
			}
		}()
	}
	for i := 0; i < n; i++ {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || i%50 == 0 && stop() {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	opened := conns[:0]
	for _, c := range conns {
		if c != nil {
			opened = append(opened, c)
		}
	}
	return opened, first
}

// request encodes a request frame.
func request(id, method uint32, md []string, body []byte) []byte {
	return wire.AppendFrame(nil, &wire.Header{Type: wire.TypeRequest, ID: id, Method: method}, md, body)
}

// hello encodes a SayHello request frame.
func hello(id uint32, name string) []byte {
	return request(id, sayHello, nil, (&greeterrpc.HelloRequest{Name: name}).MarshalAppend(nil))
}

// ping encodes a ping frame.
func ping(id uint32) []byte {
	return wire.AppendFrame(nil, &wire.Header{Type: wire.TypePing, ID: id}, nil, nil)
}

// closed reports whether err is what reading or writing a connection
// that the peer closed returns.
func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// awaitClose reads and discards what c receives until the server closes
// it or bound passes. It returns how long it waited, the bytes read and
// whether the server closed c.
func awaitClose(c net.Conn, bound time.Duration) (took time.Duration, n int64, ok bool) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(bound))
	n, err := io.Copy(io.Discard, c)
	if err == nil {
		err = io.EOF // io.Copy reports the end of the stream as nil
	}
	return time.Since(start), n, closed(err)
}

// awaitCloseAll waits for the server to close every one of conns, each
// within bound, and returns how many it closed and when it closed the
// last of them.
func awaitCloseAll(conns []net.Conn, bound time.Duration) (n int, last time.Time) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, ok := awaitClose(c, bound)
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if ok {
				n++
				if now.After(last) {
					last = now
				}
			}
		}()
	}
	wg.Wait()
	return n, last
}

// unread returns how many connections from attackers (any peer but
// 127.0.0.1) the target's socket table holds established, and how many
// bytes they received that the server has not read yet, from
// /proc/net/tcp.
func (tg *target) unread() (conns, bytes int, err error) {
	_, port, _ := net.SplitHostPort(tg.addr)
	p, _ := strconv.Atoi(port)
	local := fmt.Sprintf("0100007F:%04X", p)
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// sl local_address rem_address st tx_queue:rx_queue ...
		if len(f) < 5 || f[1] != local || f[3] != "01" || strings.HasPrefix(f[2], "0100007F:") {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseUint(rx, 16, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/net/tcp: bad queue %q", f[4])
		}
		conns++
		bytes += int(n)
	}
	return conns, bytes, nil
}

// awaitRead waits until the server has read every byte the attackers
// sent on their established connections, and returns how many there are.
func (tg *target) awaitRead(bound time.Duration) int {
	tg.t.Helper()
	var conns, left int
	var err error
	if !poll(bound, func() bool {
		conns, left, err = tg.unread()
		return err != nil || left == 0
	}) || err != nil {
		tg.t.Fatalf("server did not read what the attackers sent within %v: %d bytes unread on %d connections (%v)", bound, left, conns, err)
	}
	return conns
}
