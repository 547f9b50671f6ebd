package zkreg

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestHandshakeConnLimit(t *testing.T) {
	const max = time.Minute
	now := time.Now()
	for _, tc := range []struct {
		name     string
		answered bool // a byte was read
		in       time.Time
		capped   bool
	}{
		{name: "zero", in: time.Time{}},
		{name: "near", in: now.Add(time.Second)},
		{name: "far", in: now.Add(time.Hour), capped: true},
		{name: "far after the handshake", answered: true, in: now.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &handshakeConn{max: max}
			c.done.Store(tc.answered)
			got := c.limit(tc.in)
			switch {
			case tc.capped && (got.After(time.Now().Add(max)) || got.Before(now.Add(max))):
				t.Errorf("limit(%v) = %v, want about now + %v", tc.in, got, max)
			case !tc.capped && !got.Equal(tc.in):
				t.Errorf("limit(%v) = %v, want it unchanged", tc.in, got)
			}
		})
	}
}

// TestHandshakeConnTimesOut: a server that never answers the handshake
// fails the read after max, not after go-zk's own deadline.
func TestHandshakeConnTimesOut(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := &handshakeConn{Conn: client, max: 20 * time.Millisecond}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Read(make([]byte, 4))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %v, want a deadline error", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Read failed after %v, want about 20ms", took)
	}
}

// TestHandshakeLimitSharesTheSessionTimeout: each connection attempt gets
// the session timeout divided by the number of server addresses, so that
// silent servers cannot use up a whole session timeout each.
func TestHandshakeLimitSharesTheSessionTimeout(t *testing.T) {
	const timeout = 3 * time.Second
	for _, servers := range [][]string{
		{"127.0.0.1:1"},
		{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"},
	} {
		r := &Registry{timeout: timeout}
		h := &hostRounds{HostProvider: &zk.DNSHostProvider{}, r: r}
		if err := h.Init(servers); err != nil {
			t.Fatal(err)
		}
		if got, want := r.handshakeLimit(), timeout/time.Duration(len(servers)); got != want {
			t.Errorf("%d servers, session timeout %v: handshake limit %v, want %v", len(servers), timeout, got, want)
		}
	}
}

// silentServer listens on loopback, accepts connections and never
// answers them, until the test ends.
func silentServer(t *testing.T) string { return newSilent(t).addr }

// silent is a server that accepts connections and never answers them.
type silent struct {
	addr     string
	ln       net.Listener
	accepter sync.WaitGroup // the accept loop
	mu       sync.Mutex
	held     []time.Duration // how long each connection the client closed was open
	conns    sync.WaitGroup  // one per accepted connection, done when the client closes it
}

// newSilent starts a silent server, which stops when the test ends.
func newSilent(t *testing.T) *silent {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silent{addr: ln.Addr().String(), ln: ln}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	s.accepter.Add(1)
	go func() { // accepts and holds connections, never answers
		defer s.accepter.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted := time.Now()
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.conns.Add(1)
			go func() { // reads until the client closes c
				defer s.conns.Done()
				io.Copy(io.Discard, c)
				s.mu.Lock()
				s.held = append(s.held, time.Since(accepted))
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.accepter.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return s
}

// checkHeld stops the silent servers and fails t if a client held a
// connection to one of them for max or longer, or has not closed one
// within 10s (a bound for a failure, not a wait: it returns once every
// connection is closed).
func checkHeld(t *testing.T, max time.Duration, servers ...*silent) {
	t.Helper()
	for _, s := range servers {
		s.ln.Close()
		s.accepter.Wait() // no connection comes after this
		closed := make(chan struct{})
		go func() { s.conns.Wait(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("a connection to the silent server %s is still open", s.addr)
		}
		s.mu.Lock()
		for _, d := range s.held {
			if d >= max {
				t.Errorf("a connection to the silent server %s was held %v, want under %v", s.addr, d.Round(time.Millisecond), max)
			}
		}
		s.mu.Unlock()
	}
}

// silentTimeout is the session timeout of the tests with two silent
// servers and a real one; each silent server should hold New a third of
// it.
const silentTimeout = 6 * time.Second

// TestSilentServersSkipped: with two servers that accept connections but
// never answer, and a real one, New gets a session whichever server go-zk
// tries first (it shuffles them): each silent one holds it a third of the
// session timeout, which is checked with a margin for a loaded machine
// (under two thirds; a whole session timeout per attempt fails). New's
// deadline only bounds a hang: how soon the real server answers is
// ZooKeeper's business.
func TestSilentServersSkipped(t *testing.T) {
	e := newEnv(t)
	s1, s2 := newSilent(t), newSilent(t)
	o := e.options(s1.addr, s2.addr, e.zk)
	o.SessionTimeout = silentTimeout
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	r, err := New(ctx, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.Close()
	t.Logf("session after %v", time.Since(start).Round(time.Millisecond))
	checkHeld(t, silentTimeout*2/3, s1, s2)
}

// TestNoSessionErrorNamesTheCause: when no server answers, New's error
// names the servers and the dial error, not only the context's; with
// FailFast it comes after one round of dialing, not at the deadline.
func TestNoSessionErrorNamesTheCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	silent := silentServer(t)
	for _, tc := range []struct {
		name     string
		opts     Options
		ctx      time.Duration
		want     []string
		wantErrs []error
	}{
		{"deadline", Options{Servers: []string{addr}}, 300 * time.Millisecond,
			[]string{"no ZooKeeper session with " + addr, "last attempt: " + addr, "connection refused"},
			[]error{context.DeadlineExceeded, syscall.ECONNREFUSED}},
		{"fail fast", Options{Servers: []string{addr}, FailFast: true}, time.Minute,
			[]string{"every server was tried once", "connection refused"}, []error{syscall.ECONNREFUSED}},
		{"fail fast with credentials", Options{Servers: []string{addr, addr}, FailFast: true, Auth: []Credential{provCred}}, time.Minute,
			[]string{addr + "," + addr, "connection refused"}, []error{syscall.ECONNREFUSED}},
		// Something listens but never answers (not ZooKeeper).
		{"fail fast, silent server", Options{Servers: []string{silent}, FailFast: true, SessionTimeout: 300 * time.Millisecond}, time.Minute,
			[]string{"every server was tried once", "last attempt: " + silent + ": no answer to the ZooKeeper handshake within 300ms"},
			[]error{os.ErrDeadlineExceeded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			start := time.Now()
			r, err := New(ctx, tc.opts)
			if err == nil {
				r.Close()
				t.Fatal("New = nil error")
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q", want)
				}
			}
			for _, want := range tc.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("error is not %v", want)
				}
			}
			if strings.Contains(err.Error(), provPass) {
				t.Errorf("error shows the password")
			}
		})
	}
}
