// Command yrpcc is yrpc's code generator and tool: it scaffolds schemas,
// generates codecs, dispatch tables and stubs from them, describes them,
// exports them as .proto files, and reads and changes the governance config
// of running services in ZooKeeper.
//
//	yrpcc init [--dir DIR] [--service NAME]... NAME...
//	yrpcc generate [--target DIR] [--package NAME] [-v] SCHEMA
//	yrpcc describe [--package NAME] SCHEMA
//	yrpcc proto [--out FILE] [--go-package PATH] [--package NAME] SCHEMA
//	yrpcc version
//	yrpcc ctl [-zk HOST:PORT,...] [-root PATH] COMMAND ...
//
// SCHEMA is a schema package directory (./schema; a bare name such as
// schema is the directory when it exists) or an import path. generate
// writes by default into NAMErpc beside the schema directory, where NAME
// is the import path element above the schema package (example.com/shop/schema
// in ./schema generates package shoprpc in ./shoprpc); the same NAME is the
// default protobuf package, so a service's identity comes from its module
// path, never from a directory name. The first load of a schema builds it,
// which can take a minute; generate says so on standard error.
//
// ctl is the governance client: it lists providers, consumers and config,
// drains and undrains providers, overrides weights and rate limits, and
// switches mocks, in the ZooKeeper nodes that running clients and servers
// watch (-zk defaults to $YRPC_ZK, else 127.0.0.1:2181); `ctl health ADDR`
// asks a provider's grpc.health.v1 service how it is. `ctl mock SERVICE
// METHOD value --json '{...}' --schema SCHEMA` reads the JSON as the
// schema's own mock values are read (gen.EncodeMock lists the rules) and
// stores the response's wire bytes.
//
// Run `yrpcc help COMMAND` (or `yrpcc COMMAND --help`) for a command's usage
// and flags. In a module of your own, make yrpcc a tool of the module once
// (Go 1.24+) and run it with go tool:
//
//	go get -tool github.com/yrpc/yrpc/yrpcc
//	go tool yrpcc generate ./schema
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/yrpc/yrpc/yrpcc/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.New(os.Stdout, os.Stderr).Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
