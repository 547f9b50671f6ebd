package workload

import (
	"fmt"

	"github.com/yrpc/yrpc/bench/benchpb"
)

// The request fill and the server's answer, as README.md defines them.
const (
	// Text fills every string field: 54 bytes of UTF-8.
	Text = "许多往事在眼前一幕一幕，变的那麼模糊"
	// Int fills every integer field.
	Int = 100000
	// ReplyField1 and ReplyField2 are what the server sets in its answer.
	ReplyField1 = "OK"
	ReplyField2 = 100

	// RequestSize and ReplySize are the protobuf encodings' sizes in bytes.
	RequestSize = 581
	ReplySize   = 527
)

// NewRequest returns a request filled as README.md says: every string is
// Text, every integer is Int, every bool is true, field5 stays empty.
func NewRequest() *benchpb.BenchmarkMessage {
	m := new(benchpb.BenchmarkMessage)
	Fill(m)
	return m
}

// Fill sets every field of m as NewRequest does.
func Fill(m *benchpb.BenchmarkMessage) {
	m.Field1 = Text
	m.Field9 = Text
	m.Field18 = Text
	m.Field80 = true
	m.Field81 = true
	m.Field2 = Int
	m.Field3 = Int
	m.Field280 = Int
	m.Field6 = Int
	m.Field22 = Int
	m.Field4 = Text
	m.Field59 = true
	m.Field7 = Text
	m.Field16 = Int
	m.Field130 = Int
	m.Field12 = true
	m.Field17 = true
	m.Field13 = true
	m.Field14 = true
	m.Field104 = Int
	m.Field100 = Int
	m.Field101 = Int
	m.Field102 = Text
	m.Field103 = Text
	m.Field29 = Int
	m.Field30 = true
	m.Field60 = Int
	m.Field271 = Int
	m.Field272 = Int
	m.Field150 = Int
	m.Field23 = Int
	m.Field24 = true
	m.Field25 = Int
	m.Field78 = true
	m.Field67 = Int
	m.Field68 = Int
	m.Field128 = Int
	m.Field129 = Text
	m.Field131 = Int
}

// Answer turns a request into the server's reply in place: the request with
// field1 = "OK" and field2 = 100.
func Answer(m *benchpb.BenchmarkMessage) *benchpb.BenchmarkMessage {
	m.Field1 = ReplyField1
	m.Field2 = ReplyField2
	return m
}

// Copy copies every field of src into dst, for servers (net/rpc, rpcx) that
// hand the handler a separate reply value. Protobuf messages must not be
// copied by value.
func Copy(dst, src *benchpb.BenchmarkMessage) {
	dst.Field1 = src.Field1
	dst.Field9 = src.Field9
	dst.Field18 = src.Field18
	dst.Field80 = src.Field80
	dst.Field81 = src.Field81
	dst.Field2 = src.Field2
	dst.Field3 = src.Field3
	dst.Field280 = src.Field280
	dst.Field6 = src.Field6
	dst.Field22 = src.Field22
	dst.Field4 = src.Field4
	dst.Field5 = src.Field5
	dst.Field59 = src.Field59
	dst.Field7 = src.Field7
	dst.Field16 = src.Field16
	dst.Field130 = src.Field130
	dst.Field12 = src.Field12
	dst.Field17 = src.Field17
	dst.Field13 = src.Field13
	dst.Field14 = src.Field14
	dst.Field104 = src.Field104
	dst.Field100 = src.Field100
	dst.Field101 = src.Field101
	dst.Field102 = src.Field102
	dst.Field103 = src.Field103
	dst.Field29 = src.Field29
	dst.Field30 = src.Field30
	dst.Field60 = src.Field60
	dst.Field271 = src.Field271
	dst.Field272 = src.Field272
	dst.Field150 = src.Field150
	dst.Field23 = src.Field23
	dst.Field24 = src.Field24
	dst.Field25 = src.Field25
	dst.Field78 = src.Field78
	dst.Field67 = src.Field67
	dst.Field68 = src.Field68
	dst.Field128 = src.Field128
	dst.Field129 = src.Field129
	dst.Field131 = src.Field131
}

// Check reports whether reply is the server's answer to req (a request
// made by NewRequest or NewSized): the changed fields, and a sample of the
// untouched ones (first and last in declaration order, and the field that
// NewSized pads: its length and its last bytes).
func Check(reply, req *benchpb.BenchmarkMessage) error {
	if reply.Field1 != ReplyField1 || reply.Field2 != ReplyField2 {
		return fmt.Errorf("workload: bad reply: field1=%q field2=%d", reply.Field1, reply.Field2)
	}
	if reply.Field9 != req.Field9 || reply.Field129 != req.Field129 || reply.Field131 != req.Field131 ||
		reply.Field80 != req.Field80 || !SameTail(reply.Field4, req.Field4) {
		return fmt.Errorf("workload: bad reply: untouched fields changed")
	}
	return nil
}

// tailCheck is how many of the last bytes of the padded field SameTail
// compares: comparing all of a megabyte would put a memory scan of the
// message into every timed call.
const tailCheck = 64

// SameTail reports whether a and b have the same length and the same last
// bytes (up to 64): how replies check the field that NewSized pads.
func SameTail(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := max(len(a)-tailCheck, 0)
	return a[i:] == b[i:]
}
