package users_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
)

// Search and List answer with one user named by the query; the schema
// makes Search forking and List hedged, so their answers reach the caller
// through a race of attempts.
func (u *users) Search(ctx context.Context, req *userrpc.ListUsers) (*userrpc.UserList, error) {
	return &userrpc.UserList{Users: []*userrpc.User{{ID: 1, Name: req.Query}}, NextPageToken: "next"}, nil
}

func (u *users) List(ctx context.Context, req *userrpc.ListUsers) (*userrpc.UserList, error) {
	return u.Search(ctx, req)
}

// lastResponse is what a client interceptor saw of the last call's
// response after the call below it returned.
type lastResponse struct {
	resp rt.Message
	user userrpc.User
}

func (l *lastResponse) intercept(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
	err := next(ctx, info, req, resp)
	l.resp = resp
	if u, ok := resp.(*userrpc.User); ok {
		l.user = *u
	}
	return err
}

// stale is what the caller's response holds before each call: every field
// that an answer may leave unset is set, so that a response that is not
// reset shows.
func stale() userrpc.User {
	return userrpc.User{ID: 99, Name: "stale", Emails: []string{"old@example.com"}, Role: userrpc.UserRoleAdmin,
		Address: &userrpc.Address{City: "old"}, Labels: map[string]string{"old": "yes"}}
}

// TestIntoOverTCP calls the XxxInto methods of the generated client with
// one response message, reused call after call, through every way a unary
// answer comes back: a handler's answer, a handler's error, a forced mock
// that fails, on-failure mocks that return a value or an empty message, a
// failsafe method, and a race of forked or hedged attempts. An interceptor
// sees the caller's message, filled, after the call below it.
func TestIntoOverTCP(t *testing.T) {
	var last lastResponse
	c, _ := startWith(t, rt.WithClientInterceptors(last.intercept))
	ctx := ctxT(t)
	resp := new(userrpc.User)
	for _, tc := range []struct {
		name string
		call func(*rt.MD) error
		want *userrpc.User // nil: the call fails
		code rt.Code       // of the failure
		mock string        // the answer's MDMock
	}{
		{name: "answer", call: func(md *rt.MD) error { return c.GetInto(ctx, &userrpc.GetUser{ID: 7}, resp, rt.ResponseMetadata(md)) },
			want: &userrpc.User{ID: 7, Name: "user-h", Role: userrpc.UserRoleAdmin}},
		{name: "handler error", call: func(md *rt.MD) error { return c.GetInto(ctx, &userrpc.GetUser{ID: 404}, resp, rt.ResponseMetadata(md)) },
			code: rt.NotFound},
		{name: "invalid request", call: func(md *rt.MD) error { return c.GetInto(ctx, &userrpc.GetUser{ID: 0}, resp, rt.ResponseMetadata(md)) },
			code: rt.InvalidArgument},
		{name: "forced mock fails", call: func(md *rt.MD) error {
			return c.DeleteInto(ctx, &userrpc.GetUser{ID: 1}, resp, rt.ResponseMetadata(md))
		},
			code: rt.Unavailable, mock: "forced"},
		{name: "fallback mock value", call: func(md *rt.MD) error { return c.GuestInto(ctx, &userrpc.GetUser{ID: 1}, resp, rt.ResponseMetadata(md)) },
			want: &userrpc.User{Name: "guest"}, mock: "fallback"},
		{name: "fallback mock empty", call: func(md *rt.MD) error {
			return c.CreateInto(ctx, &userrpc.CreateUser{Name: "x", Emails: []string{"x@y"}, Address: &userrpc.Address{City: "c"}}, resp, rt.ResponseMetadata(md))
		}, want: &userrpc.User{}, mock: "fallback"},
		{name: "failsafe", call: func(md *rt.MD) error {
			return c.AuditInto(ctx, &userrpc.TouchUser{ID: 1}, resp, rt.ResponseMetadata(md))
		},
			want: &userrpc.User{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*resp = stale()
			last = lastResponse{}
			var md rt.MD
			err := tc.call(&md)
			switch {
			case tc.want == nil && rt.CodeOf(err) != tc.code:
				t.Fatalf("err = %v, want code %v", err, tc.code)
			case tc.want != nil && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != nil && !cmp.Equal(resp, tc.want):
				t.Errorf("the caller's response (-got +want):\n%s", cmp.Diff(resp, tc.want))
			}
			if got := md.Get(rt.MDMock); got != tc.mock {
				t.Errorf("%s = %q, want %q", rt.MDMock, got, tc.mock)
			}
			if last.resp != rt.Message(resp) {
				t.Errorf("the interceptor saw response %p, not the caller's %p", last.resp, resp)
			}
			if tc.want != nil && !cmp.Equal(&last.user, tc.want) {
				t.Errorf("the interceptor saw %+v after the call, want %+v", last.user, tc.want)
			}
		})
	}
}

// TestIntoKeepsEarlierAnswers reuses one response: what an earlier answer
// left in it (its strings share that answer's bytes) stays as it was.
func TestIntoKeepsEarlierAnswers(t *testing.T) {
	c, _ := start(t)
	ctx := ctxT(t)
	var resp userrpc.User
	if err := c.GetInto(ctx, &userrpc.GetUser{ID: 7}, &resp); err != nil {
		t.Fatal(err)
	}
	first := resp
	if err := c.GetInto(ctx, &userrpc.GetUser{ID: 8}, &resp); err != nil {
		t.Fatal(err)
	}
	if first.Name != "user-h" || resp.Name != "user-i" || resp.ID != 8 {
		t.Fatalf("first answer %q, second %q (id %d), want user-h, then user-i (id 8)", first.Name, resp.Name, resp.ID)
	}
}

// TestIntoRace reuses one response through forked (Search) and hedged
// (List) calls, whose attempts decode into their own messages: the
// winner's answer is copied into the caller's.
func TestIntoRace(t *testing.T) {
	c, _ := start(t)
	ctx := ctxT(t)
	want := &userrpc.UserList{Users: []*userrpc.User{{ID: 1, Name: "ann"}}, NextPageToken: "next"}
	for name, call := range map[string]func(*userrpc.UserList) error{
		"forking": func(r *userrpc.UserList) error {
			return c.SearchInto(ctx, &userrpc.ListUsers{PageSize: 1, Query: "ann"}, r)
		},
		"hedged": func(r *userrpc.UserList) error {
			return c.ListInto(ctx, &userrpc.ListUsers{PageSize: 1, Query: "ann"}, r)
		},
	} {
		t.Run(name, func(t *testing.T) {
			resp := &userrpc.UserList{Users: []*userrpc.User{{ID: 5}, {ID: 6}}, NextPageToken: "stale"}
			if err := call(resp); err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(resp, want) {
				t.Errorf("the caller's response (-got +want):\n%s", cmp.Diff(resp, want))
			}
		})
	}
}
