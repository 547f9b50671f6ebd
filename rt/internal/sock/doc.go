// Package sock holds the socket-level machinery that both sides of a yrpc
// connection share: the batching Writer (a goroutine that finds the socket
// free writes its frame itself; frames queued meanwhile go out together,
// many per syscall), the Peeker (a non-blocking MSG_PEEK that tells a
// closed connection or waiting input without reading), and the SpinGate
// and LoneAvg that decide which readers may poll their socket before they
// park in the netpoller.
//
// It knows nothing of frames or calls: package rt and its internal
// packages build on it.
package sock
