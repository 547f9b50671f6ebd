package rt

import (
	"log/slog"

	"github.com/yrpc/yrpc/breaker"
	"github.com/yrpc/yrpc/rt/registry"
)

type breakerTicket = breaker.Ticket

// newInstBreaker makes the breaker of one provider of one service from the
// schema's policy; state changes are logged.
func newInstBreaker(p BreakerPolicy, key registry.Key, addr string, log *slog.Logger) *breaker.Breaker {
	return breaker.New(breaker.Settings{
		ErrorRate:   p.ErrorRate,
		MinRequests: p.MinRequests,
		OpenFor:     p.OpenFor,
		// A dead provider fails every call: trip after a few in a row
		// instead of waiting for the window's minimum volume.
		ConsecutiveFailures: 5,
		OnStateChange: func(from, to breaker.State) {
			log.Info("rt: breaker state changed", "key", key.String(), "addr", addr, "from", from.String(), "to", to.String())
		},
	})
}
