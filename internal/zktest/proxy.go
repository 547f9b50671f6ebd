package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// Addr returns the ZooKeeper address from $YRPC_ZK. When it is unset the
// test is skipped, or fails if $YRPC_ZK_REQUIRED=1 (as scripts/test.sh sets).
func Addr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("YRPC_ZK")
	if addr == "" {
		if os.Getenv("YRPC_ZK_REQUIRED") == "1" {
			t.Fatal("zktest: YRPC_ZK is unset but YRPC_ZK_REQUIRED=1: run ./scripts/test.sh")
		}
		t.Skip("zktest: YRPC_ZK is unset; run ./scripts/test.sh to test against a real ZooKeeper")
	}
	return addr
}

// Proxy forwards loopback TCP connections to a ZooKeeper server. Cut
// breaks every connection and refuses new ones until Restore. It also
// remembers the session id and password of every session it saw
// established, which Expire needs. Make one with NewProxy (the zero value
// is not usable); its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu       sync.Mutex
	cut      bool
	conns    map[net.Conn]struct{}
	sessions map[int64][]byte
	accepted int
}

// NewProxy starts a proxy to target on 127.0.0.1 and stops it at cleanup.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zktest: listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}, sessions: map[int64][]byte{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, for Options.Servers.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Accepted returns how many client connections were forwarded so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Password returns the password of session id, if the proxy saw it.
func (p *Proxy) Password(id int64) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pw, ok := p.sessions[id]
	return pw, ok
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.accepted++
		p.mu.Unlock()
		s, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			s.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, false)
		go p.pipe(c, s, true)
	}
}

// pipe copies src to dst; the server-to-client direction first parses the
// connect response to learn the session's password.
func (p *Proxy) pipe(dst, src net.Conn, fromServer bool) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
		dst.Close()
		src.Close()
	}()
	if fromServer {
		frame, err := readFrame(src)
		if err != nil {
			return
		}
		if id, pw, err := parseConnectResponse(frame); err == nil && id != 0 {
			p.mu.Lock()
			p.sessions[id] = pw
			p.mu.Unlock()
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
	io.Copy(dst, src)
}

// readFrame reads one length-prefixed ZooKeeper packet, prefix included.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("zktest: frame of %d bytes", n)
	}
	buf := make([]byte, 4+n)
	copy(buf, hdr[:])
	_, err := io.ReadFull(r, buf[4:])
	return buf, err
}

// parseConnectResponse reads protocolVersion, timeOut, sessionId, passwd.
func parseConnectResponse(frame []byte) (int64, []byte, error) {
	b := frame[4:]
	if len(b) < 20 {
		return 0, nil, errors.New("zktest: short connect response")
	}
	id := int64(binary.BigEndian.Uint64(b[8:16]))
	n := int(int32(binary.BigEndian.Uint32(b[16:20])))
	if n < 0 || 20+n > len(b) {
		return 0, nil, errors.New("zktest: bad password length")
	}
	return id, append([]byte(nil), b[20:20+n]...), nil
}

// Expire ends session id on the server at zkAddr the way a client's Close
// does: it attaches to the session with its password and sends a close
// request. The server deletes the session's ephemeral nodes and drops its
// connection; the client then learns on reconnection that its session
// expired.
func Expire(zkAddr string, id int64, password []byte) error {
	c, err := net.DialTimeout("tcp", zkAddr, 2*time.Second)
	if err != nil {
		return fmt.Errorf("zktest: expire: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	// connect request: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 30000)
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(password)))
	req = append(req, password...)
	if err := writeFrame(c, req); err != nil {
		return err
	}
	frame, err := readFrame(c)
	if err != nil {
		return fmt.Errorf("zktest: expire: connect response: %w", err)
	}
	if got, _, err := parseConnectResponse(frame); err != nil || got != id {
		return fmt.Errorf("zktest: expire: server did not attach to session %#x (got %#x, %v)", id, got, err)
	}
	// close request: xid 1, opcode closeSession (-11)
	cl := binary.BigEndian.AppendUint32(nil, 1)
	cl = binary.BigEndian.AppendUint32(cl, uint32(0xfffffff5))
	if err := writeFrame(c, cl); err != nil {
		return err
	}
	if _, err := readFrame(c); err != nil {
		return fmt.Errorf("zktest: expire: close response: %w", err)
	}
	return nil
}

func writeFrame(w io.Writer, body []byte) error {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := w.Write(append(b, body...)); err != nil {
		return fmt.Errorf("zktest: write: %w", err)
	}
	return nil
}
