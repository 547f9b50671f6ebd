package memnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Network is a set of in-memory listeners addressed by name.
type Network struct {
	mu        sync.Mutex
	listeners map[string]*Listener
}

// New returns an empty network.
func New() *Network { return &Network{listeners: make(map[string]*Listener)} }

// Addr is an in-memory address.
type Addr string

// Network returns "mem".
func (Addr) Network() string { return "mem" }

func (a Addr) String() string { return string(a) }

// Listen starts a listener on addr, which must be free.
func (n *Network) Listen(addr string) (*Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("memnet: listen %q: address in use", addr)
	}
	l := &Listener{net: n, addr: Addr(addr), conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// Dial connects to the listener on addr. It fails like a refused TCP
// connection when nothing listens there.
func (n *Network) Dial(ctx context.Context, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "mem", Addr: Addr(addr), Err: errors.New("connection refused")}
	}
	client, server := pipe(Addr("client-of-"+addr), l.addr)
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "mem", Addr: Addr(addr), Err: errors.New("connection refused")}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Listener is an in-memory net.Listener.
type Listener struct {
	net   *Network
	addr  Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// Accept waits for the next connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "accept", Net: "mem", Addr: l.addr, Err: net.ErrClosed}
	}
}

// Close stops the listener; connections already accepted stay open.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		delete(l.net.listeners, string(l.addr))
		l.net.mu.Unlock()
	})
	return nil
}

// Addr returns the listener's address.
func (l *Listener) Addr() net.Addr { return l.addr }
