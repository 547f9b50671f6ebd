package rt

import "context"

// ProtocolGRPCWeb names gRPC-Web, over HTTP/1.1 or HTTP/2, as ProtocolFrom
// reports it. Registry payloads do not list it: ProtocolGRPC covers both.
const ProtocolGRPCWeb = "grpc-web"

// ProtocolFrom returns the wire protocol that the call or stream ctx
// serves came over (ctx is a handler's, a server interceptor's or a
// ServerStreamer's context): ProtocolYRPC, ProtocolGRPC or
// ProtocolGRPCWeb. It returns "" and false for other contexts.
func ProtocolFrom(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(serverCallKey{}).(*callCtx)
	if !ok {
		return "", false
	}
	switch c.proto {
	case protoGRPC:
		return ProtocolGRPC, true
	case protoGRPCWeb:
		return ProtocolGRPCWeb, true
	}
	return ProtocolYRPC, true
}

// callProto is what a server call came over, as a callCtx keeps it: a
// byte, so that the context of every call does not grow.
type callProto uint8

const (
	protoYRPC callProto = iota
	protoGRPC
	protoGRPCWeb
)
