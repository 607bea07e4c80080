package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/light-fabric/lfinit/internal/netaddr"
)

// Probe bodies, allocated once: the probes are polled every few seconds for
// the whole life of the container.
var (
	bodyOK       = []byte("ok\n")
	bodyNotReady = []byte("not ready\n")
	bodyNotLive  = []byte("not live\n")
)

// Handler serves /metrics, /readyz and /livez to GET and HEAD; anything else is 404, or 405 for another method.
func (m *Metrics) Handler() http.Handler { return m.handler }

// router is a fixed three-route mux. It is not an http.ServeMux because
// ServeMux redirects unclean paths ("//readyz", "/readyz/../livez") where a
// probe should get a plain answer, and an exact match is all we need.
type router struct {
	metrics, readyz, livez http.Handler
}

func (m *Metrics) newHandler() http.Handler {
	return &router{
		metrics: oneAtATime(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})),
		readyz:  probe(&m.ready, bodyNotReady),
		livez:   probe(&m.live, bodyNotLive),
	}
}

// ServeHTTP implements http.Handler.
func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var h http.Handler
	switch r.URL.Path {
	case "/metrics":
		h = rt.metrics
	case "/readyz":
		h = rt.readyz
	case "/livez":
		h = rt.livez
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	h.ServeHTTP(w, r)
}

// oneAtATime serves one scrape at a time; the others wait their turn (or
// give up with their request). A scrape costs CPU (the collectors read
// /proc and the runtime); serialising them leaves lfinit's other core to
// the loop that forwards signals and kills at the deadline, however hard
// the port is hammered.
func oneAtATime(h http.Handler) http.Handler {
	turn := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case turn <- struct{}{}:
			defer func() { <-turn }()
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	})
}

// probe answers 200 "ok" while flag is set, else 503 with down. It reads
// the flag on every request, so a SetReady(false) is seen by the next one.
func probe(flag interface{ Load() bool }, down []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		hdr.Set("X-Content-Type-Options", "nosniff")
		// A cached "ok" from a proxy would hide the 503 that tells the
		// load balancer to stop sending traffic.
		hdr.Set("Cache-Control", "no-store")
		body, code := bodyOK, http.StatusOK
		if !flag.Load() {
			body, code = down, http.StatusServiceUnavailable
		}
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(code)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

// listenTimeout bounds the name lookup of a host name in addr: Listen runs
// before the child starts, and an unreachable DNS server must not hold the
// container's startup for the resolver's full retry schedule.
const listenTimeout = 5 * time.Second

// Listen opens the metrics listener on addr ("host:port"), with errors an operator can act on.
func Listen(addr string) (net.Listener, error) {
	// Checked here because net.Listen("tcp", "") succeeds on a random port,
	// and its own messages ("missing port in address") do not say which
	// setting is wrong.
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &listenError{
			msg: fmt.Sprintf("invalid metrics address %q: %s (want host:port, e.g. 127.0.0.1:9090 or :9090)", addr, addrErrText(err)),
			err: err,
		}
	}
	if perr := netaddr.CheckPort(port, netaddr.Listen); perr != nil {
		return nil, &listenError{msg: fmt.Sprintf("invalid metrics address %q: %v", addr, perr), err: perr}
	}
	ctx, cancel := context.WithTimeout(context.Background(), listenTimeout)
	defer cancel()
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err == nil {
		return l, nil
	}
	var msg string
	var dnsErr *net.DNSError
	var addrErr *net.AddrError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		msg = fmt.Sprintf("metrics address %s is already in use (choose another with --metrics-addr)", addr)
	case errors.Is(err, syscall.EACCES):
		msg = fmt.Sprintf("metrics address %s: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE; choose another with --metrics-addr)", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		msg = fmt.Sprintf("metrics address %s: %s is not an address of this host (use :%s, 0.0.0.0:%s, 127.0.0.1:%s or a local interface address)", addr, host, port, port, port)
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("metrics address %s: cannot resolve %q: %s (use an IP address)", addr, dnsErr.Name, dnsErr.Err)
	case errors.As(err, &addrErr):
		msg = fmt.Sprintf("invalid metrics address %q: %s (want host:port, e.g. 127.0.0.1:9090 or :9090)", addr, addrErr.Err)
	default:
		msg = fmt.Sprintf("cannot listen on metrics address %s: %v", addr, err)
	}
	return nil, &listenError{msg: msg, err: err}
}

// addrErrText drops the address SplitHostPort repeats in its error, since
// the message already quotes it.
func addrErrText(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}

// listenError reads as an operator message but still unwraps to the
// underlying error, so callers can errors.Is(err, syscall.EADDRINUSE).
type listenError struct {
	msg string
	err error
}

func (e *listenError) Error() string { return e.msg }
func (e *listenError) Unwrap() error { return e.err }

// Serve serves h on l in a new goroutine and returns the server, for the caller to Close.
func Serve(l net.Listener, h http.Handler) *http.Server {
	// The timeouts keep a slow or stuck client from pinning goroutines and
	// memory in PID 1 for the life of the container. ErrorLog is left nil,
	// so the rare net/http message goes through the log package, which
	// log/slog's SetDefault redirects.
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		// "OPTIONS *" would otherwise get a 200 from net/http itself.
		DisableGeneralOptionsHandler: true,
	}
	// Errors after the start are dropped: the listener is already open, so
	// the only ones left are a Close by the caller or a broken listener, and
	// there is no logger here to tell.
	go func() { _ = srv.Serve(l) }()
	return srv
}
