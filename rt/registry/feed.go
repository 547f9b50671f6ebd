package registry

import "sync"

// Feed delivers snapshots to one watch callback, serially, from a goroutine
// of its own. Publish never blocks: when the callback is still busy with an
// earlier snapshot, later ones replace each other and the callback next
// sees only the newest (a slow watcher gets the latest state, never a
// backlog). Registry implementations make one Feed per Watch call.
//
// A Feed is made by NewFeed; the zero value is not usable. Its methods are
// safe for concurrent use. The callback must not call Stop of its own Feed
// (Stop waits for it).
type Feed struct {
	fn   func(Snapshot)
	kick chan struct{} // capacity 1: "latest has something new"
	quit chan struct{}
	done chan struct{}

	mu     sync.Mutex
	latest Snapshot
	fresh  bool // latest not yet delivered
	once   sync.Once
}

// NewFeed starts a Feed that calls fn with published snapshots until Stop.
func NewFeed(fn func(Snapshot)) *Feed {
	f := &Feed{
		fn:   fn,
		kick: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	go f.loop()
	return f
}

// Publish hands s to the callback, replacing any snapshot not yet
// delivered. Snapshots are shared, not copied: neither the publisher nor the
// callback may modify s after Publish. Publishing after Stop does nothing.
func (f *Feed) Publish(s Snapshot) {
	f.mu.Lock()
	f.latest, f.fresh = s, true
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default: // a wake-up is already pending; it will see latest
	}
}

// Stop ends the Feed: it waits for a running callback to return, and the
// callback is never called again. Stop is idempotent.
func (f *Feed) Stop() {
	f.once.Do(func() { close(f.quit) })
	<-f.done
}

func (f *Feed) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.quit:
			return
		case <-f.kick:
		}
		// Stop wins over a pending snapshot: after Stop begins, no new call.
		select {
		case <-f.quit:
			return
		default:
		}
		f.mu.Lock()
		s, ok := f.latest, f.fresh
		f.fresh = false
		f.latest = Snapshot{}
		f.mu.Unlock()
		if ok {
			f.fn(s)
		}
	}
}
