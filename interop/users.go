package interop

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
)

// EchoPrefix marks the request metadata that Users sends back as response
// metadata (in a unary call's trailers), key and value unchanged.
const EchoPrefix = "echo-"

// Created returns the CreatedAt of the users that Get and Create return:
// 2026-11-30 12:00:00.000000005 UTC.
func Created() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 5, time.UTC) }

// Users implements examples/users' service for the interop tests and
// cmd/usersserver:
//
//   - Get returns a user made of its ID (name "user ID", an email, role
//     admin, created at Created(), a label "id"); ID 404 fails with
//     NotFound; ID 999 sends to Waiting, waits for its context to end and
//     sends the context's error to Ended.
//   - Create returns a user of ID 1 made of the request (which the server
//     validates first: a name, an email and an address are required).
//   - Touch (oneway) does nothing; over gRPC it answers
//     google.protobuf.Empty.
//   - Echo, EchoOptionals, EchoLists and EchoMaps return their request.
//   - The other methods answer Unimplemented.
//
// Every call sends back its EchoPrefix metadata. The zero value is ready
// to use; Users is safe for concurrent use.
type Users struct {
	userrpc.UnimplementedUsersServer
	// Waiting, when not nil, gets a value when a Get of ID 999 starts
	// waiting, and Ended the context's error when it stops (dropped when
	// the channel is full).
	Waiting chan struct{}
	Ended   chan error
}

// echo sends back the request's EchoPrefix metadata.
func echo(ctx context.Context) {
	md := rt.IncomingMetadata(ctx)
	for i := 0; i+1 < len(md); i += 2 {
		if strings.HasPrefix(md[i], EchoPrefix) {
			rt.SetResponseMetadata(ctx, md[i], md[i+1])
		}
	}
}

// Get implements userrpc.UsersServer.
func (u *Users) Get(ctx context.Context, req *userrpc.GetUser) (*userrpc.User, error) {
	echo(ctx)
	switch req.ID {
	case 404:
		return nil, rt.Errorf(rt.NotFound, "user %d not found", req.ID)
	case 999:
		notify(u.Waiting, struct{}{})
		<-ctx.Done()
		notify(u.Ended, ctx.Err())
		return nil, ctx.Err()
	}
	return &userrpc.User{
		ID:        req.ID,
		Name:      fmt.Sprintf("user %d", req.ID),
		Emails:    []string{fmt.Sprintf("u%d@example.org", req.ID)},
		Role:      userrpc.UserRoleAdmin,
		CreatedAt: Created(),
		Labels:    map[string]string{"id": strconv.FormatInt(req.ID, 10)},
	}, nil
}

// Create implements userrpc.UsersServer.
func (u *Users) Create(ctx context.Context, req *userrpc.CreateUser) (*userrpc.User, error) {
	echo(ctx)
	return &userrpc.User{ID: 1, Name: req.Name, Emails: req.Emails, Role: req.Role, Address: req.Address, CreatedAt: Created()}, nil
}

// Touch implements userrpc.UsersServer.
func (u *Users) Touch(ctx context.Context, _ *userrpc.TouchUser) error {
	echo(ctx)
	return nil
}

// Echo implements userrpc.UsersServer.
func (u *Users) Echo(ctx context.Context, req *userrpc.Scalars) (*userrpc.Scalars, error) {
	echo(ctx)
	return req, nil
}

// EchoOptionals implements userrpc.UsersServer.
func (u *Users) EchoOptionals(ctx context.Context, req *userrpc.Optionals) (*userrpc.Optionals, error) {
	echo(ctx)
	return req, nil
}

// EchoLists implements userrpc.UsersServer.
func (u *Users) EchoLists(ctx context.Context, req *userrpc.Lists) (*userrpc.Lists, error) {
	echo(ctx)
	return req, nil
}

// EchoMaps implements userrpc.UsersServer.
func (u *Users) EchoMaps(ctx context.Context, req *userrpc.Maps) (*userrpc.Maps, error) {
	echo(ctx)
	return req, nil
}
