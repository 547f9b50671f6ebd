package rt

import "time"

// CallOption changes one call's behaviour (timeout, hash key, metadata,
// retries, ...). Options are applied in order; later ones win.
type CallOption func(*callOptions)

// callOptions is filled by CallOptions; the zero value means the method's
// policy and the client's defaults.
type callOptions struct {
	hashKey    []byte
	hasHashKey bool
	timeout    time.Duration
	tryTimeout time.Duration
	tries      int
	fault      FaultMode
	tagKey     string
	tagValue   string
	respMD     *MD
}

// WithHashKey sets the consistent-hash key of the call, overriding the
// method's hash-key field.
func WithHashKey(key string) CallOption {
	return func(o *callOptions) { o.hashKey = []byte(key); o.hasHashKey = true }
}

// WithCallTimeout sets the call's timeout, overriding the schema's and the
// client's default. The caller's context deadline still applies if earlier.
func WithCallTimeout(d time.Duration) CallOption {
	return func(o *callOptions) { o.timeout = d }
}

// WithTryTimeout bounds each attempt of the call, overriding the schema's
// TryTimeout. Without either, an attempt that may be retried gets half
// the time left, the last one all of it.
func WithTryTimeout(d time.Duration) CallOption {
	return func(o *callOptions) { o.tryTimeout = d }
}

// WithTries sets the number of attempts of a failover call, overriding the
// schema's retry policy.
func WithTries(n int) CallOption { return func(o *callOptions) { o.tries = n } }

// WithFaultMode overrides the method's fault mode for the call.
func WithFaultMode(m FaultMode) CallOption { return func(o *callOptions) { o.fault = m } }

// WithTag routes the call to providers registered with tag key=value; when
// no provider has it, the call goes to any provider (as Dubbo's tag router).
func WithTag(key, value string) CallOption {
	return func(o *callOptions) { o.tagKey, o.tagValue = key, value }
}

// ResponseMetadata stores the response's metadata in *md when the call
// returns. Mocked answers carry "yrpc-mock" = "forced" or "fallback".
func ResponseMetadata(md *MD) CallOption { return func(o *callOptions) { o.respMD = md } }
