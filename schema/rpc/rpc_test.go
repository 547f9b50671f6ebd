package rpc_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/rpc"
)

type Req struct{ schema.Message }
type Resp struct{ schema.Message }

func TestMethods(t *testing.T) {
	const pkg = "github.com/yrpc/yrpc/schema/rpc_test"
	for _, tc := range []struct {
		name string
		b    *rpc.Builder
		want schema.MethodDescriptor
	}{
		{"unary", rpc.Unary("Get", Req.Type, Resp.Type).Comment("gets"),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Comment: "gets", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg}},
		{"oneway", rpc.Oneway("Touch", Req.Type),
			schema.MethodDescriptor{Name: "Touch", Kind: "oneway", Request: "Req", RequestPkg: pkg}},
		{"policies", rpc.Unary("Get", Req.Type, Resp.Type).Idempotent().Timeout(time.Second).
			Retry(3, 10*time.Millisecond).Backoff(2, time.Second).Jitter(0.1).HashKey("id").Hedge(5 * time.Millisecond),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg,
				Idempotent: true, Timeout: time.Second, HashKey: "id", Hedge: 5 * time.Millisecond,
				Retry: &schema.RetryPolicy{Tries: 3, Interval: 10 * time.Millisecond, Backoff: 2, MaxInterval: time.Second, Jitter: 0.1}}},
		{"try timeout", rpc.Unary("Get", Req.Type, Resp.Type).Idempotent().Timeout(time.Second).TryTimeout(300*time.Millisecond).Retry(3, 0),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg,
				Idempotent: true, Timeout: time.Second, TryTimeout: 300 * time.Millisecond, Retry: &schema.RetryPolicy{Tries: 3}}},
		{"try timeout alone", rpc.Unary("Get", Req.Type, Resp.Type).TryTimeout(time.Second),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, TryTimeout: time.Second}},
		{"backoff before retry", rpc.Unary("Get", Req.Type, Resp.Type).Backoff(1.5, 0).Retry(2, time.Millisecond),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg,
				Retry: &schema.RetryPolicy{Tries: 2, Interval: time.Millisecond, Backoff: 1.5}}},
		{"mock empty", rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.ReturnEmpty()),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, Mock: &schema.MockPolicy{Action: "empty"}}},
		{"mock value", rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.ReturnValue(rpc.Values{"name": "x", "n": 2})),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, Mock: &schema.MockPolicy{Action: "value", Value: `{"n":2,"name":"x"}`}}},
		{"mock fail forced", rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.Fail("Unavailable", "down").Force()),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, Mock: &schema.MockPolicy{Force: true, Action: "fail", Code: "Unavailable", Message: "down"}}},
		{"failsafe", rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(rpc.Failsafe),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, FaultMode: "failsafe"}},
		{"failfast", rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(rpc.Failfast),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, FaultMode: "failfast"}},
		{"forking", rpc.Unary("Get", Req.Type, Resp.Type).Idempotent().FaultMode(rpc.Forking(3)),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, Idempotent: true, FaultMode: "forking", Forks: 3}},
		{"failover", rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(rpc.Forking(3)).FaultMode(rpc.Failover),
			schema.MethodDescriptor{Name: "Get", Kind: "unary", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg, FaultMode: "failover"}},
		{"server stream", rpc.ServerStream("Watch", Req.Type, Resp.Type).Idempotent().Timeout(time.Minute).
			Retry(3, time.Millisecond).Backoff(2, 0).Jitter(0.5).HashKey("id").MaxMessageSize(1 << 20),
			schema.MethodDescriptor{Name: "Watch", Kind: "server_stream", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg,
				Idempotent: true, Timeout: time.Minute, HashKey: "id", MaxMessageSize: 1 << 20,
				Retry: &schema.RetryPolicy{Tries: 3, Interval: time.Millisecond, Backoff: 2, Jitter: 0.5}}},
		{"client stream", rpc.ClientStream("Upload", Req.Type, Resp.Type).Timeout(time.Minute).MaxMessageSize(64).Comment("uploads"),
			schema.MethodDescriptor{Name: "Upload", Kind: "client_stream", Comment: "uploads", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg,
				Timeout: time.Minute, MaxMessageSize: 64}},
		{"bidi stream", rpc.BidiStream("Chat", Req.Type, Resp.Type),
			schema.MethodDescriptor{Name: "Chat", Kind: "bidi_stream", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.Descriptor()
			if len(got.Errors) > 0 {
				t.Fatalf("errors: %v", got.Errors)
			}
			if diff := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(schema.MethodDescriptor{}, "Pos", "Errors")); diff != "" {
				t.Errorf("descriptor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMethodErrors(t *testing.T) {
	for _, tc := range []struct {
		b    *rpc.Builder
		want string
	}{
		{rpc.Unary("", Req.Type, Resp.Type), `rpc.Unary("", Req.Type, Resp.Type): method name must be an exported Go identifier`},
		{rpc.Unary("get", Req.Type, Resp.Type), `method name must be an exported Go identifier`},
		{rpc.Unary("Get", Req{}.Type, Resp.Type), `rpc.Unary("Get", func(), Resp.Type): message reference must be a method expression like Address.Type, got a func()`},
		{rpc.Oneway("Touch", nil), `rpc.Oneway("Touch", nil): message reference is nil`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Timeout(-time.Second), `rpc.Unary("Get", Req.Type, Resp.Type).Timeout(-1s): timeout must be > 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Timeout(0), `Timeout(0s): timeout must be > 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).TryTimeout(0), `rpc.Unary("Get", Req.Type, Resp.Type).TryTimeout(0s): try timeout must be > 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).TryTimeout(-time.Second), `TryTimeout(-1s): try timeout must be > 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).TryTimeout(2 * time.Second).Timeout(time.Second), `TryTimeout(2s): the try timeout is longer than the timeout 1s`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Retry(0, time.Second), `Retry(0, 1s): tries must be >= 1`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Retry(2, -time.Second), `Retry(2, -1s): interval must be >= 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Retry(2, 0).Backoff(0.5, 0), `Backoff(0.5, 0s): multiplier must be in [1, 1000]`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Retry(2, 0).Backoff(2, -1), `Backoff(2, -1ns): max interval must be >= 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Backoff(2, 0), `Backoff(2, 0s): backoff needs Retry(tries, interval)`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Jitter(0.5), `Jitter(0.5): jitter needs Retry(tries, interval)`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Retry(2, 0).Jitter(-0.1), `Jitter(-0.1): jitter must be in [0, 1]`},
		{rpc.Unary("Get", Req.Type, Resp.Type).HashKey(""), `HashKey(""): hash key must name a request field`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Hedge(0), `Hedge(0s): hedge delay must be > 0`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Allow(), `Allow([]): name at least one principal`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Allow("a", ""), `Allow(["a" ""]): an empty principal`},
		{rpc.Unary("Get", Req.Type, Resp.Type).ClientRateLimit(0, 1), `ClientRateLimit(0, 1): rate must be in (0, 1e9] calls per second`},
		{rpc.Unary("Get", Req.Type, Resp.Type).ClientRateLimit(5, 0), `ClientRateLimit(5, 0): burst must be >= 1`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Hedge(time.Millisecond), `Hedge(1ms): hedging needs an Idempotent method`},
		{rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(rpc.Forking(2)), `FaultMode(rpc.Forking(2)): forking needs an Idempotent method`},
		{rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(rpc.Forking(-1)), `forking needs at least 2 parallel calls`},
		{rpc.Unary("Get", Req.Type, Resp.Type).FaultMode(0), `FaultMode(rpc.FaultMode(0)): unknown fault mode`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.Mock{}), `Mock(rpc.Mock{}): use rpc.ReturnEmpty, rpc.ReturnValue or rpc.Fail`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.Fail("OK", "")), `Mock(rpc.Fail("OK", "")): unknown status code "OK"`},
		{rpc.Unary("Get", Req.Type, Resp.Type).Mock(rpc.ReturnValue(rpc.Values{"f": func() {}})), `values do not encode as JSON`},
		{rpc.Oneway("Touch", Req.Type).Mock(rpc.ReturnValue(rpc.Values{"a": 1})), `rpc.Oneway("Touch", Req.Type).Mock(rpc.ReturnValue({"a":1})): a oneway method has no response to return`},

		// Streams: the policies that do not apply to each kind.
		{rpc.ServerStream("W", Req{}.Type, Resp.Type), `rpc.ServerStream("W", func(), Resp.Type): message reference must be a method expression`},
		{rpc.BidiStream("C", Req.Type, nil), `rpc.BidiStream("C", Req.Type, nil): message reference is nil`},
		{rpc.ClientStream("up", Req.Type, Resp.Type), `rpc.ClientStream("up", Req.Type, Resp.Type): method name must be an exported Go identifier`},
		{rpc.BidiStream("C", Req.Type, Resp.Type).Retry(3, time.Second), `rpc.BidiStream("C", Req.Type, Resp.Type).Retry(3, 1s): a bidi stream cannot be retried: its requests are not kept once sent`},
		{rpc.ClientStream("U", Req.Type, Resp.Type).Retry(3, time.Second), `Retry(3, 1s): a client stream cannot be retried`},
		{rpc.ClientStream("U", Req.Type, Resp.Type).Backoff(2, 0), `Backoff(2, 0s): a client stream cannot be retried`},
		{rpc.BidiStream("C", Req.Type, Resp.Type).Jitter(0.1), `Jitter(0.1): a bidi stream cannot be retried`},
		{rpc.ClientStream("U", Req.Type, Resp.Type).Idempotent(), `Idempotent(): a client stream is never retried`},
		{rpc.ClientStream("U", Req.Type, Resp.Type).HashKey("id"), `HashKey("id"): a client stream picks its instance before it has a request to hash; pass rt.WithHashKey`},
		{rpc.BidiStream("C", Req.Type, Resp.Type).HashKey("id"), `a bidi stream picks its instance before it has a request to hash`},
		{rpc.ServerStream("W", Req.Type, Resp.Type).Mock(rpc.ReturnEmpty()), `rpc.ServerStream("W", Req.Type, Resp.Type).Mock(rpc.ReturnEmpty()): a server stream cannot be mocked`},
		{rpc.BidiStream("C", Req.Type, Resp.Type).Mock(rpc.Mock{}), `Mock(rpc.Mock{}): a bidi stream cannot be mocked`},
		{rpc.ServerStream("W", Req.Type, Resp.Type).Idempotent().Hedge(time.Millisecond), `Hedge(1ms): a server stream cannot be hedged`},
		{rpc.ServerStream("W", Req.Type, Resp.Type).FaultMode(rpc.Failfast), `FaultMode(rpc.Failfast): a server stream ends with its first error`},
		{rpc.ClientStream("U", Req.Type, Resp.Type).TryTimeout(time.Second), `TryTimeout(1s): a client stream has no tries to bound: Timeout bounds the whole stream`},
		{rpc.Unary("Get", Req.Type, Resp.Type).MaxMessageSize(10), `MaxMessageSize(10): a unary method has no message size limit of its own`},
		{rpc.Oneway("Touch", Req.Type).MaxMessageSize(10), `a oneway method has no message size limit of its own`},
		{rpc.ServerStream("W", Req.Type, Resp.Type).MaxMessageSize(0), `MaxMessageSize(0): size must be in [1, 2147483647]`},
		{rpc.BidiStream("C", Req.Type, Resp.Type).MaxMessageSize(pow2(31)), `size must be in [1, 2147483647]`}, // -2^31 where int has 32 bits: out of range too
	} {
		d := tc.b.Descriptor()
		if len(d.Errors) == 0 {
			t.Errorf("no error, want %q", tc.want)
			continue
		}
		if got := d.Errors[0].Error(); !strings.Contains(got, tc.want) {
			t.Errorf("error %q, want it to contain %q", got, tc.want)
		}
	}
}

// TestRefusedPolicies checks that a policy a stream does not take is
// reported once, by the call that set it, and left out of the descriptor.
func TestRefusedPolicies(t *testing.T) {
	const pkg = "github.com/yrpc/yrpc/schema/rpc_test"
	d := rpc.BidiStream("Chat", Req.Type, Resp.Type).Idempotent().Retry(2, 0).Backoff(2, 0).Jitter(0.1).
		HashKey("id").Hedge(time.Second).FaultMode(rpc.Failfast).Mock(rpc.ReturnEmpty()).TryTimeout(time.Second).Descriptor()
	want := schema.MethodDescriptor{Name: "Chat", Kind: "bidi_stream", Request: "Req", RequestPkg: pkg, Response: "Resp", ResponsePkg: pkg}
	if diff := cmp.Diff(want, *d, cmpopts.IgnoreFields(schema.MethodDescriptor{}, "Pos", "Errors")); diff != "" {
		t.Errorf("descriptor (-want +got):\n%s", diff)
	}
	var calls []string
	for _, e := range d.Errors {
		calls = append(calls, strings.TrimPrefix(e.Call, `rpc.BidiStream("Chat", Req.Type, Resp.Type).`))
	}
	wantCalls := []string{"Idempotent()", "Retry(2, 0s)", "Backoff(2, 0s)", "Jitter(0.1)", `HashKey("id")`, "Hedge(1s)", "FaultMode(rpc.Failfast)", "Mock(rpc.ReturnEmpty())", "TryTimeout(1s)"}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestPosition checks that a method records the file:line of its builder
// call.
func TestPosition(t *testing.T) {
	b, line := rpc.Unary("Get", Req.Type, Resp.Type), callerLine()
	if want := "rpc_test.go:" + strconv.Itoa(line); !strings.HasSuffix(b.Descriptor().Pos, want) {
		t.Errorf("position %q, want …%s", b.Descriptor().Pos, want)
	}
	// Descriptor is idempotent: final checks do not repeat.
	h := rpc.Unary("Get", Req.Type, Resp.Type).Hedge(time.Second)
	h.Descriptor()
	if n := len(h.Descriptor().Errors); n != 1 {
		t.Errorf("%d errors after two Descriptor calls, want 1", n)
	}
}

func callerLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

// pow2 is 2^n as an int, computed at run time so that a test of values
// over 2^31 compiles where int has 32 bits (it wraps there).
func pow2(n int) int {
	v := int64(1) << n
	return int(v)
}
