// Package readiness checks that the child answers, by a TCP connect or an
// HTTP GET, until it does: the gate between lfinit's starting and ready phases.
package readiness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/light-fabric/lfinit/internal/netaddr"
)

// Check is a check that the child answers: a TCP connect or an HTTP
// GET. Until it passes, lfinit stays in the starting phase and a shutdown
// signal is a startup abort.
type Check struct {
	TCP      string        // host:port that must accept a connection
	HTTP     string        // URL that must answer 2xx or 3xx
	Interval time.Duration // between attempts; 0 for DefaultInterval
	Timeout  time.Duration // of one attempt; 0 for DefaultTimeout
}

// The defaults of a Check's Interval and Timeout.
const (
	DefaultInterval = 100 * time.Millisecond
	DefaultTimeout  = time.Second
)

// ParseReadyTCP validates a --ready-tcp address: one a connection can
// ever reach (a port from 1 to 65535, a host that parses).
func ParseReadyTCP(addr string) error {
	if err := netaddr.CheckHostPort(addr, netaddr.Connect); err != nil {
		return fmt.Errorf("%v (e.g. 127.0.0.1:8080)", err)
	}
	return nil
}

// ParseReadyHTTP validates a --ready-http URL, its host and port as
// ParseReadyTCP does.
func ParseReadyHTTP(raw string) error {
	if _, err := netaddr.CheckURL(raw); err != nil {
		return fmt.Errorf("%v (e.g. http://127.0.0.1:8080/healthz)", err)
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

// Watch starts checking in the background. ready is closed once the check
// passes; reports tells why it has not yet, when the reason changes and
// when a reminder is due (see Report), and a last time with no error when
// it passes; it must be read until stop. stop ends the checking (idempotent).
func (r *Check) Watch() (ready <-chan struct{}, reports <-chan Report, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	readyCh, reportCh := make(chan struct{}), make(chan Report)
	go r.watch(ctx, readyCh, reportCh)
	return readyCh, reportCh, cancel
}

// watch makes an attempt every interval until one passes or ctx ends.
func (r *Check) watch(ctx context.Context, ready chan<- struct{}, reports chan<- Report) {
	interval, timeout := r.Interval, r.Timeout
	if interval <= 0 {
		interval = DefaultInterval
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	rem := newReminder(time.Now())
	for {
		err := r.once(ctx, client, timeout)
		if ctx.Err() != nil {
			return
		}
		why := ""
		if err != nil {
			why = r.describe(err, timeout)
		}
		if rep, ok := rem.next(why, time.Now()); ok {
			select {
			case reports <- rep:
			case <-ctx.Done():
				return
			}
		}
		if err == nil {
			close(ready)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// once makes one attempt: nil when the child answered.
func (r *Check) once(ctx context.Context, client *http.Client, timeout time.Duration) error {
	if r.HTTP == "" {
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(ctx, "tcp", r.TCP)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.HTTP, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return statusError(resp.StatusCode)
	}
	return nil
}
