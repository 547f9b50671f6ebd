package rt

// ServerStreamBuffered returns the bytes of messages a server stream has
// received and its handler not read yet (the receive queue's share of its
// window), for tests of flow control.
func ServerStreamBuffered(ss ServerStreamer) int64 { return ss.(*serverStream).s.Buffered() }
