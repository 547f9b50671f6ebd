package rt_test

import (
	"bytes"
	"errors"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// The tests encode reflection's requests and decode its answers here, by
// hand from reflection.proto, not with rt's own messages.

// reflectQ encodes a ServerReflectionRequest asking question num (3
// file_by_filename, 4 file_containing_symbol, 6
// all_extension_numbers_of_type, 7 list_services) about arg, with host.
func reflectQ(host string, num int32, arg string) []byte {
	var b []byte
	if host != "" {
		b = codec.AppendString(append(b, 1<<3|2), host)
	}
	return codec.AppendString(codec.AppendVarint(b, codec.Tag(num, codec.BytesType)), arg)
}

// reflectExtQ encodes a file_containing_extension request.
func reflectExtQ(typ string, num int32) []byte {
	inner := codec.AppendVarint(codec.AppendString(append([]byte(nil), 1<<3|2), typ), 2<<3)
	inner = codec.AppendVarint(inner, uint64(num))
	return codec.AppendBytes(append([]byte(nil), 5<<3|2), inner)
}

// reflectA is a decoded ServerReflectionResponse.
type reflectA struct {
	host     string
	original []byte
	kind     int32 // 4 files, 5 extension numbers, 6 services, 7 error
	files    []string
	names    []string // service names; the base type of extension numbers
	nums     []int32
	code     int32
	message  string
}

func decodeReflectA(t *testing.T, b []byte) reflectA {
	t.Helper()
	var a reflectA
	err := grpcwire.Fields(b, "ServerReflectionResponse", func(num int32, _ uint64, p []byte) error {
		switch num {
		case 1:
			a.host = string(p)
			return nil
		case 2:
			a.original = p
			return nil
		}
		a.kind = num
		return grpcwire.Fields(p, "answer", func(sub int32, v uint64, p []byte) error {
			switch {
			case num == 4 && sub == 1:
				a.files = append(a.files, string(p))
			case num == 5 && sub == 1:
				a.names = append(a.names, string(p))
			case num == 5 && sub == 2:
				a.nums = append(a.nums, int32(v))
			case num == 6 && sub == 1:
				return grpcwire.Fields(p, "ServiceResponse", func(_ int32, _ uint64, p []byte) error {
					a.names = append(a.names, string(p))
					return nil
				})
			case num == 7 && sub == 1:
				a.code = int32(v)
			case num == 7 && sub == 2:
				a.message = string(p)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("the answer does not decode: %v", err)
	}
	return a
}

// fileName returns the name of an encoded FileDescriptorProto.
func fileName(t *testing.T, desc string) string {
	t.Helper()
	name := ""
	err := grpcwire.Fields([]byte(desc), "FileDescriptorProto", func(num int32, _ uint64, p []byte) error {
		if num == 1 {
			name = string(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// reflectStream is a ServerReflectionInfo stream.
type reflectStream interface {
	send(req []byte) error
	recv() ([]byte, error)
	closeSend() error
}

// grpcReflect opens a stream of service over gRPC (h2c).
func grpcReflect(t *testing.T, g *grpcClient, service string) reflectStream {
	return &grpcReflectStream{g.stream(t, ctxT(t), "/"+service+"/ServerReflectionInfo", nil)}
}

type grpcReflectStream struct{ s *clientStream }

func (s *grpcReflectStream) send(req []byte) error { return s.s.send(string(req)) }
func (s *grpcReflectStream) closeSend() error      { return s.s.closeSend() }
func (s *grpcReflectStream) recv() ([]byte, error) {
	m, err := s.s.recv()
	return []byte(m), err
}

// rawMsg is a message as its encoding.
type rawMsg struct{ b []byte }

func (m *rawMsg) Size() int                     { return len(m.b) }
func (m *rawMsg) MarshalAppend(b []byte) []byte { return append(b, m.b...) }
func (m *rawMsg) Unmarshal(b []byte) error      { m.b = append([]byte(nil), b...); return nil }

// yrpcReflectDesc describes reflection v1 to a yrpc client, as a client
// of the standard service would write it.
func yrpcReflectDesc() *rt.ServiceDesc {
	full := rt.ReflectionServiceName + "/ServerReflectionInfo"
	h := fnv.New32a()
	h.Write([]byte(full))
	id := h.Sum32()
	return &rt.ServiceDesc{
		Name: rt.ReflectionServiceName,
		Methods: []rt.MethodDesc{{
			Name: "ServerReflectionInfo", FullName: full, ID: id, Stream: rt.BidiStreaming,
			NewRequest: func() rt.Message { return new(rawMsg) }, NewResponse: func() rt.Message { return new(rawMsg) },
		}},
		MethodIndex: func(got uint32) int {
			if got == id {
				return 0
			}
			return -1
		},
	}
}

// yrpcReflect opens a stream over yrpc's wire.
func yrpcReflect(t *testing.T, cli *rt.Client) reflectStream {
	cs, err := cli.NewStream(ctxT(t), yrpcReflectDesc(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return yrpcReflectStream{cs}
}

type yrpcReflectStream struct{ cs rt.ClientStreamer }

func (s yrpcReflectStream) send(req []byte) error { return s.cs.SendMsg(&rawMsg{req}) }
func (s yrpcReflectStream) closeSend() error      { return s.cs.CloseSend() }
func (s yrpcReflectStream) recv() ([]byte, error) {
	var m rawMsg
	err := s.cs.RecvMsg(&m)
	return m.b, err
}

// ask sends req and decodes the answer.
func ask(t *testing.T, s reflectStream, req []byte) reflectA {
	t.Helper()
	if err := s.send(req); err != nil {
		t.Fatal(err)
	}
	b, err := s.recv()
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	a := decodeReflectA(t, b)
	if !bytes.Equal(a.original, req) {
		t.Errorf("original_request %x, want %x", a.original, req)
	}
	return a
}

// newReflectEnv is a gRPC test server that also serves examples/users.
func newReflectEnv(t *testing.T, opts ...rt.ServerOption) *grpcEnv {
	t.Helper()
	return newGRPCEnvWith(t, func(srv *rt.Server) {
		userrpc.RegisterUsers(srv, userrpc.UnimplementedUsersServer{})
	}, opts...)
}

// Reflection answers on both protocols and both versions: the services,
// the files defining symbols of every kind with their imports once per
// stream, files by name, and NOT_FOUND for what the server lacks.
func TestReflection(t *testing.T) {
	e := newReflectEnv(t)
	users := string(userrpc.FileDescriptor())
	streams := map[string]func() reflectStream{
		"gRPC v1":      func() reflectStream { return grpcReflect(t, e.g, rt.ReflectionServiceName) },
		"gRPC v1alpha": func() reflectStream { return grpcReflect(t, e.g, rt.ReflectionV1AlphaServiceName) },
		"yrpc v1":      func() reflectStream { return yrpcReflect(t, e.cli) },
	}
	for name, open := range streams {
		t.Run(name, func(t *testing.T) {
			s := open()
			a := ask(t, s, reflectQ("h:1", 7, "*"))
			wantServices := []string{"grpc.health.v1.Health", rt.ReflectionServiceName, rt.ReflectionV1AlphaServiceName, "grpctest.Probe", "test.Echo", "users.Users"}
			slices.Sort(wantServices)
			if a.kind != 6 || !slices.Equal(a.names, wantServices) || a.host != "h:1" {
				t.Errorf("list_services: kind %d host %q services %q, want %q", a.kind, a.host, a.names, wantServices)
			}
			files := func(a reflectA) []string {
				var names []string
				for _, f := range a.files {
					names = append(names, fileName(t, f))
				}
				return names
			}
			// The first symbol of users.proto brings its imports; later
			// ones the file alone.
			a = ask(t, s, reflectQ("", 4, "users.Users"))
			got := files(a)
			if a.kind != 4 || len(got) != 4 || a.files[0] != users {
				t.Fatalf("users.Users: kind %d files %q", a.kind, got)
			}
			if deps := got[1:]; !slices.Equal(deps, []string{"google/protobuf/duration.proto", "google/protobuf/empty.proto", "google/protobuf/timestamp.proto"}) {
				t.Errorf("users.Users: imports %q", deps)
			}
			for _, sym := range []string{
				"users.Users.Get",           // method
				"users.User",                // message
				"users.User.name",           // field
				"users.User.LabelsEntry",    // nested message (a map entry)
				"users.User._updated_at",    // oneof (optional's synthetic one)
				"users.UserRole",            // enum
				"users.USER_ROLE_ADMIN",     // enum value, beside its enum
				"users.Scalars.last",        // field of the largest number
				"google.protobuf.Timestamp", // well-known type
			} {
				want := []string{"users.proto"}
				if strings.HasPrefix(sym, "google.") {
					want = []string{"google/protobuf/timestamp.proto"}
				}
				if a := ask(t, s, reflectQ("", 4, sym)); !slices.Equal(files(a), want) {
					t.Errorf("file_containing_symbol %q: kind %d files %q code %d %q", sym, a.kind, files(a), a.code, a.message)
				}
			}
			for sym, want := range map[string][]string{
				"grpc.health.v1.Health.Watch":                                {"grpc/health/v1/health.proto"},
				"grpc.health.v1.HealthCheckResponse.SERVING":                 {"grpc/health/v1/health.proto"},
				rt.ReflectionServiceName + ".ServerReflectionInfo":           {"grpc/reflection/v1/reflection.proto"},
				rt.ReflectionV1AlphaServiceName + ".ServerReflectionInfo":    {"grpc/reflection/v1alpha/reflection.proto"},
				"grpc.reflection.v1.ServerReflectionRequest.message_request": {"grpc/reflection/v1/reflection.proto"},
			} {
				if a := ask(t, s, reflectQ("", 4, sym)); !slices.Equal(files(a), want) {
					t.Errorf("file_containing_symbol %q: files %q code %d %q", sym, files(a), a.code, a.message)
				}
			}
			// A file asked by name comes even when sent before.
			if a := ask(t, s, reflectQ("", 3, "google/protobuf/empty.proto")); !slices.Equal(files(a), []string{"google/protobuf/empty.proto"}) {
				t.Errorf("file_by_filename empty.proto: %q", files(a))
			}
			if a := ask(t, s, reflectQ("", 6, "users.User")); a.kind != 5 || !slices.Equal(a.names, []string{"users.User"}) || len(a.nums) != 0 {
				t.Errorf("all_extension_numbers_of_type users.User: %+v", a)
			}
			for _, q := range [][]byte{
				reflectQ("", 4, "users.Nope"),
				reflectQ("", 4, "users"), // a package is no symbol
				reflectQ("", 3, "nope.proto"),
				reflectQ("", 6, "users.Nope"),
				reflectQ("", 6, "users.UserRole"), // an enum has no extensions
				reflectExtQ("users.User", 1000),
			} {
				if a := ask(t, s, q); a.kind != 7 || a.code != int32(rt.NotFound) || !strings.HasPrefix(a.message, "rt: reflection: ") {
					t.Errorf("%x: %+v, want NOT_FOUND", q, a)
				}
			}
			if err := s.closeSend(); err != nil {
				t.Fatal(err)
			}
			if m, err := s.recv(); !errors.Is(err, io.EOF) {
				t.Errorf("after closeSend: %x, %v; want io.EOF", m, err)
			}
		})
	}
}

// A new stream sends the imports again; a request without a question
// ends the stream with InvalidArgument.
func TestReflectionStreams(t *testing.T) {
	e := newReflectEnv(t)
	for range 2 {
		s := grpcReflect(t, e.g, rt.ReflectionServiceName)
		if a := ask(t, s, reflectQ("", 3, "users.proto")); len(a.files) != 4 {
			t.Errorf("users.proto on a new stream: %d files, want it and its 3 imports", len(a.files))
		}
	}
	s := grpcReflect(t, e.g, rt.ReflectionServiceName)
	if err := s.send([]byte{1<<3 | 2, 1, 'h'}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.recv(); rt.CodeOf(err) != rt.InvalidArgument {
		t.Errorf("a request without a question: %x, %v; want InvalidArgument", m, err)
	}
}

// Reflection, like health, is served without the registry token; access
// rules apply to it; WithReflection(false) turns it off.
func TestReflectionOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []rt.ServerOption
		want rt.Code // of list_services
	}{
		{"registry token", []rt.ServerOption{rt.WithRegistryToken(true)}, rt.OK},
		{"access rules", []rt.ServerOption{rt.WithAccessRules(rt.AccessRules{rt.ReflectionServiceName: {}})}, rt.PermissionDenied},
		{"off", []rt.ServerOption{rt.WithReflection(false)}, rt.Unimplemented},
		{"on", []rt.ServerOption{rt.WithReflection(true)}, rt.OK},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newReflectEnv(t, c.opts...)
			s := grpcReflect(t, e.g, rt.ReflectionServiceName)
			// A refused stream may end before the request is written.
			sendErr := s.send(reflectQ("", 7, ""))
			m, err := s.recv()
			if c.want == rt.OK && sendErr != nil {
				t.Fatal(sendErr)
			}
			if rt.CodeOf(err) != c.want || (c.want == rt.OK && decodeReflectA(t, m).kind != 6) {
				t.Errorf("list_services: %x, %v; want %v", m, err, c.want)
			}
			if st, err := e.g.healthCheck(t, ""); err != nil || st != rt.HealthServing {
				t.Errorf("health: %v, %v", st, err)
			}
		})
	}
}
