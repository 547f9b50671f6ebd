package rt

// CallOption changes one call's behaviour (timeout, hash key, metadata,
// retries, ...). Options are applied in order; later ones win.
type CallOption func(*callOptions)

// callOptions is filled by CallOptions; the zero value means the method's
// policy and the client's defaults.
type callOptions struct {
	hashKey    []byte
	hasHashKey bool
}

// WithHashKey sets the consistent-hash key of the call, overriding the
// method's hash-key field.
func WithHashKey(key string) CallOption {
	return func(o *callOptions) { o.hashKey = []byte(key); o.hasHashKey = true }
}
