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
// Only attempts carry an instance label, and provider addresses come and
// go (autoscaling, restarts on new ports), so the Observer bounds them, as
// exporters that take labels from outside commonly do (the OpenTelemetry
// Collector's Prometheus exporter expires series without updates after
// metric_expiration, 5 minutes by default; OpenTelemetry's metrics SDK
// caps each metric's attribute sets at 2000 and folds the rest into one
// overflow point, which keeps totals right):
//
//   - Options.InstanceTTL (default [DefaultInstanceTTL], 10 minutes): the
//     series of an instance without an attempt for that long are deleted,
//     at the next scrape or new instance series (a sweep runs at most
//     every quarter TTL). Prometheus marks them stale; an instance called
//     again starts new series from zero, which rate() and increase() take
//     as a counter reset.
//   - Options.MaxSeries (default metrics.DefaultMaxSeries, 4096, as the
//     expvar Recorder's): at most that many (side, service, method,
//     instance) series; the attempts of new instances beyond it are counted
//     under instance="overflow" ([OverflowInstance]), so sums over instances
//     stay right. Such events take the Observer's lock, so alert on
//     yrpc_attempts_total{instance="overflow"} and raise the bound.
//
// A negative value turns either off.
//
// A [Collector] reads gauges at scrape time from the snapshots of a client
// (rt.Client.Stats), a server (rt.Server.Stats) and a registry
// (zkreg.Registry.Connected); register it with a prometheus.Registerer.
// Each source given in [CollectorOptions] adds its gauges, with the
// namespace "yrpc" by default:
//
//	Client:
//	yrpc_client_provider_breaker_state{service,instance}  0 closed, 1 half-open, 2 open
//	yrpc_client_provider_in_flight{service,instance}      calls in flight to the provider
//	yrpc_client_providers{service,state}                  providers by state: routable, draining, not_serving
//	yrpc_client_connections                               open connections to providers
//	Server:
//	yrpc_server_connections                               open connections
//	yrpc_server_in_flight                                 calls and streams in flight
//	yrpc_server_serving                                   1 serving, 0 not (shut down, drained, SetServing(false))
//	Registry:
//	yrpc_registry_connected                               1 with a registry session, 0 without
//
// The per-provider series cover the routable providers only: a provider
// that is draining (governance config, `yrpcc ctl drain`) or reports
// itself not serving is counted by yrpc_client_providers and has no
// breaker or in-flight series until it is routable again (a drained one
// counts as draining even when also not serving). The client lists a
// service once it has called it. A client that calls one service under
// several groups or versions reports them under one service label: calls
// in flight add up, the breaker state is the worst, and providers count
// distinct addresses. For example:
//
//	max by (service, instance) (yrpc_client_provider_breaker_state) == 2  # open breakers
//	yrpc_client_providers{state="routable"} == 0                          # a service with nowhere to go
//	yrpc_registry_connected == 0                                          # no ZooKeeper session
//
// This package is a module of its own so that programs that embed yrpc
// without it do not depend on client_golang.
package prometheus
