// Package prometheus exports yrpc's call metrics to Prometheus through
// github.com/prometheus/client_golang.
//
// An [Observer] is a metrics.Observer: install it with rt.WithObserver, alone
// or next to the expvar Recorder with metrics.Multi. It maintains, with the
// namespace "yrpc" by default:
//
//	yrpc_calls_total{side,service,method,instance,code}              counter
//	yrpc_attempts_total{side,service,method,instance,code}           counter
//	yrpc_mocked_total{side,service,method,instance,kind}             counter
//	yrpc_call_duration_seconds{side,service,method,instance}         histogram
//	yrpc_attempt_duration_seconds{side,service,method,instance}      histogram
//
// Calls are whole calls (client: after retries, fallbacks and mocks; server:
// one handled call) and have an empty instance; attempts are single client
// attempts labelled with the provider's address. side is "client" or
// "server", code a status code name such as "OK" or "Unavailable", kind
// "forced" or "fallback". Rates, error ratios and latency quantiles follow
// with the usual PromQL, e.g.
//
//	sum by (service, method) (rate(yrpc_calls_total{side="client",code!="OK"}[5m]))
//	histogram_quantile(0.99, sum by (le) (rate(yrpc_call_duration_seconds_bucket{method="Get"}[5m])))
//
// This package is a module of its own so that programs that embed yrpc
// without it do not depend on client_golang.
package prometheus
