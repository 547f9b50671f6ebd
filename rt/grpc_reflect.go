package rt

import (
	"errors"
	"io"
	"sync"
)

// The names of gRPC's server reflection service, which every Server
// serves (see WithReflection): v1, and v1alpha, the same service under
// its older name, which older clients ask first or only.
const (
	ReflectionServiceName        = "grpc.reflection.v1.ServerReflection"
	ReflectionV1AlphaServiceName = "grpc.reflection.v1alpha.ServerReflection"
)

// WithReflection turns gRPC server reflection on or off. Default on.
//
// With reflection on, the server serves grpc.reflection.v1 and v1alpha
// (the bidi stream ServerReflectionInfo) on both protocols, like
// grpc.health.v1.Health: without registering them, to callers of any
// group and version and without the registry token of
// WithRegistryToken, while an Authenticator and access rules apply to
// them as to any service (AccessRules{ReflectionServiceName: ...} limits
// who may ask). That is what grpcurl, Postman and the reflection clients
// of gRPC libraries use to list the services and call them without the
// .proto files. It answers:
//
//   - list_services: the registered services, grpc.health.v1.Health and
//     the two reflection services, sorted;
//   - file_by_filename and file_containing_symbol (a service, method,
//     message, field, oneof, enum or enum value, by its full name such as
//     "users.Users.Get"): the file (even if sent before), with those of its imports (direct or
//     not) that the stream has not carried yet. The files are the
//     ServiceDesc.FileDescriptor of the registered services ("users.proto"
//     for package users; when two services' files have the same name, the
//     first registered wins), google/protobuf/timestamp.proto,
//     duration.proto and empty.proto, which yrpc's files import, and the
//     built-in services' grpc/health/v1/health.proto,
//     grpc/reflection/v1/reflection.proto and v1alpha/reflection.proto;
//   - all_extension_numbers_of_type: no extension numbers for a known
//     message (yrpc's files declare no extensions);
//   - file_containing_extension, and any unknown name: an error_response
//     with NOT_FOUND. A request with no question ends the stream with
//     InvalidArgument.
//
// A service registered without a FileDescriptor (a hand-written
// ServiceDesc) is listed, but its symbols are not found.
//
// Reflection tells what `yrpcc proto` would: service, method, message
// and field names and numbers, no data. Turn it off where the schema is
// itself a secret; the services' calls do not depend on it. With it off,
// the reflection services answer Unimplemented, as on a server that does
// not know them.
func WithReflection(on bool) ServerOption {
	return serverOption(func(c *serverConfig) { c.noReflection = !on })
}

// reflectV1Desc and reflectV1AlphaDesc describe the reflection services:
//
//	service ServerReflection {
//	  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
//	}
//
// Their method IDs are FNV-1a 32 of the full names, as the generator
// computes them. Nothing modifies them.
var (
	reflectV1Desc      = reflectDesc(ReflectionServiceName, 0x1c15524c)
	reflectV1AlphaDesc = reflectDesc(ReflectionV1AlphaServiceName, 0xbf6dafda)
)

func reflectDesc(name string, id uint32) ServiceDesc {
	return ServiceDesc{
		Name: name,
		Methods: []MethodDesc{{
			Name:         "ServerReflectionInfo",
			FullName:     name + "/ServerReflectionInfo",
			ID:           id,
			NewRequest:   func() Message { return new(reflectRequest) },
			NewResponse:  func() Message { return new(reflectResponse) },
			Stream:       BidiStreaming,
			HandleStream: func(impl any, ss ServerStreamer) error { return impl.(*reflection).serve(ss) },
		}},
		MethodIndex: func(got uint32) int {
			if got == id {
				return 0
			}
			return -1
		},
	}
}

// reflection is a Server's reflection services.
type reflection struct {
	s       *Server
	entries []*serviceEntry // v1, v1alpha; none with WithReflection(false)

	once sync.Once
	idx  *reflectIndex
	err  error
}

func (r *reflection) init(s *Server) {
	r.s = s
	if s.o.noReflection {
		return
	}
	for _, sd := range [...]*ServiceDesc{&reflectV1Desc, &reflectV1AlphaDesc} {
		se := s.newServiceEntry(sd, r)
		se.builtin = true
		r.entries = append(r.entries, se)
	}
}

// lookup finds the reflection method with wire ID id.
func (r *reflection) lookup(id uint32) (*serviceEntry, *methodEntry) {
	for _, se := range r.entries {
		if se.sd.MethodIndex(id) == 0 {
			return se, &se.methods[0]
		}
	}
	return nil, nil
}

// index returns the index of the server's files, built at the first call
// (the services no longer change once the server serves).
func (r *reflection) index() (*reflectIndex, error) {
	r.once.Do(func() {
		s := r.s
		s.mu.Lock()
		sds := make([]*ServiceDesc, len(s.services))
		for i, se := range s.services {
			sds[i] = se.sd
		}
		s.mu.Unlock()
		builtin := []string{HealthServiceName}
		for _, se := range r.entries {
			builtin = append(builtin, se.sd.Name)
		}
		r.idx, r.err = newReflectIndex(sds, builtin)
	})
	return r.idx, r.err
}

// serve serves one ServerReflectionInfo stream: an answer to each request,
// until the client half-closes.
func (r *reflection) serve(ss ServerStreamer) error {
	x, err := r.index()
	if err != nil {
		return &Error{Code: Internal, Message: err.Error()}
	}
	sent := make(map[string]bool)
	for {
		var req reflectRequest
		if err := ss.RecvMsg(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		resp, err := x.answer(&req, sent)
		if err != nil {
			return err
		}
		if err := ss.SendMsg(resp); err != nil {
			return err
		}
	}
}
