// Package push pushes lfinit's final metrics to a Pushgateway once, at
// exit, inside a bound: the outcome reaches Prometheus even though lfinit
// is gone before the next scrape.
package push

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"

	"github.com/light-fabric/lfinit/internal/logline"
)

// DefaultJob is the job label of the push unless --push-job says otherwise.
const DefaultJob = "lfinit"

// DefaultTimeout caps the whole push of the final metrics, gathering and retries included.
const DefaultTimeout = time.Second

// Config is where and how the final metrics are pushed.
type Config struct {
	Gateway  string // the Pushgateway's base URL; "" for no push
	Job      string
	Grouping Labels // from --push-grouping, on top of the defaults
	Timeout  time.Duration
}

// Labels collects NAME=VALUE pairs (a flag.Value); a comma separates
// several in one value. Its zero value is not usable: make the map.
type Labels map[string]string

func (v Labels) String() string { return "" }

// Set adds the pairs of s, each checked.
func (v Labels) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if err := checkGroupingLabel(name, value, ok); err != nil {
			return err
		}
		v[name] = value
		if len(v) > maxGroupingLabels {
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

// isLabelName reports whether name is a Prometheus label name: letters,
// digits and _, not starting with a digit (a regexp compiled at package
// initialisation would cost every start, with or without a push).
func isLabelName(name string) bool {
	for i, c := range []byte(name) {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return name != ""
}

// reservedLabels are the job label and the labels of lfinit's own series: a
// grouping label of the same name makes the Pushgateway refuse the push.
var reservedLabels = []string{"job", "phase", "outcome", "signal", "version", "revision", "goversion", "goos", "goarch"}

func checkGroupingLabel(name, value string, ok bool) error {
	switch {
	case !ok || value == "":
		return fmt.Errorf("%q is not NAME=VALUE with a non-empty value (e.g. cluster=prod)", name+"="+value)
	case !isLabelName(name) || strings.HasPrefix(name, "__"):
		return fmt.Errorf("%q is not a Prometheus label name (letters, digits and _, not starting with a digit or __)", name)
	case slices.Contains(reservedLabels, name):
		return fmt.Errorf("%q is a label of lfinit's own series; choose another name", name)
	case len(name) > maxGroupingName:
		return fmt.Errorf("the label name %q is %d bytes; the limit is %d bytes", name, len(name), maxGroupingName)
	case len(value) > maxGroupingValue:
		return fmt.Errorf("the value of label %q is %d bytes; the limit is 1 KiB (%d bytes)", name, len(value), maxGroupingValue)
	}
	return nil
}

// Grouping is the grouping key of the push: pod (POD_NAME, else
// HOSTNAME, which Kubernetes sets to the pod's name, else the host name)
// and namespace (POD_NAMESPACE, when set), then --push-grouping on top.
// Without a per-instance label every replica would overwrite the others'
// group.
func Grouping(extra map[string]string, getenv func(string) string) map[string]string {
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

// Final pushes lfinit's final metrics once (PUT: the group is
// replaced), retrying within p.Timeout, which bounds the whole push,
// gathering included. A failure is logged once at WARN and changes
// nothing else: the tree is reaped and the exit code fixed.
func Final(p Config, grouping map[string]string, g prometheus.Gatherer, log *slog.Logger) error {
	if p.Gateway == "" || g == nil {
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()
	base, _ := url.Parse(p.Gateway)
	attempts, err := pushWithin(ctx, p.Job, base, grouping, g)
	if err != nil {
		log.Warn("cannot push the final metrics to the Pushgateway; the exit code is unchanged",
			"gateway", base.Redacted(), "attempts", attempts, "push_timeout_seconds", logline.Seconds(p.Timeout), "err", err)
		return err
	}
	// At debug: a normal stop prints only the final summary.
	log.Debug("pushed the final metrics", "gateway", base.Redacted(), "job", p.Job, "attempts", attempts,
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
