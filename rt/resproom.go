package rt

import (
	"context"
	"unsafe"
)

// InvokeNew calls method m of service sd through inv and returns the
// answer in a new response message; generated XxxClient methods call it.
// With a *Client, and a method whose descriptor has NewResponseWithRoom
// (generated ones do), the message is made once the answer's size is
// known, with room for the answer's bytes: one allocation for the message
// and the bytes its strings share. With any other Invoker, with client
// interceptors (which see the response before the call) and for other
// descriptors, the message is made by NewResponse before Invoke. Oneway
// methods return a nil message.
func InvokeNew(ctx context.Context, inv Invoker, sd *ServiceDesc, m int, req Message, opts ...CallOption) (Message, error) {
	if c, ok := inv.(*Client); ok {
		return c.run(ctx, sd, m, req, nil, true, opts)
	}
	return invokeNew(ctx, inv, sd, m, req, opts)
}

// invokeNew is InvokeNew with an Invoker other than *Client.
func invokeNew(ctx context.Context, inv Invoker, sd *ServiceDesc, m int, req Message, opts []CallOption) (Message, error) {
	var resp Message
	if m >= 0 && m < len(sd.Methods) && !sd.Methods[m].Oneway {
		resp = sd.Methods[m].NewResponse()
	}
	if err := inv.Invoke(ctx, sd, m, req, resp, opts...); err != nil {
		return nil, err
	}
	return resp, nil
}

// WithRoom returns a new, empty T and room for n bytes allocated with it:
// the value of generated descriptors' MethodDesc.NewResponseWithRoom.
// While anything refers to the message or into the room (a string that
// UnmarshalOwned made there), both stay allocated.
//
// The room is the smallest of a ladder of sizes that holds n bytes: steps
// of 32 bytes up to 512, then the allocator's size classes up to 4 KiB
// (those of go1.26), so that the room adds at most about an eighth to n.
// Over 4 KiB, the message and the room are two allocations. Each step is
// a type of its own per T: WithRoom adds about 27 KB to a binary per
// response type (go1.26, amd64).
func WithRoom[T any, PT interface {
	*T
	Message
	OwnedUnmarshaler
}](n int) (Message, []byte) {
	switch {
	case n <= 0:
		return PT(new(T)), []byte{} // not nil: a response with no bytes
	case n <= 32:
		return messageWithRoom[T, PT, [32]byte](n)
	case n <= 64:
		return messageWithRoom[T, PT, [64]byte](n)
	case n <= 96:
		return messageWithRoom[T, PT, [96]byte](n)
	case n <= 128:
		return messageWithRoom[T, PT, [128]byte](n)
	case n <= 160:
		return messageWithRoom[T, PT, [160]byte](n)
	case n <= 192:
		return messageWithRoom[T, PT, [192]byte](n)
	case n <= 224:
		return messageWithRoom[T, PT, [224]byte](n)
	case n <= 256:
		return messageWithRoom[T, PT, [256]byte](n)
	case n <= 288:
		return messageWithRoom[T, PT, [288]byte](n)
	case n <= 320:
		return messageWithRoom[T, PT, [320]byte](n)
	case n <= 352:
		return messageWithRoom[T, PT, [352]byte](n)
	case n <= 384:
		return messageWithRoom[T, PT, [384]byte](n)
	case n <= 416:
		return messageWithRoom[T, PT, [416]byte](n)
	case n <= 448:
		return messageWithRoom[T, PT, [448]byte](n)
	case n <= 480:
		return messageWithRoom[T, PT, [480]byte](n)
	case n <= 512:
		return messageWithRoom[T, PT, [512]byte](n)
	case n <= 576:
		return messageWithRoom[T, PT, [576]byte](n)
	case n <= 640:
		return messageWithRoom[T, PT, [640]byte](n)
	case n <= 704:
		return messageWithRoom[T, PT, [704]byte](n)
	case n <= 768:
		return messageWithRoom[T, PT, [768]byte](n)
	case n <= 896:
		return messageWithRoom[T, PT, [896]byte](n)
	case n <= 1024:
		return messageWithRoom[T, PT, [1024]byte](n)
	case n <= 1152:
		return messageWithRoom[T, PT, [1152]byte](n)
	case n <= 1280:
		return messageWithRoom[T, PT, [1280]byte](n)
	case n <= 1408:
		return messageWithRoom[T, PT, [1408]byte](n)
	case n <= 1536:
		return messageWithRoom[T, PT, [1536]byte](n)
	case n <= 1792:
		return messageWithRoom[T, PT, [1792]byte](n)
	case n <= 2048:
		return messageWithRoom[T, PT, [2048]byte](n)
	case n <= 2304:
		return messageWithRoom[T, PT, [2304]byte](n)
	case n <= 2688:
		return messageWithRoom[T, PT, [2688]byte](n)
	case n <= 3072:
		return messageWithRoom[T, PT, [3072]byte](n)
	case n <= 3456:
		return messageWithRoom[T, PT, [3456]byte](n)
	case n <= 4096:
		return messageWithRoom[T, PT, [4096]byte](n)
	}
	return PT(new(T)), make([]byte, n)
}

// messageWithRoom allocates a T followed by a room R (an array of bytes) and
// returns the T and the room's first n bytes.
func messageWithRoom[T any, PT interface {
	*T
	Message
}, R any](n int) (Message, []byte) {
	x := new(struct {
		_    [0]func() // not comparable: no equality function per T and R
		msg  T
		room R
	})
	return PT(&x.msg), unsafe.Slice((*byte)(unsafe.Pointer(&x.room)), n)
}
