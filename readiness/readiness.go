// Package readiness checks that the child answers, by a TCP connect or an
// HTTP GET, until it does: the gate between lfinit's starting and ready phases.
package readiness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Check is a check that the child answers: a TCP connect or an HTTP
// GET. Until it passes, lfinit stays in the starting phase and a shutdown
// signal is a startup abort.
type Check struct {
	TCP      string        // host:port that must accept a connection
	HTTP     string        // URL that must answer 2xx or 3xx
	Interval time.Duration // between attempts (default 100ms)
	Timeout  time.Duration // of one attempt (default 1s)
}

// ParseReadyTCP validates a --ready-tcp address.
func ParseReadyTCP(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%q is not HOST:PORT (e.g. 127.0.0.1:8080)", addr)
	}
	return nil
}

// ParseReadyHTTP validates a --ready-http URL.
func ParseReadyHTTP(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL (e.g. http://127.0.0.1:8080/healthz)", raw)
	}
	return nil
}

// String names the check for logs.
func (r *Check) String() string {
	if r.HTTP != "" {
		return "http " + r.HTTP
	}
	return "tcp " + r.TCP
}

// Watch starts checking in the background. The channel is closed once the
// check passes; stop ends the checking (idempotent).
func (r *Check) Watch() (ready <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	interval, timeout := r.Interval, r.Timeout
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	if timeout <= 0 {
		timeout = time.Second
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if r.once(ctx, client, timeout) {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return ch, cancel
}

func (r *Check) once(ctx context.Context, client *http.Client, timeout time.Duration) bool {
	if r.HTTP == "" {
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(ctx, "tcp", r.TCP)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.HTTP, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
