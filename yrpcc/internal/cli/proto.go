package cli

import (
	"bytes"
	"context"

	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/gen/proto"
)

func (e *Env) runProto(ctx context.Context, args []string) error {
	fs := e.flagSet("proto", "[--out FILE] [--go-package PATH] [--package NAME] SCHEMA",
		`Proto prints a proto3 file equivalent to the schema: the same messages,
field numbers, kinds and services, so that other languages and tools can
talk to yrpc services. time.Time and time.Duration fields become
google.protobuf.Timestamp and google.protobuf.Duration; oneway methods return
google.protobuf.Empty; streams carry the stream keyword; policies appear as
comments.

Generated code embeds the FileDescriptorProto of this file, named
PACKAGE.proto (users.proto for package users), for gRPC server reflection:
protoc --descriptor_set_out gives the same bytes for the output saved under
that name without --go-package.`)
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	goPkg := fs.String("go-package", "", "emit option go_package = `PATH`")
	pkg := fs.String("package", "", packageUsage)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	spec, err := e.loadSchema(ctx, "proto", rest, load.Options{Package: *pkg})
	if err != nil {
		return err
	}
	if *out == "" {
		return proto.Write(e.Stdout, spec, proto.Options{GoPackage: *goPkg})
	}
	var b bytes.Buffer
	if err := proto.Write(&b, spec, proto.Options{GoPackage: *goPkg}); err != nil {
		return err
	}
	return writeAtomic(e.path(*out), b.Bytes())
}
