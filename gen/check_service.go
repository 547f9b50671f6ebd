package gen

import (
	"cmp"
	"slices"
	"unicode"

	"github.com/yrpc/yrpc/gen/names"
	"github.com/yrpc/yrpc/rt/balance"
)

// faultModes maps the spec's fault modes to their rt constants.
var faultModes = map[string]string{
	"": "", "failover": "FaultFailover", "failfast": "FaultFailfast",
	"failsafe": "FaultFailsafe", "forking": "FaultForking",
}

// failCodes are the names of the rt.Code values a mock may fail with:
// gRPC's status codes without OK.
var failCodes = map[string]bool{
	"Canceled": true, "Unknown": true, "InvalidArgument": true, "DeadlineExceeded": true,
	"NotFound": true, "AlreadyExists": true, "PermissionDenied": true, "ResourceExhausted": true,
	"FailedPrecondition": true, "Aborted": true, "OutOfRange": true, "Unimplemented": true,
	"Internal": true, "Unavailable": true, "DataLoss": true, "Unauthenticated": true,
}

// declareService checks a service's name and claims the names and the file
// of its generated code, before any message's fields are resolved.
func (c *checker) declareService(s *Service) {
	if s == nil {
		c.add(Problem{}, "nil service in spec")
		return
	}
	at := typeAt(s.Pos, s.Name)
	if !names.IsExported(s.Name) {
		c.add(at, "service name %q is not an exported Go identifier", s.Name)
	}
	sm := &svcModel{Service: s, full: c.m.pkg + "." + s.Name, file: serviceFile(s.Name)}
	if s.Name != "" {
		r := []rune(s.Name)
		sm.lower = string(unicode.ToLower(r[0])) + string(r[1:])
	}
	c.declare(at, s.Name, "service "+s.Name)
	c.protoName(at, s.Name, "service "+s.Name, false)
	code := "the generated code of service " + s.Name
	for _, name := range []string{s.Name + "Server", "Unimplemented" + s.Name + "Server", "Register" + s.Name,
		s.Name + "Client", "New" + s.Name + "Client", s.Name + "ServiceDesc", sm.lower + "MethodIndex"} {
		c.declare(at, name, code)
	}
	c.file(at, sm.file, "service "+s.Name)
	c.m.services = append(c.m.services, sm)
}

// service checks a service's annotations and resolves its methods.
func (c *checker) service(sm *svcModel) {
	s := sm.Service
	at := typeAt(s.Pos, s.Name)
	if s.Balance != "" && !slices.Contains(balance.Names(), s.Balance) {
		c.add(at, "unknown balancer %q", s.Balance)
	}
	if r := s.RateLimit; r != nil && (!(r.Rate > 0) || r.Burst < 1) {
		c.add(at, "bad rate limit %v/s, burst %d", r.Rate, r.Burst)
	}
	if b := s.Breaker; b != nil && (!(b.ErrorRate > 0 && b.ErrorRate <= 1) || b.MinRequests < 1 || b.OpenFor <= 0) {
		c.add(at, "bad breaker: error rate %v, min requests %d, open for %v", b.ErrorRate, b.MinRequests, b.OpenFor)
	}
	if slices.Contains(s.Allow, "") {
		c.add(at, "an empty principal in the service's allow list")
	}
	seen := map[string]bool{}
	for _, meth := range s.Methods {
		if meth == nil {
			c.add(at, "nil method")
			continue
		}
		mm := &methodModel{Method: meth, full: sm.full + "/" + meth.Name}
		mat := methodAt(s, meth)
		c.method(mat, mm)
		switch {
		case !names.IsExported(meth.Name):
			c.add(mat, "method name %q is not an exported Go identifier", meth.Name)
		case seen[meth.Name]:
			c.add(mat, "is declared twice")
		default:
			c.methodID(mat, mm)
			c.declareHelpers(mat, sm, mm)
		}
		seen[meth.Name] = true
		sm.methods = append(sm.methods, mm)
	}
	c.intoClashes(sm)
}

// intoClashes rejects a method named as the generated client names the
// caller-owned-response variant of a unary method ("GetInto" for "Get"):
// both would be methods of the client.
func (c *checker) intoClashes(sm *svcModel) {
	byName := map[string]*methodModel{}
	for _, mm := range sm.methods {
		byName[mm.Name] = mm
	}
	for _, mm := range sm.methods {
		if other := byName[mm.into()]; mm.into() != "" && other != nil {
			c.add(methodAt(sm.Service, other.Method), "clashes with the client's %s of unary method %q; rename one of them", mm.into(), mm.Name)
		}
	}
}

// declareHelpers claims the names of a method's unexported helpers.
func (c *checker) declareHelpers(at Problem, sm *svcModel, mm *methodModel) {
	code := "the generated code of service " + sm.Name
	c.declare(at, sm.lower+mm.Name+"Handle", code)
	if mm.hashKey != nil {
		c.declare(at, sm.lower+mm.Name+"HashKey", code)
	}
	if mm.mock != nil {
		c.declare(at, sm.lower+mm.Name+"Mock", code)
	}
}

// methodID computes the wire ID of a method and rejects 0 and collisions.
func (c *checker) methodID(at Problem, mm *methodModel) {
	mm.id = MethodID(mm.full)
	if mm.id == 0 {
		c.add(at, "the method ID of %q is 0; rename the method", mm.full)
		return
	}
	if prev, ok := c.ids[mm.id]; ok {
		c.add(at, "the method ID %#08x of %q collides with %q; rename one of them", mm.id, mm.full, prev)
		return
	}
	c.ids[mm.id] = mm.full
}

// method resolves a method's messages and hash key and checks its policies.
func (c *checker) method(at Problem, mm *methodModel) {
	m := mm.Method
	mm.kind = cmp.Or(m.Kind, MethodUnary)
	noun, known := kindNouns[mm.kind]
	if !known {
		c.add(at, "unknown method kind %q", m.Kind)
	}
	if mm.req = c.byName[m.Request]; mm.req == nil {
		c.add(at, "unknown request message %q", m.Request)
	}
	switch {
	case mm.kind == MethodOneway && m.Response != "":
		c.add(at, "a oneway method has no response, got %q", m.Response)
	case mm.kind == MethodOneway:
	case m.Response == "":
		c.add(at, "%s needs a response message", noun)
	default:
		if mm.resp = c.byName[m.Response]; mm.resp == nil {
			c.add(at, "unknown response message %q", m.Response)
		}
	}
	if known {
		c.kindPolicies(at, mm.kind, noun, m)
	}
	if m.MaxMessageSize < 0 || m.MaxMessageSize > maxMessageSize {
		c.add(at, "max message size %d is out of the range 1-%d", m.MaxMessageSize, maxMessageSize)
	}
	if m.Timeout < 0 {
		c.add(at, "negative timeout %v", m.Timeout)
	}
	if slices.Contains(m.Allow, "") {
		c.add(at, "an empty principal in the allow list")
	}
	if r := m.ClientRateLimit; r != nil {
		switch {
		case !(r.Rate > 0) || r.Burst < 1:
			c.add(at, "bad client rate limit %v/s, burst %d", r.Rate, r.Burst)
		case mm.kind.Stream():
			c.add(at, "a %s has no client rate limit: it applies to calls", mm.kind)
		}
	}
	switch {
	case m.TryTimeout < 0:
		c.add(at, "negative try timeout %v", m.TryTimeout)
	case m.TryTimeout > 0 && m.Timeout > 0 && m.TryTimeout > m.Timeout && !mm.kind.Stream():
		c.add(at, "try timeout %v is longer than the timeout %v", m.TryTimeout, m.Timeout)
	}
	switch {
	case m.Hedge < 0:
		c.add(at, "negative hedge delay %v", m.Hedge)
	case m.Hedge > 0 && !m.Idempotent && !mm.kind.Stream():
		c.add(at, "hedging (%v) needs an idempotent method", m.Hedge)
	}
	if r := m.Retry; r != nil {
		if r.Tries < 1 || r.Interval < 0 || r.MaxInterval < 0 || (r.Backoff != 0 && !(r.Backoff >= 1)) || !(r.Jitter >= 0 && r.Jitter <= 1) {
			c.add(at, "bad retry policy: tries %d, interval %v, backoff %v up to %v, jitter %v", r.Tries, r.Interval, r.Backoff, r.MaxInterval, r.Jitter)
		}
	}
	if !mm.kind.Stream() {
		c.faultMode(at, m)
	}
	if m.HashKey != "" && mm.req != nil && !mm.kind.ClientStreams() {
		mm.hashKey = c.hashKey(at, m.HashKey, mm.req)
	}
	if m.Mock != nil && !mm.kind.Stream() {
		c.mock(at, mm)
	}
}

func (c *checker) faultMode(at Problem, m *Method) {
	switch m.FaultMode {
	case "", "failover", "failfast", "failsafe":
		if m.Forks != 0 {
			c.add(at, "forks are set but the fault mode is %q", m.FaultMode)
		}
	case "forking":
		if m.Forks < 2 {
			c.add(at, "forking needs at least 2 forks, got %d", m.Forks)
		}
		if !m.Idempotent {
			c.add(at, "forking needs an idempotent method")
		}
	default:
		c.add(at, "unknown fault mode %q", m.FaultMode)
	}
}

// hashKey resolves the request field that a hash key names.
func (c *checker) hashKey(at Problem, key string, req *msgModel) *fieldModel {
	for _, f := range req.fields {
		if f.Name != key {
			continue
		}
		if f.List || f.MapKey != "" || f.Kind == KindMessage || f.Kind == KindTime || !knownKind(f.Kind) {
			c.add(at, "hash key %q must be a scalar or string field of %s", key, req.Name)
			return nil
		}
		return f
	}
	c.add(at, "hash key %q is not a field of %s", key, req.Name)
	return nil
}

// mock checks a mock policy and resolves its response value.
func (c *checker) mock(at Problem, mm *methodModel) {
	mk := mm.Mock
	switch mk.Action {
	case "empty":
	case "fail":
		if !failCodes[mk.Code] {
			c.add(at, "mock fails with unknown status code %q", mk.Code)
		}
	case "value":
		if mm.oneway() {
			c.add(at, "mock value needs a response message")
			return
		}
		if mm.resp == nil {
			return // an unknown response message, reported already
		}
		v, err := resolveMock(mm.resp, mk.Value)
		if err != nil {
			c.add(at, "mock value: %v", err)
			return
		}
		mm.mock = v
	default:
		c.add(at, "unknown mock action %q", mk.Action)
	}
}

// maxMessageSize is the largest MaxMessageSize: protobuf's limit on the
// size of a message, 2 GiB - 1.
const maxMessageSize = 1<<31 - 1

// kindNouns are the method kinds and how problems call a method of each.
var kindNouns = map[MethodKind]string{
	MethodUnary: "a unary method", MethodOneway: "a oneway method", MethodServerStream: "a server stream",
	MethodClientStream: "a client stream", MethodBidiStream: "a bidi stream",
}

// kindPolicies reports the policies of m that its kind does not take, by
// the rules of schema/rpc (see its doc): streams take no try timeout,
// hedging, fault mode or mock; client and bidi streams are never retried
// and take no hash key; only streams take a message size limit.
func (c *checker) kindPolicies(at Problem, k MethodKind, noun string, m *Method) {
	refuse := func(set bool, why string) {
		if set {
			c.add(at, "%s %s", noun, why)
		}
	}
	if k.Stream() {
		refuse(m.TryTimeout != 0, "has no tries to bound: the timeout bounds the whole stream")
		refuse(m.Hedge != 0, "cannot be hedged")
		refuse(m.FaultMode != "" || m.Forks != 0, "ends with its first error: fault modes apply to unary and oneway methods")
		refuse(m.Mock != nil, "cannot be mocked")
	} else {
		refuse(m.MaxMessageSize != 0, "has no message size limit of its own: its messages are bounded by the frame size")
	}
	if k.ClientStreams() {
		refuse(m.Retry != nil, "cannot be retried: its requests are not kept once sent")
		refuse(m.Idempotent, "is never retried, so it has no idempotency to declare")
		refuse(m.HashKey != "", "picks its instance before it has a request to hash")
	}
}
