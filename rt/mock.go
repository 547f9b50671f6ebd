package rt

import (
	"log/slog"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// mockRule is a mock set in the governance config, valid until expires.
type mockRule struct {
	policy  MockPolicy
	value   []byte // for MockReturnValue: the response in wire format
	expires time.Time
	set     bool
}

// buildMocks turns the config's mocks into rules by method index.
func buildMocks(sd *ServiceDesc, cfg registry.Config, log *slog.Logger) []mockRule {
	if len(cfg.Mocks) == 0 {
		return nil
	}
	rules := make([]mockRule, len(sd.Methods))
	for name, mc := range cfg.Mocks {
		i := -1
		for j := range sd.Methods {
			if sd.Methods[j].Name == name {
				i = j
			}
		}
		if i < 0 {
			log.Warn("rt: mock for unknown method ignored", "service", sd.Name, "method", name)
			continue
		}
		r := mockRule{set: true, expires: mc.Expires, value: mc.Value}
		r.policy.Mode = MockOnFailure
		if mc.Force {
			r.policy.Mode = MockForce
		}
		switch mc.Action {
		case "empty", "":
			r.policy.Action = MockReturnEmpty
		case "value":
			// Decoded here once, so that a value that does not decode is
			// refused with a warning instead of answering every call with
			// an empty response.
			if nr := sd.Methods[i].NewResponse; nr != nil {
				if err := nr().Unmarshal(mc.Value); err != nil {
					log.Warn("rt: mock with a value that does not decode ignored", "service", sd.Name, "method", name, "err", err)
					continue
				}
			}
			r.policy.Action = MockReturnValue
		case "fail":
			code, err := ParseCode(mc.Code)
			if err != nil || code == OK { // an OK "failure" would be an error that says OK
				log.Warn("rt: mock with bad code ignored", "service", sd.Name, "method", name, "code", mc.Code)
				continue
			}
			r.policy.Action, r.policy.Code, r.policy.Message = MockFail, code, mc.Message
		default:
			log.Warn("rt: mock with unknown action ignored", "service", sd.Name, "method", name, "action", mc.Action)
			continue
		}
		rules[i] = r
	}
	return rules
}

// applyMock answers a call with a mock. The answer carries the response
// metadata "yrpc-mock" = how ("forced" or "fallback") so that interceptors
// and metrics can tell it from a real one.
func (k *call) applyMock(how string) error {
	k.mocked = how
	if k.opts.respMD != nil {
		*k.opts.respMD = MD{MDMock, how}
	}
	p := &k.mock
	if p.Action == MockFail {
		return &Error{Code: p.Code, Message: k.info.Method.FullName + ": " + p.Message + " (mock)"}
	}
	k.emptyResponse()
	if p.Action == MockReturnValue && k.resp != nil && p.Value != nil {
		return copyMessage(k.resp, p.Value())
	}
	return nil
}

// MDMock is the response metadata key that marks mocked answers.
const MDMock = "yrpc-mock"
