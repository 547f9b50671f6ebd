// Package schema has bad methods and service annotations.
package schema

import (
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Req is a request.
type Req struct{ schema.Message }

// Fields of Req.
func (Req) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.Strings("tags", 2),
		field.Message("next", 3, Req.Type),
	}
}

// Annotations of Req.
func (Req) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Group("HK"), // want "schema.Group(\"HK\"): applies to services, not to message Req"
	}
}

// Users is a service.
type Users struct{ schema.Service }

// Methods of Users.
func (Users) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", Req.Type, Req.Type).HashKey("id"),
		rpc.Unary("Get", Req.Type, Req.Type),                                                    // want "method Get: is declared twice"
		rpc.Unary("ByTag", Req.Type, Req.Type).HashKey("tags"),                                  // want "method ByTag: hash key \"tags\" must be a scalar or string field of Req"
		rpc.Unary("ByNext", Req.Type, Req.Type).HashKey("next"),                                 // want "hash key \"next\" must be a scalar or string field of Req"
		rpc.Unary("ByNope", Req.Type, Req.Type).HashKey("nope"),                                 // want "method ByNope: hash key \"nope\" is not a field of Req"
		rpc.Unary("Slow", Req.Type, Req.Type).Timeout(-time.Second),                             // want "rpc.Unary(\"Slow\", Req.Type, Req.Type).Timeout(-1s): timeout must be > 0"
		rpc.Unary("Tried", Req.Type, Req.Type).Timeout(time.Second).TryTimeout(2 * time.Second), // want "TryTimeout(2s): the try timeout is longer than the timeout 1s"
		rpc.Unary("Again", Req.Type, Req.Type).Retry(0, time.Second),                            // want "rpc.Unary(\"Again\", Req.Type, Req.Type).Retry(0, 1s): tries must be >= 1"
		rpc.Unary("Back", Req.Type, Req.Type).Backoff(2, time.Second),                           // want "Backoff(2, 1s): backoff needs Retry(tries, interval)"
		rpc.Unary("Shake", Req.Type, Req.Type).Retry(2, 0).Jitter(1.5),                          // want "Jitter(1.5): jitter must be in [0, 1]"
		rpc.Unary("Hedged", Req.Type, Req.Type).Hedge(time.Millisecond),                         // want "Hedge(1ms): hedging needs an Idempotent method"
		rpc.Unary("Fork", Req.Type, Req.Type).Idempotent().FaultMode(rpc.Forking(1)),            // want "FaultMode(rpc.Forking(1)): forking needs at least 2 parallel calls"
		rpc.Unary("Mocked", Req.Type, Req.Type).Mock(rpc.Fail("Broken", "x")),                   // want "Mock(rpc.Fail(\"Broken\", \"x\")): unknown status code \"Broken\""
		rpc.Unary("Valued", Req.Type, Req.Type).Mock(rpc.ReturnValue(rpc.Values{"idd": 1})),     // want "method Valued: mock value: message Req has no field \"idd\""
		rpc.Oneway("Fire", Req.Type).Mock(rpc.ReturnValue(nil)),                                 // want "a oneway method has no response to return"
		rpc.Unary("lower", Req.Type, Req.Type),                                                  // want "rpc.Unary(\"lower\", Req.Type, Req.Type): method name must be an exported Go identifier"
		rpc.BidiStream("Talk", Req.Type, Req.Type).Retry(2, time.Second),                        // want "rpc.BidiStream(\"Talk\", Req.Type, Req.Type).Retry(2, 1s): a bidi stream cannot be retried"
		rpc.ServerStream("Feed", Req.Type, Req.Type).Mock(rpc.ReturnEmpty()),                    // want "Mock(rpc.ReturnEmpty()): a server stream cannot be mocked"
		rpc.ClientStream("Up", Req.Type, Req.Type).HashKey("id"),                                // want "HashKey(\"id\"): a client stream picks its instance before it has a request to hash"
		rpc.Unary("Big", Req.Type, Req.Type).MaxMessageSize(1024),                               // want "MaxMessageSize(1024): a unary method has no message size limit of its own"
		rpc.ServerStream("Watch", Req.Type, Req.Type).HashKey("tags"),                           // want "method Watch: hash key \"tags\" must be a scalar or string field of Req"
	}
}

// Annotations of Users.
func (Users) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Group("A"),
		schema.Group("B"),                    // want "schema.Group(\"B\"): group already set by schema.Group(\"A\")"
		schema.RateLimit(0, 10),              // want "schema.RateLimit(0, 10): rate must be in (0, 1e9] calls per second"
		schema.Breaker(1.5, 10, time.Second), // want "schema.Breaker(1.5, 10, 1s): error rate must be in (0, 1]"
		schema.Balance("fastest"),            // want "schema.Balance(\"fastest\"): unknown balancer"
		schema.Package("a..b"),               // want "schema.Package(\"a..b\"): package must be dot-separated identifiers"
	}
}
