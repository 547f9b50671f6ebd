package kitchenrpc_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/gen/internal/testspecs/kitchenrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/codec/codectest"
)

func TestRoundTrip(t *testing.T) {
	codectest.RoundTrip[kitchenrpc.Kitchen](t, 1, 3000)
	codectest.RoundTrip[kitchenrpc.Node](t, 2, 2000)
	codectest.RoundTrip[kitchenrpc.Checked](t, 3, 2000)
	codectest.RoundTrip[kitchenrpc.Empty](t, 4, 10)
}

func TestTruncations(t *testing.T) {
	codectest.Truncations[kitchenrpc.Kitchen](t, 5, 20)
	codectest.Truncations[kitchenrpc.Node](t, 6, 200)
}

func TestMalformed(t *testing.T) {
	codectest.CheckMalformed[kitchenrpc.Kitchen](t)
	codectest.CheckMalformed[kitchenrpc.Node](t)
	codectest.CheckMalformed[kitchenrpc.Empty](t)
}

func FuzzKitchenUnmarshal(f *testing.F) {
	for _, s := range codectest.Seeds[kitchenrpc.Kitchen](7, 20) {
		f.Add(s)
	}
	f.Fuzz(codectest.CheckDecode[kitchenrpc.Kitchen])
}

func FuzzNodeUnmarshal(f *testing.F) {
	for _, s := range codectest.Seeds[kitchenrpc.Node](8, 20) {
		f.Add(s)
	}
	f.Fuzz(codectest.CheckDecode[kitchenrpc.Node])
}

// TestWire pins encodings to bytes computed by hand from the protobuf
// encoding rules.
func TestWire(t *testing.T) {
	zero := int32(0)
	tests := []struct {
		name string
		in   *kitchenrpc.Kitchen
		want []byte
	}{
		{"empty", &kitchenrpc.Kitchen{}, nil},
		{"negative int32 is 10 bytes", &kitchenrpc.Kitchen{AnInt32: -1},
			[]byte{0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"zigzag", &kitchenrpc.Kitchen{ASint32: -1, ASint64: 1}, []byte{0x30, 0x01, 0x38, 0x02}},
		{"fixed", &kitchenrpc.Kitchen{AFixed32: 1, ASfixed64: -2},
			[]byte{0x45, 1, 0, 0, 0, 0x59, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"negative zero is written", &kitchenrpc.Kitchen{ADouble: math.Copysign(0, -1)},
			[]byte{0x69, 0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"optional zero is written", &kitchenrpc.Kitchen{OptInt32: &zero}, []byte{0xf8, 0x01, 0x00}},
		{"packed", &kitchenrpc.Kitchen{Int32s: []int32{1, 300}}, []byte{0x9a, 0x03, 0x03, 0x01, 0xac, 0x02}},
		{"unpacked", &kitchenrpc.Kitchen{UnpackedInt32s: []int32{1, 2}}, []byte{0xb8, 0x04, 0x01, 0xb8, 0x04, 0x02}},
		{"time", &kitchenrpc.Kitchen{CreatedAt: time.Unix(1, 2)}, []byte{0x8a, 0x01, 0x04, 0x08, 0x01, 0x10, 0x02}},
		{"epoch time is present", &kitchenrpc.Kitchen{CreatedAt: time.Unix(0, 0)}, []byte{0x8a, 0x01, 0x00}},
		{"duration", &kitchenrpc.Kitchen{TTL: -1500 * time.Millisecond},
			[]byte{0x92, 0x01, 0x16, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
				0x10, 0x80, 0xb6, 0xca, 0x91, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"map", &kitchenrpc.Kitchen{Labels: map[string]string{"a": "b"}},
			[]byte{0x82, 0x05, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'b'}},
		{"map zero key and value are written", &kitchenrpc.Kitchen{Counts: map[int32]int64{0: 0}},
			[]byte{0xba, 0x05, 0x07, 0x0d, 0, 0, 0, 0, 0x10, 0x00}},
		{"largest field number", &kitchenrpc.Kitchen{Farthest: "x"},
			[]byte{0xfa, 0xff, 0xff, 0xff, 0x0f, 0x01, 'x'}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.MarshalAppend(nil)
			if !bytes.Equal(got, tc.want) {
				t.Errorf("MarshalAppend = % x\nwant            % x", got, tc.want)
			}
			var back kitchenrpc.Kitchen
			if err := back.Unmarshal(got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.in, &back); diff != "" {
				t.Errorf("round trip (-in +out):\n%s", diff)
			}
		})
	}
}

func TestDecodeOnlyForms(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want *kitchenrpc.Kitchen
	}{
		{"unpacked input of a packed field", []byte{0x98, 0x03, 0x01, 0x98, 0x03, 0x02},
			&kitchenrpc.Kitchen{Int32s: []int32{1, 2}}},
		{"packed input of an unpacked field", []byte{0xba, 0x04, 0x02, 0x01, 0x02},
			&kitchenrpc.Kitchen{UnpackedInt32s: []int32{1, 2}}},
		{"last scalar wins", []byte{0x10, 0x01, 0x10, 0x02}, &kitchenrpc.Kitchen{AnInt32: 2}},
		{"messages merge", []byte{0x9a, 0x01, 0x02, 0x08, 0x05, 0x9a, 0x01, 0x03, 0x12, 0x01, 'n'},
			&kitchenrpc.Kitchen{Node: &kitchenrpc.Node{ID: 5, Name: "n"}}},
		{"map entry without key or value", []byte{0x82, 0x05, 0x00}, &kitchenrpc.Kitchen{Labels: map[string]string{"": ""}}},
		{"map message value absent", []byte{0x8a, 0x05, 0x02, 0x08, 0x07},
			&kitchenrpc.Kitchen{NodesByID: map[int64]*kitchenrpc.Node{7: {}}}},
		{"wrong wire type is an unknown field", []byte{0x15, 1, 2, 3, 4}, &kitchenrpc.Kitchen{}},
		{"unknown fields and groups", []byte{0xa0, 0x06, 0x01, 0xab, 0x06, 0x08, 0x01, 0xac, 0x06, 0x10, 0x03},
			&kitchenrpc.Kitchen{AnInt32: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got kitchenrpc.Kitchen
			if err := got.Unmarshal(tc.in); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, &got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		field string
		err   error
	}{
		{"packed fixed32 of 3 bytes", []byte{0xca, 0x03, 0x03, 1, 2, 3}, "fixed32s", codec.ErrLength},
		{"duration out of range", []byte{0x92, 0x01, 0x06, 0x08, 0xff, 0xff, 0xff, 0xff, 0x7f}, "ttl", codec.ErrRange},
		{"truncated nested message", []byte{0x9a, 0x01, 0x02, 0x08, 0x80}, "id", codec.ErrTruncated},
		{"bad packed varint", []byte{0x9a, 0x03, 0x01, 0x80}, "int32s", codec.ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := new(kitchenrpc.Kitchen).Unmarshal(tc.in)
			var ce *codec.Error
			if !errors.As(err, &ce) || !errors.Is(err, tc.err) || ce.Field != tc.field {
				t.Fatalf("Unmarshal = %v, want a %v error in field %q", err, tc.err, tc.field)
			}
		})
	}
}

func TestDepthLimit(t *testing.T) {
	// 10001 nested "next" messages, built inside out.
	b := []byte{}
	for range codec.MaxDepth + 1 {
		b = append(codec.AppendVarint([]byte{0x22}, uint64(len(b))), b...)
	}
	if err := new(kitchenrpc.Node).Unmarshal(b); !errors.Is(err, codec.ErrDepth) {
		t.Fatalf("Unmarshal of deep nesting = %v, want ErrDepth", err)
	}
}

func TestUnmarshalDoesNotRetainInput(t *testing.T) {
	in := &kitchenrpc.Kitchen{AString: "hello", SomeBytes: []byte("bytes"), Strings: []string{"x"},
		Labels: map[string]string{"k": "v"}}
	b := in.MarshalAppend(nil)
	var out kitchenrpc.Kitchen
	if err := out.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if diff := cmp.Diff(in, &out); diff != "" {
		t.Fatalf("decoded message changed with its input (-want +got):\n%s", diff)
	}
}

func TestNilAndEmpty(t *testing.T) {
	var nilMsg *kitchenrpc.Kitchen
	if nilMsg.Size() != 0 || len(nilMsg.MarshalAppend(nil)) != 0 || nilMsg.Validate() != nil {
		t.Fatal("a nil message must encode as empty and validate")
	}
	nilLists := &kitchenrpc.Kitchen{}
	emptyLists := &kitchenrpc.Kitchen{Int32s: []int32{}, Strings: []string{}, Labels: map[string]string{}, SomeBytes: []byte{}}
	if !bytes.Equal(nilLists.MarshalAppend(nil), emptyLists.MarshalAppend(nil)) {
		t.Fatal("empty and nil lists, maps and bytes must encode the same")
	}
	// Optional bytes: nil is absent, empty is present.
	present := &kitchenrpc.Kitchen{OptBytes: []byte{}}
	b := present.MarshalAppend(nil)
	var out kitchenrpc.Kitchen
	if err := out.Unmarshal(b); err != nil || out.OptBytes == nil {
		t.Fatalf("present empty optional bytes decoded as %v (err %v)", out.OptBytes, err)
	}
}

func TestValidate(t *testing.T) {
	valid := func() *kitchenrpc.Checked {
		return &kitchenrpc.Checked{Name: "日本", Code: "ab-12", Age: -1000, Tags: []string{"#a"},
			Data: []byte{1}, Attrs: map[string]string{"k": ""}, Node: &kitchenrpc.Node{},
			When: time.Unix(5, 0), Serial: math.MaxUint64, Offset: math.MaxInt64}
	}
	big := 1000.5
	tests := []struct {
		name   string
		change func(c *kitchenrpc.Checked)
		field  string
	}{
		{"valid", func(*kitchenrpc.Checked) {}, ""},
		{"empty name", func(c *kitchenrpc.Checked) { c.Name = "" }, "name"},
		{"short name in runes", func(c *kitchenrpc.Checked) { c.Name = "日" }, "name"},
		{"long name in runes", func(c *kitchenrpc.Checked) { c.Name = "日本語日本語日本語" }, "name"},
		{"code mismatch", func(c *kitchenrpc.Checked) { c.Code = "AB-12" }, "code"},
		{"age below", func(c *kitchenrpc.Checked) { c.Age = -1001 }, "age"},
		{"age above", func(c *kitchenrpc.Checked) { c.Age = 1001 }, "age"},
		{"score above", func(c *kitchenrpc.Checked) { c.Score = &big }, "score"},
		{"too many tags", func(c *kitchenrpc.Checked) { c.Tags = []string{"#", "#", "#", "#"} }, "tags"},
		{"tag mismatch", func(c *kitchenrpc.Checked) { c.Tags = []string{"#a", "b"} }, "tags"},
		{"data too long", func(c *kitchenrpc.Checked) { c.Data = []byte{1, 2, 3, 4, 5} }, "data"},
		{"no attrs", func(c *kitchenrpc.Checked) { c.Attrs = nil }, "attrs"},
		{"no node", func(c *kitchenrpc.Checked) { c.Node = nil }, "node"},
		{"no time", func(c *kitchenrpc.Checked) { c.When = time.Time{} }, "when"},
		// Range(0, math.MaxUint64) and Range(math.MinInt64, math.MaxInt64):
		// the kinds' limits are valid values.
		{"least offset", func(c *kitchenrpc.Checked) { c.Offset = math.MinInt64 }, ""},
		{"least serial", func(c *kitchenrpc.Checked) { c.Serial = 0 }, ""},
		{"invalid inner", func(c *kitchenrpc.Checked) { c.Inner = &kitchenrpc.Checked{} }, "name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *codec.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || ve.Message != "kitchen.Checked" {
				t.Fatalf("Validate = %v, want an error naming kitchen.Checked.%s", err, tc.field)
			}
		})
	}
}

func TestEnum(t *testing.T) {
	if s := kitchenrpc.ColorBlue.String(); s != "blue" {
		t.Errorf("ColorBlue.String() = %q", s)
	}
	if s := kitchenrpc.Color(7).String(); s != "Color(7)" {
		t.Errorf("Color(7).String() = %q", s)
	}
	if c, err := kitchenrpc.ParseColor("green"); err != nil || c != kitchenrpc.ColorGreen {
		t.Errorf("ParseColor(green) = %v, %v", c, err)
	}
	if _, err := kitchenrpc.ParseColor("pink"); err == nil {
		t.Error("ParseColor(pink) succeeded")
	}
	// Unknown and negative values survive a round trip.
	in := &kitchenrpc.Kitchen{Color: kitchenrpc.Color(99), Colors: []kitchenrpc.Color{kitchenrpc.ColorBlue, 12345}}
	var out kitchenrpc.Kitchen
	if err := out.Unmarshal(in.MarshalAppend(nil)); err != nil || !cmp.Equal(in, &out) {
		t.Fatalf("enum round trip: %v, %+v", err, out)
	}
}

type kitchenImpl struct {
	kitchenrpc.UnimplementedKitchenServiceServer
	touched chan *kitchenrpc.Node
}

func (k *kitchenImpl) Get(ctx context.Context, req *kitchenrpc.Node) (*kitchenrpc.Node, error) {
	if req.ID < 0 {
		return nil, rt.Errorf(rt.NotFound, "no node %d", req.ID)
	}
	return &kitchenrpc.Node{ID: req.ID, Name: "node-" + req.Name, Children: []*kitchenrpc.Node{{ID: 1}}}, nil
}

func (k *kitchenImpl) Check(ctx context.Context, req *kitchenrpc.Checked) (*kitchenrpc.Checked, error) {
	return nil, nil // a bug: the stub must report it
}

func (k *kitchenImpl) Touch(ctx context.Context, req *kitchenrpc.Node) error {
	k.touched <- req
	return nil
}

func TestServiceLoopback(t *testing.T) {
	var lb codectest.Loopback
	impl := &kitchenImpl{touched: make(chan *kitchenrpc.Node, 1)}
	kitchenrpc.RegisterKitchenService(&lb, impl)
	cli := kitchenrpc.NewKitchenServiceClient(&lb)
	ctx := context.Background()

	got, err := cli.Get(ctx, &kitchenrpc.Node{ID: 42, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (&kitchenrpc.Node{ID: 42, Name: "node-x", Children: []*kitchenrpc.Node{{ID: 1}}}); !cmp.Equal(got, want) {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	if err := cli.GetInto(ctx, &kitchenrpc.Node{ID: 42}, nil); rt.CodeOf(err) != rt.InvalidArgument || rt.IsRemote(err) {
		t.Fatalf("GetInto(nil response) error = %v, want a local InvalidArgument", err)
	}
	if _, err := cli.Get(ctx, &kitchenrpc.Node{ID: -1}); rt.CodeOf(err) != rt.NotFound || !rt.IsRemote(err) {
		t.Fatalf("Get(-1) error = %v, want a remote NotFound", err)
	}
	if _, err := cli.Put(ctx, &kitchenrpc.Kitchen{}); rt.CodeOf(err) != rt.Unimplemented {
		t.Fatalf("Put error = %v, want Unimplemented", err)
	}
	if _, err := cli.Check(ctx, &kitchenrpc.Checked{}); rt.CodeOf(err) != rt.InvalidArgument {
		t.Fatalf("Check(invalid) error = %v, want InvalidArgument", err)
	}
	valid := &kitchenrpc.Checked{Name: "ok", Code: "a-1", Attrs: map[string]string{"a": "b"}, Node: &kitchenrpc.Node{}, When: time.Unix(1, 0)}
	if _, err := cli.Check(ctx, valid); rt.CodeOf(err) != rt.Internal {
		t.Fatalf("Check(nil response) error = %v, want Internal", err)
	}
	if err := cli.Touch(ctx, &kitchenrpc.Node{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if n := <-impl.touched; n.ID != 9 {
		t.Fatalf("Touch delivered %+v", n)
	}
}

func TestServiceDesc(t *testing.T) {
	sd := &kitchenrpc.KitchenServiceServiceDesc
	if sd.Name != "kitchen.KitchenService" || sd.Group != "HK" || sd.Version != "1.2.0" {
		t.Fatalf("desc identity = %q %q %q", sd.Name, sd.Group, sd.Version)
	}
	for i, md := range sd.Methods {
		if got := sd.MethodIndex(md.ID); got != i {
			t.Errorf("MethodIndex(%s) = %d, want %d", md.FullName, got, i)
		}
		if md.FullName != sd.Name+"/"+md.Name || md.ID == 0 {
			t.Errorf("method %d: FullName %q ID %#x", i, md.FullName, md.ID)
		}
		if md.Oneway != (md.NewResponse == nil) {
			t.Errorf("%s: Oneway %v but NewResponse %v", md.Name, md.Oneway, md.NewResponse != nil)
		}
	}
	if sd.MethodIndex(0) != -1 || sd.MethodIndex(12345) != -1 {
		t.Error("MethodIndex of an unknown ID must be -1")
	}
	get := sd.Methods[0]
	if get.Policy.Timeout != 300*time.Millisecond || get.Policy.TryTimeout != 100*time.Millisecond || !get.Policy.Idempotent || get.Policy.Retry.Tries != 3 {
		t.Errorf("Get policy = %+v", get.Policy)
	}
	if key := get.HashKey(&kitchenrpc.Node{ID: -17}, nil); string(key) != "-17" {
		t.Errorf("Get hash key = %q", key)
	}
	// A nil request is sent as an empty one, and hashes as one.
	for _, req := range []rt.Message{(*kitchenrpc.Node)(nil), nil} {
		if key := get.HashKey(req, nil); string(key) != "0" {
			t.Errorf("Get hash key of %#v = %q, want that of an empty request, %q", req, key, "0")
		}
	}
	dst := make([]byte, 0, 32)
	var req rt.Message = &kitchenrpc.Node{ID: 123456}
	if n := testing.AllocsPerRun(100, func() { dst = get.HashKey(req, dst[:0]) }); n != 0 {
		t.Errorf("HashKey allocates %v times", n)
	}
	fork := sd.Methods[3].Policy
	if fork.FaultMode != rt.FaultForking || fork.Forks != 3 || fork.Mock.Action != rt.MockReturnValue {
		t.Errorf("Fork policy = %+v", fork)
	}
	mock := fork.Mock.Value().(*kitchenrpc.Kitchen)
	if mock.AString != "mocked" || mock.Color != kitchenrpc.ColorBlue || *mock.OptColor != kitchenrpc.ColorGreen ||
		mock.NodesByID[-1].Name != "neg" || mock.TTL != 1500*time.Millisecond || !mock.CreatedAt.Equal(time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)) {
		t.Errorf("Fork mock value = %+v", mock)
	}
	if fork.Mock.Value() == fork.Mock.Value() {
		t.Error("the mock value must be a new message per call")
	}
	check := sd.Methods[2].Policy.Mock
	if check.Mode != rt.MockForce || check.Action != rt.MockFail || check.Code != rt.Unavailable {
		t.Errorf("Check mock = %+v", check)
	}
	if sd.Policy.RateLimit.Rate != 300 || sd.Policy.Breaker.OpenFor != 5*time.Second || sd.Policy.Balance != "consistent_hash" {
		t.Errorf("service policy = %+v", sd.Policy)
	}
}

// TestFileDescriptor checks the embedded descriptor: every service
// descriptor shares it, the accessor returns copies of it, and it is the
// FileDescriptorProto of kitchen.proto (gen/proto's tests compare it with
// protoc's, byte for byte).
func TestFileDescriptor(t *testing.T) {
	fd := kitchenrpc.FileDescriptor()
	if want := "\n\x0dkitchen.proto\x12\x07kitchen"; !strings.HasPrefix(string(fd), want) || !strings.HasSuffix(string(fd), "b\x06proto3") {
		t.Fatalf("FileDescriptor() = %q..., want the descriptor of kitchen.proto", fd[:min(len(fd), 32)])
	}
	for _, sd := range []*rt.ServiceDesc{&kitchenrpc.KitchenServiceServiceDesc, &kitchenrpc.PlainServiceDesc} {
		if !bytes.Equal(sd.FileDescriptor, fd) {
			t.Errorf("%s: FileDescriptor differs from FileDescriptor()", sd.Name)
		}
		for _, md := range sd.Methods {
			if want := string([]byte{'\n', byte(len(md.Name))}) + md.Name; !strings.Contains(string(fd), want) {
				t.Errorf("the descriptor lacks method %s", md.FullName)
			}
		}
	}
	fd[0] = 'x'
	if kitchenrpc.FileDescriptor()[0] == 'x' {
		t.Error("FileDescriptor returns the shared slice, not a copy")
	}
}

func TestMarshalAllocs(t *testing.T) {
	in := &kitchenrpc.Kitchen{AString: "abc", Int32s: []int32{1, 2, 3}, Labels: map[string]string{"a": "b"},
		Node: &kitchenrpc.Node{Name: "n", Children: []*kitchenrpc.Node{{ID: 1}}}}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = in.MarshalAppend(buf[:0]) }); n != 0 {
		t.Errorf("MarshalAppend into a big enough buffer allocates %v times", n)
	}
}
