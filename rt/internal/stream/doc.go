// Package stream is what both ends of a yrpc stream share: the queue of
// received messages and the flow-control windows of the stream and of its
// connection (rt/wire's SendWindow and RecvWindow), the waits of a sender
// out of credit and of a receiver with nothing queued, and the frames
// that carry messages and window updates.
//
// The connection's reader delivers what arrives (Deliver, Grant, End); the
// application sends and receives (Send, Recv). Opening, half-closing,
// closing and resetting a stream are the client's and the server's own:
// package rt/internal/conn and package rt write those frames.
package stream
