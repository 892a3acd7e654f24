package main

import (
	"net"
	"net/http"
	"sync"
	"time"

	"ordersaga/shared/adapters/paymentsim"
)

// provider is the payment provider the runner calls (PAYMENT_PROVIDER_URL):
// the simulator's JSON API served by the soak itself, so its ledger outlives
// a kill -9 of the runner, as a real provider's does, and the soak takes it
// down and brings it back the way an outage does.
type provider struct {
	sim *paymentsim.Sim
	srv *http.Server
	url string

	mu      sync.Mutex
	rate    float64
	latency time.Duration
}

func startProvider(seed uint64) (*provider, error) {
	sim, err := paymentsim.New(paymentsim.Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &provider{sim: sim}
	p.srv = &http.Server{Handler: p.sim.Handler(), ReadHeaderTimeout: 5 * time.Second}
	p.url = "http://" + ln.Addr().String()
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// setFailureRate sets the share of calls answered 503 (1: the provider is down).
func (p *provider) setFailureRate(rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = rate
	p.sim.SetFaults(p.rate, 0, p.latency)
}

// setLatency sets the time every call takes.
func (p *provider) setLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
	p.sim.SetFaults(p.rate, 0, p.latency)
}

func (p *provider) close() { _ = p.srv.Close() }
