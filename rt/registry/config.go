package registry

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The checks of governance values below are the one place that says which
// values a Governor stores: Memory, MemoryConn and zkreg.Registry run
// Config.Check on the result of every UpdateConfig, and `yrpcc ctl` runs
// CheckWeight and RateLimit.Check on its arguments. Like CheckAddr, they
// return errors without a package prefix, for the caller to wrap.

// CheckWeight reports whether w is a weight a provider may register
// (Endpoint.Weight) or an operator may set (InstanceConfig.Weight): an
// integer in 0..MaxWeight, where 0 means the default (100 for a provider,
// no override for an InstanceConfig).
func CheckWeight(w int) error {
	if w < 0 || w > MaxWeight {
		return fmt.Errorf("weight %d is out of range 0..%d", w, MaxWeight)
	}
	return nil
}

// Check reports whether rl is a rate limit a Governor stores: a Rate that
// is a finite number > 0 (no override is a nil RateLimit, not a rate of 0)
// and a Burst >= 0 (0 means a second's worth of calls).
func (rl RateLimit) Check() error {
	switch {
	case !(rl.Rate > 0) || math.IsInf(rl.Rate, 1): // NaN and +Inf are no rates (JSON refuses them)
		return fmt.Errorf("rate %v is not a finite number > 0", rl.Rate)
	case rl.Burst < 0:
		return fmt.Errorf("burst %d is negative", rl.Burst)
	}
	return nil
}

// Check reports whether c is a config a Governor stores: its RateLimit,
// if any, passes RateLimit.Check and each instance's Weight passes
// CheckWeight. The error names the field and the value ("rate limit: rate
// NaN is not a finite number > 0", "instance \"10.0.0.1:80\": weight -1 is
// out of range 0..10000"). Mocks are not checked here: their codes are
// rt's; rt ignores (and logs) a mock it cannot apply.
func (c Config) Check() error {
	if c.RateLimit != nil {
		if err := c.RateLimit.Check(); err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(c.Instances)) {
		if err := CheckWeight(c.Instances[addr].Weight); err != nil {
			return fmt.Errorf("instance %q: %w", addr, err)
		}
	}
	return nil
}
