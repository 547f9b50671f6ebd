package testspecs

import (
	"math"
	"time"

	"github.com/yrpc/yrpc/gen"
)

// Kitchen returns a spec with every field kind and every method policy.
// Each call returns a new value.
func Kitchen() *gen.Spec {
	color := &gen.Enum{Name: "Color", Values: []gen.EnumValue{
		{Name: "unknown", Number: 0}, {Name: "red", Number: 1}, {Name: "green", Number: 2}, {Name: "blue", Number: -3},
	}}
	f := func(name string, num int32, k gen.Kind) *gen.Field {
		return &gen.Field{Name: name, Number: num, Kind: k}
	}
	list := func(fl *gen.Field) *gen.Field { fl.List = true; return fl }
	opt := func(fl *gen.Field) *gen.Field { fl.Optional = true; return fl }
	unpacked := func(fl *gen.Field) *gen.Field { fl.List, fl.Unpacked = true, true; return fl }
	mapOf := func(name string, num int32, key, val gen.Kind) *gen.Field {
		return &gen.Field{Name: name, Number: num, Kind: val, MapKey: key}
	}
	msg := func(fl *gen.Field, m string) *gen.Field { fl.Message = m; return fl }
	enum := func(fl *gen.Field) *gen.Field { fl.Enum = color; return fl }
	min, max := -1000.0, 1000.0
	// The kinds' limits as a schema gives them: float64 rounds
	// math.MaxInt64 and math.MaxUint64 up to 2^63 and 2^64.
	zero, minInt64, maxInt64, maxUint64 := 0.0, float64(math.MinInt64), float64(math.MaxInt64), float64(math.MaxUint64)

	kitchen := &gen.Message{Name: "Kitchen", Comment: "Kitchen has a field of every kind.", Fields: []*gen.Field{
		f("a_bool", 1, gen.KindBool),
		f("an_int32", 2, gen.KindInt32),
		f("an_int64", 3, gen.KindInt64),
		f("a_uint32", 4, gen.KindUint32),
		f("a_uint64", 5, gen.KindUint64),
		f("a_sint32", 6, gen.KindSint32),
		f("a_sint64", 7, gen.KindSint64),
		f("a_fixed32", 8, gen.KindFixed32),
		f("a_fixed64", 9, gen.KindFixed64),
		f("a_sfixed32", 10, gen.KindSfixed32),
		f("a_sfixed64", 11, gen.KindSfixed64),
		f("a_float", 12, gen.KindFloat32),
		f("a_double", 13, gen.KindFloat64),
		{Name: "a_string", Number: 14, Kind: gen.KindString, Comment: "a_string is any text."},
		f("some_bytes", 15, gen.KindBytes),
		enum(f("color", 16, gen.KindEnum)),
		f("created_at", 17, gen.KindTime),
		f("ttl", 18, gen.KindDuration),
		msg(f("node", 19, gen.KindMessage), "Node"),
		{Name: "old", Number: 20, Kind: gen.KindInt32, Deprecated: true},

		opt(f("opt_bool", 30, gen.KindBool)),
		opt(f("opt_int32", 31, gen.KindInt32)),
		opt(f("opt_sint64", 32, gen.KindSint64)),
		opt(f("opt_uint64", 33, gen.KindUint64)),
		opt(f("opt_fixed32", 34, gen.KindFixed32)),
		opt(f("opt_double", 35, gen.KindFloat64)),
		opt(f("opt_string", 36, gen.KindString)),
		opt(f("opt_bytes", 37, gen.KindBytes)),
		opt(enum(f("opt_color", 38, gen.KindEnum))),
		opt(f("opt_time", 39, gen.KindTime)),
		opt(f("opt_duration", 40, gen.KindDuration)),

		list(f("bools", 50, gen.KindBool)),
		list(f("int32s", 51, gen.KindInt32)),
		list(f("int64s", 52, gen.KindInt64)),
		list(f("uint32s", 53, gen.KindUint32)),
		list(f("uint64s", 54, gen.KindUint64)),
		list(f("sint32s", 55, gen.KindSint32)),
		list(f("sint64s", 56, gen.KindSint64)),
		list(f("fixed32s", 57, gen.KindFixed32)),
		list(f("fixed64s", 58, gen.KindFixed64)),
		list(f("sfixed32s", 59, gen.KindSfixed32)),
		list(f("sfixed64s", 60, gen.KindSfixed64)),
		list(f("floats", 61, gen.KindFloat32)),
		list(f("doubles", 62, gen.KindFloat64)),
		list(f("strings", 63, gen.KindString)),
		list(f("byteses", 64, gen.KindBytes)),
		list(enum(f("colors", 65, gen.KindEnum))),
		list(f("times", 66, gen.KindTime)),
		list(f("durations", 67, gen.KindDuration)),
		list(msg(f("nodes", 68, gen.KindMessage), "Node")),

		unpacked(f("unpacked_bools", 70, gen.KindBool)),
		unpacked(f("unpacked_int32s", 71, gen.KindInt32)),
		unpacked(f("unpacked_sint64s", 72, gen.KindSint64)),
		unpacked(f("unpacked_fixed32s", 73, gen.KindFixed32)),
		unpacked(f("unpacked_doubles", 74, gen.KindFloat64)),
		unpacked(enum(f("unpacked_colors", 75, gen.KindEnum))),

		mapOf("labels", 80, gen.KindString, gen.KindString),
		msg(mapOf("nodes_by_id", 81, gen.KindInt64, gen.KindMessage), "Node"),
		enum(mapOf("colors_by_flag", 82, gen.KindBool, gen.KindEnum)),
		mapOf("blobs", 83, gen.KindUint32, gen.KindBytes),
		mapOf("waits", 84, gen.KindSint32, gen.KindDuration),
		mapOf("times_by_name", 85, gen.KindString, gen.KindTime),
		mapOf("ratios", 86, gen.KindFixed64, gen.KindFloat64),
		mapOf("counts", 87, gen.KindSfixed32, gen.KindSint64),

		f("far", 100000, gen.KindInt32),
		f("farthest", 536870911, gen.KindString),
	}}
	node := &gen.Message{Name: "Node", Comment: "Node is a recursive tree.", Fields: []*gen.Field{
		f("id", 1, gen.KindInt64),
		f("name", 2, gen.KindString),
		list(msg(f("children", 3, gen.KindMessage), "Node")),
		msg(f("next", 4, gen.KindMessage), "Node"),
	}}
	checked := &gen.Message{Name: "Checked", Comment: "Checked exercises every validator.", Fields: []*gen.Field{
		{Name: "name", Number: 1, Kind: gen.KindString, Validate: gen.Validators{NotEmpty: true, MinLen: 2, MaxLen: 8}},
		{Name: "code", Number: 2, Kind: gen.KindString, Validate: gen.Validators{Match: `^[a-z]+-[0-9]+$`}},
		{Name: "age", Number: 3, Kind: gen.KindInt32, Validate: gen.Validators{Min: &min, Max: &max}},
		{Name: "score", Number: 4, Kind: gen.KindFloat64, Optional: true, Validate: gen.Validators{Max: &max}},
		{Name: "tags", Number: 5, Kind: gen.KindString, List: true, Validate: gen.Validators{MaxLen: 3, Match: `^#`}},
		{Name: "data", Number: 6, Kind: gen.KindBytes, Validate: gen.Validators{MaxLen: 4}},
		{Name: "attrs", Number: 7, Kind: gen.KindString, MapKey: gen.KindString, Validate: gen.Validators{NotEmpty: true}},
		{Name: "node", Number: 8, Kind: gen.KindMessage, Message: "Node", Validate: gen.Validators{NotEmpty: true}},
		{Name: "inner", Number: 9, Kind: gen.KindMessage, Message: "Checked"},
		{Name: "when", Number: 10, Kind: gen.KindTime, Validate: gen.Validators{NotEmpty: true}},
		{Name: "serial", Number: 11, Kind: gen.KindUint64, Validate: gen.Validators{Min: &zero, Max: &maxUint64}},
		{Name: "offset", Number: 12, Kind: gen.KindSfixed64, Validate: gen.Validators{Min: &minInt64, Max: &maxInt64}},
	}}
	empty := &gen.Message{Name: "Empty", Comment: "Empty has no fields."}

	kitchenSvc := &gen.Service{
		Name: "KitchenService", Comment: "KitchenService has every method policy.",
		Group: "HK", Version: "1.2.0",
		RateLimit: &gen.RateLimit{Rate: 300, Burst: 500},
		Breaker:   &gen.Breaker{ErrorRate: 0.5, MinRequests: 20, OpenFor: 5 * time.Second},
		Balance:   "consistent_hash",
		Allow:     []string{"spiffe://example.org/ns/kitchen/*"},
		Methods: []*gen.Method{
			{Name: "Get", Comment: "Get reads a node.", Request: "Node", Response: "Node", Idempotent: true,
				Allow: []string{"*"}, ClientRateLimit: &gen.RateLimit{Rate: 1000, Burst: 100},
				Timeout: 300 * time.Millisecond, TryTimeout: 100 * time.Millisecond, HashKey: "id",
				Retry: &gen.Retry{Tries: 3, Interval: 50 * time.Millisecond, Backoff: 2, MaxInterval: time.Second, Jitter: 0.2}},
			{Name: "Put", Request: "Kitchen", Response: "Empty", HashKey: "a_string", FaultMode: "failfast",
				Mock: &gen.Mock{Action: "empty"}},
			{Name: "Check", Request: "Checked", Response: "Checked", HashKey: "score",
				Mock: &gen.Mock{Force: true, Action: "fail", Code: "Unavailable", Message: "kitchen closed"}},
			{Name: "Fork", Request: "Kitchen", Response: "Kitchen", Idempotent: true, FaultMode: "forking", Forks: 3,
				Hedge: 20 * time.Millisecond, HashKey: "opt_int32",
				Mock: &gen.Mock{Action: "value", Value: `{"a_bool": true, "an_int32": -5, "a_uint64": 18446744073709551615,
					"a_float": 1.5, "a_string": "mocked", "some_bytes": "aGk=", "color": "blue", "created_at": "2024-01-02T03:04:05.000000006Z",
					"ttl": "1.5s", "node": {"id": 7, "children": [{"name": "kid"}]}, "opt_int32": 0, "opt_color": 2,
					"int32s": [1, -2], "strings": ["a", "b"], "labels": {"k": "v"}, "nodes_by_id": {"-1": {"name": "neg"}},
					"colors_by_flag": {"true": "red"}, "waits": {"3": "2m"}}`}},
			{Name: "Touch", Comment: "Touch is fire and forget.", Request: "Node", Kind: gen.MethodOneway, FaultMode: "failsafe"},
		},
	}
	other := &gen.Service{Name: "Plain", Methods: []*gen.Method{
		{Name: "Ping", Request: "Empty", Response: "Empty"},
	}}
	return &gen.Spec{Version: gen.SpecVersion, Package: "kitchen",
		Messages: []*gen.Message{kitchen, node, checked, empty},
		Services: []*gen.Service{kitchenSvc, other}}
}

// Bench returns BenchmarkMessage of benchmark.proto with service Hello.Say in
// package "bench". Each call returns a new value.
func Bench() *gen.Spec {
	type fd struct {
		name string
		num  int32
		kind gen.Kind
	}
	fields := []fd{
		{"field1", 1, gen.KindString}, {"field9", 9, gen.KindString}, {"field18", 18, gen.KindString},
		{"field80", 80, gen.KindBool}, {"field81", 81, gen.KindBool}, {"field2", 2, gen.KindInt32},
		{"field3", 3, gen.KindInt32}, {"field280", 280, gen.KindInt32}, {"field6", 6, gen.KindInt32},
		{"field22", 22, gen.KindInt64}, {"field4", 4, gen.KindString}, {"field5", 5, gen.KindFixed64},
		{"field59", 59, gen.KindBool}, {"field7", 7, gen.KindString}, {"field16", 16, gen.KindInt32},
		{"field130", 130, gen.KindInt32}, {"field12", 12, gen.KindBool}, {"field17", 17, gen.KindBool},
		{"field13", 13, gen.KindBool}, {"field14", 14, gen.KindBool}, {"field104", 104, gen.KindInt32},
		{"field100", 100, gen.KindInt32}, {"field101", 101, gen.KindInt32}, {"field102", 102, gen.KindString},
		{"field103", 103, gen.KindString}, {"field29", 29, gen.KindInt32}, {"field30", 30, gen.KindBool},
		{"field60", 60, gen.KindInt32}, {"field271", 271, gen.KindInt32}, {"field272", 272, gen.KindInt32},
		{"field150", 150, gen.KindInt32}, {"field23", 23, gen.KindInt32}, {"field24", 24, gen.KindBool},
		{"field25", 25, gen.KindInt32}, {"field78", 78, gen.KindBool}, {"field67", 67, gen.KindInt32},
		{"field68", 68, gen.KindInt32}, {"field128", 128, gen.KindInt32}, {"field129", 129, gen.KindString},
		{"field131", 131, gen.KindInt32},
	}
	m := &gen.Message{Name: "BenchmarkMessage", Comment: "BenchmarkMessage is the benchmark payload."}
	for _, f := range fields {
		m.Fields = append(m.Fields, &gen.Field{Name: f.name, Number: f.num, Kind: f.kind, List: f.num == 5})
	}
	return &gen.Spec{Version: gen.SpecVersion, Package: "bench", Messages: []*gen.Message{m},
		Services: []*gen.Service{{Name: "Hello", Methods: []*gen.Method{
			{Name: "Say", Request: "BenchmarkMessage", Response: "BenchmarkMessage"},
		}}}}
}

// Streams returns a spec with a stream of every kind, with every policy a
// stream takes, beside a unary method, in package "streams". Each call
// returns a new value.
func Streams() *gen.Spec {
	topic := &gen.Message{Name: "Topic", Comment: "Topic asks for a feed of ticks.", Fields: []*gen.Field{
		{Name: "name", Number: 1, Kind: gen.KindString, Comment: "name is the consistent-hash key of Watch.",
			Validate: gen.Validators{NotEmpty: true}},
		{Name: "count", Number: 2, Kind: gen.KindInt32, Comment: "count is how many ticks to send; -1 sends until the stream ends."},
		{Name: "fail_after", Number: 3, Kind: gen.KindInt32, Optional: true, Comment: "fail_after ends the feed with an error after that many ticks."},
	}}
	tick := &gen.Message{Name: "Tick", Comment: "Tick is one message of a feed or a chat.", Fields: []*gen.Field{
		{Name: "seq", Number: 1, Kind: gen.KindInt64},
		{Name: "text", Number: 2, Kind: gen.KindString, Validate: gen.Validators{MaxLen: 64}},
	}}
	chunk := &gen.Message{Name: "Chunk", Comment: "Chunk is a piece of an upload.", Fields: []*gen.Field{
		{Name: "data", Number: 1, Kind: gen.KindBytes},
	}}
	summary := &gen.Message{Name: "Summary", Comment: "Summary sums up an upload.", Fields: []*gen.Field{
		{Name: "chunks", Number: 1, Kind: gen.KindInt64},
		{Name: "bytes", Number: 2, Kind: gen.KindInt64},
		{Name: "served_by", Number: 3, Kind: gen.KindString},
	}}
	feed := &gen.Service{
		Name: "Feed", Comment: "Feed has a stream of every kind.", Balance: "consistent_hash",
		Methods: []*gen.Method{
			{Name: "Watch", Comment: "Watch sends the ticks of a topic.", Kind: gen.MethodServerStream,
				Request: "Topic", Response: "Tick", Idempotent: true, Timeout: time.Hour, HashKey: "name",
				Retry:          &gen.Retry{Tries: 3, Interval: 100 * time.Millisecond, Backoff: 2, MaxInterval: time.Second},
				MaxMessageSize: 64 << 10},
			{Name: "Upload", Kind: gen.MethodClientStream, Request: "Chunk", Response: "Summary",
				Timeout: 10 * time.Minute, MaxMessageSize: 1 << 10},
			{Name: "Chat", Comment: "Chat answers every tick with a tick.", Kind: gen.MethodBidiStream, Request: "Tick", Response: "Tick"},
			{Name: "Last", Request: "Topic", Response: "Tick", Idempotent: true, HashKey: "name"},
		},
	}
	return &gen.Spec{Version: gen.SpecVersion, Package: "streams",
		Messages: []*gen.Message{topic, tick, chunk, summary}, Services: []*gen.Service{feed}}
}
