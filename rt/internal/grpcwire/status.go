package grpcwire

import (
	"fmt"

	"github.com/yrpc/yrpc/rt/codec"
)

// EncodeMessage percent-encodes s for grpc-message: bytes outside
// printable ASCII (0x20-0x7E) and '%' become %XX; s is returned as is when
// it needs nothing.
func EncodeMessage(s string) string {
	i := 0
	for i < len(s) && !escapeByte(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, i, len(s)+16)
	copy(b, s[:i])
	for ; i < len(s); i++ {
		if c := s[i]; escapeByte(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func escapeByte(c byte) bool { return c < 0x20 || c > 0x7e || c == '%' }

// DecodeMessage reverses EncodeMessage. A '%' not followed by two hex
// digits stays as it is, as the specification asks.
func DecodeMessage(s string) string {
	i := 0
	for i < len(s) && s[i] != '%' {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s))
	copy(b, s[:i])
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Any is a google.protobuf.Any: a message and the URL of its type,
// "type.googleapis.com/" and the message's full name.
type Any struct {
	TypeURL string
	Value   []byte
}

// Status is a google.rpc.Status, the body of grpc-status-details-bin:
//
//	message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
//	message Any { string type_url = 1; bytes value = 2; }
type Status struct {
	Code    int32
	Message string
	Details []Any
}

// MarshalAppend appends s's protobuf encoding to b.
func (s *Status) MarshalAppend(b []byte) []byte {
	if s.Code != 0 {
		b = codec.AppendVarint(append(b, 1<<3), uint64(int64(s.Code)))
	}
	if s.Message != "" {
		b = codec.AppendString(append(b, 2<<3|2), s.Message)
	}
	for _, d := range s.Details {
		b = append(b, 3<<3|2)
		b = codec.AppendVarint(b, uint64(sizeAny(&d)))
		b = appendAny(b, &d)
	}
	return b
}

func sizeAny(a *Any) int {
	n := 0
	if a.TypeURL != "" {
		n += 1 + codec.SizeBytes(len(a.TypeURL))
	}
	if len(a.Value) > 0 {
		n += 1 + codec.SizeBytes(len(a.Value))
	}
	return n
}

func appendAny(b []byte, a *Any) []byte {
	if a.TypeURL != "" {
		b = codec.AppendString(append(b, 1<<3|2), a.TypeURL)
	}
	if len(a.Value) > 0 {
		b = codec.AppendBytes(append(b, 2<<3|2), a.Value)
	}
	return b
}

// Unmarshal decodes b into s (which keeps no reference to b). Unknown
// fields are skipped.
func (s *Status) Unmarshal(b []byte) error {
	*s = Status{}
	return Fields(b, "google.rpc.Status", func(num int32, v uint64, p []byte) error {
		switch num {
		case 1:
			s.Code = int32(v)
		case 2:
			s.Message = string(p)
		case 3:
			var a Any
			err := Fields(p, "google.protobuf.Any", func(num int32, _ uint64, p []byte) error {
				switch num {
				case 1:
					a.TypeURL = string(p)
				case 2:
					a.Value = append([]byte(nil), p...)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.Details = append(s.Details, a)
		}
		return nil
	})
}

// Fields calls fn for each field of the encoded message b: its number and
// its value, v for varints and p for length-delimited fields (a part of
// b); others are skipped. name names the message in errors. It stops at
// fn's first error.
func Fields(b []byte, name string, fn func(num int32, v uint64, p []byte) error) error {
	for len(b) > 0 {
		tag, n := codec.ConsumeVarint(b)
		if n < 0 {
			return codec.Err(name, "", n)
		}
		b = b[n:]
		num := int32(tag >> 3)
		if num <= 0 || tag>>3 > codec.MaxFieldNumber {
			return fmt.Errorf("grpcwire: %s: bad field number %d", name, tag>>3)
		}
		var v uint64
		var p []byte
		switch codec.WireType(tag & 7) {
		case codec.VarintType:
			v, n = codec.ConsumeVarint(b)
		case codec.BytesType:
			p, n = codec.ConsumeBytes(b)
		default:
			n = codec.Skip(b, tag)
		}
		if n < 0 {
			return codec.Err(name, "", n)
		}
		b = b[n:]
		if err := fn(num, v, p); err != nil {
			return err
		}
	}
	return nil
}

// TypeBadRequest is the type URL of a google.rpc.BadRequest.
const TypeBadRequest = "type.googleapis.com/google.rpc.BadRequest"

// FieldViolation is a google.rpc.BadRequest.FieldViolation:
//
//	message BadRequest { repeated FieldViolation field_violations = 1; }
//	message FieldViolation { string field = 1; string description = 2; }
type FieldViolation struct {
	Field       string
	Description string
}

// AppendBadRequest appends the encoding of a google.rpc.BadRequest with
// the violations vs.
func AppendBadRequest(b []byte, vs []FieldViolation) []byte {
	for _, v := range vs {
		n := 0
		if v.Field != "" {
			n += 1 + codec.SizeBytes(len(v.Field))
		}
		if v.Description != "" {
			n += 1 + codec.SizeBytes(len(v.Description))
		}
		b = codec.AppendVarint(append(b, 1<<3|2), uint64(n))
		if v.Field != "" {
			b = codec.AppendString(append(b, 1<<3|2), v.Field)
		}
		if v.Description != "" {
			b = codec.AppendString(append(b, 2<<3|2), v.Description)
		}
	}
	return b
}

// ParseBadRequest decodes a google.rpc.BadRequest's field violations.
func ParseBadRequest(b []byte) ([]FieldViolation, error) {
	var vs []FieldViolation
	err := Fields(b, "google.rpc.BadRequest", func(num int32, _ uint64, p []byte) error {
		if num != 1 {
			return nil
		}
		var v FieldViolation
		err := Fields(p, "google.rpc.BadRequest.FieldViolation", func(num int32, _ uint64, p []byte) error {
			switch num {
			case 1:
				v.Field = string(p)
			case 2:
				v.Description = string(p)
			}
			return nil
		})
		vs = append(vs, v)
		return err
	})
	return vs, err
}
