package interop_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/yrpc/yrpc/interop"
	pb "github.com/yrpc/yrpc/interop/userspb"
)

// at and ttl are a time and a duration with nanoseconds; the negative
// duration checks the sign rules of google.protobuf.Duration.
var (
	at  = timestamppb.New(time.Date(2026, 11, 30, 8, 30, 0, 123456789, time.UTC))
	ttl = durationpb.New(-1500*time.Millisecond - 7)
)

func address(city string) *pb.Address {
	return &pb.Address{Street: "1 Main St", City: city, Zip: "12345", Country: "FR"}
}

func scalars() *pb.Scalars {
	return &pb.Scalars{
		Flag: true, I32: math.MinInt32, I64: math.MinInt64, U32: math.MaxUint32, U64: math.MaxUint64,
		S32: -1, S64: math.MinInt64, Fx32: math.MaxUint32, Fx64: math.MaxUint64,
		Sfx32: math.MinInt32, Sfx64: -2, F32: -1.5, F64: math.Pi,
		Text: "héllo, 世界", Data: []byte{0, 1, 0xff}, Color: pb.Color_COLOR_BLUE,
		At: at, Ttl: ttl, Address: address("Paris"),
		BeforeReserved: 18999, AfterReserved: -20000, Last: math.MaxInt64,
	}
}

// optionals sets every field to its zero value: presence must survive.
func optionals() *pb.Optionals {
	return &pb.Optionals{
		Flag: proto.Bool(false), I32: proto.Int32(0), I64: proto.Int64(0), U32: proto.Uint32(0), U64: proto.Uint64(0),
		S32: proto.Int32(0), S64: proto.Int64(0), Fx32: proto.Uint32(0), Fx64: proto.Uint64(0),
		Sfx32: proto.Int32(0), Sfx64: proto.Int64(0), F32: proto.Float32(0), F64: proto.Float64(0),
		Text: proto.String(""), Data: []byte{}, Color: pb.Color_COLOR_RED.Enum(),
		At: timestamppb.New(time.Unix(0, 0)), Ttl: durationpb.New(0),
	}
}

func lists() *pb.Lists {
	colors := []pb.Color{pb.Color_COLOR_BLUE, pb.Color_COLOR_RED, pb.Color_COLOR_GREEN}
	return &pb.Lists{
		Flags: []bool{true, false, true}, I32S: []int32{math.MinInt32, -1, 0, math.MaxInt32}, I64S: []int64{math.MinInt64, 1},
		U32S: []uint32{0, math.MaxUint32}, U64S: []uint64{math.MaxUint64, 1}, S32S: []int32{-1, 1}, S64S: []int64{math.MinInt64, math.MaxInt64},
		Fx32S: []uint32{7, math.MaxUint32}, Fx64S: []uint64{8}, Sfx32S: []int32{-9}, Sfx64S: []int64{-10, 10},
		F32S: []float32{-0.5, float32(math.Inf(1))}, F64S: []float64{math.SmallestNonzeroFloat64, -1e300},
		Texts: []string{"", "a", "é"}, Blobs: [][]byte{{}, {0}, {1, 2}}, Colors: colors,
		Times: []*timestamppb.Timestamp{at, timestamppb.New(time.Unix(-1, 0))}, Durations: []*durationpb.Duration{ttl, durationpb.New(time.Hour)},
		Addresses: []*pb.Address{address("Oslo"), address("Rome")}, Tags: []string{"t"},
		UnpackedI32S: []int32{-3, 3}, UnpackedS64S: []int64{-4}, UnpackedFx32S: []uint32{5}, UnpackedF64S: []float64{6.5},
		UnpackedFlags: []bool{false, true}, UnpackedColors: colors,
	}
}

func maps() *pb.Maps {
	return &pb.Maps{
		ByString: map[string]string{"": "empty", "k": ""}, ByBool: map[bool]int32{true: 1, false: -1},
		ByI32: map[int32]int64{math.MinInt32: math.MinInt64}, ByI64: map[int64]uint32{-1: math.MaxUint32},
		ByU32: map[uint32]uint64{math.MaxUint32: 0}, ByU64: map[uint64]int32{math.MaxUint64: -7},
		ByS32: map[int32]int64{-8: 8}, ByS64: map[int64]uint32{math.MinInt64: 9},
		ByFx32: map[uint32]uint64{10: 11}, ByFx64: map[uint64]int32{12: -13},
		BySfx32: map[int32]int64{-14: 15}, BySfx64: map[int64]float32{-16: 1.25},
		Floats: map[string]float64{"pi": math.Pi}, Flags: map[string]bool{"no": false, "yes": true},
		Blobs: map[string][]byte{"b": {0, 0xff}, "none": {}}, Colors: map[string]pb.Color{"sky": pb.Color_COLOR_BLUE},
		Times: map[int64]*timestamppb.Timestamp{1: at}, Durations: map[string]*durationpb.Duration{"ttl": ttl},
		Addresses: map[string]*pb.Address{"home": address("Lyon")},
	}
}

// grpc-go's generated client calls the yrpc server: every field kind
// round-trips, errors carry their codes, messages and details, metadata
// goes both ways, deadlines and cancellation reach the handler, and a
// request over the server's message limit is refused.
func TestGRPCGoClient(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			e := start(t, tr)
			c := e.client
			t.Run("field kinds", func(t *testing.T) {
				ctx := ctxT(t)
				check := func(name string, want proto.Message, call func() (proto.Message, error)) {
					got, err := call()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
						t.Errorf("%s (-sent +echoed):\n%s", name, diff)
					}
				}
				check("Touch (oneway)", &emptypb.Empty{}, func() (proto.Message, error) { return c.Touch(ctx, &pb.TouchUser{Id: 3, At: at}) })
				check("Echo", scalars(), func() (proto.Message, error) { return c.Echo(ctx, scalars()) })
				check("EchoOptionals", optionals(), func() (proto.Message, error) { return c.EchoOptionals(ctx, optionals()) })
				check("EchoOptionals(empty)", &pb.Optionals{}, func() (proto.Message, error) { return c.EchoOptionals(ctx, &pb.Optionals{}) })
				check("EchoLists", lists(), func() (proto.Message, error) { return c.EchoLists(ctx, lists()) })
				check("EchoMaps", maps(), func() (proto.Message, error) { return c.EchoMaps(ctx, maps()) })
				check("Get", &pb.User{
					Id: 7, Name: "user 7", Emails: []string{"u7@example.org"}, Role: pb.UserRole_USER_ROLE_ADMIN,
					CreatedAt: timestamppb.New(interop.Created()), Labels: map[string]string{"id": "7"},
				}, func() (proto.Message, error) { return c.Get(ctx, &pb.GetUser{Id: 7}) })
				create := &pb.CreateUser{Name: "Ada", Emails: []string{"ada@example.org"}, Role: pb.UserRole_USER_ROLE_OWNER, Address: address("London")}
				check("Create", &pb.User{
					Id: 1, Name: "Ada", Emails: []string{"ada@example.org"}, Role: pb.UserRole_USER_ROLE_OWNER,
					Address: address("London"), CreatedAt: timestamppb.New(interop.Created()),
				}, func() (proto.Message, error) { return c.Create(ctx, create) })
			})
			t.Run("errors", func(t *testing.T) {
				ctx := ctxT(t)
				_, err := c.Get(ctx, &pb.GetUser{Id: 404})
				if st := status.Convert(err); st.Code() != codes.NotFound || st.Message() != "user 404 not found" {
					t.Errorf("Get(404): %v", err)
				}
				_, err = c.Search(ctx, &pb.ListUsers{PageSize: 1})
				if st := status.Convert(err); st.Code() != codes.Unimplemented || st.Message() != "method users.Users/Search is not implemented" {
					t.Errorf("Search: %v", err)
				}
				err = e.conn.Invoke(ctx, "/users.Users/Nope", &pb.GetUser{}, &pb.User{})
				if st := status.Convert(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), `"users.Users/Nope"`) {
					t.Errorf("an unknown method: %v", err)
				}
				// Validate's failure is InvalidArgument with a
				// google.rpc.BadRequest naming the field.
				_, err = c.Create(ctx, &pb.CreateUser{Emails: []string{"a@b"}, Address: address("Nice")})
				st := status.Convert(err)
				var fields []string
				for _, d := range st.Details() {
					if br, ok := d.(*errdetails.BadRequest); ok {
						for _, v := range br.GetFieldViolations() {
							fields = append(fields, v.GetField())
						}
					}
				}
				if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "name") || len(fields) != 1 || !strings.Contains(fields[0], "name") {
					t.Errorf("Create without a name: %v, details %v (fields %q)", err, st.Details(), fields)
				}
			})
			t.Run("metadata", func(t *testing.T) {
				ctx := metadata.AppendToOutgoingContext(ctxT(t), "echo-tenant", "acme", "echo-trace-bin", "\x00\xff\x01", "other", "x")
				var header, trailer metadata.MD
				var p peer.Peer
				if _, err := c.Get(ctx, &pb.GetUser{Id: 1}, grpc.Header(&header), grpc.Trailer(&trailer), grpc.Peer(&p)); err != nil {
					t.Fatal(err)
				}
				if _, isTLS := p.AuthInfo.(credentials.TLSInfo); isTLS != (tr.name == "tls") {
					t.Errorf("the call's transport: %v", p.AuthInfo)
				}
				got := metadata.Join(header, trailer)
				want := map[string][]string{"echo-tenant": {"acme"}, "echo-trace-bin": {"\x00\xff\x01"}, "other": nil}
				for k, v := range want {
					if !cmp.Equal(got[k], v) {
						t.Errorf("response metadata %q = %q, want %q (headers %v, trailers %v)", k, got[k], v, header, trailer)
					}
				}
			})
			t.Run("deadline exceeded", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
				defer cancel()
				if _, err := c.Get(ctx, &pb.GetUser{Id: 999}); status.Code(err) != codes.DeadlineExceeded {
					t.Errorf("Get past its deadline: %v", err)
				}
				// The handler's context ends: by its own deadline or by the
				// client's reset, whichever comes first.
				if err := recv(t, e.users.Ended); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					t.Errorf("the handler's context ended with %v", err)
				}
				recv(t, e.users.Waiting)
			})
			t.Run("cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctxT(t))
				res := make(chan error, 1)
				go func() {
					_, err := c.Get(ctx, &pb.GetUser{Id: 999})
					res <- err
				}()
				recv(t, e.users.Waiting)
				cancel()
				if err := recv(t, res); status.Code(err) != codes.Canceled {
					t.Errorf("canceled Get: %v", err)
				}
				if err := recv(t, e.users.Ended); !errors.Is(err, context.Canceled) {
					t.Errorf("the handler's context ended with %v, want Canceled", err)
				}
			})
			t.Run("large message", func(t *testing.T) {
				ctx := ctxT(t)
				big := &pb.Scalars{Data: make([]byte, 5<<20)} // over the server's 4 MiB
				_, err := c.Echo(ctx, big)
				if st := status.Convert(err); st.Code() != codes.ResourceExhausted {
					t.Errorf("a 5 MiB request: %v, want ResourceExhausted", err)
				}
				if _, err := c.Get(ctx, &pb.GetUser{Id: 2}); err != nil {
					t.Errorf("a call after the refused one: %v", err)
				}
			})
		})
	}
}
