package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/light-fabric/lfinit/statusfile"
)

// serviceInfo is lfinit_service_info: the service's own word over the
// notify protocol, one series at a time (its state and last STATUS=,
// which notify cuts to 256 bytes), so the series stay few however often
// the status changes.
type serviceInfo struct {
	vec        *prometheus.GaugeVec
	mu         sync.Mutex
	state, msg string
	missed     atomic.Bool // the service's watchdog is missed (lfinit_watchdog_missed)
}

func newServiceInfo() *serviceInfo {
	return &serviceInfo{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lfinit_service_info",
		Help: "Always 1, labelled with the state the service declared over the notify protocol (--ready-notify) and its last STATUS= line; absent without it."},
		[]string{"state", "status"})}
}

// set moves the one series to s's state and status, when they changed.
func (i *serviceInfo) set(s statusfile.Status) {
	if s.ServiceState == nil {
		return
	}
	i.missed.Store(s.WatchdogMissedAt != nil)
	msg := ""
	if s.ServiceStatus != nil {
		msg = *s.ServiceStatus
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if *s.ServiceState == i.state && msg == i.msg {
		return
	}
	i.state, i.msg = *s.ServiceState, msg
	i.vec.Reset()
	// Not WithLabelValues: it panics on a value Prometheus rejects.
	if g, err := i.vec.GetMetricWithLabelValues(i.state, i.msg); err == nil {
		g.Set(1)
	}
}

// notifyDesc is lfinit_notify_messages_total, made with its collector (a
// package variable would be made at every start, with or without it).
func notifyDesc() *prometheus.Desc {
	return prometheus.NewDesc("lfinit_notify_messages_total",
		"Lines of the notify protocol (--ready-notify) from lfinit's tree by kind (ready, stopping, status, garbage, ignored, …); outside counts messages from senders outside the tree, dropped those the loop had no room for.",
		[]string{"kind"}, nil)
}

// notifyCollector exports the notify listener's counts, read at scrape
// time: counting costs the loop nothing.
type notifyCollector struct {
	desc   *prometheus.Desc
	counts func() []uint64
	kinds  []string
}

// Describe implements prometheus.Collector.
func (c *notifyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *notifyCollector) Collect(ch chan<- prometheus.Metric) {
	for i, n := range c.counts() {
		if i < len(c.kinds) {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), c.kinds[i])
		}
	}
}
