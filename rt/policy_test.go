package rt

import (
	stdcmp "cmp"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/breaker"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
)

func TestFaultMode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pol        MethodPolicy
		override   FaultMode
		want       FaultMode
		wantTries3 int // triesFor(want, 3, 0)
	}{
		{"plain method", MethodPolicy{}, FaultDefault, FaultFailfast, 1},
		{"idempotent", MethodPolicy{Idempotent: true}, FaultDefault, FaultFailover, 3},
		{"schema mode wins over idempotency", MethodPolicy{Idempotent: true, FaultMode: FaultFailsafe}, FaultDefault, FaultFailsafe, 1},
		{"call option wins over the schema", MethodPolicy{FaultMode: FaultFailsafe}, FaultFailover, FaultFailover, 3},
		{"forking", MethodPolicy{FaultMode: FaultForking}, FaultDefault, FaultForking, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := faultMode(&tc.pol, tc.override)
			if got != tc.want {
				t.Fatalf("faultMode = %v, want %v", got, tc.want)
			}
			if n := triesFor(got, 3, 0); n != tc.wantTries3 {
				t.Fatalf("triesFor(%v, 3, 0) = %d, want %d", got, n, tc.wantTries3)
			}
		})
	}
}

func TestTriesFor(t *testing.T) {
	for _, tc := range []struct {
		mode             FaultMode
		schema, override int
		want             int
	}{
		{FaultFailfast, 5, 5, 1},
		{FaultFailsafe, 5, 0, 1},
		{FaultFailover, 0, 0, defaultTries},
		{FaultFailover, 1, 0, 1},
		{FaultFailover, 4, 0, 4},
		{FaultFailover, 4, 2, 2},
		{FaultFailover, 0, 7, 7},
	} {
		if got := triesFor(tc.mode, tc.schema, tc.override); got != tc.want {
			t.Errorf("triesFor(%v, %d, %d) = %d, want %d", tc.mode, tc.schema, tc.override, got, tc.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	unary, oneway := &MethodDesc{}, &MethodDesc{Oneway: true}
	unavailable := Errorf(Unavailable, "x")
	remoteDeadline := &Error{Code: DeadlineExceeded, Remote: true}
	for _, tc := range []struct {
		name                string
		err                 error
		notRun              bool
		mode                FaultMode
		m                   *MethodDesc
		ran, tries, attempt int
		want                bool
	}{
		{"failover, tries left", unavailable, false, FaultFailover, unary, 1, 3, 1, true},
		{"failover, tries spent", unavailable, false, FaultFailover, unary, 3, 3, 3, false},
		{"failfast", unavailable, false, FaultFailfast, unary, 1, 1, 1, false},
		{"local deadline", Errorf(DeadlineExceeded, "x"), false, FaultFailover, unary, 1, 3, 1, true},
		{"remote deadline: the server gave up on the try", remoteDeadline, false, FaultFailover, unary, 1, 3, 1, true},
		{"application error", Errorf(NotFound, "x"), false, FaultFailover, unary, 1, 3, 1, false},
		{"busy", Errorf(ResourceExhausted, "x"), false, FaultFailover, unary, 1, 3, 1, true},
		{"not run, failfast: tried elsewhere", unavailable, true, FaultFailfast, unary, 0, 1, 1, true},
		{"not run, bound reached", unavailable, true, FaultFailfast, unary, 0, 1, maxNotRunAttempts, false},
		{"not run after a run attempt", unavailable, true, FaultFailfast, unary, 1, 1, maxNotRunAttempts, true},
		{"oneway that may have run", unavailable, false, FaultFailover, oneway, 1, 3, 1, false},
		{"oneway not sent", unavailable, true, FaultFailfast, oneway, 0, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryable(tc.err, tc.notRun, tc.mode, tc.m, tc.ran, tc.tries, tc.attempt); got != tc.want {
				t.Fatalf("retryable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCallDeadline(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	early, cancel := context.WithDeadline(context.Background(), now.Add(time.Second))
	defer cancel()
	late, cancel2 := context.WithDeadline(context.Background(), now.Add(time.Hour))
	defer cancel2()
	bg := context.Background()
	for _, tc := range []struct {
		name             string
		ctx              context.Context
		schema, opt, def time.Duration
		want             time.Time
	}{
		{"nothing set", bg, 0, 0, 0, time.Time{}},
		{"client default", bg, 0, 0, 3 * time.Second, now.Add(3 * time.Second)},
		{"schema over default", bg, 2 * time.Second, 0, 3 * time.Second, now.Add(2 * time.Second)},
		{"call option over schema", bg, 2 * time.Second, 5 * time.Second, 0, now.Add(5 * time.Second)},
		{"context earlier", early, 2 * time.Second, 0, 0, now.Add(time.Second)},
		{"context later", late, 2 * time.Second, 0, 0, now.Add(2 * time.Second)},
		{"context only", late, 0, 0, 0, now.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := earliest(tc.ctx, clock, stdcmp.Or(tc.opt, tc.schema, tc.def)); !got.Equal(tc.want) {
				t.Fatalf("deadline = %v, want %v", got, tc.want)
			}
		})
	}
	// callDeadline reads the wall clock, whatever the client's Clock says.
	before := time.Now()
	if got := callDeadline(bg, time.Minute, 0, 0); got.Before(before.Add(time.Minute)) || got.After(time.Now().Add(time.Minute)) {
		t.Fatalf("callDeadline = %v, want a minute from the wall clock's now", got)
	}
}

func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		p    RetryPolicy
		n    int
		u    float64
		want time.Duration
	}{
		{"no interval", RetryPolicy{}, 3, 0.9, 0},
		{"fixed", RetryPolicy{Interval: 50 * ms}, 3, 0.5, 50 * ms},
		{"exponential", RetryPolicy{Interval: 10 * ms, Backoff: 2}, 3, 0.5, 40 * ms},
		{"capped", RetryPolicy{Interval: 10 * ms, Backoff: 2, MaxInterval: 25 * ms}, 5, 0.5, 25 * ms},
		{"jitter low end", RetryPolicy{Interval: 100 * ms, Jitter: 0.2}, 1, 0, 80 * ms},
		{"jitter high end", RetryPolicy{Interval: 100 * ms, Jitter: 0.2}, 1, 1, 120 * ms},
		{"jitter on the backed-off interval", RetryPolicy{Interval: 10 * ms, Backoff: 3, Jitter: 0.5}, 2, 0.75, 37500 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoff(tc.p, tc.n, tc.u); got != tc.want {
				t.Fatalf("backoff = %v, want %v", got, tc.want)
			}
		})
	}
}

// settle counts each outcome against the provider's breaker as its doc
// says; a lost connection counts once for all the calls it failed.
func TestSettle(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	lostA, lostB := new(conn.Conn), new(conn.Conn)
	type outcome struct {
		err  error
		lost *conn.Conn
	}
	for _, tc := range []struct {
		name     string
		outcomes []outcome
		want     breaker.Counts // Requests, Failures, ConsecutiveFailures
	}{
		{"success", []outcome{{nil, nil}}, breaker.Counts{Requests: 1}},
		{"canceled by the caller: not counted", []outcome{{Errorf(Canceled, "x"), nil}}, breaker.Counts{}},
		{"application error: a success for the breaker", []outcome{{&Error{Code: NotFound, Remote: true}, nil}}, breaker.Counts{Requests: 1}},
		{"busy: a success", []outcome{{&Error{Code: ResourceExhausted, Remote: true}, nil}}, breaker.Counts{Requests: 1}},
		{"no answer", []outcome{{Errorf(Unavailable, "x"), nil}, {Errorf(DeadlineExceeded, "x"), nil}}, breaker.Counts{Requests: 2, Failures: 2, ConsecutiveFailures: 2}},
		{"answered failure: the rate, not the run", []outcome{{Errorf(Unavailable, "x"), nil}, {&Error{Code: Internal, Remote: true}, nil}}, breaker.Counts{Requests: 2, Failures: 2}},
		{"one loss, three calls", []outcome{{Errorf(Unavailable, "x"), lostA}, {Errorf(Unavailable, "x"), lostA}, {Errorf(Unavailable, "x"), lostA}}, breaker.Counts{Requests: 1, Failures: 1, ConsecutiveFailures: 1}},
		{"two losses", []outcome{{Errorf(Unavailable, "x"), lostA}, {Errorf(Unavailable, "x"), lostB}, {Errorf(Unavailable, "x"), lostB}}, breaker.Counts{Requests: 2, Failures: 2, ConsecutiveFailures: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := &endpoint{br: breaker.New(breaker.Settings{ConsecutiveFailures: 100, MinRequests: 100})}
			for _, o := range tc.outcomes {
				tk, ok := ep.br.Allow(now)
				if !ok {
					t.Fatal("breaker refused")
				}
				settle(ep, tk, o.err, o.lost, now)
			}
			c := ep.br.Counts(now)
			got := breaker.Counts{Requests: c.Requests, Failures: c.Failures, ConsecutiveFailures: c.ConsecutiveFailures}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestMD(t *testing.T) {
	ctx := WithMetadata(context.Background(), "k", "v")
	got := requestMD(nil, ctx, "shop", 2, MD{MDGroup, "eu"}, MD{MDAuthorization, "Bearer x"})
	want := MD{MDAttempt, "2", "k", "v", MDApp, "shop", MDGroup, "eu", MDAuthorization, "Bearer x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("requestMD (-want +got):\n%s", diff)
	}
	if got := requestMD(nil, context.Background(), "", 1, nil, nil); len(got) != 0 {
		t.Fatalf("first attempt, no metadata, no app: %v", got)
	}
}

func TestFromConn(t *testing.T) {
	ce := &conn.Error{Code: conn.Unavailable, Message: "connection to x closed"}
	err := fromConn(&conn.NotSent{Err: ce})
	if !isNotSent(err) || CodeOf(err) != Unavailable || unwrapNotSent(err).Error() != "rt: Unavailable: connection to x closed" {
		t.Fatalf("fromConn(NotSent) = %v (not sent %v)", err, isNotSent(err))
	}
	remote := fromConn(&conn.Error{Code: uint8(NotFound), Message: "no such user", Remote: true})
	if isNotSent(remote) || CodeOf(remote) != NotFound || !IsRemote(remote) {
		t.Fatalf("fromConn(remote) = %v", remote)
	}
	other := fromConn(errors.New("boom"))
	if CodeOf(other) != Unavailable {
		t.Fatalf("fromConn(other) = %v, want Unavailable", other)
	}
}

func TestTryDeadline(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := time.Second
	for _, tc := range []struct {
		name     string
		deadline time.Time
		try      time.Duration
		last     bool
		want     time.Time
	}{
		{"no deadline, no try timeout", time.Time{}, 0, false, time.Time{}},
		{"try timeout, no deadline", time.Time{}, s, false, now.Add(s)},
		{"try timeout within the deadline", now.Add(3 * s), s, false, now.Add(s)},
		{"try timeout past the deadline", now.Add(3 * s), 5 * s, false, now.Add(3 * s)},
		{"default: half the time left", now.Add(3 * s), 0, false, now.Add(1500 * time.Millisecond)},
		{"default: the last try gets all", now.Add(3 * s), 0, true, now.Add(3 * s)},
		{"an explicit timeout applies to the last try too", now.Add(3 * s), s, true, now.Add(s)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tryDeadline(now, tc.deadline, tc.try, tc.last); !got.Equal(tc.want) {
				t.Fatalf("tryDeadline = %v, want %v", got, tc.want)
			}
		})
	}
}

// Who may call what: every principal against every method, with rules
// from the schema (service and method) and from run time (replacing the
// schema's key by key).
func TestAccessRules(t *testing.T) {
	sd := &ServiceDesc{Name: "shop.Catalog", Policy: ServicePolicy{Allow: []string{"spiffe://example.org/ns/shop/*"}},
		Methods: []MethodDesc{
			{Name: "Get", FullName: "shop.Catalog/Get"},                                                    // the service's rule
			{Name: "Put", FullName: "shop.Catalog/Put", Policy: MethodPolicy{Allow: []string{"admin"}}},    // its own
			{Name: "Ping", FullName: "shop.Catalog/Ping", Policy: MethodPolicy{Allow: []string{"*"}}},      // anyone authenticated
			{Name: "Drop", FullName: "shop.Catalog/Drop", Policy: MethodPolicy{Allow: []string{"admin"}}},  // replaced at run time
			{Name: "Open", FullName: "shop.Catalog/Open", Policy: MethodPolicy{Allow: []string{"nobody"}}}, // opened at run time
		}}
	runtime := AccessRules{"shop.Catalog/Drop": {}, "shop.Catalog/Open": {"*", "alice"}}
	web, admin := "spiffe://example.org/ns/shop/sa/web", "admin"
	want := map[string]map[string]bool{ // principal -> method -> allowed
		web:                                     {"Get": true, "Put": false, "Ping": true, "Drop": false, "Open": true},
		admin:                                   {"Get": false, "Put": true, "Ping": true, "Drop": false, "Open": true},
		"":                                      {"Get": false, "Put": false, "Ping": false, "Drop": false, "Open": false},
		"spiffe://example.org/ns/shopping/sa/x": {"Get": false, "Put": false, "Ping": true, "Drop": false, "Open": true},
	}
	for principal, methods := range want {
		for i := range sd.Methods {
			m := &sd.Methods[i]
			rule := accessRule(sd, m, runtime)
			if got := allowed(rule, principal); got != methods[m.Name] {
				t.Errorf("%q calling %s: allowed = %v, want %v (rule %q)", principal, m.Name, got, methods[m.Name], rule)
			}
		}
	}
	open := &ServiceDesc{Name: "x.Open", Methods: []MethodDesc{{Name: "M", FullName: "x.Open/M"}}}
	if rule := accessRule(open, &open.Methods[0], nil); rule != nil {
		t.Errorf("no rules anywhere: rule %q, want nil (no restriction)", rule)
	}
}

// The schema's Balance annotation reaches the runtime, bounded loads
// included; a balancer given to the client wins over it.
func TestServiceBalancer(t *testing.T) {
	sd := &ServiceDesc{Name: "x.S", Policy: ServicePolicy{Balance: "consistent_hash_bounded"}}
	b, err := serviceBalancer(sd, nil)
	if err != nil || b.Name() != balance.NameConsistentHashBounded {
		t.Fatalf("schema's bounded consistent hash: %v, %v", b, err)
	}
	mine := balance.NewRandom(balance.Options{})
	if b, _ := serviceBalancer(sd, mine); b != mine {
		t.Fatalf("WithBalancer's balancer lost to the schema's: %v", b.Name())
	}
	if b, _ := serviceBalancer(&ServiceDesc{Name: "x.T"}, nil); b.Name() != balance.NameP2C {
		t.Fatalf("default balancer %q, want p2c", b.Name())
	}
	if _, err := serviceBalancer(&ServiceDesc{Name: "x.U", Policy: ServicePolicy{Balance: "best"}}, nil); err == nil {
		t.Fatal("an unknown balancer name was accepted")
	}
}
