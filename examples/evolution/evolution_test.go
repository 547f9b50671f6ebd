// Package evolution_test makes two versions of one schema talk to each
// other: v1/schema and v2/schema, generated into v1/catalogrpc and
// v2/catalogrpc (committed; gen's golden test fails when regenerating
// them changes anything). Each version's client calls the other's server
// over the runtime, and the tests state what each side sees.
package evolution_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	v1 "github.com/yrpc/yrpc/examples/evolution/v1/catalogrpc"
	v2 "github.com/yrpc/yrpc/examples/evolution/v2/catalogrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/memnet"
)

// server1 is a v1 provider: it keeps what it received and answers with a
// v1 Item that sets every v1 field.
type server1 struct {
	v1.UnimplementedCatalogServer
	gotGet *v1.GetItem
	gotPut *v1.Item
}

var item1 = &v1.Item{ID: 7, Name: "lamp", PriceCents: 1999, LegacySku: "L-7", Status: v1.ItemStatusRetired}

func (s *server1) Get(_ context.Context, req *v1.GetItem) (*v1.Item, error) {
	s.gotGet = req
	return item1, nil
}

func (s *server1) Put(_ context.Context, req *v1.Item) (*v1.Item, error) {
	s.gotPut = req
	return req, nil // what was stored: the request as this server decoded it
}

// server2 is a v2 provider: it keeps what it received and answers with a
// v2 Product that sets every v2 field.
type server2 struct {
	v2.UnimplementedCatalogServer
	gotGet *v2.GetItem
	gotPut *v2.Product
}

func stock(n uint32) *uint32 { return &n }

var product2 = &v2.Product{ID: 7, Title: "lamp", PriceCents: 1999, Status: v2.ItemStatusDiscontinued,
	Tags: []string{"light", "desk"}, Stock: stock(3)}

func (s *server2) Get(_ context.Context, req *v2.GetItem) (*v2.Product, error) {
	s.gotGet = req
	return product2, nil
}

func (s *server2) Put(_ context.Context, req *v2.Product) (*v2.Product, error) {
	s.gotPut = req
	return req, nil
}

// serve starts one server on n at addr, with register adding its service,
// and returns an rt.Client of it.
func serve(t *testing.T, n *memnet.Network, addr string, register func(*rt.Server)) *rt.Client {
	t.Helper()
	lis, err := n.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer()
	register(srv)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithDialer(n.Dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.Close()
		srv.Close()
		<-done
	})
	return cli
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The versions share the service's identity: its name and method IDs come
// from schema.Package("catalog") and the service and method names, never
// from message names, so renaming Item to Product changes nothing on the
// wire (with or without schema.ProtoName).
func TestSameIdentity(t *testing.T) {
	d1, d2 := &v1.CatalogServiceDesc, &v2.CatalogServiceDesc
	if d1.Name != "catalog.Catalog" || d2.Name != d1.Name {
		t.Fatalf("service names %q and %q, want catalog.Catalog twice", d1.Name, d2.Name)
	}
	if len(d1.Methods) != len(d2.Methods) {
		t.Fatalf("%d and %d methods", len(d1.Methods), len(d2.Methods))
	}
	for i := range d1.Methods {
		m1, m2 := &d1.Methods[i], &d2.Methods[i]
		if m1.FullName != m2.FullName || m1.ID != m2.ID {
			t.Errorf("method %d: v1 %s %#x, v2 %s %#x", i, m1.FullName, m1.ID, m2.FullName, m2.ID)
		}
	}
}

// What descriptor-based tools see (gRPC server reflection serves these
// descriptors; google.protobuf.Any type URLs and code generated from
// `yrpcc proto` use the same names): v2 renamed its Go type Item to Product
// but kept the protobuf name with schema.ProtoName("Item"), so both
// versions declare the messages catalog.Item and catalog.GetItem and the
// same method signatures; only their fields differ. The Go name Product
// appears nowhere in v2's descriptor.
func TestProtobufNames(t *testing.T) {
	want := descSummary{
		Messages: []string{"Item", "GetItem"},
		Methods:  []string{"Get(.catalog.GetItem) .catalog.Item", "Put(.catalog.Item) .catalog.Item"},
	}
	for _, v := range []struct {
		name string
		desc []byte
	}{{"v1", v1.FileDescriptor()}, {"v2", v2.FileDescriptor()}} {
		if got := summarize(t, v.desc); !cmp.Equal(got, want) {
			t.Errorf("%s's descriptor declares %+v, want %+v", v.name, got, want)
		}
	}
	if d := v2.FileDescriptor(); bytes.Contains(d, []byte("Product")) {
		t.Errorf("v2's descriptor names its Go type Product: %q", d)
	}
	if !bytes.Equal(v2.CatalogServiceDesc.FileDescriptor, v2.FileDescriptor()) {
		t.Error("v2's ServiceDesc (what reflection serves) carries another descriptor")
	}
}

// descSummary is what a FileDescriptorProto declares: its messages and
// its service's methods as "Name(input) output".
type descSummary struct{ Messages, Methods []string }

// summarize decodes the parts of a FileDescriptorProto that name types:
// message_type (4) and service (6) with their methods (2).
func summarize(t *testing.T, file []byte) descSummary {
	t.Helper()
	var s descSummary
	for _, m := range lenFields(t, file, 4) {
		s.Messages = append(s.Messages, str(t, m, 1))
	}
	for _, svc := range lenFields(t, file, 6) {
		for _, m := range lenFields(t, svc, 2) {
			s.Methods = append(s.Methods, str(t, m, 1)+"("+str(t, m, 2)+") "+str(t, m, 3))
		}
	}
	return s
}

// str returns the string field num of the protobuf message b.
func str(t *testing.T, b []byte, num int32) string {
	t.Helper()
	if vs := lenFields(t, b, num); len(vs) == 1 {
		return string(vs[0])
	}
	t.Fatalf("no single field %d in % x", num, b)
	return ""
}

// lenFields returns the length-delimited fields numbered num of the
// protobuf message b, in order.
func lenFields(t *testing.T, b []byte, num int32) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		tag, n := codec.ConsumeVarint(b)
		if n < 0 {
			t.Fatalf("bad tag in % x", b)
		}
		b = b[n:]
		if tag == codec.Tag(num, codec.BytesType) {
			v, m := codec.ConsumeBytes(b)
			if m < 0 {
				t.Fatalf("bad field %d in % x", num, b)
			}
			out, b = append(out, v), b[m:]
			continue
		}
		m := codec.Skip(b, tag)
		if m < 0 {
			t.Fatalf("bad field (tag %#x) in % x", tag, b)
		}
		b = b[m:]
	}
	return out
}

// An old client calling a new server.
func TestV1ClientV2Server(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	impl := &server2{}
	cli := v1.NewCatalogClient(serve(t, memnet.New(), "v2:1", func(s *rt.Server) { v2.RegisterCatalog(s, impl) }))
	ctx := ctxT(t)

	// v1 Get → v2 server. The server sees with_stock unset (false): an old
	// client cannot ask for the stock.
	got, err := cli.Get(ctx, &v1.GetItem{ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	if want := (&v2.GetItem{ID: 7}); !cmp.Equal(impl.gotGet, want) {
		t.Errorf("v2 server got %+v, want %+v", impl.gotGet, want)
	}
	// The v1 client sees the fields both versions have (title arrives as
	// name: same number), the new enum value as a number its code has no
	// name for, legacy_sku empty (v2 never sends 4), and nothing of tags
	// and stock: unknown fields are skipped.
	want := &v1.Item{ID: 7, Name: "lamp", PriceCents: 1999, Status: v1.ItemStatus(2)}
	if !cmp.Equal(got, want) {
		t.Errorf("v1 client got %+v, want %+v", got, want)
	}
	if s := got.Status.String(); s != "ItemStatus(2)" {
		t.Errorf("v1 prints the unknown status as %q, want ItemStatus(2)", s)
	}

	// v1 Put → v2 server. The v2 server skips legacy_sku (number 4, now
	// reserved), reads name as title, and has tags empty and stock unset:
	// the nil pointer says "not sent", not zero.
	put := &v1.Item{ID: 8, Name: "desk", PriceCents: 12000, LegacySku: "D-8", Status: v1.ItemStatusRetired}
	echo, err := cli.Put(ctx, put)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&v2.Product{ID: 8, Title: "desk", PriceCents: 12000, Status: v2.ItemStatusRetired}); !cmp.Equal(impl.gotPut, want) {
		t.Errorf("v2 server got %+v, want %+v", impl.gotPut, want)
	}
	// The echo lost legacy_sku: a server keeps no field it does not know,
	// so a round trip through a newer peer drops fields it removed.
	if want := (&v1.Item{ID: 8, Name: "desk", PriceCents: 12000, Status: v1.ItemStatusRetired}); !cmp.Equal(echo, want) {
		t.Errorf("v1 client got back %+v, want %+v", echo, want)
	}

	// v2 limits title to 100 characters; v1 knows no limit on name. The
	// v1 client's long name reaches the v2 server, whose validation
	// refuses it before the handler: the v1 client gets InvalidArgument
	// naming the message by its protobuf name catalog.Item, the name v1
	// knows too (not v2's Go name Product), and the field by v2's name.
	impl.gotPut = nil
	_, err = cli.Put(ctx, &v1.Item{ID: 9, Name: strings.Repeat("x", 101)})
	if rt.CodeOf(err) != rt.InvalidArgument || !rt.IsRemote(err) || !strings.Contains(err.Error(), "catalog.Item.title") {
		t.Errorf("v1 Put of a 101-character name = %v, want a remote InvalidArgument naming catalog.Item.title", err)
	}
	if impl.gotPut != nil {
		t.Errorf("the v2 handler ran with %+v", impl.gotPut)
	}
}

// A new client calling an old server.
func TestV2ClientV1Server(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	impl := &server1{}
	cli := v2.NewCatalogClient(serve(t, memnet.New(), "v1:1", func(s *rt.Server) { v1.RegisterCatalog(s, impl) }))
	ctx := ctxT(t)

	// v2 Get → v1 server: with_stock (2) is skipped; the v1 server sees
	// the id alone.
	got, err := cli.Get(ctx, &v2.GetItem{ID: 7, WithStock: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (&v1.GetItem{ID: 7}); !cmp.Equal(impl.gotGet, want) {
		t.Errorf("v1 server got %+v, want %+v", impl.gotGet, want)
	}
	// The v2 client skips legacy_sku (reserved 4), reads name as title, and
	// sees no tags and stock unset (nil): it can tell "an old provider did
	// not say" from "zero in stock".
	want := &v2.Product{ID: 7, Title: "lamp", PriceCents: 1999, Status: v2.ItemStatusRetired}
	if !cmp.Equal(got, want) {
		t.Errorf("v2 client got %+v, want %+v", got, want)
	}
	if got.Stock != nil {
		t.Errorf("stock = %d from a v1 server, want unset", *got.Stock)
	}

	// v2 Put → v1 server: tags and stock are skipped; the new enum value
	// reaches the v1 server as a number it has no name for, passes its
	// validation and comes back unchanged.
	echo, err := cli.Put(ctx, product2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&v1.Item{ID: 7, Name: "lamp", PriceCents: 1999, Status: v1.ItemStatus(2)}); !cmp.Equal(impl.gotPut, want) {
		t.Errorf("v1 server got %+v, want %+v", impl.gotPut, want)
	}
	if want := (&v2.Product{ID: 7, Title: "lamp", PriceCents: 1999, Status: v2.ItemStatusDiscontinued}); !cmp.Equal(echo, want) {
		t.Errorf("v2 client got back %+v, want %+v (tags and stock lost in the v1 hop)", echo, want)
	}

	// v2's limit of 100 characters on title holds only where a v2 server
	// runs: servers validate what they receive and clients send without
	// validating, so a v1 server stores a 101-character title from a v2
	// client and the v2 client gets it back.
	long := &v2.Product{ID: 9, Title: strings.Repeat("x", 101)}
	if err := long.Validate(); err == nil {
		t.Fatal("v2 accepts a 101-character title")
	}
	echo, err = cli.Put(ctx, long)
	if err != nil || echo.Title != long.Title || impl.gotPut.Name != long.Title {
		t.Errorf("v2 Put of a 101-character title to v1 = %v, %v; the v1 server got %+v", echo, err, impl.gotPut)
	}
}
