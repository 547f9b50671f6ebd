package grpcwire

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// errTimeout is ParseTimeout's error.
var errTimeout = errors.New("grpcwire: bad grpc-timeout: want 1 to 8 digits and a unit of H, M, S, m, u, n")

// timeoutUnits are grpc-timeout's units, the smallest first.
var timeoutUnits = [...]struct {
	c byte
	d time.Duration
}{{'n', time.Nanosecond}, {'u', time.Microsecond}, {'m', time.Millisecond}, {'S', time.Second}, {'M', time.Minute}, {'H', time.Hour}}

// ParseTimeout parses a grpc-timeout value, e.g. "100m" (100 ms). A value
// beyond what a time.Duration holds is the largest Duration.
func ParseTimeout(s string) (time.Duration, error) {
	if len(s) < 2 || len(s) > 9 {
		return 0, errTimeout
	}
	n, err := strconv.ParseUint(s[:len(s)-1], 10, 64)
	if err != nil || s[0] == '+' {
		return 0, errTimeout
	}
	for _, u := range timeoutUnits {
		if u.c == s[len(s)-1] {
			if n > uint64(math.MaxInt64/u.d) {
				return math.MaxInt64, nil
			}
			return time.Duration(n) * u.d, nil
		}
	}
	return 0, errTimeout
}

// AppendTimeout appends d as a grpc-timeout value: in the smallest unit
// that holds it in 8 digits, rounded up so that the receiver's deadline is
// never earlier than the sender's. d <= 0 is "0n".
func AppendTimeout(dst []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(dst, '0', 'n')
	}
	const maxValue = 1e8 - 1
	for _, u := range timeoutUnits {
		v := d / u.d
		if d%u.d != 0 {
			v++
		}
		if v <= maxValue {
			return append(strconv.AppendInt(dst, int64(v), 10), u.c)
		}
	}
	return append(dst, "99999999H"...) // unreachable for a Duration
}
