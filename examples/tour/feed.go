package main

import (
	"context"
	"fmt"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// liveFeed opens a Store.Watch feed (a server stream), drains the
// provider serving it through the governance config, and shows that the
// open feed goes on while new calls and new feeds go to the others.
func (t *tour) liveFeed(ctx context.Context) error {
	t.section("6. A live feed (server stream) kept while its provider is drained")
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	// Section 5 undrained p1: wait until the consumer sees that.
	if err := t.undrained(ctx, "p1"); err != nil {
		return err
	}
	var calls, errs int64
	var lastErr error
	failed := func(err error) {
		errs++
		lastErr = err
	}

	calls++
	feed, err := t.store.Watch(fctx, &tourrpc.Key{ID: 7})
	if err != nil {
		return fmt.Errorf("open the feed: %w", err)
	}
	first, err := feed.Recv()
	if err != nil {
		return fmt.Errorf("the feed's first update: %w", err)
	}
	host := first.ServedBy
	calls++
	get, err := t.store.Get(ctx, &tourrpc.Key{ID: 7})
	if err != nil {
		failed(err)
	}
	sameKey := err == nil && get.ServedBy == host
	t.printf("  Store.Watch(key 7) opened on %s, where Store.Get(key 7) goes too: both hash on the id (%v); first update %q\n",
		host, sameKey, first.Value)

	addr := t.provider(host).addr
	if err := t.govern(ctx, func(c *registry.Config) {
		c.Instances = map[string]registry.InstanceConfig{addr: {Draining: true}}
	}); err != nil {
		return err
	}
	took, seen := waitFor(ctx, 5*time.Second, func() bool {
		ps, ok := t.status(host)
		return ok && ps.Draining
	})
	t.printf("  %s drained; the consumer saw it after %v\n", host, took.Round(time.Millisecond))

	// The open feed goes on: updates keep coming from the drained provider.
	var kept, strayed int
	var last string
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
		e, err := feed.Recv()
		if err != nil {
			failed(err)
			break
		}
		kept++
		last = e.Value
		if e.ServedBy != host {
			strayed++
		}
	}
	t.printf("  the open feed received %d more updates from %s after the drain (last %q)\n", kept, host, last)

	// New calls and new feeds of the same keys avoid the drained provider.
	var moved, newFeeds int
	for id := int64(1); id <= 10; id++ {
		calls++
		e, err := t.store.Get(ctx, &tourrpc.Key{ID: id})
		switch {
		case err != nil:
			failed(err)
		case e.ServedBy != host:
			moved++
		}
		calls++
		if served, err := t.firstUpdate(ctx, id); err != nil {
			failed(err)
		} else if served != host {
			newFeeds++
		}
	}
	t.printf("  after the drain: %d of 10 new Get calls and %d of 10 new feeds went to other providers\n", moved, newFeeds)

	stop()
	if _, err := feed.Recv(); rt.CodeOf(err) != rt.Canceled {
		failed(fmt.Errorf("the feed after its cancel: %v, want Canceled", err))
	}
	note := fmt.Sprintf("%s kept its open feed through the drain (%d updates after it); new calls and feeds went elsewhere", host, kept)
	if lastErr != nil {
		note += "; last caller error: " + lastErr.Error()
	}
	ok := sameKey && seen && took < time.Second && kept > 0 && strayed == 0 && moved == 10 && newFeeds == 10 && errs == 0
	t.record(result{section: "live feed while draining", calls: calls, errors: errs, ok: ok, note: note})
	return t.govern(ctx, func(c *registry.Config) { c.Instances = nil })
}

// firstUpdate opens a feed of key id, reads its first update and closes
// it; it returns the provider that served it.
func (t *tour) firstUpdate(ctx context.Context, id int64) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream on both sides
	feed, err := t.store.Watch(ctx, &tourrpc.Key{ID: id})
	if err != nil {
		return "", err
	}
	e, err := feed.Recv()
	if err != nil {
		return "", err
	}
	return e.ServedBy, nil
}
