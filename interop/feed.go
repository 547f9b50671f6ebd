package interop

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/rt"
)

// WaitTopic is the topic whose subscription (or publication) Feed holds
// open, reading nothing more, until its context ends.
const WaitTopic = "wait"

// Feed implements examples/feed's service for the interop tests, with
// answers a test can predict:
//
//   - Publish answers the number of events and the last one's Seq; an
//     event with the text "fail" fails the stream with FailedPrecondition
//     (the server validates each event first: a topic is required). After
//     a first event of WaitTopic it reads nothing more: it signals
//     Waiting, waits for its context to end and sends the context's error
//     to Ended.
//   - Subscribe sends events From (0: 1) to 3 of the topic, with the text
//     "event N", then the trailer "sent" with their count. For WaitTopic
//     it sends event 1, signals Waiting, waits for its context to end and
//     sends the context's error to Ended.
//   - Chat answers every line with its text in upper case, from "server".
//
// Every stream sends back its EchoPrefix metadata in its trailer. The zero
// value is ready to use; Feed is safe for concurrent use.
type Feed struct {
	feedrpc.UnimplementedFeedServer
	// Waiting and Ended, when not nil, are as Users' (dropped when full).
	Waiting chan struct{}
	Ended   chan error
}

// echoTrailer sends back the stream's EchoPrefix metadata in its trailer.
func echoTrailer(s rt.ServerStreamer) {
	md := rt.IncomingMetadata(s.Context())
	for i := 0; i+1 < len(md); i += 2 {
		if strings.HasPrefix(md[i], EchoPrefix) {
			s.SetTrailer(rt.MD{md[i], md[i+1]})
		}
	}
}

// Publish implements feedrpc.FeedServer.
func (f *Feed) Publish(s rt.ClientStreamingServer[feedrpc.Event, feedrpc.Published]) error {
	echoTrailer(s)
	res := &feedrpc.Published{}
	for {
		e, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return s.SendAndClose(res)
		}
		if err != nil {
			return err
		}
		if e.Text == "fail" {
			return rt.Errorf(rt.FailedPrecondition, "event %d fails", res.Count+1)
		}
		if e.Topic == WaitTopic && res.Count == 0 {
			return f.wait(s)
		}
		res.Count++
		res.LastSeq = res.Count
	}
}

// Subscribe implements feedrpc.FeedServer.
func (f *Feed) Subscribe(req *feedrpc.Subscription, s rt.ServerStreamingServer[feedrpc.Event]) error {
	echoTrailer(s)
	if req.Topic == WaitTopic {
		if err := s.Send(&feedrpc.Event{Topic: req.Topic, Seq: 1, Text: "event 1"}); err != nil {
			return err
		}
		return f.wait(s)
	}
	sent := 0
	for seq := max(req.From, 1); seq <= 3; seq++ {
		if err := s.Send(&feedrpc.Event{Topic: req.Topic, Seq: seq, Text: fmt.Sprintf("event %d", seq)}); err != nil {
			return err
		}
		sent++
	}
	s.SetTrailer(rt.MD{"sent", strconv.Itoa(sent)})
	return nil
}

// Chat implements feedrpc.FeedServer.
func (f *Feed) Chat(s rt.BidiStreamingServer[feedrpc.Line, feedrpc.Line]) error {
	echoTrailer(s)
	for {
		l, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(&feedrpc.Line{From: "server", Text: strings.ToUpper(l.Text)}); err != nil {
			return err
		}
	}
}

// wait signals Waiting, waits for the end of s's context, sends its
// error to Ended and returns it.
func (f *Feed) wait(s rt.Stream) error {
	notify(f.Waiting, struct{}{})
	<-s.Context().Done()
	notify(f.Ended, s.Context().Err())
	return s.Context().Err()
}

// notify sends v to ch unless ch is nil or full.
func notify[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}
