// Package streamschema is the schema of the streaming benchmark (issue 14):
// the Streams service of ../../benchpb/stream.proto on the benchmark message
// of examples/hello, in the protobuf package "bench", so that its methods
// are the same on yrpc's side as on gRPC's and drpc's. The generated
// package is ../streamrpc.
package streamschema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/rpc"

	hello "github.com/yrpc/yrpc/examples/hello/schema"
)

//go:generate go run github.com/yrpc/yrpc/yrpcc generate --target ../streamrpc .

// BenchmarkMessage is the benchmark payload: the fields of examples/hello's
// (581 bytes on the wire when filled as the benchmark does).
type BenchmarkMessage struct{ schema.Message }

// Fields of BenchmarkMessage: examples/hello's.
func (BenchmarkMessage) Fields() []schema.Field { return hello.BenchmarkMessage{}.Fields() }

// Annotations of BenchmarkMessage.
func (BenchmarkMessage) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("bench")}
}

// Streams is the streaming benchmark service.
type Streams struct{ schema.Service }

// Methods of Streams.
func (Streams) Methods() []schema.Method {
	return []schema.Method{
		// Feed answers one request with as many copies of the benchmark
		// reply as its field22 asks for.
		rpc.ServerStream("Feed", BenchmarkMessage.Type, BenchmarkMessage.Type),
		// Echo answers every message with the benchmark reply to it.
		rpc.BidiStream("Echo", BenchmarkMessage.Type, BenchmarkMessage.Type),
	}
}

// Annotations of Streams.
func (Streams) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("bench")}
}
