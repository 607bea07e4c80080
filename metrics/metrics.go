// Package metrics publishes lfinit's phase, signals, reaping and shutdown
// outcome as Prometheus metrics and serves them, with the /readyz and /livez
// probes, on --metrics-addr.
//
// The recording methods are called from the supervisor loop, which is PID 1's
// signal and deadline loop: anything slow there delays a forwarded signal or
// the SIGKILL at the hard deadline. So they only do atomic stores and adds;
// formatting, the Go and process collectors and liveChildren all run on the
// scrape goroutine instead.
package metrics

import (
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/light-fabric/lfinit/statusfile"
)

// Metrics holds lfinit's metrics and probe state; its methods are safe for concurrent use.
type Metrics struct {
	// reg is dedicated, not prometheus.DefaultRegisterer, so nothing a
	// dependency registers globally leaks onto lfinit's endpoint.
	reg *prometheus.Registry
	// own holds lfinit's series without the Go and process collectors:
	// what is pushed at exit, when those describe a process about to end.
	own     *prometheus.Registry
	handler http.Handler

	// ready and live back the probes. They are separate from the
	// lfinit_ready gauge because /readyz must fail the instant a shutdown
	// signal arrives, before the supervisor has built the next Status.
	ready atomic.Bool
	live  atomic.Bool

	state *stateCollector
	hook  *hookCollector
	end   *endingCollector

	readyGauge       prometheus.Gauge
	shutdownStart    prometheus.Gauge
	graceDeadline    prometheus.Gauge
	hardDeadline     prometheus.Gauge
	shutdownDuration prometheus.Gauge
	killed           prometheus.Gauge
	notSignalled     prometheus.Gauge
	startTime        prometheus.Gauge
	readyTime        prometheus.Gauge
	reaped           prometheus.Counter
	received         *counterSet
	forwarded        *counterSet
	service          *serviceInfo
}

// BuildInfo labels lfinit_build_info; empty fields are exported as "unknown".
type BuildInfo struct {
	Version  string // e.g. v1.2.0, or dev
	Revision string // the VCS commit, when known
}

// Sources are read at scrape time only, on the scrape goroutine; a nil one
// leaves its series out (absent is honest where a 0 would claim a fact).
type Sources struct {
	LiveChildren        func() int   // lfinit_child_processes
	LogLinesDropped     func() int64 // lfinit_log_lines_dropped_total
	StatusWriteFailures func() int64 // lfinit_status_file_write_failures_total
	// NotifyCounts are the notify listener's counts and their kinds
	// (lfinit_notify_messages_total).
	NotifyCounts func() []uint64
	NotifyKinds  []string
}

// New builds the metrics of one lfinit run.
func New(info BuildInfo, src Sources) *Metrics {
	// The probes start not ready (nothing is ready before the supervisor
	// says so) and live (answering at all means PID 1 is running its loop).
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		own:   prometheus.NewRegistry(),
		state: newStateCollector(),
		hook:  newHookCollector(),
		end:   newEndingCollector(),
		readyGauge: gauge("lfinit_ready",
			"Whether lfinit reports its child ready (1) or not (0), as in the status file."),
		startTime: gauge("lfinit_start_time_seconds",
			"Unix time lfinit started supervising (the child's start once known)."),
		readyTime: gauge("lfinit_ready_timestamp_seconds",
			"Unix time the child became ready; 0 until then."),
		shutdownStart: gauge("lfinit_shutdown_start_timestamp_seconds",
			"Unix time the first shutdown signal was received; 0 until then."),
		graceDeadline: gauge("lfinit_grace_deadline_timestamp_seconds",
			"Unix time of the grace deadline, after which the deadline signal is sent; 0 until a shutdown starts."),
		hardDeadline: gauge("lfinit_hard_deadline_timestamp_seconds",
			"Unix time of the hard deadline, when the whole tree is SIGKILLed; 0 until a shutdown starts."),
		shutdownDuration: gauge("lfinit_shutdown_duration_seconds",
			"Time from the first shutdown signal to the stopped phase; 0 until then or when no shutdown was asked."),
		killed: gauge("lfinit_killed_processes",
			"Processes lfinit had to SIGKILL; set when lfinit stops."),
		notSignalled: gauge("lfinit_not_signalled_processes",
			"Processes of lfinit's tree that a signal could not reach (they may outlive lfinit); set when lfinit stops."),
		reaped: prometheus.NewCounter(prometheus.CounterOpts{Name: "lfinit_reaped_total",
			Help: "Processes (the child, orphans, zombies) reaped by lfinit."}),
		received: bySignal("lfinit_signals_received_total",
			"Signals received by lfinit, by signal name."),
		forwarded: bySignal("lfinit_signals_forwarded_total",
			"Signals sent by lfinit to its child or process group, by signal name."),
		service: newServiceInfo(),
	}
	m.live.Store(true)
	// Replaced by the status's started_at at the first transition; set now
	// so that the very first scrape has it.
	m.startTime.Set(unixSeconds(time.Now()))

	m.registerAll(info)
	m.registerSources(src)
	m.handler = m.newHandler()
	return m
}

// registerAll registers every series of m on its registries.
func (m *Metrics) registerAll(info BuildInfo) {
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.register(
		m.state,
		m.hook,
		m.end,
		m.readyGauge,
		m.startTime,
		m.readyTime,
		m.shutdownStart,
		m.graceDeadline,
		m.hardDeadline,
		m.shutdownDuration,
		m.killed,
		m.notSignalled,
		m.reaped,
		m.received.vec,
		m.forwarded.vec,
		m.service.vec,
		newBuildInfo(info),
	)
}

// gauge is one of lfinit's gauges.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// bySignal is a counter with a signal label.
func bySignal(name, help string) *counterSet {
	return newCounterSet(prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"signal"}))
}

// newBuildInfo is lfinit_build_info: always 1, the facts in its labels.
func newBuildInfo(info BuildInfo) prometheus.Gauge {
	// An empty label value is the same as no label in Prometheus.
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "lfinit_build_info",
		Help: "Always 1; labelled with the lfinit version and revision and the Go toolchain and platform it was built for.",
		ConstLabels: prometheus.Labels{
			"version": orUnknown(info.Version), "revision": orUnknown(info.Revision),
			"goversion": runtime.Version(), "goos": runtime.GOOS, "goarch": runtime.GOARCH,
		},
	})
	g.Set(1)
	return g
}

// registerSources adds the series read from src at scrape time.
func (m *Metrics) registerSources(src Sources) {
	if f := src.LiveChildren; f != nil {
		m.register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lfinit_child_processes",
			Help: "Live processes in lfinit's tree (the child and its descendants, and adopted orphans).",
		}, func() float64 { return float64(f()) }))
	}
	if f := src.LogLinesDropped; f != nil {
		m.register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "lfinit_log_lines_dropped_total",
			Help: "lfinit's own log lines dropped because stderr did not keep up (the child's output is never touched).",
		}, func() float64 { return float64(f()) }))
	}
	if src.NotifyCounts != nil {
		m.register(&notifyCollector{desc: notifyDesc(), counts: src.NotifyCounts, kinds: src.NotifyKinds},
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "lfinit_watchdog_missed",
				Help: "1 while the service's watchdog (--watchdog) is missed, which fails /livez; 0 while it is fed or without one.",
			}, func() float64 { return boolFloat(m.service.missed.Load()) }))
	}
	if f := src.StatusWriteFailures; f != nil {
		m.register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "lfinit_status_file_write_failures_total",
			Help: "Writes of the status file that failed (supervision goes on without them).",
		}, func() float64 { return float64(f()) }))
	}
}

// KnownSignals makes the received and forwarded counters of these signal
// names exist at 0 before the first one arrives, so that increase() and
// rate() see the first signal rather than a series that appears at 1.
func (m *Metrics) KnownSignals(names ...string) {
	for _, n := range names {
		m.received.touch(n)
		m.forwarded.touch(n)
	}
}

// register adds lfinit's own collectors to both registries.
func (m *Metrics) register(cs ...prometheus.Collector) {
	m.reg.MustRegister(cs...)
	m.own.MustRegister(cs...)
}

// Gatherer gathers lfinit's own series (no go_ or process_ ones), for the
// push at exit.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.own }

// Status records a status snapshot; call it at every transition.
func (m *Metrics) Status(s statusfile.Status) {
	// Timestamps and deadlines are only ever set from non-nil pointers, so
	// a snapshot that lacks one never erases a known value; the hard
	// deadline is still overwritten when a second shutdown signal shortens it.
	m.state.setPhase(s.Phase)
	m.readyGauge.Set(boolFloat(s.Ready))
	if s.StartedAt != nil {
		m.startTime.Set(unixSeconds(*s.StartedAt))
	}
	if s.ReadyAt != nil {
		m.readyTime.Set(unixSeconds(*s.ReadyAt))
	}
	if s.SignalAt != nil {
		m.shutdownStart.Set(unixSeconds(*s.SignalAt))
	}
	if s.GraceDeadline != nil {
		m.graceDeadline.Set(unixSeconds(*s.GraceDeadline))
	}
	if s.HardDeadline != nil {
		m.hardDeadline.Set(unixSeconds(*s.HardDeadline))
	}
	m.hook.set(s) // as soon as the hook is reaped, not only at the end
	m.service.set(s)
	if s.Phase != statusfile.Stopped || s.Outcome == nil {
		return
	}
	m.state.setOutcome(*s.Outcome)
	m.end.set(s)
	if s.ExitCode != nil {
		m.state.setExitCode(*s.ExitCode)
	}
	if s.SignalAt != nil && !s.UpdatedAt.IsZero() {
		// Sub uses the monotonic clock when both times still carry it.
		m.shutdownDuration.Set(max(s.UpdatedAt.Sub(*s.SignalAt).Seconds(), 0))
	}
	m.killed.Set(float64(s.Killed))
	m.notSignalled.Set(float64(s.NotSignalled))
}

// SignalReceived counts one signal received by lfinit, by name (e.g. "SIGTERM").
func (m *Metrics) SignalReceived(name string) { m.received.inc(name) }

// SignalForwarded counts one signal sent to the child or its group, by name.
func (m *Metrics) SignalForwarded(name string) { m.forwarded.inc(name) }

// Reaped counts n reaped processes; n <= 0 is ignored.
func (m *Metrics) Reaped(n int) {
	// Counter.Add panics on a negative value, and PID 1 must not panic.
	if n > 0 {
		m.reaped.Add(float64(n))
	}
}

// SetReady sets what /readyz answers, from the very next request on.
func (m *Metrics) SetReady(ready bool) { m.ready.Store(ready) }

// SetLive sets what /livez answers, from the very next request on.
func (m *Metrics) SetLive(live bool) { m.live.Store(live) }

// boolFloat is the 0/1 a Prometheus boolean gauge wants.
func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds keeps sub-second precision: float64(t.UnixNano())/1e9 would
// round away about 256ns, and overflow for far-off times.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// noExitCode marks lfinit_exit_code as not known yet. No exit status can
// take this value.
const noExitCode = int64(-1) << 62

// stateCollector exports the phase and outcome state sets and the exit code
// from atomics. Separate gauges per series could not be switched atomically:
// a scrape between "old phase to 0" and "new phase to 1" would see no phase,
// or two. Here one atomic store moves the phase and every scrape sees exactly
// one series at 1.
type stateCollector struct {
	phases   []statusfile.Phase
	outcomes []statusfile.Outcome

	phaseDesc, outcomeDesc, exitDesc *prometheus.Desc

	// The 0 and 1 sample of every series, built once so that a scrape
	// allocates nothing for them.
	phaseOn, phaseOff     []prometheus.Metric
	outcomeOn, outcomeOff []prometheus.Metric

	phase    atomic.Int32 // index into phases
	outcome  atomic.Int32 // index into outcomes; -1 while running
	exitCode atomic.Int64 // noExitCode until known
}

func newStateCollector() *stateCollector {
	c := &stateCollector{
		// Copies, so the exported lists cannot change under a scrape.
		phases:   slices.Clone(statusfile.Phases),
		outcomes: slices.Clone(statusfile.Outcomes),
		phaseDesc: prometheus.NewDesc("lfinit_phase",
			"lfinit's phase as a state set: one series per phase, the current one at 1.",
			[]string{"phase"}, nil),
		outcomeDesc: prometheus.NewDesc("lfinit_shutdown_outcome",
			"How the run ended as a state set: one series per outcome, all 0 until lfinit stops, then the outcome at 1.",
			[]string{"outcome"}, nil),
		exitDesc: prometheus.NewDesc("lfinit_exit_code",
			"The code lfinit exits with; present only once it is known (phase stopped).",
			nil, nil),
	}
	for _, p := range c.phases {
		c.phaseOn = append(c.phaseOn, prometheus.MustNewConstMetric(c.phaseDesc, prometheus.GaugeValue, 1, string(p)))
		c.phaseOff = append(c.phaseOff, prometheus.MustNewConstMetric(c.phaseDesc, prometheus.GaugeValue, 0, string(p)))
	}
	for _, o := range c.outcomes {
		c.outcomeOn = append(c.outcomeOn, prometheus.MustNewConstMetric(c.outcomeDesc, prometheus.GaugeValue, 1, string(o)))
		c.outcomeOff = append(c.outcomeOff, prometheus.MustNewConstMetric(c.outcomeDesc, prometheus.GaugeValue, 0, string(o)))
	}
	// Before the first Status, lfinit is starting: the state set must have
	// one series at 1 from the very first scrape.
	c.phase.Store(int32(max(slices.Index(c.phases, statusfile.Starting), 0)))
	c.outcome.Store(-1)
	c.exitCode.Store(noExitCode)
	return c
}

// setPhase ignores a phase it does not know rather than leave the state
// set with no series at 1.
func (c *stateCollector) setPhase(p statusfile.Phase) {
	if i := slices.Index(c.phases, p); i >= 0 {
		c.phase.Store(int32(i))
	}
}

// setOutcome ignores an outcome it does not know (e.g. Running).
func (c *stateCollector) setOutcome(o statusfile.Outcome) {
	if i := slices.Index(c.outcomes, o); i >= 0 {
		c.outcome.Store(int32(i))
	}
}

func (c *stateCollector) setExitCode(code int) { c.exitCode.Store(int64(code)) }

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.phaseDesc
	ch <- c.outcomeDesc
	ch <- c.exitDesc
}

// oneOf sends the series of an enum, one per value: on[i] for the current
// value i, off for the others.
func oneOf(ch chan<- prometheus.Metric, on, off []prometheus.Metric, current int) {
	for i := range on {
		if i == current {
			ch <- on[i]
		} else {
			ch <- off[i]
		}
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	oneOf(ch, c.phaseOn, c.phaseOff, int(c.phase.Load()))
	oneOf(ch, c.outcomeOn, c.outcomeOff, int(c.outcome.Load()))
	if code := c.exitCode.Load(); code != noExitCode {
		ch <- prometheus.MustNewConstMetric(c.exitDesc, prometheus.GaugeValue, float64(code))
	}
}

// counterSet is a CounterVec with a lock-free, allocation-free path for
// label values seen before. WithLabelValues hashes the value, takes the
// vec's read lock and allocates its variadic slice on every call; signal
// names are few, so after the first of each name an atomic map load does.
type counterSet struct {
	vec  *prometheus.CounterVec
	seen atomic.Pointer[map[string]prometheus.Counter] // copy-on-write, never mutated once stored
	mu   sync.Mutex                                    // serialises the rare writers only
}

func newCounterSet(vec *prometheus.CounterVec) *counterSet {
	c := &counterSet{vec: vec}
	c.seen.Store(&map[string]prometheus.Counter{})
	return c
}

func (c *counterSet) inc(name string) {
	if ctr, ok := (*c.seen.Load())[name]; ok {
		ctr.Inc()
		return
	}
	if ctr := c.touch(name); ctr != nil {
		ctr.Inc()
	}
}

// touch is the first-time path for a label value: it creates the counter
// at 0 and returns it (nil for a value Prometheus rejects).
func (c *counterSet) touch(name string) prometheus.Counter {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.seen.Load()
	if ctr, ok := old[name]; ok {
		return ctr
	}
	// Not WithLabelValues: it panics on a bad value (invalid UTF-8),
	// and losing one count is better than losing PID 1.
	ctr, err := c.vec.GetMetricWithLabelValues(name)
	if err != nil {
		return nil
	}
	next := make(map[string]prometheus.Counter, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = ctr
	c.seen.Store(&next)
	return ctr
}
