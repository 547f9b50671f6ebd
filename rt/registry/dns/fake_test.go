package dns

import (
	"context"
	"net"
	"sync"
	"time"
)

// fakeResolver answers from maps that tests change between lookups. Safe
// for concurrent use.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	srvs  map[string][]*net.SRV
	err   error // returned by every lookup when set
	calls int
}

func (f *fakeResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if hs, ok := f.hosts[host]; ok {
		return append([]string(nil), hs...), nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if service != "" {
		name = "_" + service + "._" + proto + "." + name
	}
	if f.err != nil {
		return "", nil, f.err
	}
	if ss, ok := f.srvs[name]; ok {
		return name, ss, nil
	}
	return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (f *fakeResolver) set(host string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hosts == nil {
		f.hosts = make(map[string][]string)
	}
	if addrs == nil {
		delete(f.hosts, host)
		return
	}
	f.hosts[host] = addrs
}

func (f *fakeResolver) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// fakeTicks is a ticker whose ticks a test sends on an unbuffered channel:
// a send returns once the watch is waiting for the next tick, that is once
// it has handled the previous one.
type fakeTicks struct {
	c       chan time.Time
	stopped chan struct{} // closed by Stop
	period  time.Duration
	once    sync.Once
}

func (t *fakeTicks) Chan() <-chan time.Time { return t.c }
func (t *fakeTicks) Stop()                  { t.once.Do(func() { close(t.stopped) }) }
