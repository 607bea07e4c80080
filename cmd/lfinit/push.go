package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"

	"github.com/light-fabric/lfinit/internal/logline"
)

// DefaultPushJob is the job label of the push unless --push-job says otherwise.
const DefaultPushJob = "lfinit"

// DefaultPushTimeout caps the whole push of the final metrics, gathering and retries included.
const DefaultPushTimeout = time.Second

// pushConfig is where and how the final metrics are pushed.
type pushConfig struct {
	gateway  string // the Pushgateway's base URL; "" for no push
	job      string
	grouping labelList // from --push-grouping, on top of the defaults
	timeout  time.Duration
}

// labelList collects NAME=VALUE pairs; a comma separates several in one value.
type labelList struct{ m map[string]string }

func (v labelList) String() string { return "" }

func (v labelList) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if err := checkGroupingLabel(name, value, ok); err != nil {
			return err
		}
		v.m[name] = value
		if len(v.m) > maxGroupingLabels {
			return fmt.Errorf("more than %d grouping labels; the limit is %d, besides pod and namespace", maxGroupingLabels, maxGroupingLabels)
		}
	}
	return nil
}

// The bounds of --push-grouping. The Pushgateway stores whatever it is
// given (a 130,000-byte value included) and every series of the group
// carries it, so a value that long is a mistake (a pasted file, a
// variable expanded twice) to refuse at start, not to ship.
const (
	maxGroupingValue  = 1024 // bytes: 1 KiB
	maxGroupingName   = 128  // bytes
	maxGroupingLabels = 16   // names, besides pod and namespace
)

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// reservedLabels are the job label and the labels of lfinit's own series: a
// grouping label of the same name makes the Pushgateway refuse the push.
var reservedLabels = []string{"job", "phase", "outcome", "signal", "version", "revision", "goversion", "goos", "goarch"}

func checkGroupingLabel(name, value string, ok bool) error {
	switch {
	case !ok || value == "":
		return fmt.Errorf("%q is not NAME=VALUE with a non-empty value (e.g. cluster=prod)", shorten(name+"="+value))
	case !labelName.MatchString(name) || strings.HasPrefix(name, "__"):
		return fmt.Errorf("%q is not a Prometheus label name (letters, digits and _, not starting with a digit or __)", shorten(name))
	case slices.Contains(reservedLabels, name):
		return fmt.Errorf("%q is a label of lfinit's own series; choose another name", name)
	case len(name) > maxGroupingName:
		return fmt.Errorf("the label name %q is %d bytes; the limit is %d bytes", name, len(name), maxGroupingName)
	case len(value) > maxGroupingValue:
		return fmt.Errorf("the value of label %q is %d bytes; the limit is 1 KiB (%d bytes)", name, len(value), maxGroupingValue)
	}
	return nil
}

// check validates the push settings of a run together; the gateway's URL
// and the job were checked as they were set (checks.go).
func (p *pushConfig) check() error {
	if p.gateway == "" {
		return nil
	}
	if p.timeout <= 0 {
		return usagef("--push-timeout must be more than 0 when --push-gateway is set (default %v)", DefaultPushTimeout)
	}
	return nil
}

// groupingFor is the grouping key of the push: pod (POD_NAME, else
// HOSTNAME, which Kubernetes sets to the pod's name, else the host name)
// and namespace (POD_NAMESPACE, when set), then --push-grouping on top.
// Without a per-instance label every replica would overwrite the others'
// group.
func groupingFor(extra map[string]string, getenv func(string) string) map[string]string {
	g := map[string]string{}
	pod := getenv("POD_NAME")
	if pod == "" {
		pod = getenv("HOSTNAME")
	}
	if pod == "" {
		pod, _ = os.Hostname()
	}
	if pod != "" {
		g["pod"] = pod
	}
	if ns := getenv("POD_NAMESPACE"); ns != "" {
		g["namespace"] = ns
	}
	for k, v := range extra {
		g[k] = v
	}
	return g
}

// pushFinal pushes lfinit's final metrics once (PUT: the group is
// replaced), retrying within p.timeout, which bounds the whole push,
// gathering included. A failure is logged once at WARN and changes
// nothing else: the tree is reaped and the exit code fixed.
func pushFinal(p pushConfig, grouping map[string]string, g prometheus.Gatherer, log *slog.Logger) error {
	if p.gateway == "" || g == nil {
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	base, _ := url.Parse(p.gateway)
	attempts, err := pushWithin(ctx, p.job, base, grouping, g)
	if err != nil {
		log.Warn("cannot push the final metrics to the Pushgateway; the exit code is unchanged",
			"gateway", base.Redacted(), "attempts", attempts, "push_timeout_seconds", logline.Seconds(p.timeout), "err", err)
		return err
	}
	// At debug: a normal stop prints only the final summary.
	log.Debug("pushed the final metrics", "gateway", base.Redacted(), "job", p.job, "attempts", attempts,
		"took_seconds", logline.Seconds(time.Since(start)))
	return nil
}

// pushWithin gathers g and pushes the result to base until ctx ends; it
// returns the attempts made (0 when gathering did not finish in time).
func pushWithin(ctx context.Context, job string, base *url.URL, grouping map[string]string, g prometheus.Gatherer) (int, error) {
	// Gathered once, inside the timeout: every attempt pushes the same
	// figures, and a slow collector costs the push, not the exit.
	snapshot, err := gatherWithin(ctx, g)
	if err != nil {
		return 0, err
	}
	pusher := push.New(withoutUser(base), job).Gatherer(snapshot).Client(http.DefaultClient)
	if u := base.User; u != nil {
		pass, _ := u.Password()
		pusher = pusher.BasicAuth(u.Username(), pass)
	}
	for k, v := range grouping {
		pusher = pusher.Grouping(k, v)
	}
	return retry(ctx, pusher.PushContext)
}

// gatherWithin gathers g once and returns the result as a Gatherer, or
// gives up when ctx ends: Gather takes no context, so a collector that
// hangs is left behind (lfinit is about to exit) instead of waited for.
func gatherWithin(ctx context.Context, g prometheus.Gatherer) (prometheus.Gatherer, error) {
	type gathered struct {
		mfs []*dto.MetricFamily
		err error
	}
	done := make(chan gathered, 1) // buffered: a late Gather does not block forever
	go func() {
		mfs, err := g.Gather()
		done <- gathered{mfs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("gathering the metrics: %w", r.err)
		}
		return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return r.mfs, nil }), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("gathering the metrics took longer than the push timeout: %w", ctx.Err())
	}
}

// retry calls f until it succeeds or ctx ends, waiting 50ms, 100ms, 200ms…
// between attempts; it returns the attempts made and the last error.
func retry(ctx context.Context, f func(context.Context) error) (int, error) {
	wait := 50 * time.Millisecond
	for n := 1; ; n++ {
		err := f(ctx)
		if err == nil {
			return n, nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// withoutUser is u without its user:password, which goes in a header instead
// (and so never into an error message).
func withoutUser(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
