package rt

import (
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// The questions of a reflection request: the field numbers of
// ServerReflectionRequest's oneof message_request.
const (
	reflectFileByName   int32 = 3 // file_by_filename
	reflectSymbol       int32 = 4 // file_containing_symbol
	reflectExtension    int32 = 5 // file_containing_extension
	reflectExtNumbers   int32 = 6 // all_extension_numbers_of_type
	reflectListServices int32 = 7 // list_services
)

// The answers of a reflection response: the field numbers of
// ServerReflectionResponse's oneof message_response.
const (
	reflectFiles      int32 = 4 // file_descriptor_response
	reflectExtensions int32 = 5 // all_extension_numbers_response
	reflectServices   int32 = 6 // list_services_response
	reflectError      int32 = 7 // error_response
)

// reflectRequest is grpc.reflection.v1.ServerReflectionRequest (v1alpha's
// is the same message):
//
//	message ServerReflectionRequest {
//	  string host = 1;
//	  oneof message_request {
//	    string file_by_filename = 3;
//	    string file_containing_symbol = 4;
//	    ExtensionRequest file_containing_extension = 5;
//	    string all_extension_numbers_of_type = 6;
//	    string list_services = 7;
//	  }
//	}
//	message ExtensionRequest { string containing_type = 1; int32 extension_number = 2; }
type reflectRequest struct {
	host string
	kind int32  // the question: reflectFileByName...; 0 when none is set
	arg  string // the question's string; file_containing_extension's containing_type
	ext  int32  // file_containing_extension's extension_number
}

// Size returns the encoded size (reflection's messages are small and
// rare: it encodes).
func (m *reflectRequest) Size() int { return len(m.MarshalAppend(nil)) }

// MarshalAppend appends the encoding to b.
func (m *reflectRequest) MarshalAppend(b []byte) []byte {
	b = appendString(b, 1, m.host)
	switch m.kind {
	case 0:
		return b
	case reflectExtension:
		body := appendString(nil, 1, m.arg)
		if m.ext != 0 {
			body = codec.AppendVarint(append(body, 2<<3), uint64(int64(m.ext)))
		}
		return appendField(b, m.kind, body)
	}
	return appendField(b, m.kind, []byte(m.arg))
}

// Unmarshal decodes b; unknown fields are skipped, and of the oneof's
// fields the last one wins.
func (m *reflectRequest) Unmarshal(b []byte) error {
	*m = reflectRequest{}
	const name = "grpc.reflection.v1.ServerReflectionRequest"
	return grpcwire.Fields(b, name, func(num int32, _ uint64, p []byte) error {
		switch num {
		case 1:
			m.host = string(p)
		case reflectFileByName, reflectSymbol, reflectExtNumbers, reflectListServices:
			m.kind, m.arg, m.ext = num, string(p), 0
		case reflectExtension:
			m.kind, m.arg, m.ext = num, "", 0
			return grpcwire.Fields(p, "grpc.reflection.v1.ExtensionRequest", func(num int32, v uint64, p []byte) error {
				switch num {
				case 1:
					m.arg = string(p)
				case 2:
					m.ext = int32(v)
				}
				return nil
			})
		}
		return nil
	})
}

// reflectResponse is grpc.reflection.v1.ServerReflectionResponse:
//
//	message ServerReflectionResponse {
//	  string valid_host = 1;
//	  ServerReflectionRequest original_request = 2;
//	  oneof message_response {
//	    FileDescriptorResponse file_descriptor_response = 4;
//	    ExtensionNumberResponse all_extension_numbers_response = 5;
//	    ListServiceResponse list_services_response = 6;
//	    ErrorResponse error_response = 7;
//	  }
//	}
//	message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
//	message ExtensionNumberResponse { string base_type_name = 1; repeated int32 extension_number = 2; }
//	message ListServiceResponse { repeated ServiceResponse service = 1; }
//	message ServiceResponse { string name = 1; }
//	message ErrorResponse { int32 error_code = 1; string error_message = 2; }
type reflectResponse struct {
	host     string
	req      *reflectRequest // original_request; nil: none
	kind     int32           // the answer: reflectFiles...; 0 when none is set
	files    [][]byte        // reflectFiles: encoded FileDescriptorProtos
	typeName string          // reflectExtensions: base_type_name
	extNums  []int32         // reflectExtensions
	services []string        // reflectServices
	code     Code            // reflectError
	message  string          // reflectError
}

// Size returns the encoded size (it encodes).
func (m *reflectResponse) Size() int { return len(m.MarshalAppend(nil)) }

// MarshalAppend appends the encoding to b.
func (m *reflectResponse) MarshalAppend(b []byte) []byte {
	b = appendString(b, 1, m.host)
	if m.req != nil {
		b = appendField(b, 2, m.req.MarshalAppend(nil))
	}
	var body []byte
	switch m.kind {
	case reflectFiles:
		for _, f := range m.files {
			body = appendField(body, 1, f)
		}
	case reflectExtensions:
		body = appendString(body, 1, m.typeName)
		if len(m.extNums) > 0 {
			var packed []byte
			for _, n := range m.extNums {
				packed = codec.AppendVarint(packed, uint64(int64(n)))
			}
			body = appendField(body, 2, packed)
		}
	case reflectServices:
		for _, s := range m.services {
			body = appendField(body, 1, appendString(nil, 1, s))
		}
	case reflectError:
		if m.code != 0 {
			body = codec.AppendVarint(append(body, 1<<3), uint64(m.code))
		}
		body = appendString(body, 2, m.message)
	default:
		return b
	}
	return appendField(b, m.kind, body)
}

// Unmarshal decodes b; unknown fields are skipped. The message keeps no
// reference to b.
func (m *reflectResponse) Unmarshal(b []byte) error {
	*m = reflectResponse{}
	return grpcwire.Fields(b, "grpc.reflection.v1.ServerReflectionResponse", func(num int32, _ uint64, p []byte) error {
		switch num {
		case 1:
			m.host = string(p)
		case 2:
			m.req = new(reflectRequest)
			return m.req.Unmarshal(p)
		case reflectFiles, reflectExtensions, reflectServices, reflectError:
			*m = reflectResponse{host: m.host, req: m.req, kind: num}
			return m.unmarshalAnswer(p)
		}
		return nil
	})
}

// unmarshalAnswer decodes the body of the answer m.kind.
func (m *reflectResponse) unmarshalAnswer(b []byte) error {
	return grpcwire.Fields(b, "grpc.reflection.v1.ServerReflectionResponse", func(num int32, v uint64, p []byte) error {
		switch {
		case m.kind == reflectFiles && num == 1:
			m.files = append(m.files, append([]byte{}, p...))
		case m.kind == reflectExtensions && num == 1:
			m.typeName = string(p)
		case m.kind == reflectExtensions && num == 2 && p == nil:
			m.extNums = append(m.extNums, int32(v))
		case m.kind == reflectExtensions && num == 2:
			for len(p) > 0 {
				v, n := codec.ConsumeVarint(p)
				if n < 0 {
					return codec.Err("grpc.reflection.v1.ExtensionNumberResponse", "extension_number", n)
				}
				m.extNums, p = append(m.extNums, int32(v)), p[n:]
			}
		case m.kind == reflectServices && num == 1:
			return grpcwire.Fields(p, "grpc.reflection.v1.ServiceResponse", func(num int32, _ uint64, p []byte) error {
				if num == 1 {
					m.services = append(m.services, string(p))
				}
				return nil
			})
		case m.kind == reflectError && num == 1:
			m.code = Code(v)
		case m.kind == reflectError && num == 2:
			m.message = string(p)
		}
		return nil
	})
}

// appendString appends the string field num unless s is empty (proto3).
func appendString(b []byte, num int32, s string) []byte {
	if s == "" {
		return b
	}
	return codec.AppendString(codec.AppendVarint(b, codec.Tag(num, codec.BytesType)), s)
}

// appendField appends the length-delimited field num, even empty.
func appendField(b []byte, num int32, p []byte) []byte {
	return codec.AppendBytes(codec.AppendVarint(b, codec.Tag(num, codec.BytesType)), p)
}
