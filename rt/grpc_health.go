package rt

import (
	"context"
	"strconv"
	"sync"

	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/registry"
)

// HealthServiceName is the name of the standard gRPC health service,
// which every Server serves on yrpc's wire and on gRPC (see
// HealthServiceDesc).
const HealthServiceName = "grpc.health.v1.Health"

// HealthStatus is grpc.health.v1.HealthCheckResponse.ServingStatus.
type HealthStatus int32

// Health statuses.
const (
	HealthUnknown        HealthStatus = 0
	HealthServing        HealthStatus = 1
	HealthNotServing     HealthStatus = 2
	HealthServiceUnknown HealthStatus = 3 // Watch of a service the server does not serve
)

var healthNames = [...]string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"}

// String returns the status as the .proto spells it, e.g. "SERVING".
func (st HealthStatus) String() string {
	if st >= 0 && int(st) < len(healthNames) {
		return healthNames[st]
	}
	return "HealthStatus(" + strconv.Itoa(int(st)) + ")"
}

// HealthCheckRequest is grpc.health.v1.HealthCheckRequest:
//
//	message HealthCheckRequest { string service = 1; }
//
// Service "" asks about the server as a whole.
type HealthCheckRequest struct {
	Service string
}

// Size returns the encoded size.
func (m *HealthCheckRequest) Size() int {
	if m.Service == "" {
		return 0
	}
	return 1 + codec.SizeBytes(len(m.Service))
}

// MarshalAppend appends the encoding to b.
func (m *HealthCheckRequest) MarshalAppend(b []byte) []byte {
	if m.Service == "" {
		return b
	}
	return codec.AppendString(append(b, 1<<3|2), m.Service)
}

// Unmarshal decodes b; unknown fields are skipped.
func (m *HealthCheckRequest) Unmarshal(b []byte) error {
	*m = HealthCheckRequest{}
	return grpcwire.Fields(b, "grpc.health.v1.HealthCheckRequest", func(num int32, _ uint64, p []byte) error {
		if num == 1 {
			m.Service = string(p)
		}
		return nil
	})
}

// HealthCheckResponse is grpc.health.v1.HealthCheckResponse:
//
//	message HealthCheckResponse { ServingStatus status = 1; }
type HealthCheckResponse struct {
	Status HealthStatus
}

// Size returns the encoded size.
func (m *HealthCheckResponse) Size() int {
	if m.Status == 0 {
		return 0
	}
	return 1 + codec.SizeVarint(uint64(int64(m.Status)))
}

// MarshalAppend appends the encoding to b.
func (m *HealthCheckResponse) MarshalAppend(b []byte) []byte {
	if m.Status == 0 {
		return b
	}
	return codec.AppendVarint(append(b, 1<<3), uint64(int64(m.Status)))
}

// Unmarshal decodes b; unknown fields are skipped.
func (m *HealthCheckResponse) Unmarshal(b []byte) error {
	*m = HealthCheckResponse{}
	return grpcwire.Fields(b, "grpc.health.v1.HealthCheckResponse", func(num int32, v uint64, _ []byte) error {
		if num == 1 {
			m.Status = HealthStatus(int32(v))
		}
		return nil
	})
}

// HealthServiceDesc describes grpc.health.v1.Health, which every Server
// serves without registering it (and without announcing it in the
// registry), to callers of any group and version, without the registry
// token of WithRegistryToken; an Authenticator and access rules apply to
// it as to any service.
//
//	service Health {
//	  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
//	  rpc Watch(HealthCheckRequest) returns (stream HealthCheckResponse);
//	}
//
// Check answers SERVING, or NOT_SERVING once Shutdown has begun, after
// SetServing(false), or while the governance config drains this instance
// (for Service "": drains it for every service it serves); a service the
// server does not serve is NotFound. Watch sends the status at once and
// again each time it changes (SERVICE_UNKNOWN for a service the server
// does not serve), and ends once the server closes. A yrpc client calls
// it with Invoke (and NewStream for Watch) and this descriptor. Nothing
// modifies it.
var HealthServiceDesc = ServiceDesc{
	Name: HealthServiceName,
	Methods: []MethodDesc{
		{
			Name:        "Check",
			FullName:    HealthServiceName + "/Check",
			ID:          0xb45147f5, // FNV-1a 32 of the full name, as the generator computes it
			NewRequest:  func() Message { return new(HealthCheckRequest) },
			NewResponse: func() Message { return new(HealthCheckResponse) },
			Handle: func(impl any, _ context.Context, req Message) (Message, error) {
				return impl.(*health).check(req.(*HealthCheckRequest).Service)
			},
		},
		{
			Name:        "Watch",
			FullName:    HealthServiceName + "/Watch",
			ID:          0x255d2a32,
			NewRequest:  func() Message { return new(HealthCheckRequest) },
			NewResponse: func() Message { return new(HealthCheckResponse) },
			Stream:      ServerStreaming,
			HandleStream: func(impl any, ss ServerStreamer) error {
				return impl.(*health).watch(ss)
			},
		},
	},
	MethodIndex: func(id uint32) int {
		switch id {
		case 0xb45147f5:
			return 0
		case 0x255d2a32:
			return 1
		}
		return -1
	},
}

// health is a Server's health state and its grpc.health.v1.Health
// implementation.
type health struct {
	s     *Server
	entry *serviceEntry

	mu       sync.Mutex
	ch       chan struct{} // closed on every change, then replaced
	off      bool          // SetServing(false)
	stop     bool          // Shutdown began
	drainedN int
	drained  map[string]bool // services whose governance config drains this instance
}

func (h *health) init(s *Server) {
	h.s, h.ch, h.drained = s, make(chan struct{}), make(map[string]bool)
	h.entry = s.newServiceEntry(&HealthServiceDesc, h)
	h.entry.builtin = true
}

// lookup finds the Health method with wire ID id.
func (h *health) lookup(id uint32) (*serviceEntry, *methodEntry) {
	if i := HealthServiceDesc.MethodIndex(id); i >= 0 {
		return h.entry, &h.entry.methods[i]
	}
	return nil, nil
}

// SetServing sets what the health service answers while the server is not
// shutting down and not drained: SERVING (true, the default) or
// NOT_SERVING (false), e.g. while a dependency is down. Load balancers and
// orchestrators that check grpc.health.v1.Health stop sending calls; the
// server still answers the calls that come.
//
// The server's registry entries say so too (registry.Endpoint.NotServing),
// so that consumers stop routing new calls to it as soon as the registry
// tells them (within the registry's propagation time: moments on
// ZooKeeper or the in-memory registry).
func (s *Server) SetServing(serving bool) {
	h := &s.health
	h.mu.Lock()
	changed := h.off != !serving
	if changed {
		h.off = !serving
		h.notifyLocked()
	}
	h.mu.Unlock()
	if changed {
		s.reregister(!serving)
	}
}

// notServing reports whether SetServing(false) is in force.
func (h *health) notServing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.off
}

// stopping records that Shutdown began.
func (h *health) stopping() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stop = true
	h.notifyLocked()
}

// changed wakes the watchers: something they look at changed (the
// server's closing flag).
func (h *health) changed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notifyLocked()
}

func (h *health) notifyLocked() {
	close(h.ch)
	h.ch = make(chan struct{})
}

// noteConfig records whether se's governance config drains one of the
// server's registered addresses.
func (h *health) noteConfig(se *serviceEntry, cfg registry.Config) {
	s := h.s
	drained := false
	s.mu.Lock()
	for _, e := range s.endpoints {
		if e.Key == se.key && cfg.Instances[e.Addr].Draining {
			drained = true
		}
	}
	s.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.drained[se.sd.Name] == drained {
		return
	}
	h.drained[se.sd.Name] = drained
	if drained {
		h.drainedN++
	} else {
		h.drainedN--
	}
	h.notifyLocked()
}

// status returns the status of service ("" for the server) and a channel
// closed at the next change.
func (h *health) status(service string) (HealthStatus, <-chan struct{}) {
	s := h.s
	known, n := service == "" || service == HealthServiceName, 0
	s.mu.Lock()
	for _, se := range s.services {
		known = known || se.sd.Name == service
		n++
	}
	s.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !known:
		return HealthServiceUnknown, h.ch
	case h.off || h.stop || s.closing.Load():
		return HealthNotServing, h.ch
	case service == "" && n > 0 && h.drainedN == n, h.drained[service]:
		return HealthNotServing, h.ch
	}
	return HealthServing, h.ch
}

// check implements Health.Check.
func (h *health) check(service string) (Message, error) {
	st, _ := h.status(service)
	if st == HealthServiceUnknown {
		return nil, Errorf(NotFound, "%s: this server does not serve %q", HealthServiceName, service)
	}
	return &HealthCheckResponse{Status: st}, nil
}

// watch implements Health.Watch.
func (h *health) watch(ss ServerStreamer) error {
	var req HealthCheckRequest
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	last := HealthStatus(-1)
	for {
		st, ch := h.status(req.Service)
		if st != last {
			if err := ss.SendMsg(&HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		if h.s.closing.Load() {
			return Errorf(Unavailable, "%s/Watch: server closing", HealthServiceName)
		}
		select {
		case <-ch:
		case <-ss.Context().Done():
			return ss.Context().Err()
		}
	}
}
