package rt

// ClientStats is a snapshot of a Client's state, for dashboards and
// gauges (contrib/prometheus).
type ClientStats struct {
	// Services are the services the client has called, each with what it
	// knows of their providers.
	Services []ServiceStats
	// Conns is the number of open connections to providers.
	Conns int
}

// ServiceStats is what a client knows of one service's providers.
type ServiceStats struct {
	Name      string // "package.Service"
	Key       string // its registry key: "package.Service[group]@version"
	Providers []ProviderStatus
}

// Stats returns a snapshot of the client's services, providers and
// connections. It takes each service's lock in turn; call it for
// dashboards, not per call.
func (c *Client) Stats() ClientStats {
	var st ClientStats
	for sd, s := range *c.svcs.Load() {
		st.Services = append(st.Services, ServiceStats{Name: sd.Name, Key: s.keyName, Providers: c.Providers(sd)})
	}
	c.mu.Lock()
	pools := make([]connCounter, 0, len(c.pools)+len(c.gpools))
	for _, p := range c.pools {
		pools = append(pools, p)
	}
	for _, p := range c.gpools {
		pools = append(pools, p)
	}
	c.mu.Unlock()
	for _, p := range pools {
		st.Conns += p.Open()
	}
	return st
}

// connCounter is a pool that can count its open connections.
type connCounter interface{ Open() int }

// ServerStats is a snapshot of a Server's state.
type ServerStats struct {
	Conns    int   // open connections
	InFlight int64 // calls and streams in flight
	Serving  bool  // what the health service answers (not shut down, drained or SetServing(false))
}

// Stats returns a snapshot of the server's connections and calls.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	status, _ := s.health.status("")
	return ServerStats{Conns: n, InFlight: s.inflight.Load(), Serving: status == HealthServing}
}
