package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/yrpc/yrpc/gen"
)

// ServicePolicy describes the annotations of s in one line, e.g.
// "group=HK  version=1.2.0  balance=consistent_hash", or "" when it has
// none.
func ServicePolicy(s *gen.Service) string {
	var p []string
	if s.Group != "" {
		p = append(p, "group="+s.Group)
	}
	if s.Version != "" {
		p = append(p, "version="+s.Version)
	}
	if r := s.RateLimit; r != nil {
		p = append(p, fmt.Sprintf("rate-limit=%v/s burst %d", r.Rate, r.Burst))
	}
	if b := s.Breaker; b != nil {
		p = append(p, fmt.Sprintf("breaker=%v%% of >=%d calls, open %v", b.ErrorRate*100, b.MinRequests, b.OpenFor))
	}
	if s.Balance != "" {
		p = append(p, "balance="+s.Balance)
	}
	if len(s.Allow) > 0 {
		p = append(p, "allow="+strings.Join(s.Allow, ","))
	}
	return strings.Join(p, "  ")
}

// MethodPolicy describes the policies of m in one line, e.g. "idempotent
// timeout=300ms try-timeout=100ms retry=3 tries every 50ms", or "" when it
// has none. The method's kind is not a policy: describe and the .proto
// show it on their own.
func MethodPolicy(m *gen.Method) string {
	var p []string
	if m.Idempotent {
		p = append(p, "idempotent")
	}
	if m.Timeout > 0 {
		p = append(p, "timeout="+m.Timeout.String())
	}
	if m.TryTimeout > 0 {
		p = append(p, "try-timeout="+m.TryTimeout.String())
	}
	if r := m.Retry; r != nil {
		s := fmt.Sprintf("retry=%d tries every %v", r.Tries, r.Interval)
		if r.Backoff > 1 {
			s += fmt.Sprintf(" x%v", r.Backoff)
		}
		if r.MaxInterval > 0 {
			s += fmt.Sprintf(" max %v", r.MaxInterval)
		}
		if r.Jitter > 0 {
			s += fmt.Sprintf(" ±%v%%", r.Jitter*100)
		}
		p = append(p, s)
	}
	if m.HashKey != "" {
		p = append(p, "hash-key="+m.HashKey)
	}
	if m.FaultMode != "" {
		s := "fault=" + m.FaultMode
		if m.FaultMode == "forking" {
			s += "(" + strconv.Itoa(m.Forks) + ")"
		}
		p = append(p, s)
	}
	if m.Hedge > 0 {
		p = append(p, "hedge="+m.Hedge.String())
	}
	if mk := m.Mock; mk != nil {
		p = append(p, mockPolicy(mk))
	}
	if m.MaxMessageSize > 0 {
		p = append(p, "max-message-size="+strconv.Itoa(m.MaxMessageSize))
	}
	if r := m.ClientRateLimit; r != nil {
		p = append(p, fmt.Sprintf("client-rate-limit=%v/s burst %d", r.Rate, r.Burst))
	}
	if len(m.Allow) > 0 {
		p = append(p, "allow="+strings.Join(m.Allow, ","))
	}
	return strings.Join(p, " ")
}

func mockPolicy(mk *gen.Mock) string {
	mode := "on-failure"
	if mk.Force {
		mode = "force"
	}
	s := "mock=" + mode + " "
	switch mk.Action {
	case "empty":
		s += "empty"
	case "value":
		// One line: a value built in memory may span several.
		var b bytes.Buffer
		if json.Compact(&b, []byte(mk.Value)) != nil {
			b.Reset()
			b.WriteString(strings.Join(strings.Fields(mk.Value), " "))
		}
		s += "value " + b.String()
	case "fail":
		s += fmt.Sprintf("fail %s %q", mk.Code, mk.Message)
	}
	return s
}

// FieldRules describes the validators of f in one line, e.g. "not-empty
// max-len=64", or "" when it has none.
func FieldRules(f *gen.Field) string {
	var p []string
	v := f.Validate
	if v.NotEmpty {
		p = append(p, "not-empty")
	}
	if v.MinLen > 0 {
		p = append(p, fmt.Sprintf("min-len=%d", v.MinLen))
	}
	if v.MaxLen > 0 {
		p = append(p, fmt.Sprintf("max-len=%d", v.MaxLen))
	}
	switch {
	case v.Min != nil && v.Max != nil:
		p = append(p, "range=["+gen.FormatBound(f.Kind, *v.Min)+", "+gen.FormatBound(f.Kind, *v.Max)+"]")
	case v.Min != nil:
		p = append(p, "min="+gen.FormatBound(f.Kind, *v.Min))
	case v.Max != nil:
		p = append(p, "max="+gen.FormatBound(f.Kind, *v.Max))
	}
	if v.Match != "" {
		p = append(p, "match="+v.Match)
	}
	return strings.Join(p, " ")
}
