package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt"
)

// feed is one Store.Watch stream read on its own goroutine until it ends.
type feed struct {
	id       int64
	cancel   context.CancelFunc
	servedBy atomic.Value // string: the provider of the first update
	updates  atomic.Int64
	end      error // how Recv ended; read after done
	done     chan struct{}
}

// openFeed opens a Watch of id and reads it until it ends.
func openFeed(k *consumer, id int64) *feed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &feed{id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		s, err := k.store.Watch(ctx, &tourrpc.Key{ID: id})
		if err != nil {
			f.end = err
			return
		}
		for {
			e, err := s.Recv()
			if err != nil {
				f.end = err
				return
			}
			f.servedBy.CompareAndSwap(nil, e.ServedBy)
			f.updates.Add(1)
		}
	}()
	return f
}

func (f *feed) provider() string {
	s, _ := f.servedBy.Load().(string)
	return s
}

func (f *feed) over() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// waitFirst waits (bounded) until every feed has its first update.
func waitFirst(t *testing.T, feeds []*feed) {
	t.Helper()
	if _, ok := waitFor(10*time.Second, func() bool {
		for _, f := range feeds {
			if f.provider() == "" {
				return false
			}
		}
		return true
	}); !ok {
		for _, f := range feeds {
			if f.provider() == "" && f.over() {
				t.Fatalf("feed %d ended before its first update: %v", f.id, f.end)
			}
		}
		t.Fatal("feeds without a first update after 10s")
	}
}

// waitOver waits (bounded) until every feed has ended; it returns those
// that did not (they hang).
func waitOver(limit time.Duration, feeds []*feed) []*feed {
	waitFor(limit, func() bool {
		for _, f := range feeds {
			if !f.over() {
				return false
			}
		}
		return true
	})
	var hung []*feed
	for _, f := range feeds {
		if !f.over() {
			hung = append(hung, f)
		}
	}
	return hung
}

// byProvider groups feeds by the provider of their first update.
func byProvider(feeds []*feed) map[string][]*feed {
	m := map[string][]*feed{}
	for _, f := range feeds {
		m[f.provider()] = append(m[f.provider()], f)
	}
	return m
}

// TestStreamsThroughShutdownAndKill keeps Store.Watch feeds (server
// streams) open and flowing on three providers under a Get/Put load while
// one provider shuts down gracefully (SIGTERM: deregister, GOAWAY,
// Shutdown with a 3s grace) and then another is killed (SIGKILL):
//   - a finite feed open on the draining provider finishes, with all its
//     updates and io.EOF; endless feeds there are reset with Unavailable
//     when the grace runs out (the provider exits with
//     exitShutdownTimeout);
//   - new feeds go to the other providers once the consumer saw the
//     drain;
//   - the killed provider's lost connection ends its feeds with
//     Unavailable;
//   - feeds on the other providers keep flowing throughout, and no feed
//     hangs: every one ends within bounded waits.
func TestStreamsThroughShutdownAndKill(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	const grace = 3 * time.Second
	ps := []*proc{c.start("p1", provOpts{grace: grace.String()}), c.start("p2", provOpts{}), c.start("p3", provOpts{})}
	drained, killed, kept := ps[0], ps[1], ps[2]
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{workers: 4})
	var all []*feed
	t.Cleanup(func() {
		for _, f := range all {
			f.cancel()
		}
		waitOver(10*time.Second, all)
	})
	open := func(id int64) *feed {
		f := openFeed(k, id)
		all = append(all, f)
		return f
	}

	var endless []*feed
	for id := int64(1); id <= 30; id++ {
		endless = append(endless, open(id))
	}
	waitFirst(t, endless)
	on := byProvider(endless)
	for _, p := range ps {
		if len(on[p.name]) == 0 {
			t.Fatalf("no feed of 30 on %s: %v", p.name, on)
		}
	}
	// Finite feeds (50 updates, 0.5s) on the provider about to drain.
	var finite []*feed
	for i := int64(1); len(finite) < 3; i++ {
		if i > 200 {
			t.Fatalf("200 finite feeds, none on %s", drained.name)
		}
		f := open(50*finiteFeed + i)
		waitFirst(t, []*feed{f})
		if f.provider() == drained.name {
			finite = append(finite, f)
		}
	}

	termed := make(chan error, 1)
	termStart := time.Now()
	go func() { termed <- drained.term(grace + 10*time.Second) }()
	if _, ok := waitFor(10*time.Second, func() bool {
		for _, a := range k.addrs() {
			if a == drained.addr {
				return false
			}
		}
		return true
	}); !ok {
		t.Fatalf("the consumer still routes to %s 10s after its SIGTERM", drained.addr)
	}
	seen := time.Since(termStart)
	var fresh []*feed
	for id := int64(1001); id <= 1010; id++ {
		fresh = append(fresh, open(id))
	}
	waitFirst(t, fresh)
	for _, f := range fresh {
		if f.provider() == drained.name {
			t.Errorf("new feed %d went to %s after the consumer saw it drain", f.id, drained.name)
		}
	}
	for _, f := range finite {
		<-f.done // bounded by the provider's grace: it resets what is left
		if f.end != io.EOF || f.updates.Load() != 50 {
			t.Errorf("finite feed %d on the draining %s: %d updates, end %v; want 50 and io.EOF", f.id, drained.name, f.updates.Load(), f.end)
		}
	}
	err := <-termed
	shutdown := time.Since(termStart)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitShutdownTimeout {
		t.Errorf("%s after SIGTERM with endless feeds open: %v, want exit code %d (grace ran out)", drained.name, err, exitShutdownTimeout)
	}
	checkEnded(t, on[drained.name], drained.name, "its grace ran out")

	keptBefore := updates(on[kept.name])
	killStart := time.Now()
	killed.kill()
	checkEnded(t, on[killed.name], killed.name, "SIGKILL")
	lostAfter := time.Since(killStart)
	if _, ok := waitFor(5*time.Second, func() bool { return updates(on[kept.name]) > keptBefore+int64(len(on[kept.name])) }); !ok {
		t.Errorf("feeds on %s stopped flowing", kept.name)
	}
	for _, f := range slices.Concat(on[kept.name], fresh) {
		if f.over() && f.provider() == kept.name {
			t.Errorf("feed %d on %s ended: %v", f.id, kept.name, f.end)
		}
	}

	for _, f := range all {
		f.cancel()
	}
	hung := waitOver(5*time.Second, all)
	for _, f := range hung {
		t.Errorf("feed %d on %s still open 5s after its cancel", f.id, f.provider())
	}
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, false) // Puts in flight on the killed provider may fail with Unavailable
	figures(t, "streams_shutdown_kill", l, dups, fmt.Sprintf("feeds=%d", len(all)),
		fmt.Sprintf("feeds_on=p1:%d,p2:%d,p3:%d", len(on["p1"]), len(on["p2"]), len(on["p3"])),
		"drain_seen="+ms(seen), "shutdown="+ms(shutdown), "kill_feeds_ended="+ms(lostAfter), fmt.Sprintf("hung=%d", len(hung)))
}

// checkEnded waits (bounded) until feeds have ended, and fails the test
// unless each ended with Unavailable.
func checkEnded(t *testing.T, feeds []*feed, name, why string) {
	t.Helper()
	for _, f := range waitOver(10*time.Second, feeds) {
		t.Errorf("feed %d on %s still open 10s after %s", f.id, name, why)
	}
	for _, f := range feeds {
		if f.over() && rt.CodeOf(f.end) != rt.Unavailable {
			t.Errorf("feed %d on %s after %s: %v, want Unavailable", f.id, name, why, f.end)
		}
	}
}

// updates sums the feeds' updates so far.
func updates(feeds []*feed) int64 {
	var n int64
	for _, f := range feeds {
		n += f.updates.Load()
	}
	return n
}
