// Package metrics defines the events the yrpc runtime reports about finished
// calls and attempts, and the RED metrics (rate, errors, duration) that yrpc
// keeps for them by default.
//
// The runtime calls an [Observer] once per client attempt (Event.Attempt
// 1, 2, ...), once per whole client call (after retries, fallbacks and
// mocks) and once per handled server call; rt.WithObserver installs one.
// [Recorder] is the built-in Observer: it keeps, per side, service, method
// and instance, call counts by status code, retry and mock counts, and a
// latency histogram with fixed buckets, all in atomic counters so that
// Observe takes no lock and allocates nothing for a series it has seen
// before. [Recorder.Snapshot] copies them into a plain, JSON-marshalable
// [Snapshot] with quantile estimates, and [Recorder.Publish] serves that
// snapshot through the standard library's expvar (GET /debug/vars).
//
// [Multi] fans events out to several observers, for example a Recorder and
// the Prometheus observer of github.com/yrpc/yrpc/contrib/prometheus, which
// lives in its own module so that embedding yrpc does not pull in
// client_golang.
//
// The package uses only the standard library.
package metrics
