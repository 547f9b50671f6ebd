package rt

import (
	"reflect"
	"strings"
	"testing"
)

var reflectRequests = []reflectRequest{
	{},
	{host: "h", kind: reflectListServices},
	{kind: reflectFileByName, arg: "users.proto"},
	{kind: reflectSymbol, arg: "users.Users.Get"},
	{kind: reflectExtension, arg: "users.User", ext: 1000},
	{kind: reflectExtension, ext: -1},
	{kind: reflectExtNumbers, arg: "users.User"},
}

var reflectResponses = []reflectResponse{
	{},
	{host: "h", req: &reflectRequests[1], kind: reflectServices, services: []string{"a.B", "c.D"}},
	{req: &reflectRequest{}, kind: reflectFiles, files: [][]byte{{1, 2}, {}}},
	{kind: reflectExtensions, typeName: "users.User", extNums: []int32{1, 1000, -5}},
	{kind: reflectExtensions},
	{kind: reflectError, code: NotFound, message: "no"},
}

// Reflection's messages decode what they encode.
func TestReflectMessagesRoundTrip(t *testing.T) {
	for _, m := range reflectRequests {
		var got reflectRequest
		if err := got.Unmarshal(m.MarshalAppend(nil)); err != nil || got != m {
			t.Errorf("%+v decodes as %+v, %v", m, got, err)
		}
	}
	for _, m := range reflectResponses {
		var got reflectResponse
		b := m.MarshalAppend(nil)
		if err := got.Unmarshal(b); err != nil || !reflect.DeepEqual(got, m) || m.Size() != len(b) {
			t.Errorf("%+v decodes as %+v, %v", m, got, err)
		}
	}
	// An extension number sent unpacked, as proto2 writers may.
	var got reflectResponse
	if err := got.Unmarshal([]byte{5<<3 | 2, 4, 2 << 3, 7, 2 << 3, 8}); err != nil || !reflect.DeepEqual(got.extNums, []int32{7, 8}) {
		t.Errorf("unpacked extension numbers: %v, %v", got.extNums, err)
	}
}

// A service whose FileDescriptor does not decode makes the index fail,
// naming the service.
func TestReflectIndexBadDescriptor(t *testing.T) {
	for _, desc := range [][]byte{{0xff}, {1<<3 | 2, 5, 'a'}, {2<<3 | 2, 1, 'p'}} {
		_, err := newReflectIndex([]*ServiceDesc{{Name: "x.Y", FileDescriptor: desc}}, nil)
		if err == nil || !strings.Contains(err.Error(), `"x.Y"`) {
			t.Errorf("%x: %v", desc, err)
		}
	}
}

func FuzzReflectRequest(f *testing.F) {
	for _, m := range reflectRequests {
		f.Add(m.MarshalAppend(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m, again reflectRequest
		if m.Unmarshal(b) != nil {
			return
		}
		if err := again.Unmarshal(m.MarshalAppend(nil)); err != nil || again != m {
			t.Fatalf("%+v re-decodes as %+v, %v", m, again, err)
		}
	})
}

func FuzzReflectResponse(f *testing.F) {
	for _, m := range reflectResponses {
		f.Add(m.MarshalAppend(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m, again reflectResponse
		if m.Unmarshal(b) != nil {
			return
		}
		if err := again.Unmarshal(m.MarshalAppend(nil)); err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("%+v re-decodes as %+v, %v", m, again, err)
		}
	})
}
