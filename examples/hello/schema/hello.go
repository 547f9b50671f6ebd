// Package schema is the schema of the benchmark workload of
// ../../../bench: BenchmarkMessage with the 40 fields of benchmark.proto (the
// message of the rpcx-benchmark project), in the protobuf package "bench"
// so that method IDs and the .proto export match benchmark.proto.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// BenchmarkMessage is the benchmark payload (581 bytes on the wire when
// filled as the benchmark does).
type BenchmarkMessage struct{ schema.Message }

// Fields of BenchmarkMessage, in the order of benchmark.proto.
func (BenchmarkMessage) Fields() []schema.Field {
	return []schema.Field{
		field.String("field1", 1),
		field.String("field9", 9),
		field.String("field18", 18),
		field.Bool("field80", 80),
		field.Bool("field81", 81),
		field.Int32("field2", 2),
		field.Int32("field3", 3),
		field.Int32("field280", 280),
		field.Int32("field6", 6),
		field.Int64("field22", 22),
		field.String("field4", 4),
		field.Fixed64s("field5", 5),
		field.Bool("field59", 59),
		field.String("field7", 7),
		field.Int32("field16", 16),
		field.Int32("field130", 130),
		field.Bool("field12", 12),
		field.Bool("field17", 17),
		field.Bool("field13", 13),
		field.Bool("field14", 14),
		field.Int32("field104", 104),
		field.Int32("field100", 100),
		field.Int32("field101", 101),
		field.String("field102", 102),
		field.String("field103", 103),
		field.Int32("field29", 29),
		field.Bool("field30", 30),
		field.Int32("field60", 60),
		field.Int32("field271", 271),
		field.Int32("field272", 272),
		field.Int32("field150", 150),
		field.Int32("field23", 23),
		field.Bool("field24", 24),
		field.Int32("field25", 25),
		field.Bool("field78", 78),
		field.Int32("field67", 67),
		field.Int32("field68", 68),
		field.Int32("field128", 128),
		field.String("field129", 129),
		field.Int32("field131", 131),
	}
}

// Annotations of BenchmarkMessage.
func (BenchmarkMessage) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("bench")}
}

// Hello is the benchmark service.
type Hello struct{ schema.Service }

// Methods of Hello.
func (Hello) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Say", BenchmarkMessage.Type, BenchmarkMessage.Type),
	}
}
