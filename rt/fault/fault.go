package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// MDFault is the metadata key of per-call fault rules.
const MDFault = "yrpc-fault"

// Rule is one fault. The zero Rule does nothing.
type Rule struct {
	// Method is the method's name ("Get") or full name ("users.Users/Get");
	// "" matches every method.
	Method string
	// Fraction of the matching calls affected, 0..1; 0 means all.
	Fraction float64
	// Delay holds the call this long before the handler (or until the
	// call's context ends).
	Delay time.Duration
	// Abort answers with this code instead of calling the handler; OK
	// means no abort.
	Abort   rt.Code
	Message string
	// Drop closes the connection without answering.
	Drop bool
}

func (r *Rule) matches(info *rt.CallInfo) bool {
	return r.Method == "" || r.Method == info.Method.Name || r.Method == info.Method.FullName
}

// Options configure an Injector; the zero value takes rules only from the
// Injector.
type Options struct {
	// FromMetadata also applies rules sent in a call's MDFault metadata.
	FromMetadata bool
	// Rand decides which calls a Fraction hits; nil means a new PCG
	// source seeded from the time.
	Rand *rand.Rand
}

// Injector applies fault rules in a server interceptor (Interceptor for
// calls, StreamInterceptor for streams). Its methods are
// safe for concurrent use; rules can change while calls run.
type Injector struct {
	opts  Options
	rules atomic.Pointer[[]Rule]
	mu    sync.Mutex // guards rnd
	rnd   *rand.Rand
	hits  atomic.Int64
}

// New returns an Injector with rules.
func New(rules ...Rule) *Injector { return NewWithOptions(Options{}, rules...) }

// NewWithOptions returns an Injector configured by opts, with rules.
func NewWithOptions(opts Options, rules ...Rule) *Injector {
	in := &Injector{opts: opts, rnd: opts.Rand}
	if in.rnd == nil {
		in.rnd = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))
	}
	in.Set(rules...)
	return in
}

// Set replaces the rules.
func (in *Injector) Set(rules ...Rule) {
	rs := append([]Rule(nil), rules...)
	in.rules.Store(&rs)
}

// Hits returns how many calls and streams a fault was applied to.
func (in *Injector) Hits() int64 { return in.hits.Load() }

// Interceptor returns the server interceptor that applies the rules to
// unary and oneway calls.
func (in *Injector) Interceptor() rt.ServerInterceptor {
	return func(ctx context.Context, req rt.Message, info *rt.CallInfo, next rt.Handler) (rt.Message, error) {
		if err := in.inject(ctx, info); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

// StreamInterceptor returns the stream interceptor that applies the rules
// to streams, once per stream as it opens: a delay holds the stream before
// its handler runs, an abort ends it with the rule's code without running
// the handler, a drop closes its connection (the client sees Unavailable).
// Install it with rt.WithStreamServerInterceptors beside Interceptor.
func (in *Injector) StreamInterceptor() rt.StreamServerInterceptor {
	return func(ss rt.ServerStreamer, info *rt.CallInfo, next rt.StreamHandler) error {
		if err := in.inject(ss.Context(), info); err != nil {
			return err
		}
		return next(ss)
	}
}

// inject applies the rules that match the call or stream info whose
// context is ctx; a non-nil error answers it instead of the handler.
func (in *Injector) inject(ctx context.Context, info *rt.CallInfo) error {
	rules := *in.rules.Load()
	var mdRules []Rule
	if in.opts.FromMetadata {
		if s := rt.IncomingMetadata(ctx).Get(MDFault); s != "" {
			r, err := Parse(s)
			if err != nil {
				return rt.Errorf(rt.InvalidArgument, "fault: %v", err)
			}
			mdRules = []Rule{r}
		}
	}
	for _, set := range [][]Rule{mdRules, rules} {
		for i := range set {
			r := &set[i]
			if !r.matches(info) || !in.hit(r.Fraction) {
				continue
			}
			in.hits.Add(1)
			if err := apply(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (in *Injector) hit(fraction float64) bool {
	if fraction <= 0 || fraction >= 1 {
		return true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rnd.Float64() < fraction
}

// apply performs r; a non-nil error answers the call.
func apply(ctx context.Context, r *Rule) error {
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if r.Drop {
		rt.DropConnection(ctx)
		return rt.Errorf(rt.Unavailable, "fault: connection dropped")
	}
	if r.Abort != rt.OK {
		msg := r.Message
		if msg == "" {
			msg = "fault injected"
		}
		return &rt.Error{Code: r.Abort, Message: msg}
	}
	return nil
}

// Parse reads a rule written as "delay=20ms;abort=Unavailable:message;drop"
// (any subset, in any order) — the form of MDFault metadata.
func Parse(s string) (Rule, error) {
	var r Rule
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		key, val, _ := strings.Cut(part, "=")
		switch key {
		case "":
		case "delay":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return Rule{}, fmt.Errorf("bad delay %q", val)
			}
			r.Delay = d
		case "abort":
			name, msg, _ := strings.Cut(val, ":")
			c, err := rt.ParseCode(name)
			if err != nil || c == rt.OK {
				return Rule{}, fmt.Errorf("bad abort code %q", name)
			}
			r.Abort, r.Message = c, msg
		case "drop":
			r.Drop = true
		default:
			return Rule{}, fmt.Errorf("unknown fault %q (want delay=, abort=, drop)", key)
		}
	}
	return r, nil
}

// Metadata returns ctx with a per-call fault rule for servers whose
// Injector accepts rules from metadata, e.g. fault.Metadata(ctx, "drop").
func Metadata(ctx context.Context, rule string) context.Context {
	return rt.WithMetadata(ctx, MDFault, rule)
}
