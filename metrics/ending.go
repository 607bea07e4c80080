package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/light-fabric/lfinit/statusfile"
)

// endingCollector exports why the child ended and what it cost: the cause
// as a state set (every cause present, all 0 until the child ended, then
// its cause at 1), and its CPU time and peak RSS once known. Set once, at
// the end: a lock is cheap there, and scrapes read a consistent copy.
type endingCollector struct {
	causes               []statusfile.Cause
	causeDesc, cpuDesc   *prometheus.Desc
	rssDesc, memPeakDesc *prometheus.Desc
	memLimitDesc         *prometheus.Desc

	mu sync.Mutex
	s  statusfile.Status // the final status, once stopped
}

func newEndingCollector() *endingCollector {
	return &endingCollector{
		causes: slices.Clone(statusfile.Causes),
		causeDesc: prometheus.NewDesc("lfinit_child_cause",
			"Why the child ended, as a state set: all 0 until it ended, then its cause at 1 (oom-kill: the kernel's OOM killer; deadline: lfinit's SIGKILL).",
			[]string{"cause"}, nil),
		cpuDesc: prometheus.NewDesc("lfinit_child_cpu_seconds",
			"CPU time the child used, by mode (user, system), from its exit status; present once it ended.",
			[]string{"mode"}, nil),
		rssDesc: prometheus.NewDesc("lfinit_child_peak_rss_bytes",
			"The child's largest resident set, from its exit status; present once it ended.", nil, nil),
		memPeakDesc: prometheus.NewDesc("lfinit_memory_peak_bytes",
			"The memory cgroup's peak usage, read when the child was SIGKILLed by someone other than lfinit.", nil, nil),
		memLimitDesc: prometheus.NewDesc("lfinit_memory_limit_bytes",
			"The memory cgroup's limit, read when the child was SIGKILLed by someone other than lfinit.", nil, nil),
	}
}

// set keeps the final status s.
func (c *endingCollector) set(s statusfile.Status) {
	c.mu.Lock()
	c.s = s
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *endingCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.causeDesc, c.cpuDesc, c.rssDesc, c.memPeakDesc, c.memLimitDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *endingCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	s := c.s
	c.mu.Unlock()
	for _, cause := range c.causes {
		v := 0.0
		if s.Cause != nil && *s.Cause == cause {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.causeDesc, prometheus.GaugeValue, v, string(cause))
	}
	if s.ChildUserSeconds != nil && s.ChildSystemSeconds != nil {
		ch <- prometheus.MustNewConstMetric(c.cpuDesc, prometheus.GaugeValue, *s.ChildUserSeconds, "user")
		ch <- prometheus.MustNewConstMetric(c.cpuDesc, prometheus.GaugeValue, *s.ChildSystemSeconds, "system")
	}
	optional := func(d *prometheus.Desc, v *uint64) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*v))
		}
	}
	optional(c.rssDesc, s.ChildPeakRSSBytes)
	optional(c.memPeakDesc, s.MemoryPeakBytes)
	optional(c.memLimitDesc, s.MemoryLimitBytes)
}
