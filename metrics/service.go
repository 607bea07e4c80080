package metrics

import (
	"sync"

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
