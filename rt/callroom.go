package rt

import "unsafe"

// newServerCall returns the record of a call whose request, body, it
// decodes into req. The request of a method whose messages implement
// OwnedUnmarshaler (generated ones do), of up to 4.5 KiB, is copied into
// room allocated with the record and decoded there, so that the record
// and the request's bytes cost one allocation; any other request is
// decoded by Unmarshal, which copies it.
//
// The request's strings and byte slices then share the record's memory:
// a handler that keeps one keeps the record, which therefore drops what
// it refers to once the call ends (see serverCall.serve and
// callCtx.finish).
func newServerCall(req Message, body []byte) (*serverCall, error) {
	if o, ok := req.(OwnedUnmarshaler); ok && len(body) > 0 {
		if sc, b := callWithRoom(len(body)); sc != nil {
			copy(b, body)
			return sc, o.UnmarshalOwned(b)
		}
	}
	return new(serverCall), req.Unmarshal(body)
}

const (
	// callSize is the size of a call record.
	callSize = int(unsafe.Sizeof(serverCall{}))
	// mallocHeader is what the allocator adds to an object that holds
	// pointers and is over 512 bytes (since go1.22).
	mallocHeader = 8
)

// callWithRoom allocates a call record with room for n bytes after it,
// or returns nil when n is over about 4.5 KiB. The record and its room
// fill one of the allocator's size classes (those of go1.26 on 64-bit
// platforms, from 240 to 4864 bytes), the smallest that holds them: so they take at most an
// eighth more memory than the record and a copy of the request in two
// allocations would (as much on average), where rooms of sizes that
// double would take up to twice as much. A class smaller than the record
// has no room and is skipped.
func callWithRoom(n int) (*serverCall, []byte) {
	switch {
	case n <= 240-callSize:
		return withRoom(n, func(r *[max(240-callSize, 0)]byte) []byte { return r[:] })
	case n <= 256-callSize:
		return withRoom(n, func(r *[max(256-callSize, 0)]byte) []byte { return r[:] })
	case n <= 288-callSize:
		return withRoom(n, func(r *[max(288-callSize, 0)]byte) []byte { return r[:] })
	case n <= 320-callSize:
		return withRoom(n, func(r *[max(320-callSize, 0)]byte) []byte { return r[:] })
	case n <= 352-callSize:
		return withRoom(n, func(r *[max(352-callSize, 0)]byte) []byte { return r[:] })
	case n <= 384-callSize:
		return withRoom(n, func(r *[max(384-callSize, 0)]byte) []byte { return r[:] })
	case n <= 416-callSize:
		return withRoom(n, func(r *[max(416-callSize, 0)]byte) []byte { return r[:] })
	case n <= 448-callSize:
		return withRoom(n, func(r *[max(448-callSize, 0)]byte) []byte { return r[:] })
	case n <= 480-callSize:
		return withRoom(n, func(r *[max(480-callSize, 0)]byte) []byte { return r[:] })
	case n <= 512-callSize:
		return withRoom(n, func(r *[max(512-callSize, 0)]byte) []byte { return r[:] })
	case n <= 576-callSize-mallocHeader:
		return withRoom(n, func(r *[max(576-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 640-callSize-mallocHeader:
		return withRoom(n, func(r *[max(640-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 704-callSize-mallocHeader:
		return withRoom(n, func(r *[max(704-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 768-callSize-mallocHeader:
		return withRoom(n, func(r *[max(768-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 896-callSize-mallocHeader:
		return withRoom(n, func(r *[max(896-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1024-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1024-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1152-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1152-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1280-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1280-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1408-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1408-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1536-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1536-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 1792-callSize-mallocHeader:
		return withRoom(n, func(r *[max(1792-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 2048-callSize-mallocHeader:
		return withRoom(n, func(r *[max(2048-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 2304-callSize-mallocHeader:
		return withRoom(n, func(r *[max(2304-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 2688-callSize-mallocHeader:
		return withRoom(n, func(r *[max(2688-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 3072-callSize-mallocHeader:
		return withRoom(n, func(r *[max(3072-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 3200-callSize-mallocHeader:
		return withRoom(n, func(r *[max(3200-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 3456-callSize-mallocHeader:
		return withRoom(n, func(r *[max(3456-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 4096-callSize-mallocHeader:
		return withRoom(n, func(r *[max(4096-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	case n <= 4864-callSize-mallocHeader:
		return withRoom(n, func(r *[max(4864-callSize-mallocHeader, 0)]byte) []byte { return r[:] })
	}
	return nil, nil
}

// withRoom allocates a call record followed by a room R (an array of
// bytes, which room slices) and returns the record and the room's first n
// bytes.
func withRoom[R any](n int, room func(*R) []byte) (*serverCall, []byte) {
	x := new(struct {
		serverCall
		room R
	})
	return &x.serverCall, room(&x.room)[:n:n]
}
