package userrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/codec/codectest"
)

// TestMessages: round trips of thousands of random values, truncations at
// every byte and malformed inputs, for every message of the example.
func TestMessages(t *testing.T) {
	codectest.Suite[userrpc.Address](t, "Address", 1, 1000)
	codectest.Suite[userrpc.CreateUser](t, "CreateUser", 2, 1000)
	codectest.Suite[userrpc.GetUser](t, "GetUser", 3, 1000)
	codectest.Suite[userrpc.ListUsers](t, "ListUsers", 4, 1000)
	codectest.Suite[userrpc.Lists](t, "Lists", 5, 500)
	codectest.Suite[userrpc.Maps](t, "Maps", 6, 500)
	codectest.Suite[userrpc.Node](t, "Node", 7, 500)
	codectest.Suite[userrpc.Optionals](t, "Optionals", 8, 1000)
	codectest.Suite[userrpc.Scalars](t, "Scalars", 9, 1000)
	codectest.Suite[userrpc.TouchUser](t, "TouchUser", 10, 1000)
	codectest.Suite[userrpc.User](t, "User", 11, 1000)
	codectest.Suite[userrpc.UserList](t, "UserList", 12, 300)
}

func FuzzAddress(f *testing.F)    { codectest.Fuzz[userrpc.Address](f, 1) }
func FuzzCreateUser(f *testing.F) { codectest.Fuzz[userrpc.CreateUser](f, 2) }
func FuzzGetUser(f *testing.F)    { codectest.Fuzz[userrpc.GetUser](f, 3) }
func FuzzListUsers(f *testing.F)  { codectest.Fuzz[userrpc.ListUsers](f, 4) }
func FuzzLists(f *testing.F)      { codectest.Fuzz[userrpc.Lists](f, 5) }
func FuzzMaps(f *testing.F)       { codectest.Fuzz[userrpc.Maps](f, 6) }
func FuzzNode(f *testing.F)       { codectest.Fuzz[userrpc.Node](f, 7) }
func FuzzOptionals(f *testing.F)  { codectest.Fuzz[userrpc.Optionals](f, 8) }
func FuzzScalars(f *testing.F)    { codectest.Fuzz[userrpc.Scalars](f, 9) }
func FuzzTouchUser(f *testing.F)  { codectest.Fuzz[userrpc.TouchUser](f, 10) }
func FuzzUser(f *testing.F)       { codectest.Fuzz[userrpc.User](f, 11) }
func FuzzUserList(f *testing.F)   { codectest.Fuzz[userrpc.UserList](f, 12) }

// users is a small in-memory implementation of the service.
type users struct {
	userrpc.UnimplementedUsersServer
	touched chan int64
}

func (u *users) Get(ctx context.Context, req *userrpc.GetUser) (*userrpc.User, error) {
	if req.ID == 404 {
		return nil, rt.Errorf(rt.NotFound, "user %d", req.ID)
	}
	return &userrpc.User{ID: req.ID, Name: "ann", Role: userrpc.UserRoleAdmin, Labels: map[string]string{"team": "rpc"},
		CreatedAt: time.Unix(1700000000, 5).UTC(), SessionTTL: time.Hour}, nil
}

func (u *users) Touch(ctx context.Context, req *userrpc.TouchUser) error {
	u.touched <- req.ID
	return nil
}

func (u *users) Tree(ctx context.Context, req *userrpc.GetUser) (*userrpc.Node, error) {
	leaf := &userrpc.Node{Name: "leaf"}
	return &userrpc.Node{Name: "root", Children: []*userrpc.Node{leaf}, ByName: map[string]*userrpc.Node{"leaf": leaf}}, nil
}

func (u *users) EchoMaps(ctx context.Context, req *userrpc.Maps) (*userrpc.Maps, error) {
	return req, nil
}

// TestService drives the generated client stub and server dispatch through
// codectest.Loopback: encode, MethodIndex, NewRequest, Unmarshal, Validate,
// Handle, encode and decode the response.
func TestService(t *testing.T) {
	var lb codectest.Loopback
	impl := &users{touched: make(chan int64, 1)}
	userrpc.RegisterUsers(&lb, impl)
	cli := userrpc.NewUsersClient(&lb)
	ctx := context.Background()

	u, err := cli.Get(ctx, &userrpc.GetUser{ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := impl.Get(ctx, &userrpc.GetUser{ID: 7})
	if diff := cmp.Diff(want, u); diff != "" {
		t.Fatalf("Get (-want +got):\n%s", diff)
	}
	if _, err := cli.Get(ctx, &userrpc.GetUser{ID: 404}); rt.CodeOf(err) != rt.NotFound || !rt.IsRemote(err) {
		t.Fatalf("Get(404) = %v, want a remote NotFound", err)
	}
	// GetUser.id has Range(1, 2^53): the server validates before the handler.
	calls := lb.Calls()
	if _, err := cli.Get(ctx, &userrpc.GetUser{ID: 0}); rt.CodeOf(err) != rt.InvalidArgument {
		t.Fatalf("Get(0) = %v, want InvalidArgument", err)
	}
	if lb.Calls() != calls {
		t.Fatal("an invalid request reached the handler")
	}
	if _, err := cli.Create(ctx, &userrpc.CreateUser{Name: "x", Emails: []string{"a"}, Address: &userrpc.Address{City: "c", Zip: "12345", Country: "DE"}}); rt.CodeOf(err) != rt.Unimplemented {
		t.Fatalf("Create = %v, want Unimplemented", err)
	}
	if err := cli.Touch(ctx, &userrpc.TouchUser{ID: 3}); err != nil {
		t.Fatal(err)
	}
	if id := <-impl.touched; id != 3 {
		t.Fatalf("Touch delivered id %d", id)
	}
	tree, err := cli.Tree(ctx, &userrpc.GetUser{ID: 1})
	if err != nil || tree.Children[0].Name != "leaf" || tree.ByName["leaf"].Name != "leaf" {
		t.Fatalf("Tree = %+v, %v", tree, err)
	}
	maps := &userrpc.Maps{ByString: map[string]string{"a": "b"}, ByBool: map[bool]int32{true: -1}}
	if got, err := cli.EchoMaps(ctx, maps); err != nil || !cmp.Equal(got, maps) {
		t.Fatalf("EchoMaps = %+v, %v", got, err)
	}
}

func TestServiceDesc(t *testing.T) {
	sd := &userrpc.UsersServiceDesc
	seen := map[uint32]bool{}
	for i, md := range sd.Methods {
		if sd.MethodIndex(md.ID) != i || seen[md.ID] || md.ID == 0 {
			t.Errorf("method %s: ID %#x, MethodIndex %d", md.FullName, md.ID, sd.MethodIndex(md.ID))
		}
		seen[md.ID] = true
	}
	get := sd.Methods[sd.MethodIndex(sd.Methods[0].ID)]
	if get.Name != "Get" || get.Policy.Timeout != time.Second || get.Policy.TryTimeout != 300*time.Millisecond || !get.Policy.Idempotent {
		t.Errorf("Get = %+v", get)
	}
	if key := string(get.HashKey(&userrpc.GetUser{ID: 42}, []byte("k:"))); key != "k:42" {
		t.Errorf("HashKey = %q", key)
	}
	for _, md := range sd.Methods {
		if md.Name == "Guest" {
			got := md.Policy.Mock.Value().(*userrpc.User)
			if got.Name != "guest" || got.ID != 0 {
				t.Errorf("Guest mock = %+v", got)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	a := &userrpc.Address{City: "Berlin", Zip: "1234", Country: "DE"}
	var ve *codec.ValidationError
	if err := a.Validate(); !errors.As(err, &ve) || ve.Field != "zip" {
		t.Fatalf("Validate(bad zip) = %v", err)
	}
	a.Zip = "10115"
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	u := &userrpc.User{ID: 1, Name: "ann", Address: &userrpc.Address{}}
	if err := u.Validate(); !errors.As(err, &ve) || ve.Message != "users.Address" {
		t.Fatalf("Validate(user with a bad address) = %v, want the nested error", err)
	}
}
