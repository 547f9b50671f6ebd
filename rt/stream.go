package rt

import (
	"context"
	"io"
)

// StreamKind says whether a method streams and which way.
type StreamKind uint8

// Stream kinds.
const (
	NotStream       StreamKind = iota // a unary or oneway method
	ServerStreaming                   // one request, a stream of responses
	ClientStreaming                   // a stream of requests, one response
	BidiStreaming                     // streams both ways
)

// String returns the kind as the schema spells it: "server_stream", ...
func (k StreamKind) String() string {
	switch k {
	case ServerStreaming:
		return "server_stream"
	case ClientStreaming:
		return "client_stream"
	case BidiStreaming:
		return "bidi_stream"
	}
	return "unary"
}

// Stream is what both ends of a stream have. Its methods are safe for
// concurrent use: a SendMsg and a RecvMsg run at once, so one goroutine
// may send while another receives (all that gRPC-Go allows), and calls of
// SendMsg from several goroutines take turns, as do calls of RecvMsg:
// messages go out in the order their SendMsg calls took their turns, and
// each message received goes to one RecvMsg. (A stream that an
// interceptor wraps is as safe as its wrapper.)
type Stream interface {
	// Context is the stream's context: canceled when the stream ends, its
	// deadline passes or the peer resets it. A client stream's has the
	// caller's values and deadline and ends when the caller's context
	// does (or the method's timeout passes) or once RecvMsg has returned
	// the stream's end, with the caller's context's error or Canceled,
	// after the stream's tries are reported (OnAttempt): what waits on it
	// finds the stream settled.
	Context() context.Context
	// SendMsg sends m, waiting for the peer's flow-control credit.
	SendMsg(m Message) error
	// RecvMsg receives the next message into m. It returns io.EOF when
	// the peer has sent its last message (a client's stream ended with
	// status OK), or the stream's error.
	RecvMsg(m Message) error
}

// ClientStreamer is the client's end of a stream, as NewStream returns it
// to generated code.
type ClientStreamer interface {
	Stream
	// CloseSend tells the server no more messages come (half-close),
	// after a SendMsg under way.
	CloseSend() error
	// Trailer is the metadata the server ended the stream with; valid
	// once RecvMsg has returned io.EOF or an error.
	Trailer() MD
}

// ServerStreamer is the server's end of a stream, as a handler gets it.
// The stream ends when the handler returns: a goroutine the handler
// left with it then gets FailedPrecondition from SendMsg and RecvMsg,
// at once if it was waiting in them.
type ServerStreamer interface {
	Stream
	// SetTrailer adds metadata to the trailer the stream ends with;
	// pairs whose key starts with "yrpc-", the runtime's, are dropped (as
	// SetResponseMetadata drops them).
	SetTrailer(md MD)
}

// StreamHandler serves one stream on the server: the generated dispatch,
// wrapped by the server's stream interceptors.
type StreamHandler func(ss ServerStreamer) error

// StreamServerInterceptor wraps every stream handler of a server.
type StreamServerInterceptor func(ss ServerStreamer, info *CallInfo, next StreamHandler) error

// Streamer opens a client stream: the call path below the stream
// interceptors.
type Streamer func(ctx context.Context, info *CallInfo) (ClientStreamer, error)

// StreamClientInterceptor wraps the opening of every client stream; it
// may wrap the stream it returns.
type StreamClientInterceptor func(ctx context.Context, info *CallInfo, next Streamer) (ClientStreamer, error)

// The typed streams generated code hands out, in the style of gRPC-Go's
// generic streams: Send and Recv take and return the method's message
// types.
type (
	// ServerStreamingClient is the client's end of a server stream.
	ServerStreamingClient[Res any] interface {
		Recv() (*Res, error)
		ClientStreamer
	}
	// ClientStreamingClient is the client's end of a client stream.
	ClientStreamingClient[Req, Res any] interface {
		Send(*Req) error
		CloseAndRecv() (*Res, error)
		ClientStreamer
	}
	// BidiStreamingClient is the client's end of a bidi stream.
	BidiStreamingClient[Req, Res any] interface {
		Send(*Req) error
		Recv() (*Res, error)
		ClientStreamer
	}
	// ServerStreamingServer is the handler's end of a server stream.
	ServerStreamingServer[Res any] interface {
		Send(*Res) error
		ServerStreamer
	}
	// ClientStreamingServer is the handler's end of a client stream.
	ClientStreamingServer[Req, Res any] interface {
		Recv() (*Req, error)
		SendAndClose(*Res) error
		ServerStreamer
	}
	// BidiStreamingServer is the handler's end of a bidi stream.
	BidiStreamingServer[Req, Res any] interface {
		Recv() (*Req, error)
		Send(*Res) error
		ServerStreamer
	}
)

// GenericClientStream gives a ClientStreamer the typed methods of the
// client stream interfaces. Req and Res are generated message types (their
// pointers implement Message).
type GenericClientStream[Req, Res any] struct{ ClientStreamer }

// Send sends m.
func (s *GenericClientStream[Req, Res]) Send(m *Req) error {
	return s.SendMsg(any(m).(Message))
}

// Recv receives the next message; io.EOF at the end of the stream.
func (s *GenericClientStream[Req, Res]) Recv() (*Res, error) {
	m := new(Res)
	if err := s.RecvMsg(any(m).(Message)); err != nil {
		return nil, err
	}
	return m, nil
}

// CloseAndRecv half-closes the stream and receives the server's one
// response.
func (s *GenericClientStream[Req, Res]) CloseAndRecv() (*Res, error) {
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	m, err := s.Recv()
	if err == io.EOF {
		return nil, Errorf(Internal, "client stream: the server ended the stream without a response")
	}
	if err != nil {
		return nil, err
	}
	var extra Res
	switch err := s.RecvMsg(any(&extra).(Message)); err {
	case io.EOF:
		return m, nil
	case nil:
		return nil, Errorf(Internal, "client stream: the server sent more than one response")
	default:
		return nil, err
	}
}

// GenericServerStream gives a ServerStreamer the typed methods of the
// server stream interfaces.
type GenericServerStream[Req, Res any] struct{ ServerStreamer }

// Send sends m.
func (s *GenericServerStream[Req, Res]) Send(m *Res) error {
	return s.SendMsg(any(m).(Message))
}

// Recv receives the client's next message; io.EOF once it half-closed.
func (s *GenericServerStream[Req, Res]) Recv() (*Req, error) {
	m := new(Req)
	if err := s.RecvMsg(any(m).(Message)); err != nil {
		return nil, err
	}
	return m, nil
}

// SendAndClose sends the one response of a client stream; the stream
// ends when the handler returns.
func (s *GenericServerStream[Req, Res]) SendAndClose(m *Res) error {
	return s.SendMsg(any(m).(Message))
}

// nilMessage is the error of SendMsg and RecvMsg given a nil message.
func nilMessage(method string) error {
	return Errorf(InvalidArgument, "%s: nil message", method)
}
