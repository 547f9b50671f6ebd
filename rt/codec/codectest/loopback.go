package codectest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/yrpc/yrpc/rt"
)

// Loopback is an in-process transport for tests: an rt.Registrar that
// keeps registered services and an rt.Invoker that calls them the way the
// runtime does — encode the request, find the method by its wire ID through
// the service's MethodIndex, NewRequest and Unmarshal, Validate, Handle,
// then encode and decode the response. Handler errors come back as
// *rt.Error with Remote set. The zero value is ready to use; it is safe for
// concurrent use.
type Loopback struct {
	mu       sync.Mutex
	services map[string]registered
	// Calls counts the invocations that reached a handler.
	calls int
}

type registered struct {
	sd   *rt.ServiceDesc
	impl any
}

// RegisterService implements rt.Registrar. Registering a service name twice
// panics, as it is a bug in the test.
func (l *Loopback) RegisterService(sd *rt.ServiceDesc, impl any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.services == nil {
		l.services = map[string]registered{}
	}
	if _, ok := l.services[sd.Name]; ok {
		panic(fmt.Sprintf("codectest: service %q registered twice", sd.Name))
	}
	l.services[sd.Name] = registered{sd, impl}
}

// Calls returns how many calls reached a handler.
func (l *Loopback) Calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// Invoke implements rt.Invoker.
func (l *Loopback) Invoke(ctx context.Context, sd *rt.ServiceDesc, m int, req, resp rt.Message, opts ...rt.CallOption) error {
	if m < 0 || m >= len(sd.Methods) {
		return rt.Errorf(rt.Internal, "codectest: method %d out of range", m)
	}
	id := sd.Methods[m].ID
	wire := req.MarshalAppend(nil)

	// Server side: everything below sees only the service name, the
	// method ID and the bytes.
	l.mu.Lock()
	reg, ok := l.services[sd.Name]
	l.mu.Unlock()
	if !ok {
		return rt.Errorf(rt.Unimplemented, "codectest: no service %q", sd.Name)
	}
	idx := reg.sd.MethodIndex(id)
	if idx < 0 {
		return rt.Errorf(rt.Unimplemented, "codectest: service %q has no method %#x", sd.Name, id)
	}
	md := &reg.sd.Methods[idx]
	in := md.NewRequest()
	if err := in.Unmarshal(wire); err != nil {
		return &rt.Error{Code: rt.InvalidArgument, Message: err.Error(), Remote: true}
	}
	if v, ok := in.(rt.Validator); ok {
		if err := v.Validate(); err != nil {
			return &rt.Error{Code: rt.InvalidArgument, Message: err.Error(), Remote: true}
		}
	}
	l.mu.Lock()
	l.calls++
	l.mu.Unlock()
	out, err := md.Handle(reg.impl, ctx, in)
	if err != nil {
		var re *rt.Error
		if errors.As(err, &re) {
			return &rt.Error{Code: re.Code, Message: re.Message, Remote: true}
		}
		return &rt.Error{Code: rt.Unknown, Message: err.Error(), Remote: true}
	}
	if md.Oneway {
		return nil
	}
	// Back on the client.
	return resp.Unmarshal(out.MarshalAppend(nil))
}

// NewStream implements rt.Invoker; the loopback has no streams.
func (l *Loopback) NewStream(ctx context.Context, sd *rt.ServiceDesc, m int, opts ...rt.CallOption) (rt.ClientStreamer, error) {
	return nil, rt.Errorf(rt.Unimplemented, "codectest: the loopback has no streams")
}
