package dns

import (
	"context"
	"slices"
	"sync"

	"github.com/yrpc/yrpc/rt/registry"
)

// watch resolves one Key's name on a period and publishes what changed.
// Only its own goroutine touches last and published.
type watch struct {
	r    *Registry
	key  registry.Key
	name string
	feed *registry.Feed

	cancel   context.CancelFunc
	done     chan struct{} // closed when run returns
	stopOnce sync.Once

	last      []registry.Endpoint // the providers published last; never modified
	published bool                // something was published
}

func (w *watch) run(ctx context.Context) {
	defer close(w.done)
	tick := w.r.o.NewTicker(w.r.o.Period)
	defer tick.Stop()
	for {
		if s, ok := w.refresh(ctx); ok && ctx.Err() == nil {
			w.feed.Publish(s)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.Chan():
		}
	}
}

// refresh looks the name up and returns the snapshot to publish, if any:
// the first answer whatever it is; after that a changed, non-empty set of
// providers. A failed or empty lookup keeps a non-empty last answer.
func (w *watch) refresh(ctx context.Context) (registry.Snapshot, bool) {
	ps, err := w.r.lookup(ctx, w.key, w.name)
	if err != nil && ctx.Err() == nil {
		w.r.log.Warn("dns: lookup failed", "key", w.key.String(), "name", w.name,
			"err", err, "keeping", len(w.last))
	}
	switch {
	case len(ps) == 0 && w.published:
		return registry.Snapshot{}, false // keep the last answer, empty or not
	case w.published && slices.EqualFunc(ps, w.last, sameEndpoint):
		return registry.Snapshot{}, false
	}
	w.last, w.published = ps, true
	return registry.Snapshot{Key: w.key, Providers: ps}, true
}

func sameEndpoint(a, b registry.Endpoint) bool { return a.Addr == b.Addr && a.Weight == b.Weight }

// stop ends the watch: no lookup runs and fn is not called after it
// returns. It is idempotent.
func (w *watch) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
		w.feed.Stop()
	})
}
