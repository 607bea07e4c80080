package metrics

import (
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/light-fabric/lfinit/statusfile"
)

// hookResult is how the shutdown hook ended, as its series show it.
type hookResult struct {
	outcome  int // index into statusfile.HookOutcomes
	code     int
	duration float64
}

// hookCollector exports the shutdown hook's end: absent until a hook was
// reaped (a run without --on-shutdown has none of its series), then its
// outcome as a state set, its exit code and its duration, switched in one
// atomic store so a scrape sees them together.
type hookCollector struct {
	outcomeDesc, codeDesc, durationDesc *prometheus.Desc
	result                              atomic.Pointer[hookResult]
}

func newHookCollector() *hookCollector {
	return &hookCollector{
		outcomeDesc: prometheus.NewDesc("lfinit_shutdown_hook_outcome",
			"How the shutdown hook (--on-shutdown) ended, as a state set; present once it was reaped.",
			[]string{"outcome"}, nil),
		codeDesc: prometheus.NewDesc("lfinit_shutdown_hook_exit_code",
			"The shutdown hook's exit code (128+N for signal N, 126/127 when it could not start); present once it was reaped.",
			nil, nil),
		durationDesc: prometheus.NewDesc("lfinit_shutdown_hook_duration_seconds",
			"How long the shutdown hook ran, from its start to its reap; present once it was reaped.",
			nil, nil),
	}
}

// set records the hook's end from a status that has it.
func (c *hookCollector) set(s statusfile.Status) {
	if s.HookOutcome == nil || s.HookExitCode == nil || s.HookDurationSeconds == nil {
		return
	}
	i := slices.Index(statusfile.HookOutcomes, *s.HookOutcome)
	if i < 0 {
		return
	}
	c.result.Store(&hookResult{outcome: i, code: *s.HookExitCode, duration: *s.HookDurationSeconds})
}

// Describe implements prometheus.Collector.
func (c *hookCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.outcomeDesc
	ch <- c.codeDesc
	ch <- c.durationDesc
}

// Collect implements prometheus.Collector.
func (c *hookCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.result.Load()
	if r == nil {
		return
	}
	for i, o := range statusfile.HookOutcomes {
		v := 0.0
		if i == r.outcome {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.outcomeDesc, prometheus.GaugeValue, v, string(o))
	}
	ch <- prometheus.MustNewConstMetric(c.codeDesc, prometheus.GaugeValue, float64(r.code))
	ch <- prometheus.MustNewConstMetric(c.durationDesc, prometheus.GaugeValue, r.duration)
}
