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

	"github.com/light-fabric/lfinit/supervisor"
)

// DefaultPushJob is the job label of the push unless --push-job says otherwise.
const DefaultPushJob = "lfinit"

// DefaultPushTimeout caps the whole push of the final metrics, retries included.
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
	}
	return nil
}

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
	}
	return nil
}

// checkPush validates the push settings of a run.
func (p *pushConfig) check() error {
	if p.gateway == "" {
		return nil
	}
	u, err := url.Parse(p.gateway)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("invalid --push-gateway %q: want the Pushgateway's base URL, e.g. http://pushgateway.monitoring:9091", shorten(p.gateway))
	}
	if p.job == "" {
		return usagef("--push-job is empty: the Pushgateway needs a job name (default %s)", DefaultPushJob)
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
// replaced), retrying within p.timeout. A failure is logged once at WARN
// and changes nothing else: the tree is reaped and the exit code fixed.
func pushFinal(p pushConfig, grouping map[string]string, g prometheus.Gatherer, log *slog.Logger) error {
	if p.gateway == "" || g == nil {
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	base, _ := url.Parse(p.gateway)
	pusher := push.New(withoutUser(base), p.job).Gatherer(g).Client(http.DefaultClient)
	if u := base.User; u != nil {
		pass, _ := u.Password()
		pusher = pusher.BasicAuth(u.Username(), pass)
	}
	for k, v := range grouping {
		pusher = pusher.Grouping(k, v)
	}
	attempts, err := retry(ctx, pusher.PushContext)
	if err != nil {
		log.Warn("cannot push the final metrics to the Pushgateway; the exit code is unchanged",
			"gateway", base.Redacted(), "attempts", attempts, "push_timeout_seconds", supervisor.Seconds(p.timeout), "err", err)
		return err
	}
	// At debug: a normal stop prints only the final summary.
	log.Debug("pushed the final metrics", "gateway", base.Redacted(), "job", p.job, "attempts", attempts,
		"took_seconds", supervisor.Seconds(time.Since(start)))
	return nil
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
