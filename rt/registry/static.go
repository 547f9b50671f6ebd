package registry

import (
	"context"
	"fmt"
	"sync"
)

// Static is a Registry with a fixed list of providers, for clients that do
// not use discovery: every Key has the same providers (weight 100, no
// tags), and there is no governance config. Register and Deregister do
// nothing.
//
// Make one with NewStatic; the zero value has no providers. Methods are safe
// for concurrent use.
type Static struct {
	providers []Endpoint

	mu     sync.Mutex
	closed bool
	done   chan struct{} // made on first use; closed by Close
	feeds  map[*Feed]struct{}
}

var (
	_ Registry      = (*Static)(nil)
	_ CloseNotifier = (*Static)(nil)
)

// NewStatic returns a Static registry whose providers are addrs ("host:port").
// Duplicates are dropped.
func NewStatic(addrs ...string) *Static {
	s := &Static{}
	seen := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		s.providers = append(s.providers, Endpoint{Role: Provider, Addr: a})
	}
	SortEndpoints(s.providers)
	return s
}

// Register does nothing (after Close it returns ErrClosed).
func (s *Static) Register(ctx context.Context, e Endpoint) error { return s.check() }

// Deregister does nothing (after Close it returns ErrClosed).
func (s *Static) Deregister(ctx context.Context, e Endpoint) error { return s.check() }

func (s *Static) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// Watch delivers one snapshot: the static providers, with Key set to key.
func (s *Static) Watch(key Key, fn func(Snapshot)) (stop func(), err error) {
	if key.Service == "" {
		return nil, fmt.Errorf("registry: watch: key has no service")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.feeds == nil {
		s.feeds = make(map[*Feed]struct{})
	}
	ps := make([]Endpoint, len(s.providers))
	for i, p := range s.providers {
		p.Key = key
		ps[i] = p
	}
	f := NewFeed(fn)
	s.feeds[f] = struct{}{}
	f.Publish(Snapshot{Key: key, Providers: ps})
	return func() {
		s.mu.Lock()
		delete(s.feeds, f)
		s.mu.Unlock()
		f.Stop()
	}, nil
}

// Done implements CloseNotifier: it is closed by Close.
func (s *Static) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doneLocked()
}

func (s *Static) doneLocked() chan struct{} {
	if s.done == nil {
		s.done = make(chan struct{})
	}
	return s.done
}

// Close stops every watch, then closes the Done channel.
func (s *Static) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	feeds := s.feeds
	s.feeds = nil
	done := s.doneLocked()
	s.mu.Unlock()
	for f := range feeds {
		f.Stop()
	}
	close(done)
	return nil
}
