//lint:file-ignore SA1019 the v1alpha reflection service is deprecated, and tested because tools still call it

package interop_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectalphapb "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/interop/userspb"
	"github.com/yrpc/yrpc/rt"
)

// reflector asks a ServerReflectionInfo stream of grpc-go's v1 client.
type reflector struct {
	t      *testing.T
	stream grpc.BidiStreamingClient[reflectpb.ServerReflectionRequest, reflectpb.ServerReflectionResponse]
}

func newReflector(t *testing.T, conn *grpc.ClientConn) *reflector {
	stream, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return &reflector{t, stream}
}

func (r *reflector) ask(req *reflectpb.ServerReflectionRequest) *reflectpb.ServerReflectionResponse {
	r.t.Helper()
	if err := r.stream.Send(req); err != nil {
		r.t.Fatal(err)
	}
	resp, err := r.stream.Recv()
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// files resolves symbol into the files that define it and its imports.
func (r *reflector) files(symbol string) *protoregistry.Files {
	r.t.Helper()
	resp := r.ask(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}})
	set := new(descriptorpb.FileDescriptorSet)
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fd); err != nil {
			r.t.Fatal(err)
		}
		set.File = append(set.File, fd)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		r.t.Fatalf("the files of %s (%v): %v", symbol, resp.GetErrorResponse(), err)
	}
	return files
}

var wantServices = []string{"feed.Feed", "grpc.health.v1.Health", rt.ReflectionServiceName, rt.ReflectionV1AlphaServiceName, "users.Users"}

// grpc-go's reflection clients (v1 and v1alpha) list the services and
// resolve a method's descriptor, which equals the one protoc made of
// `yrpcc proto`'s output; a call through dynamic messages built from it
// succeeds.
func TestReflection(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			e := start(t, tr)
			r := newReflector(t, e.conn)
			list := r.ask(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}})
			var names []string
			for _, s := range list.GetListServicesResponse().GetService() {
				names = append(names, s.GetName())
			}
			if !slices.Equal(names, wantServices) {
				t.Errorf("v1 list_services: %q, want %q", names, wantServices)
			}
			alpha, err := reflectalphapb.NewServerReflectionClient(e.conn).ServerReflectionInfo(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := alpha.Send(&reflectalphapb.ServerReflectionRequest{MessageRequest: &reflectalphapb.ServerReflectionRequest_ListServices{}}); err != nil {
				t.Fatal(err)
			}
			resp, err := alpha.Recv()
			if err != nil || len(resp.GetListServicesResponse().GetService()) != len(wantServices) {
				t.Errorf("v1alpha list_services: %v, %v", resp, err)
			}

			files := r.files("users.Users.Get")
			d, err := files.FindDescriptorByName("users.Users.Get")
			if err != nil {
				t.Fatal(err)
			}
			method := d.(protoreflect.MethodDescriptor)
			got := protodesc.ToFileDescriptorProto(method.ParentFile())
			if diff := cmp.Diff(protodesc.ToFileDescriptorProto(userspb.File_users_proto), got, protocmp.Transform()); diff != "" {
				t.Errorf("users.proto from reflection (-protoc +reflection):\n%s", diff)
			}

			req := dynamicpb.NewMessage(method.Input())
			req.Set(method.Input().Fields().ByName("id"), protoreflect.ValueOfInt64(42))
			res := dynamicpb.NewMessage(method.Output())
			if err := e.conn.Invoke(ctxT(t), "/users.Users/Get", req, res); err != nil {
				t.Fatal(err)
			}
			out := method.Output().Fields()
			created := res.Get(out.ByName("created_at")).Message()
			createdAt := timestamppb.Timestamp{
				Seconds: created.Get(created.Descriptor().Fields().ByName("seconds")).Int(),
				Nanos:   int32(created.Get(created.Descriptor().Fields().ByName("nanos")).Int()),
			}
			if name := res.Get(out.ByName("name")).String(); name != "user 42" || !createdAt.AsTime().Equal(interop.Created()) {
				t.Errorf("Get through dynamic messages: name %q, created at %v", name, createdAt.AsTime())
			}
		})
	}
}

// The files reflection serves for its own service and for health have
// the messages and methods of grpc-go's; the embedded descriptor of
// examples/users is what protoc made of `yrpcc proto`'s output (so
// userspb is up to date).
func TestReflectionBuiltinFiles(t *testing.T) {
	e := start(t, transports(t)[0])
	r := newReflector(t, e.conn)
	ignore := cmp.Options{
		protocmp.Transform(),
		protocmp.IgnoreFields(&descriptorpb.ServiceDescriptorProto{}, "options", "method"),
		protocmp.IgnoreFields(&descriptorpb.MethodDescriptorProto{}, "options"),
	}
	for _, c := range []struct {
		symbol string
		grpcGo protoreflect.FileDescriptor
	}{
		{rt.ReflectionServiceName, reflectpb.File_grpc_reflection_v1_reflection_proto},
		{rt.ReflectionV1AlphaServiceName, reflectalphapb.File_grpc_reflection_v1alpha_reflection_proto},
		{rt.HealthServiceName, healthpb.File_grpc_health_v1_health_proto},
	} {
		d, err := r.files(c.symbol).FindDescriptorByName(protoreflect.FullName(c.symbol))
		if err != nil {
			t.Fatal(err)
		}
		ours, theirs := protodesc.ToFileDescriptorProto(d.ParentFile()), protodesc.ToFileDescriptorProto(c.grpcGo)
		// Each of yrpc's messages and methods is grpc-go's; grpc-go's
		// health has List too, which yrpc does not serve.
		subset(t, c.symbol, ours.GetMessageType(), theirs.GetMessageType(), ignore)
		subset(t, c.symbol, ours.GetService()[0].GetMethod(), theirs.GetService()[0].GetMethod(), ignore)
		if c.symbol != rt.HealthServiceName && (len(ours.GetMessageType()) != len(theirs.GetMessageType()) || len(ours.GetService()[0].GetMethod()) != 1) {
			t.Errorf("%s: %d messages, grpc-go's %d", c.symbol, len(ours.GetMessageType()), len(theirs.GetMessageType()))
		}
	}
	embedded := new(descriptorpb.FileDescriptorProto)
	if err := proto.Unmarshal(userrpc.FileDescriptor(), embedded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(protodesc.ToFileDescriptorProto(userspb.File_users_proto), embedded, protocmp.Transform()); diff != "" {
		t.Errorf("userspb is not generated from the current schema; run ./regen.sh (-userspb +userrpc):\n%s", diff)
	}
}

// grpc-go's health client: SERVING, then NOT_SERVING once Shutdown
// began (here: while it waits for consumers to see the deregistration),
// on Watch and Check.
func TestHealth(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			e := start(t, tr, rt.WithDeregisterWait(time.Minute))
			h := healthpb.NewHealthClient(e.conn)
			for _, svc := range []string{"", "users.Users"} {
				resp, err := h.Check(ctxT(t), &healthpb.HealthCheckRequest{Service: svc})
				if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
					t.Errorf("Check(%q): %v, %v", svc, resp, err)
				}
			}
			watch, err := h.Watch(ctxT(t), &healthpb.HealthCheckRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("Watch: %v, %v", resp, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- e.srv.Shutdown(ctx) }()
			if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Errorf("Watch while draining: %v, %v", resp, err)
			}
			resp, err := h.Check(ctxT(t), &healthpb.HealthCheckRequest{Service: "users.Users"})
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Errorf("Check while draining: %v, %v", resp, err)
			}
			cancel() // ends the deregistration wait
			recv(t, done)
		})
	}
}

// subset checks that each of ours equals the one of theirs of its name.
func subset[D interface {
	proto.Message
	GetName() string
}](t *testing.T, file string, ours, theirs []D, opts cmp.Options) {
	t.Helper()
	for _, d := range ours {
		i := slices.IndexFunc(theirs, func(x D) bool { return x.GetName() == d.GetName() })
		if i < 0 {
			t.Errorf("%s: grpc-go has no %s", file, d.GetName())
		} else if diff := cmp.Diff(theirs[i], d, opts); diff != "" {
			t.Errorf("%s: %s (-grpc-go +yrpc):\n%s", file, d.GetName(), diff)
		}
	}
}
