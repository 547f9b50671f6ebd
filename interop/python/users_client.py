"""Calls the users example on a yrpc server over gRPC and checks the answers.

The messages come from protoc --python_out on `yrpcc proto`'s output
(users_pb2.py, which must be on PYTHONPATH); the calls use grpcio alone, so
no gRPC stub generator is needed. interop/python_test.go runs it against
interop.Users; the README shows it step by step.

    python3 users_client.py 127.0.0.1:50051
"""

import sys

import grpc

import users_pb2


def main(addr):
    checks = 0

    def check(ok, what):
        nonlocal checks
        if not ok:
            raise SystemExit("users_client.py: FAILED: " + what)
        checks += 1

    with grpc.insecure_channel(addr) as channel:

        def method(name, request, response):
            return channel.unary_unary(
                "/users.Users/" + name,
                request_serializer=request.SerializeToString,
                response_deserializer=response.FromString,
            )

        get = method("Get", users_pb2.GetUser, users_pb2.User)
        create = method("Create", users_pb2.CreateUser, users_pb2.User)
        echo = method("Echo", users_pb2.Scalars, users_pb2.Scalars)
        echo_maps = method("EchoMaps", users_pb2.Maps, users_pb2.Maps)
        search = method("Search", users_pb2.ListUsers, users_pb2.UserList)

        # A call with metadata; the server sends back the echo-* pairs.
        user, call = get.with_call(
            users_pb2.GetUser(id=7),
            metadata=[("echo-tenant", "acme"), ("echo-trace-bin", b"\x00\xff")],
            timeout=10,
        )
        check(user.id == 7 and user.name == "user 7", "Get(7) = %s" % user)
        check(user.role == users_pb2.USER_ROLE_ADMIN, "role %s" % user.role)
        check(list(user.emails) == ["u7@example.org"], "emails %s" % user.emails)
        check(user.created_at.ToJsonString() == "2026-11-30T12:00:00.000000005Z",
              "created_at %s" % user.created_at.ToJsonString())
        trailers = dict(call.trailing_metadata())
        check(trailers.get("echo-tenant") == "acme", "trailers %s" % trailers)
        check(trailers.get("echo-trace-bin") == b"\x00\xff", "trailers %s" % trailers)

        # Errors: yrpc's codes are gRPC's.
        for rpc, request, timeout, code, details in [
            (get, users_pb2.GetUser(id=404), 10, grpc.StatusCode.NOT_FOUND, "user 404 not found"),
            (search, users_pb2.ListUsers(page_size=1), 10, grpc.StatusCode.UNIMPLEMENTED,
             "method users.Users/Search is not implemented"),
            (create, users_pb2.CreateUser(), 10, grpc.StatusCode.INVALID_ARGUMENT, None),
            (get, users_pb2.GetUser(id=999), 0.2, grpc.StatusCode.DEADLINE_EXCEEDED, None),
        ]:
            try:
                rpc(request, timeout=timeout)
                check(False, "%s succeeded" % request)
            except grpc.RpcError as e:
                check(e.code() == code, "%s: %s %s" % (request, e.code(), e.details()))
                check(details is None or e.details() == details, "details %r" % e.details())

        ada = create(users_pb2.CreateUser(
            name="Ada", emails=["ada@example.org"], role=users_pb2.USER_ROLE_OWNER,
            address=users_pb2.Address(street="1 Main St", city="London", zip="12345", country="GB"),
        ), timeout=10)
        check(ada.id == 1 and ada.name == "Ada" and ada.address.city == "London", "Create = %s" % ada)
        check(ada.role == users_pb2.USER_ROLE_OWNER, "role %s" % ada.role)

        # Every scalar kind, at its limits, comes back unchanged.
        scalars = users_pb2.Scalars(
            flag=True, i32=-2**31, i64=-2**63, u32=2**32 - 1, u64=2**64 - 1,
            s32=-1, s64=-2**63, fx32=2**32 - 1, fx64=2**64 - 1, sfx32=-2**31, sfx64=-2,
            f32=-1.5, f64=3.141592653589793, text="héllo, 世界", data=b"\x00\x01\xff",
            color=users_pb2.COLOR_BLUE, before_reserved=18999, after_reserved=-20000,
            last=2**63 - 1, address=users_pb2.Address(city="Paris", zip="75001", country="FR"),
        )
        scalars.at.FromJsonString("2026-11-30T08:30:00.123456789Z")
        scalars.ttl.FromNanoseconds(-1500000007)
        check(echo(scalars, timeout=10) == scalars, "Echo changed the scalars")

        maps = users_pb2.Maps(
            by_string={"": "empty", "k": ""}, by_bool={True: 1, False: -1},
            by_i64={-1: 2**32 - 1}, by_u64={2**64 - 1: -7}, by_s64={-2**63: 9},
            by_sfx64={-16: 1.25}, floats={"pi": 3.5}, flags={"no": False, "yes": True},
            blobs={"b": b"\x00\xff"}, colors={"sky": users_pb2.COLOR_GREEN},
        )
        maps.times[1].FromSeconds(1700000000)
        maps.durations["ttl"].FromMilliseconds(-250)
        maps.addresses["home"].CopyFrom(users_pb2.Address(city="Lyon", zip="69001", country="FR"))
        check(echo_maps(maps, timeout=10) == maps, "EchoMaps changed the maps")

    print("users_client.py: %d checks passed" % checks)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python3 users_client.py HOST:PORT")
    main(sys.argv[1])
